# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection.
"""Cordon and uncordon a Node together with the collection's mark: one optimistic write each.

The mark (an annotation) tells the collection's own cordon from an operator's: only a marked node is
uncordoned, by this run or by the rerun after a killed one. The cordon and the mark go in one patch, so no
run can be killed between them.
"""

from __future__ import annotations

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._errors import PluginError

STATES = ("cordoned", "uncordoned")


class CordonError(PluginError):
    """The Node could not be read or written."""


def view(node, mark):
    """What this module owns on a Node: its cordon and the mark."""
    annotations = (node.get("metadata") or {}).get("annotations") or {}
    return {
        "unschedulable": bool((node.get("spec") or {}).get("unschedulable")),
        "mark": annotations.get(mark),
    }


def plan(node, state, mark, mark_value=None):
    """The patch that brings ``node`` to ``state`` (None when nothing changes) and what was found.

    cordoned: a node an operator cordoned (no mark) is left alone; otherwise cordon and set the mark to
    ``mark_value``. uncordoned: only a marked node is uncordoned (and the mark removed); an unmarked cordoned
    node is the operator's and stays cordoned.
    """
    if state not in STATES:
        raise ValueError(f"state must be one of {', '.join(STATES)}, not {state!r}")
    before = view(node, mark)
    operators = before["unschedulable"] and before["mark"] is None
    if state == "cordoned":
        after = before if operators else {"unschedulable": True, "mark": mark_value}
    else:
        after = {"unschedulable": False, "mark": None} if before["mark"] is not None else before
    patch = None
    if after != before:
        patch = {
            # resourceVersion makes the write conditional: a Node changed since the read answers 409.
            "metadata": {
                "resourceVersion": (node.get("metadata") or {}).get("resourceVersion"),
                "annotations": {mark: after["mark"]},
            },
            "spec": {"unschedulable": after["unschedulable"]},
        }
    return patch, {"before": before, "after": after, "cordoned_by_operator": operators}
