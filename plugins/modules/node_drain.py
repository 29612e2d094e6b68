#!/usr/bin/python
# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: node_drain
short_description: Drain a Node as kubectl drain does, then wait until what it evicted is whole again
version_added: 0.1.0
description:
  - V(drained) lists the Pods on the Node and decides for each what C(kubectl drain --ignore-daemonsets) decides, in
    kubectl's order; a DaemonSet's Pod is left on the node whatever it mounts (its DaemonSet would put it back at
    once), a mirror Pod is left, a finished Pod is evicted, a Pod with C(emptyDir) data is evicted only with
    O(delete_emptydir_data), and a Pod without a controller (or whose DaemonSet is gone) only with O(force).
  - When any Pod would stop the drain, nothing is evicted and the task fails with every such Pod (RV(refused)). In
    check mode the task reports the same decisions and evicts nothing, so a preflight names them before any change.
  - Evicts through the Eviction API (PodDisruptionBudgets are respected) with the Pod's uid as a precondition, retries
    the evictions a PodDisruptionBudget refuses every O(retry_delay) seconds, and waits until every evicted Pod is gone,
    all within O(timeout). When it runs out it fails with the Pods left (RV(remaining)) and the budgets that block
    them (RV(blockers)).
  - Before it evicts, it records for each ReplicaSet, StatefulSet and ReplicationController of an evicted Pod whether
    every replica was available, and for each PodDisruptionBudget covering an evicted Pod whether it allowed a
    disruption (RV(workloads)). V(settled) takes that list and waits until each workload that was whole before the
    drain is whole again and each such budget allows a disruption again, so the next node is not drained while the
    replicas evicted from this one are still starting elsewhere; one that was not whole before is not waited for
    (RV(not_waited)).
  - Runs on the controller in one process; it replaces M(kubernetes.core.k8s_drain), which checks C(emptyDir) before
    the owner (and so evicts DaemonSet Pods that mount one) and retries refused evictions for a fixed time.
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
    details:
      - V(drained) reports what it would evict, leave and refuse; V(settled) only reads, and waits in check mode too.
  diff_mode:
    support: none
  idempotent:
    support: full
    details:
      - A drained Node has nothing left to evict (C(changed=false)).
options:
  name:
    description: The Node. Required with O(state=drained).
    type: str
  state:
    description:
      - V(drained) evicts the Node's Pods and waits until they are gone; V(settled) waits until the O(workloads) a
        drain evicted are whole again.
    type: str
    choices: [drained, settled]
    default: drained
  force:
    description: Evict Pods without a controller too (nothing recreates them), as C(kubectl drain --force).
    type: bool
    default: false
  delete_emptydir_data:
    description: Evict Pods with C(emptyDir) data (it is lost), as C(kubectl drain --delete-emptydir-data).
    type: bool
    default: true
  grace_period:
    description: Termination grace period forced on evicted Pods; unset, each Pod's own.
    type: int
  timeout:
    description:
      - Seconds the whole task may take. With O(state=drained) it holds the evictions and the wait until the evicted
        Pods are gone; with O(state=settled) the wait for the workloads.
    type: int
    default: 300
  retry_delay:
    description: Seconds between attempts to evict the Pods a PodDisruptionBudget refuses.
    type: int
    default: 5
  poll:
    description: Seconds between reads while waiting.
    type: int
    default: 2
  workloads:
    description: With O(state=settled), the RV(workloads) of the drain (each C(kind), C(namespace), C(name), C(available_before)).
    type: list
    elements: dict
    default: []
  request_timeout:
    description: Seconds for each API request (a hung API server must not stall the run).
    type: int
    default: 30
notes:
  - Needs the C(kubernetes) Python library on the controller, list and get on Pods, create on C(pods/eviction), get on
    DaemonSets, ReplicaSets, StatefulSets and ReplicationControllers, and list on PodDisruptionBudgets.
  - It does not cordon. Cordon first with M(skewsafe.kubeadm.node_cordon), or the evicted Pods may come back.
seealso:
  - module: skewsafe.kubeadm.node_cordon
  - name: kubectl drain
    description: The rules this drain follows.
    link: https://kubernetes.io/docs/tasks/administer-cluster/safely-drain-node/
"""

EXAMPLES = r"""
- name: Name the Pods a drain would stop at, before any change
  skewsafe.kubeadm.node_drain:
    kubeconfig: "{{ skewsafe_kubeconfig }}"
    name: worker-1
  check_mode: true
  register: drain_plan
  failed_when: false

- name: Drain
  skewsafe.kubeadm.node_drain:
    kubeconfig: "{{ skewsafe_kubeconfig }}"
    name: worker-1
    timeout: 600
  register: drain

- name: Wait until the replicas evicted from worker-1 are available elsewhere
  skewsafe.kubeadm.node_drain:
    kubeconfig: "{{ skewsafe_kubeconfig }}"
    state: settled
    workloads: "{{ drain.workloads }}"
    timeout: 300
"""

RETURN = r"""
name:
  description: The Node.
  returned: always
  type: str
  sample: worker-1
evicted:
  description: C(namespace/name) of the Pods evicted (in check mode, that would be).
  returned: state=drained
  type: list
  elements: str
  sample: [default/web-5d9c7-abcde]
left:
  description: Pods left on the node, each with C(pod) and C(why) (a DaemonSet's, a mirror Pod).
  returned: state=drained
  type: list
  elements: dict
  sample: [{pod: kube-system/kube-proxy-x7k2p, why: DaemonSet kube-proxy}]
refused:
  description: Pods that stop the drain, each with C(pod) and C(why); non-empty only when the task failed.
  returned: state=drained
  type: list
  elements: dict
  sample: [{pod: default/debug, why: "no controller: nothing would recreate it"}]
workloads:
  description:
    - Each ReplicaSet, StatefulSet and ReplicationController of an evicted Pod, and whether every replica was available
      before the drain; then each PodDisruptionBudget covering an evicted Pod, and whether it allowed a disruption.
  returned: state=drained
  type: list
  elements: dict
  sample: [{kind: ReplicaSet, namespace: default, name: web-5d9c7, available_before: true}]
remaining:
  description: Pods still refused or still terminating when the timeout ran out.
  returned: when the drain ran out of time
  type: list
  elements: str
blockers:
  description: C(namespace/name) of the PodDisruptionBudgets that allow no disruption and cover a Pod left on the node.
  returned: when the drain ran out of time
  type: list
  elements: str
  sample: [default/web]
settled:
  description: C(kind/namespace/name) of the workloads waited for until whole again.
  returned: state=settled
  type: list
  elements: str
not_waited:
  description: Workloads not waited for because they were not whole before the drain.
  returned: state=settled
  type: list
  elements: str
not_settled:
  description: Workloads not whole again when the timeout ran out.
  returned: state=settled, when it failed
  type: list
  elements: str
waited_seconds:
  description: Seconds the settle wait took.
  returned: state=settled
  type: float
  sample: 12.3
"""
