#!/usr/bin/python
# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: control_plane_state_info
short_description: What a control-plane upgrade decides from, read in one task
version_added: 0.1.0
description:
  - Reads, from the live cluster and the node, everything the P(skewsafe.kubeadm.upgrade_left_to_do#filter) filter
    needs to decide what is left on a control plane, so that a run killed anywhere converges on the rerun.
  - "From the API, on the controller, in one process: the C(kubeletVersion) the Node reports, the image tag of every
    kube-apiserver Pod in C(kube-system), C(kubernetesVersion) of kubeadm-config's ClusterConfiguration and the image
    tag of the kube-proxy DaemonSet. Each request is bounded by O(request_timeout)."
  - From the node, in one run of M(skewsafe.kubeadm.static_pod_manifests_info) (so it needs privilege escalation
    for a non-root user), the image tag of the kube-apiserver, kube-controller-manager and kube-scheduler static
    Pod manifests.
  - Read-only. It replaces four M(kubernetes.core.k8s_info) tasks, each of which starts its own Python process
    and imports the client.
author:
  - skewsafe developers (@skewsafe)
extends_documentation_fragment:
  - skewsafe.kubeadm._auth
  - skewsafe.kubeadm._control_plane_node
  - skewsafe.kubeadm._attributes
  - skewsafe.kubeadm._attributes.actiongroup_kubeadm
  - skewsafe.kubeadm._attributes.info_module
  - skewsafe.kubeadm._attributes.controller_action
options:
  request_timeout:
    description:
      - Seconds for each API request (a hung API server must not stall the run).
    type: int
    default: 30
notes:
  - Needs the C(kubernetes) Python library on the controller, get on Nodes, list on Pods and get on ConfigMaps in
    C(kube-system), get on DaemonSets in C(kube-system).
  - A Node that does not exist fails the task; a missing kubeadm-config or kube-proxy DaemonSet is V(None).
seealso:
  - module: skewsafe.kubeadm.control_plane_health
"""

EXAMPLES = r"""
- name: Read what is left on this control plane
  skewsafe.kubeadm.control_plane_state_info:
    kubeconfig: "{{ skewsafe_kubeconfig }}"
    node_name: cp-2
  become: true
  register: observed

- name: Decide
  ansible.builtin.set_fact:
    left: >-
      {{ {'target': '1.37.2', 'role': 'control_plane', 'kubelet': observed.kubelet, 'manifests': observed.manifests,
          'apiservers': observed.apiservers, 'kube_proxy': observed.kube_proxy} | skewsafe.kubeadm.upgrade_left_to_do }}
"""

RETURN = r"""
node:
  description: The Node read.
  returned: always
  type: str
  sample: cp-2
kubelet:
  description: The C(status.nodeInfo.kubeletVersion) the Node reports.
  returned: always
  type: str
  sample: v1.36.5
manifests:
  description: Image tag of each static Pod manifest kubeadm owns on the node; V(None) for a missing manifest.
  returned: always
  type: dict
  sample: {"kube-apiserver": "v1.37.2", "kube-controller-manager": "v1.37.2", "kube-scheduler": "v1.37.2"}
apiservers:
  description: Image tag of every kube-apiserver Pod in C(kube-system) (one per control plane).
  returned: always
  type: list
  elements: str
  sample: ["v1.37.2", "v1.36.5", "v1.36.5"]
cluster_version:
  description: C(kubernetesVersion) of kubeadm-config's ClusterConfiguration; V(None) without kubeadm-config.
  returned: always
  type: str
  sample: v1.37.2
kube_proxy:
  description: Image tag of the kube-proxy container of the kube-proxy DaemonSet; V(None) without one.
  returned: always
  type: str
  sample: v1.36.5
"""
