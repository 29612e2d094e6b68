#!/usr/bin/python
# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: control_plane_health
short_description: Wait until a control-plane node is whole again before the next node is touched
version_added: 0.1.0
description:
  - After kubeadm or a kubelet restart changed a control-plane node, waits (bounded) until the node is whole
    again, so that two control planes are never restarting at once.
  - "Whole means: every kubeadm static Pod manifest on the node (etcd where stacked, kube-apiserver,
    kube-controller-manager, kube-scheduler) is what its mirror Pod in the API shows, its container runs the
    manifest's image and is Ready; the node's kube-apiserver answers C(/readyz) at its advertise address
    directly (not through a load balancer), verified against the cluster CA; and every etcd member is healthy
    (which needs a leader)."
  - "etcd: stacked (an etcd manifest on the node) is checked with C(etcdctl endpoint health --cluster) inside
    the running etcd container, with kubeadm's health-check client certificate; external etcd through the
    C(/health) endpoint of each server in kube-apiserver's C(--etcd-servers), with the client certificate
    kube-apiserver uses, dialled from the node."
  - The node-side reads (manifests, C(/readyz), etcd) run on the target host through
    M(skewsafe.kubeadm.static_pod_manifests_info) (every manifest in one module run), ansible.builtin.uri and
    ansible.builtin.command, so they need privilege escalation for a non-root user.
    The Pods are read from the API on the controller.
  - Passes after O(success_threshold) consecutive whole rounds; fails at O(wait_timeout) naming everything that
    is not whole.
author:
  - skewsafe developers (@skewsafe)
extends_documentation_fragment:
  - skewsafe.kubeadm._auth
  - skewsafe.kubeadm._control_plane_node
  - skewsafe.kubeadm._attributes
  - skewsafe.kubeadm._attributes.actiongroup_kubeadm
  - skewsafe.kubeadm._attributes.controller_action
attributes:
  check_mode:
    support: none
    details: In check mode nothing changed that it would wait for; it returns skipped.
  diff_mode:
    support: none
  idempotent:
    support: full
options:
  ca_file:
    description:
      - The cluster CA on the node, to verify the kube-apiserver's serving certificate.
    type: path
    default: /etc/kubernetes/pki/ca.crt
  expected_version:
    description:
      - When given (for example V(v1.37.2)), the kube-apiserver, kube-controller-manager and kube-scheduler
        manifests must have this image tag; a kubeadm step that left one behind fails instead of passing.
    type: str
  etcd:
    description:
      - V(auto) checks stacked etcd when the node has an etcd manifest, else the external servers.
      - V(skip) does not check etcd.
    type: str
    choices: [auto, stacked, external, skip]
    default: auto
  wait_timeout:
    description:
      - Seconds to wait before failing.
    type: int
    default: 600
  wait_sleep:
    description:
      - Seconds between rounds.
    type: int
    default: 5
  success_threshold:
    description:
      - Consecutive whole rounds required.
    type: int
    default: 2
  request_timeout:
    description:
      - Seconds for each API request, C(/readyz) and etcd call.
    type: int
    default: 10
notes:
  - Needs the C(kubernetes) Python library on the controller, and list on Pods in C(kube-system).
seealso:
  - module: skewsafe.kubeadm.mvp_check
"""

EXAMPLES = r"""
- name: Control plane | wait until this node is whole before the next one starts
  skewsafe.kubeadm.control_plane_health:
    kubeconfig: "{{ skewsafe_kubeconfig }}"
    node_name: "{{ ansible_facts['nodename'] }}"
    expected_version: v1.37.2
    wait_timeout: 600
  become: true
"""

RETURN = r"""
passed:
  description: Whether the node was whole in O(success_threshold) consecutive rounds.
  returned: always
  type: bool
node:
  description: The node checked.
  returned: always
  type: str
  sample: cp-2
problems:
  description: What kept the node from being whole in the last round; empty when it passed.
  returned: always
  type: list
  elements: str
  sample: ["kube-apiserver: not Ready", "etcd member https://10.0.0.12:2379: context deadline exceeded"]
msg:
  description: One line with the verdict and every problem.
  returned: always
  type: str
  sample: "cp-2 is not whole after 600s: kube-apiserver: not Ready"
attempts:
  description: Rounds run.
  returned: always
  type: int
  sample: 4
elapsed:
  description: Seconds spent.
  returned: always
  type: float
  sample: 21.4
apiserver_url:
  description: The address C(/readyz) was asked at (the advertise address from the manifest).
  returned: always
  type: str
  sample: https://10.0.0.12:6443
components:
  description: Image tag of each static Pod manifest found on the node.
  returned: always
  type: dict
  sample: {"etcd": "3.6.8-0", "kube-apiserver": "v1.37.2", "kube-controller-manager": "v1.37.2", "kube-scheduler": "v1.37.2"}
etcd:
  description: The last round's etcd view.
  returned: always
  type: dict
  contains:
    mode:
      description: V(stacked), V(external) or V(skipped).
      type: str
      sample: stacked
    members:
      description: One entry per member, with C(endpoint), C(healthy) and C(error).
      type: list
      elements: dict
      sample: [{"endpoint": "https://10.0.0.11:2379", "healthy": true, "error": null}]
    error:
      description: Why no member could be asked, if so.
      type: str
      sample: null
"""
