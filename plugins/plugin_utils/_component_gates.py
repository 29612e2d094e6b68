# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Component feature gates in kubeadm-config that the target's kube-apiserver, kube-controller-manager or
kube-scheduler refuses at start-up (removed, or locked to the other value), from the measured table."""

from __future__ import annotations

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._component_gates_table import (
    LOCKED,
    MEASURED_VERSIONS,
    REMOVED,
)

# ClusterConfiguration section -> the component its extraArgs go to
SECTIONS = {
    "apiServer": "kube-apiserver",
    "controllerManager": "kube-controller-manager",
    "scheduler": "kube-scheduler",
}
MEASURED_MINORS = frozenset(int(v.split(".")[1]) for v in MEASURED_VERSIONS)


def _word(value):
    return "true" if value else "false"


def refused(component, gates, target_minor):
    """Why ``component`` at 1.<target_minor> would not start with ``gates`` (name -> bool): one line per gate.

    A minor outside the measured versions is not judged (nothing is known about it)."""
    removed = set(REMOVED.get(component, {}).get(target_minor, ()))
    locked = LOCKED.get(component, {}).get(target_minor, {})
    out = []
    for name, value in sorted(gates.items()):
        if name in removed:
            out.append(f"{name}: {component} 1.{target_minor} no longer knows this gate and would not start")
        elif name in locked and locked[name] != value:
            out.append(
                f"{name}={_word(value)}: {component} 1.{target_minor} accepts only {_word(locked[name])} "
                "(the gate is locked) and would not start"
            )
    return out
