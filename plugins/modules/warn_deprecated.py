#!/usr/bin/python
# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: warn_deprecated
short_description: Emit Ansible deprecation warnings for renamed variables or a renamed playbook
version_added: 0.1.0
description:
  - The collection's roles and playbooks keep old names working for one release; this action says so with a real
    Ansible deprecation warning (shown as C([DEPRECATION WARNING]), silenced by C(deprecation_warnings=false),
    collected by AWX and ansible-runner), not a debug message.
  - With O(renamed_variables), warns only for the old names that are set for the host, and returns them.
  - Changes nothing; runs on the controller.
author:
  - skewsafe developers (@skewsafe)
extends_documentation_fragment:
  - skewsafe.kubeadm._attributes
  - skewsafe.kubeadm._attributes.controller_action
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  idempotent:
    support: full
options:
  renamed_variables:
    description:
      - Old variable name to new variable name. Each old name that is defined for the host gets a warning.
      - Mutually exclusive with O(msg).
    type: dict
  msg:
    description:
      - One deprecation message to emit (for example for a renamed playbook). Mutually exclusive with
        O(renamed_variables).
    type: str
  removed_in:
    description: The collection version that removes the old name.
    type: str
    required: true
  context:
    description: Who is speaking, at the start of each message (for example the role's name).
    type: str
    default: skewsafe.kubeadm
"""

EXAMPLES = r"""
- name: Warn about options this role took under another name
  skewsafe.kubeadm.warn_deprecated:
    context: skewsafe.kubeadm.control_plane_upgrade
    renamed_variables:
      node_upgrade_trusted_repo: control_plane_upgrade_trusted_repo
    removed_in: 1.0.0

- name: Warn that a playbook was renamed
  skewsafe.kubeadm.warn_deprecated:
    msg: The playbook my.collection.old_name is now my.collection.new_name.
    removed_in: 1.0.0
"""

RETURN = r"""
deprecated_variables:
  description: The old names from O(renamed_variables) that are set for the host (each got a warning).
  returned: always
  type: list
  elements: str
  sample: [node_upgrade_trusted_repo]
"""
