# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Version and skew rules of a kubeadm upgrade, and the per-node plan. Pure functions."""

from __future__ import annotations

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _version
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._errors import PluginError

# Feature gates kubeadm removed, by the minor that no longer knows them. kubeadm refuses unknown
# gates, so one left in ClusterConfiguration.featureGates breaks the upgrade to that minor.
# Source: cmd/kubeadm/app/features/features.go of each release (a new minor adds its removals here).
REMOVED_KUBEADM_GATES = {
    # GA and locked in v1.35.4's features.go, absent from v1.36.5's (kubernetes/kubernetes#135773)
    36: ("ControlPlaneKubeletLocalMode",),
    # removed in kubeadm 1.31 (CHANGELOG-1.31; not re-read in the source here)
    31: ("UpgradeAddonsBeforeControlPlane",),
}


class PlanError(PluginError, ValueError):
    """The requested upgrade is not allowed; the message says why."""


def parse(version):
    """'v1.37.2', '1.37.2' or '1.38.0-beta.0' -> the ordering key of _version.key (major, minor, patch, stage, n);
    PlanError for anything else. Whether a pre-release target is allowed is the input check's rule, not this one's."""
    parsed = _version.key(str(version)) if version is not None else None
    if parsed is None:
        raise PlanError(f"{version!r} is not a Kubernetes version like 1.37.2 or 1.38.0-rc.1")
    return parsed


def fmt(version):
    return _version.format_key(version)


def upgrade_steps(current, target, chained=False):
    """Minor versions to pass through from ``current`` to ``target`` (each a target of one upgrade run).

    Same minor (patch upgrade) or the next minor: one step. Further: refused unless ``chained``,
    which steps the control plane through each minor (the caller picks each step's patch).
    """
    cur, tgt = parse(current), parse(target)
    if cur[0] != tgt[0] or cur[0] != 1:
        raise PlanError(f"upgrading {fmt(cur)} to {fmt(tgt)} changes the major version")
    if tgt < cur:
        raise PlanError(f"{fmt(tgt)} is older than the running {fmt(cur)}: kubeadm does not downgrade")
    if tgt[1] - cur[1] <= 1:
        return [fmt(tgt)]
    if not chained:
        raise PlanError(
            f"{fmt(cur)} -> {fmt(tgt)} skips {tgt[1] - cur[1] - 1} minor version(s); kubeadm upgrades one minor at a "
            f"time. Upgrade to 1.{cur[1] + 1} first, or give every hop to skewsafe.kubeadm.upgrade_path (skewsafe_upgrade_path)"
        )
    return [f"1.{minor}" for minor in range(cur[1] + 1, tgt[1])] + [fmt(tgt)]


def cluster_version(node_versions):
    """The control plane's running version: the oldest API server / kubelet version reported."""
    parsed = [parse(v) for v in node_versions if v]
    if not parsed:
        raise PlanError("no node reported a version")
    return fmt(min(parsed))


# How the control planes are upgraded (skewsafe_control_plane_order): every control plane's components first, each
# behind the gates, then the control-plane kubelets one node at a time; or each control plane whole before the
# next (kubeadm's documented order).
CONTROL_PLANE_ORDERS = ("components_first", "node_by_node")
DEFAULT_CONTROL_PLANE_ORDER = "components_first"  # the playbooks' skewsafe_control_plane_order default
_KUBELET_LATER = "the kubelet once every control plane's components run the target"


def _check_order(order):
    if order not in CONTROL_PLANE_ORDERS:
        raise PlanError(f"the control-plane order must be one of {', '.join(CONTROL_PLANE_ORDERS)}, not {order!r}")


def node_plan(name, kubelet_version, target, role, order=DEFAULT_CONTROL_PLANE_ORDER, components_version=None):
    """What happens to one node: ``{"node", "role", "from", "to", "action"}``.

    ``action`` names only the kubeadm command and whether the gate follows: the roles own the steps. With
    ``order="components_first"`` a control plane's kubelet comes after every control plane's components;
    ``components_version`` (its kube-apiserver's) at the target means only its kubelet is left.
    """
    _check_order(order)
    cur, tgt = parse(kubelet_version), parse(target)
    if cur == tgt:
        return {
            "node": name,
            "role": role,
            "from": fmt(cur),
            "to": fmt(tgt),
            "action": "skip (already at target)",
        }
    if cur > tgt:
        raise PlanError(f"{name} runs kubelet {fmt(cur)}, newer than the target {fmt(tgt)}")
    if tgt[1] - cur[1] > 3:
        raise PlanError(f"{name} runs kubelet {fmt(cur)}, more than three minors behind {fmt(tgt)}")
    kubeadm = "kubeadm upgrade apply" if role == "first_control_plane" else "kubeadm upgrade node"
    if role == "worker":
        action = f"upgrade ({kubeadm}, then the kubelet)"
    elif order == "node_by_node":
        action = f"upgrade ({kubeadm}, then the MVP gate, then the kubelet)"
    elif components_version is not None and parse(components_version) == tgt:
        action = f"upgrade (components at the target; {_KUBELET_LATER})"
    else:
        action = f"upgrade ({kubeadm}, then the MVP gate; {_KUBELET_LATER})"
    return {"node": name, "role": role, "from": fmt(cur), "to": fmt(tgt), "action": action}


