#!/usr/bin/python
# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: run_lock
short_description: Hold a cluster's upgrade lock (a Lease) so that only one run changes it at a time
version_added: 0.1.0
description:
  - V(present) takes the C(coordination.k8s.io/v1) Lease O(namespace)/O(name) for this C(ansible-playbook) process,
    or renews it when this process holds it already. When another run holds it and renews it, it fails before
    anything changes and names that run (user, host, AWX job, playbook, start time) and when its lease expires. A
    lease whose holder stopped renewing it (a killed or failed run) is taken over once it has expired (waiting up to
    O(wait) seconds for that), and RV(taken_over_from) says whose it was.
  - Time is the API server's (the C(Date) of the answer that carried the Lease), not the controller's.
  - "Every write is conditional: a create fails if another run created the Lease first, an update carries the
    resourceVersion it read; a lost race reads again and decides again."
  - With O(renew), a detached process on the controller renews the Lease every O(duration)/3 seconds for as long as
    this C(ansible-playbook) process lives, and stops with it, so a killed run's lock expires O(duration) seconds
    later.
  - V(absent) deletes the Lease if this process holds it (conditional on its resourceVersion), and leaves another
    run's alone.
  - In check mode V(present) only says what it would do; a lock held by another run still fails the task.
author:
  - skewsafe developers (@skewsafe)
extends_documentation_fragment:
  - skewsafe.kubeadm._auth
  - skewsafe.kubeadm._attributes
  - skewsafe.kubeadm._attributes.controller_action
  - skewsafe.kubeadm._attributes.actiongroup_kubeadm
attributes:
  check_mode:
    support: full
  diff_mode:
    support: none
  idempotent:
    support: full
    details:
      - The lock is the run's own state, not a change to the cluster's workloads or configuration, so neither taking
        nor giving it up reports C(changed) (a rerun of an idempotent playbook stays at C(changed=0)); see
        RV(action) and RV(released).
options:
  state:
    description: V(present) to take or renew the lock, V(absent) to give it up.
    type: str
    choices: [present, absent]
    default: present
  name:
    description: The Lease's name.
    type: str
    default: skewsafe-kubeadm-upgrade
  namespace:
    description: The Lease's namespace.
    type: str
    default: kube-system
  duration:
    description: C(leaseDurationSeconds) - how long the lock outlives its last renewal (at least 15).
    type: int
    default: 45
  wait:
    description:
      - Seconds to watch a lock another run holds. If its holder renews it meanwhile (a live run renews every
        O(duration)/3 seconds), the task fails at once naming it; if it expires unrenewed (its run was killed or
        failed, and its renewer stopped with it), it is taken over. V(0) fails at once.
      - Default O(duration) + 15, so that a rerun right after a failed or killed run takes the lock over.
    type: int
  playbook:
    description: The playbook that takes the lock, recorded for whoever finds it held.
    type: str
    default: upgrade
  renew:
    description: Renew the lock from a detached process while this C(ansible-playbook) lives.
    type: bool
    default: true
  request_timeout:
    description: Seconds for each API request.
    type: int
    default: 30
notes:
  - The holder is recorded in the annotation C(skewsafe.kubeadm/holder) (JSON) and in C(spec.holderIdentity) as
    C(<user>@<host>/<pid>-<start time>).
  - Needs get, create, update and delete on C(leases) in O(namespace).
seealso:
  - module: skewsafe.kubeadm.admin_credential
"""

EXAMPLES = r"""
- name: Take the upgrade lock before the first change
  skewsafe.kubeadm.run_lock:
    kubeconfig: "{{ skewsafe_kubeconfig | default(omit) }}"
    playbook: upgrade
  delegate_to: localhost
  run_once: true

- name: Give it up at the end
  skewsafe.kubeadm.run_lock:
    kubeconfig: "{{ skewsafe_kubeconfig | default(omit) }}"
    state: absent
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
action:
  description: What V(present) did - V(create), V(renew) (this process held it) or V(take_over) (an expired lock).
  returned: when state=present and it succeeded
  type: str
  sample: create
taken_over_from:
  description: Who held the expired lock this run took over; null otherwise.
  returned: when state=present and it succeeded
  type: str
  sample: ops on ctl-1 (AWX job 42), playbook upgrade, started 2026-12-04T10:00:00Z
waited:
  description: Seconds this task watched another run's lock before it took it.
  returned: when state=present and it succeeded
  type: float
expired_for:
  description: Seconds the taken-over lock had been expired, by the API server's clock.
  returned: when taken over
  type: float
released:
  description: Whether V(absent) deleted the Lease (false when another run holds it, or none does).
  returned: when state=absent
  type: bool
holder:
  description: This run's holder identity.
  returned: always
  type: str
  sample: ops@ctl-1/41234-88123
renewer_pid:
  description: The pid of the detached renewer on the controller.
  returned: when the lock was taken with O(renew)
  type: int
"""
