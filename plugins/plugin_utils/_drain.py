# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection.
"""A drain's rules over Pods, workloads and PDBs as the API lists them: what it evicts, what blocks it."""

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


# --- what a drain does with each Pod (kubectl drain's filters, k8s.io/kubectl/pkg/drain/filters.go) ---------------
#
# kubectl takes a Pod's controller (the owner reference with controller: true) and asks, in this order: a DaemonSet's
# Pod is left (--ignore-daemonsets), whatever it mounts (its DaemonSet puts it back on the node at once); a mirror Pod
# is left (the kubelet owns it); a Pod with emptyDir data is evicted only when that data may go; a Pod without a
# controller only with --force (nothing recreates it). A Pod that has finished is evicted without these questions.
# Any refused Pod stops the drain before anything is evicted.

FINISHED = ("Succeeded", "Failed")
# Workloads whose status tells whether every replica is available again (the drain waits for them afterwards).
JUDGED_KINDS = ("ReplicaSet", "StatefulSet", "ReplicationController")


def pod_key(pod):
    meta = pod.get("metadata") or {}
    return f"{meta.get('namespace')}/{meta.get('name')}"


def controller(pod):
    """The Pod's controller reference (``kind``, ``name``, ``uid``), or None."""
    for ref in (pod.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return ref
    return None


def _has_local_data(pod):
    return any("emptyDir" in (volume or {}) for volume in (pod.get("spec") or {}).get("volumes") or [])


def classify(pods, force=False, delete_emptydir_data=True, missing_daemonsets=()):
    """What a drain does with each Pod of the node.

    ``missing_daemonsets``: ``namespace/name`` of DaemonSets named as controllers that do not exist (their Pods
    are nobody's: evicted with ``force``, refused without). Returns ``{"evict", "terminating", "left", "refused"}``:
    Pods to evict, Pods already being deleted (waited for, not evicted again), ``{"pod", "why"}`` of Pods left on the
    node, and ``{"pod", "why"}`` of Pods that stop the drain.
    """
    out = {"evict": [], "terminating": [], "left": [], "refused": []}
    for pod in pods or []:
        meta = pod.get("metadata") or {}
        key, owner = pod_key(pod), controller(pod)
        finished = (pod.get("status") or {}).get("phase") in FINISHED
        if meta.get("deletionTimestamp"):
            out["terminating"].append(pod)
        elif owner and owner.get("kind") == "DaemonSet":
            if f"{meta.get('namespace')}/{owner.get('name')}" not in missing_daemonsets:
                out["left"].append({"pod": key, "why": f"DaemonSet {owner.get('name')}"})
            elif force:
                out["evict"].append(pod)
            else:
                out["refused"].append({"pod": key, "why": f"its DaemonSet {owner.get('name')} does not exist"})
        elif "kubernetes.io/config.mirror" in (meta.get("annotations") or {}):
            out["left"].append({"pod": key, "why": "static Pod (mirror)"})
        elif finished:
            out["evict"].append(pod)
        elif _has_local_data(pod) and not delete_emptydir_data:
            out["refused"].append({"pod": key, "why": "emptyDir data, which the drain may not delete"})
        elif owner is None and not force:
            out["refused"].append({"pod": key, "why": "no controller: nothing would recreate it"})
        else:
            out["evict"].append(pod)
    return out


def workload_of(pod):
    """``{"kind", "namespace", "name"}`` of the workload whose availability a drain of the Pod is judged by."""
    owner = controller(pod)
    if not owner or owner.get("kind") not in JUDGED_KINDS or (pod.get("status") or {}).get("phase") in FINISHED:
        return None
    return {"kind": owner["kind"], "namespace": (pod.get("metadata") or {}).get("namespace"), "name": owner["name"]}


def covering_budgets(pods, pdbs):
    """Each PodDisruptionBudget that covers one of ``pods`` (same namespace, selector matches), as the PDB dicts."""
    found = []
    for pdb in pdbs or []:
        meta, spec = pdb.get("metadata") or {}, pdb.get("spec") or {}
        if any(
            (p.get("metadata") or {}).get("namespace") == meta.get("namespace")
            and _matches(spec.get("selector"), (p.get("metadata") or {}).get("labels") or {})
            for p in pods or []
        ):
            found.append(pdb)
    return found


def available(obj, kind=None):
    """The workload is whole again and its status is current.

    A ReplicaSet, StatefulSet or ReplicationController: every replica it wants is available (minReadySeconds
    included). A PodDisruptionBudget: it allows a disruption again, so the next node's drain is not refused by it.
    """
    spec, status = obj.get("spec") or {}, obj.get("status") or {}
    generation = (obj.get("metadata") or {}).get("generation")
    if generation is not None and status.get("observedGeneration", generation) < generation:
        return False
    if (kind or obj.get("kind")) == "PodDisruptionBudget":
        return (status.get("disruptionsAllowed") or 0) >= 1
    wanted = spec.get("replicas", 1)
    return (status.get("availableReplicas") or 0) >= wanted