def run_order(nodes, target, order=DEFAULT_CONTROL_PLANE_ORDER):
    """The steps of an upgrade run in the order the playbook takes them: ``[{"step", "node", "phase", "what"}]``.

    ``nodes``: ``[{"node", "role", "kubelet", "components"}]`` in inventory order (``components``: the control
    plane's kube-apiserver version; workers have none). The first control plane comes first whatever its place.
    Nodes with nothing left get no step (a rerun shows only what is left). The MVP gate after a control plane's
    components is mixed while another control plane's components stay a minor behind, steady after the last.
    """
    _check_order(order)
    tgt = parse(target)
    cps = [n for n in nodes if n.get("role") != "worker"]
    cps.sort(key=lambda n: n.get("role") != "first_control_plane")  # stable: the rest keep their order
    workers = [n for n in nodes if n.get("role") == "worker"]

    def behind(version):
        return version is not None and parse(version) != tgt

    components = [n for n in cps if behind(n.get("components"))]
    kubelets = [n for n in cps if behind(n.get("kubelet"))]
    running = [parse(n["components"]) for n in cps if n.get("components")]
    minor_upgrade = bool(running) and min(running)[1] < tgt[1]
    steps = []

    def add(node, phase, what):
        steps.append({"step": len(steps) + 1, "node": node["node"], "phase": phase, "what": what})

    def components_step(i, node):
        kubeadm = "kubeadm upgrade apply" if node.get("role") == "first_control_plane" else "kubeadm upgrade node"
        mode = "mixed" if minor_upgrade and i < len(components) - 1 else "steady"
        return f"{kubeadm}, health gate, MVP gate ({mode})"

    kubelet_step = "drain, kubelet and kubectl, restart, health gate, uncordon"
    if order == "components_first":
        for node in cps:
            if node in components:
                add(node, "control-plane components", components_step(components.index(node), node))
            elif node in kubelets:  # a rerun: its components are done, its kubelet is not
                add(node, "control-plane components", "already at the target: health gate, MVP gate")
        for node in kubelets:
            add(node, "control-plane kubelet", kubelet_step)
    else:
        for node in cps:
            if node in components:
                add(node, "control plane", f"{components_step(components.index(node), node)}, {kubelet_step}")
            elif node in kubelets:
                add(node, "control plane", f"components at the target: health gate, MVP gate, {kubelet_step}")
    for node in workers:
        if behind(node.get("kubelet")):
            add(node, "worker", "kubeadm upgrade node, drain, kubelet and kubectl, restart, uncordon")
    return steps


# Kubelets may run up to three minors behind kube-apiserver: no path is longer than that.
MAX_PATH_HOPS = 3


def path_hops(path, versions):
    """The hops of ``path`` (versions, one per minor, oldest first) still to run, given the versions the cluster
    runs (every kube-apiserver and every kubelet): a hop is passed once all of them run it or newer, so a rerun
    starts at the hop that was interrupted. PlanError for a path that is not one minor per hop."""
    if not isinstance(path, (list, tuple)) or not path:
        raise PlanError(
            f"the upgrade path must be a non-empty list of versions like ['1.36.5', '1.37.2'], got {path!r}"
        )
    if len(path) > MAX_PATH_HOPS:
        raise PlanError(
            f"the upgrade path has {len(path)} hops; kubelets may be at most {MAX_PATH_HOPS} minors behind, so a path "
            f"has at most {MAX_PATH_HOPS}"
        )
    hops = [parse(v) for v in path]
    for before, after in zip(hops, hops[1:]):
        if after[0] != before[0] or after[1] != before[1] + 1:
            raise PlanError(f"the upgrade path goes {fmt(before)} -> {fmt(after)}: each hop must be the next minor")
    running = [parse(v) for v in versions if v]
    if not running:
        raise PlanError("no kube-apiserver or kubelet reported a version")
    oldest, newest = min(running), max(running)
    if hops[0][1] > oldest[1] + 1:
        raise PlanError(
            f"the upgrade path starts at {fmt(hops[0])} but the cluster runs {fmt(oldest)}: start at 1.{oldest[1] + 1}"
        )
    if newest > hops[-1]:
        raise PlanError(f"the cluster runs {fmt(newest)}, newer than the path's end {fmt(hops[-1])}")
    return [fmt(h) for h in hops if h > oldest]


def removed_gates(feature_gates, target):
    """Gates in ClusterConfiguration.featureGates that the target kubeadm no longer knows."""
    tgt_minor = parse(target)[1]
    removed = set()
    for minor, gates in REMOVED_KUBEADM_GATES.items():
        if minor <= tgt_minor:
            removed |= set(gates)
    return sorted(set(feature_gates or {}) & removed)


def hostname_problems(hostnames):
    """Control-plane host names that break identity leases: longer than 63 bytes, or duplicated."""
    problems = []
    seen = {}
    for name in hostnames:
        if len(name.encode()) > 63:
            problems.append(f"host name {name!r} is {len(name.encode())} bytes (identity leases allow 63)")
        seen[name.lower()] = seen.get(name.lower(), 0) + 1
    problems += [f"host name {name!r} is used by {count} control planes" for name, count in seen.items() if count > 1]
    return problems
