#!/usr/bin/python
# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: inputs_check
short_description: Check the inputs of a skewsafe.kubeadm playbook before any host is contacted
version_added: 0.1.0
description:
  - The rules the argument spec cannot express, checked on the controller with no connection to any host, and every
    problem reported at once, each naming the variable to change.
  - "Every playbook: the control-plane group (C(skewsafe_control_plane_group), default V(kube_control_plane)) exists
    and has hosts (a misnamed group lists the groups the inventory has); C(skewsafe_first_control_plane) is one of
    them; the worker group is another group; a C(--limit) keeps every control plane for V(upgrade),
    V(upgrade_path), V(preflight) and V(mvp_enable)."
  - "The target: V(upgrade) and V(preflight) need C(skewsafe_kubernetes_version) as C(X.Y.Z); a pre-release
    (C(X.Y.Z-alpha.N), C(-beta.N), C(-rc.N)) only with C(skewsafe_allow_prerelease=true). V(upgrade_path) takes
    C(skewsafe_upgrade_path) alone: a list of such versions, one minor per hop, at most three, a pre-release only as
    the last."
  - "Forms and contradictions: C(skewsafe_worker_batch_size) (a number or 1%-100%),
    C(skewsafe_worker_max_fail_percentage) (0-100), C(skewsafe_credential_validity) (a duration),
    C(skewsafe_package_repo_key_fingerprint) (a full fingerprint, and not together with
    C(skewsafe_package_repo_trusted)), the load-balancer tasks files (both or neither, absolute, present) and
    C(skewsafe_kubeconfig) (absolute)."
  - Changes nothing.
author:
  - skewsafe developers (@skewsafe)
extends_documentation_fragment:
  - skewsafe.kubeadm._attributes
  - skewsafe.kubeadm._attributes.controller_action
attributes:
  check_mode:
    support: full
    details: Read-only; it runs normally in check mode.
  diff_mode:
    support: none
  idempotent:
    support: full
options:
  playbook:
    description: The playbook whose inputs these are.
    type: str
    required: true
    choices: [upgrade, upgrade_path, preflight, mvp_enable, verify, etcd_backup, prefetch]
  inputs:
    description: The C(skewsafe_*) variables that are set, by name.
    type: dict
    default: {}
  groups:
    description: The inventory's groups, name to hosts (the magic variable C(groups)).
    type: dict
    required: true
  limited_hosts:
    description: The hosts a C(--limit) keeps; unset without one.
    type: list
    elements: str
seealso:
  - module: skewsafe.kubeadm.api_credential_check
"""

EXAMPLES = r"""
- name: Check the inputs of the upgrade before any host is contacted
  skewsafe.kubeadm.inputs_check:
    playbook: upgrade
    inputs: "{{ dict(query('ansible.builtin.varnames', '^skewsafe_') | zip(query('ansible.builtin.vars', *query('ansible.builtin.varnames', '^skewsafe_')))) }}"
    groups: "{{ groups }}"
    limited_hosts: "{{ ansible_play_hosts_all if ansible_limit is defined else omit }}"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
problems:
  description: Each problem, naming the variable to change. Empty when the inputs pass (the task fails otherwise).
  returned: always
  type: list
  elements: str
  sample: ["skewsafe_kubernetes_version: 1.38.0-rc.1 is a pre-release. Upgrading to one is refused unless ..."]
"""
