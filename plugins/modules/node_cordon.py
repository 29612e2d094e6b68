#!/usr/bin/python
# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: node_cordon
short_description: Cordon or uncordon a Node together with a mark that says who cordoned it
version_added: 0.1.0
description:
  - Cordons a Node and sets an annotation (the mark) in one conditional write, or uncordons it and removes the mark
    in one conditional write. The mark tells the collection's own cordon from an operator's, so a rerun after a
    killed run uncordons what the collection cordoned and nothing else.
  - V(cordoned) leaves a Node that is cordoned without the mark alone (the operator's cordon) and reports
    RV(cordoned_by_operator); otherwise it cordons the Node and sets the mark to O(mark_value) (changed only when
    either differs).
  - V(uncordoned) uncordons and unmarks a Node that carries the mark; a Node cordoned without the mark stays
    cordoned and is reported with RV(cordoned_by_operator).
  - Each write carries the resourceVersion of the read before it; a Node changed in between (its status while the
    kubelet restarts) is read again and the write planned again, up to five times.
  - Runs on the controller in one process; it replaces a M(kubernetes.core.k8s_info), a M(kubernetes.core.k8s)
    and a M(kubernetes.core.k8s_drain) task.
author:
  - skewsafe developers (@skewsafe)
extends_documentation_fragment:
  - skewsafe.kubeadm._auth
  - skewsafe.kubeadm._attributes
  - skewsafe.kubeadm._attributes.actiongroup_kubeadm
  - skewsafe.kubeadm._attributes.controller_action
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
    details:
      - The diff shows the Node's C(spec.unschedulable) and the mark's value before and after.
  idempotent:
    support: full
options:
  name:
    description: The Node.
    type: str
    required: true
  state:
    description:
      - V(cordoned) cordons and marks the Node unless an operator cordoned it; V(uncordoned) uncordons and unmarks a
        marked Node.
    type: str
    required: true
    choices: [cordoned, uncordoned]
  mark:
    description: The annotation that marks a cordon as this collection's.
    type: str
    default: skewsafe.kubeadm/cordoned
  mark_value:
    description:
      - The mark's value with O(state=cordoned), for whoever looks at the Node (why it is cordoned). Required with
        O(state=cordoned).
    type: str
  request_timeout:
    description:
      - Seconds for each API request (a hung API server must not stall the run).
    type: int
    default: 30
notes:
  - Needs the C(kubernetes) Python library on the controller, and get and patch on Nodes.
  - It does not drain. Drain with M(kubernetes.core.k8s_drain) after the cordon (it finds the Node cordoned).
seealso:
  - module: kubernetes.core.k8s_drain
"""

EXAMPLES = r"""
- name: Cordon, unless the operator already did
  skewsafe.kubeadm.node_cordon:
    kubeconfig: "{{ skewsafe_kubeconfig }}"
    name: worker-1
    state: cordoned
    mark_value: upgrade to v1.37.2
  register: cordon

- name: Uncordon what this collection cordoned (an operator's cordon stays)
  skewsafe.kubeadm.node_cordon:
    kubeconfig: "{{ skewsafe_kubeconfig }}"
    name: worker-1
    state: uncordoned
  register: uncordon

- name: Say when the operator's cordon was kept
  ansible.builtin.debug:
    msg: worker-1 stays cordoned, as the operator left it
  when: uncordon.cordoned_by_operator
"""

RETURN = r"""
name:
  description: The Node.
  returned: always
  type: str
  sample: worker-1
cordoned_by_operator:
  description: The Node was cordoned without the mark when it was read (an operator's cordon, left as it is).
  returned: always
  type: bool
  sample: false
unschedulable:
  description: C(spec.unschedulable) after the task (in check mode, what it would be).
  returned: always
  type: bool
  sample: true
mark:
  description: The mark's value after the task (in check mode, what it would be); V(None) without the mark.
  returned: always
  type: str
  sample: upgrade to v1.37.2
"""
