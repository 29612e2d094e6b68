# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection.
"""Which PodDisruptionBudgets keep a drain from finishing: pure rules over Pods and PDBs as the API lists them."""

from __future__ import annotations


def _matches(selector, labels):
    """Kubernetes label selector semantics (matchLabels and matchExpressions); an empty selector matches all."""
    selector = selector or {}
    for key, value in (selector.get("matchLabels") or {}).items():
        if labels.get(key) != value:
            return False
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key"), expr.get("operator"), expr.get("values") or []
        if op == "In" and labels.get(key) not in values:
            return False
        if op == "NotIn" and key in labels and labels[key] in values:
            return False
        if op == "Exists" and key not in labels:
            return False
        if op == "DoesNotExist" and key in labels:
            return False
    return True


def _evictable(pod):
    """A Pod the drain evicts: not owned by a DaemonSet, not a mirror Pod, not already gone."""
    meta = pod.get("metadata") or {}
    if any(ref.get("kind") == "DaemonSet" for ref in meta.get("ownerReferences") or []):
        return False
    if "kubernetes.io/config.mirror" in (meta.get("annotations") or {}):
        return False
    return (pod.get("status") or {}).get("phase") not in ("Succeeded", "Failed")


def blockers(pods, pdbs):
    """``namespace/name`` of each PDB that allows no disruption now and covers a Pod the drain still has to evict."""
    left = [p for p in pods or [] if _evictable(p)]
    found = []
    for pdb in pdbs or []:
        meta, spec, status = pdb.get("metadata") or {}, pdb.get("spec") or {}, pdb.get("status") or {}
        if status.get("disruptionsAllowed", 1) != 0:
            continue
        covered = [
            p
            for p in left
            if (p.get("metadata") or {}).get("namespace") == meta.get("namespace")
            and _matches(spec.get("selector"), (p.get("metadata") or {}).get("labels") or {})
        ]
        if covered:
            found.append(f"{meta.get('namespace')}/{meta.get('name')}")
    return sorted(found)
