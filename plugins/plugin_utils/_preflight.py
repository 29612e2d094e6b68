# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Upgrade preflight: every problem found in the collected data, at once. Pure function."""

from __future__ import annotations

import json

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._extra_args import (
    FEATURE_GATES_ARG,
    ExtraArgsError,
    parse_feature_gates,
)
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._kubeadm_config import (
    HAS_YAML,
    V1BETA4,
    KubeadmConfig,
    KubeadmConfigError,
)
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _component_gates as component_gates
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _kubelet_flags as kubelet_flags
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _upgrade_plan as plan


def _ready(obj):
    for cond in (obj.get("status") or {}).get("conditions") or []:
        if cond.get("type") == "Ready":
            return cond.get("status") == "True"
    return False


def _same(version, target):
    try:
        return plan.parse(version) == plan.parse(target)
    except plan.PlanError:
        return False


def _count(value, total):
    """An intOrString PDB field (``2`` or ``"50%"``) as a pod count; percentages round up like the API does."""
    if value is None:
        return None
    text = str(value)
    if text.endswith("%"):
        return -(-int(text[:-1]) * total // 100)
    return int(text)


def blocked_pdbs(pdbs):
    """PodDisruptionBudgets that allow no eviction now and never will at their current scale."""
    out = []
    for pdb in pdbs or []:
        spec, status = pdb.get("spec") or {}, pdb.get("status") or {}
        if status.get("disruptionsAllowed", 1) != 0:
            continue
        expected = status.get("expectedPods") or 0
        if expected == 0:
            continue  # selects no pods: blocks nothing
        max_unavailable, min_available = spec.get("maxUnavailable"), spec.get("minAvailable")
        if max_unavailable is not None and _count(max_unavailable, expected) == 0:
            why = f"maxUnavailable {max_unavailable}"
        elif min_available is not None and _count(min_available, expected) >= expected:
            why = f"minAvailable {min_available} of {expected} pods"
        else:
            continue  # some pods not healthy right now: may allow a disruption once they are
        meta = pdb.get("metadata") or {}
        out.append(f"{meta.get('namespace')}/{meta.get('name')} ({why})")
    return out


def _kubeadm_config_problems(cfg_text, target, running=None):
    """What in kubeadm-config's ClusterConfiguration stops the target kubeadm (or, for MVP, the ``running``
    kube-apiserver version, else the configuration's), read with the collection's model."""
    try:
        config = KubeadmConfig(cfg_text)
    except KubeadmConfigError as exc:
        return [f"kubeadm-config: {exc}"]
    problems = []
    if config.api_version != V1BETA4:
        problems.append(
            f"kubeadm-config: ClusterConfiguration is {config.api_version}; kubeadm 1.36+ reads only v1beta4 "
            "(kubeadm 1.31+ stores v1beta4 after an upgrade; migrate with 'kubeadm config migrate')"
        )
    removed = plan.removed_gates(config.cluster.get("featureGates"), target)
    if removed:
        problems.append(
            f"kubeadm-config: featureGates {', '.join(removed)} no longer exist in kubeadm {target} and would make "
            "it fail; remove them from the ClusterConfiguration first"
        )
    problems += _component_gate_problems(config, target)
    mvp = config.mvp_problem(running)
    if mvp:
        problems.append(f"kubeadm-config: {mvp}")
    return problems


def _component_gate_problems(config, target):
    """Feature gates in the components' extraArgs that the target components refuse (they would not start
    after kubeadm renders them): found before the first change, with the way out."""
    minor = plan.parse(target)[1]
    if minor not in component_gates.MEASURED_MINORS:
        return []
    problems = []
    options = {"apiServer": "feature_gates", "controllerManager": "controller_manager_feature_gates"}
    for section, component in component_gates.SECTIONS.items():
        option = options.get(section, "scheduler_feature_gates")
        gates = {}
        try:
            for value in config.component_args(section).values(FEATURE_GATES_ARG):
                gates.update(parse_feature_gates(value))
        except ExtraArgsError as exc:
            problems.append(f"kubeadm-config: {section}.extraArgs: {exc}")
            continue
        for why in component_gates.refused(component, gates, minor):
            problems.append(
                f"kubeadm-config: {section}.extraArgs feature-gates {why}; remove it from the ClusterConfiguration "
                f"first (skewsafe.kubeadm.cluster_config with {option}: {{<gate>: null}})"
            )
    return problems


# What to do about a refused gate, by where it is set.
_GATE_REMEDY = {
    "config": "remove it there and from the kubelet-config ConfigMap and any kubeletconfiguration patch (kubeadm "
    "upgrade node rewrites this file from them)",
    "flags": "remove it from --feature-gates in this file (the kubelet reads it at every start)",
    "manifest": "remove it from kubeadm-config's extraArgs too (the upgrade renders the manifest from it)",
}


def _node_gate_problems(hosts, target):
    """Gates a node sets for its kubelet or static Pods (``gate_files``: the node read) that the target refuses."""
    minor = plan.parse(target)[1]
    if minor not in component_gates.MEASURED_MINORS:
        return []
    problems = []
    for host, facts in hosts.items():
        node = facts.get("node_name") or host
        for path, component, gates, error in component_gates.node_sources(facts.get("gate_files")):
            if error:
                problems.append(f"node {node}: {path}: its feature gates cannot be read ({error})")
                continue
            kind = (
                "config"
                if path == component_gates.KUBELET_CONFIG
                else "flags"
                if component == "kubelet"
                else "manifest"
            )
            for why in component_gates.refused(component, gates, minor):
                problems.append(f"node {node}: {path}: feature-gates {why}; {_GATE_REMEDY[kind]}")
    return problems


def _kubelet_config_problems(text, target):
    """Gates in the kubelet-config ConfigMap, which kubeadm upgrade node writes to every node's kubelet."""
    minor = plan.parse(target)[1]
    if not text or minor not in component_gates.MEASURED_MINORS:
        return []
    try:
        gates = component_gates.kubelet_config_gates(text)
    except ValueError as exc:
        return [f"kubelet-config: {exc}"]
    return [
        f"kubelet-config: the ConfigMap's KubeletConfiguration featureGates {why}; remove it from the ConfigMap "
        "kube-system/kubelet-config before the upgrade (kubeadm upgrade node writes it to every node)"
        for why in component_gates.refused("kubelet", gates, minor)
    ]


def _upgraded(node_plans):
    """The nodes whose kubelet the run upgrades (drained, their kubelet configuration rewritten)."""
    return {p["node"] for p in node_plans if not p["action"].startswith("skip")}


def _kubelet_drift_problems(hosts, node_plans):
    """Settings only a node's own kubelet configuration has, which ``kubeadm upgrade node`` would drop or change
    (``kubelet_config_drift``: the kubelet_config_drift filter's result on that node) on a node the run upgrades."""
    upgraded = _upgraded(node_plans)
    problems = []
    for host, facts in hosts.items():
        node, drift = facts.get("node_name") or host, facts.get("kubelet_config_drift") or {}
        changes = (drift.get("lost") or []) + (drift.get("altered") or [])
        if node in upgraded and changes and not drift.get("accepted"):
            problems.append(
                f"node {node}: kubeadm upgrade node rewrites {component_gates.KUBELET_CONFIG} from the ConfigMap"
                f" kube-system/kubelet-config (and the patches directory), which would drop or change: {'; '.join(changes)}."
                " Carry them in that ConfigMap (every node) or a kubeletconfiguration patch in"
                " skewsafe_kubeadm_patches_dir (this node), or accept the loss with skewsafe_accept_kubelet_config_drift=true"
            )
    return problems


def _cluster_feature_gates(cfg_text):
    if not cfg_text or not HAS_YAML:
        return {}
    try:
        return KubeadmConfig(cfg_text).cluster.get("featureGates") or {}
    except KubeadmConfigError:
        return {}  # reported by _kubeadm_config_problems


def with_kubelet_flags_drift(hosts, target, cfg_text):
    """``hosts`` with each host's ``kubelet_flags_drift`` (what the target kubeadm does to its kubeadm-flags.env),
    from the node read the preflight role keeps (``gate_files``)."""
    gates = _cluster_feature_gates(cfg_text)
    out = {}
    for host, facts in hosts.items():
        if facts.get("gate_files") is None:  # not read (preflight_check_drift off in the node play)
            out[host] = facts
            continue
        files = {
            path: text.strip() + "\n" for path, text in component_gates.node_files(facts.get("gate_files")).items()
        }
        out[host] = dict(facts, kubelet_flags_drift=kubelet_flags.drift(files, target, gates))
    return out


def _kubelet_flags_problems(hosts, node_plans, accepted):
    """What the target kubeadm's rewrite of kubeadm-flags.env would drop or change, on a node the run upgrades; a
    file kubeadm would fail on stops the run whatever is accepted (the step itself would fail)."""
    upgraded = _upgraded(node_plans)
    problems = []
    for host, facts in hosts.items():
        node, drift = facts.get("node_name") or host, facts.get("kubelet_flags_drift") or {}
        if node not in upgraded:
            continue
        if drift.get("fails"):
            problems.append(f"node {node}: {drift['fails']}")
        changes = (drift.get("lost") or []) + (drift.get("altered") or [])
        if changes and not accepted:
            problems.append(
                f"node {node}: the target kubeadm moves --{kubelet_flags.ENDPOINT} into {kubelet_flags.INSTANCE_CONFIG}"
                f" and writes {kubelet_flags.FLAGS_FILE} again from what it parsed, which would drop or change:"
                f" {'; '.join(changes)}. Write each flag as --name=value, or move it to /etc/default/kubelet"
                " (KUBELET_EXTRA_ARGS, which kubeadm never rewrites), or accept with skewsafe_accept_kubelet_config_drift=true"
            )
    return problems


def comparisons(hosts):
    """Per node what was compared with kubeadm's renderings before the first change, and why anything was not:
    ``[{node, compared, not_compared}]`` from the ``manifest_drift`` and ``kubelet_config_drift`` facts."""
    rows = []
    for host, facts in hosts.items():
        manifests, kubelet = facts.get("manifest_drift") or {}, facts.get("kubelet_config_drift") or {}
        flags = facts.get("kubelet_flags_drift") or {}
        not_compared = [
            f"{what}: {reason}"
            for what, reason in (
                ("control-plane manifests", manifests.get("skipped")),
                ("etcd manifest", manifests.get("etcd_skipped")),
                ("kubelet configuration", kubelet.get("skipped")),
                ("kubelet flags", flags.get("skipped")),
            )
            if reason
        ]
        if facts.get("etcd") == "external":
            not_compared.append("etcd manifest: external etcd (no member on this node for kubeadm to render)")
        compared = [
            *(manifests.get("compared") or []),
            *(kubelet.get("compared") or []),
            *(flags.get("compared") or []),
        ]
        rows.append({"node": facts.get("node_name") or host, "compared": compared, "not_compared": not_compared})
    return rows


def _drain_problems(drains, node_plans):
    """A node whose kubelet is upgraded is drained: a Pod that would stop its drain (node_drain in check mode)."""
    drained = _upgraded(node_plans)
    problems = []
    for result in drains or []:
        node = result.get("item") or result.get("name")
        # registered with failed_when: false, so ``failed`` is always false: a refused Pod or a missing decision says it
        refused = result.get("refused") or []
        if node not in drained or result.get("skipped") or (not refused and "evicted" in result):
            continue
        if refused:
            listed = "; ".join(f"{r.get('pod')} ({r.get('why')})" for r in refused)
            problems.append(
                f"node {node}: its drain would stop at {listed}. Give them a controller or delete them, or allow the"
                " drain to evict them (node_upgrade_drain_force=true: Pods without a controller;"
                " node_upgrade_drain_delete_emptydir_data=true: emptyDir data)"
            )
        else:
            problems.append(f"node {node}: its drain cannot be planned: {result.get('msg')}")
    return problems


def _member_host(url):
    host = str(url).split("://", 1)[-1].rsplit(":", 1)[0]
    return host.strip("[]")


def _internal_ips(node):
    return {
        a.get("address")
        for a in ((node or {}).get("status") or {}).get("addresses") or []
        if a.get("type") == "InternalIP"
    }


def etcd_member_problems(hosts, by_node):
    """kubeadm's stacked etcd against the control planes: one voting member per control plane, named after its node
    and advertised on that node's address, and no restart of one member losing quorum (each node step restarts one).

    ``hosts``: host -> facts (``role``, ``node_name``, ``etcd``, ``etcd_members``: the ``etcdctl member list -w
    json`` result of that control plane); ``by_node``: node name -> Node object.
    """
    stacked = {h: f for h, f in hosts.items() if f.get("role") != "worker" and f.get("etcd") == "stacked"}
    if not stacked:
        return []
    listed, errors = None, []
    for host, facts in stacked.items():
        got = facts.get("etcd_members") or {}
        try:
            listed = json.loads(got.get("stdout") or "")["members"]
            break
        except (ValueError, KeyError, TypeError):
            errors.append(f"{host}: {(got.get('stderr') or got.get('stdout') or 'no answer').strip()[:200]}")
    if listed is None:
        return [f"etcd: no control plane could list the etcd members ({'; '.join(errors)})"]
    nodes = {(f.get("node_name") or h): f for h, f in stacked.items()}
    problems = []
    for member in listed:
        name, peers = member.get("name") or "", member.get("peerURLs") or []
        label = f"etcd member {name or '(not started)'} ({', '.join(peers) or 'no peer URL'})"
        if member.get("isLearner"):
            problems.append(f"{label}: a learner; promote it (etcdctl member promote) or remove it before the upgrade")
        elif name not in nodes:
            problems.append(
                f"{label}: no control plane of the inventory has this node name; remove the stale member"
                " (etcdctl member remove) or add its host to the control-plane group"
            )
        elif peers and by_node.get(name) and not {_member_host(u) for u in peers} & _internal_ips(by_node[name]):
            problems.append(
                f"{label}: its peer URL is not on an InternalIP of Node {name}"
                f" ({', '.join(sorted(_internal_ips(by_node[name])))}); fix the member's peer URL"
            )
    names = {m.get("name") for m in listed}
    problems += [
        f"etcd: control plane {node} has no etcd member; kubeadm upgrade expects one per control plane"
        for node in sorted(nodes)
        if node not in names
    ]
    voters = [m for m in listed if not m.get("isLearner")]
    healthy = [m for m in voters if m.get("name") in nodes]
    quorum = len(voters) // 2 + 1
    if len(voters) > 1 and len(healthy) - 1 < quorum:
        problems.append(
            f"etcd: {len(voters)} voting members, {len(healthy)} of them control planes of the inventory: restarting"
            f" one (every node step does) leaves {len(healthy) - 1}, below the quorum of {quorum}; remove the stale"
            " members or add control planes to an odd count first"
        )
    return problems


def assess(data):
    """Return ``{"problems": [...], "cluster_version", "steps", "plan": [...], "order": [...], "mvp_proved"}``.

    ``plan``: per node, what happens to it; ``order``: the steps of the run in the order the upgrade playbook takes
    them (``control_plane_order``: ``components_first``, the default, or ``node_by_node``).
    """
    problems = []
    target = data.get("target")
    order = data.get("control_plane_order") or plan.DEFAULT_CONTROL_PLANE_ORDER
    if order not in plan.CONTROL_PLANE_ORDERS:
        problems.append(
            f"order: the control-plane order must be one of {', '.join(plan.CONTROL_PLANE_ORDERS)}, not {order!r}"
        )
        order = plan.DEFAULT_CONTROL_PLANE_ORDER
    hosts = data.get("hosts") or {}
    cps = [h for h, facts in hosts.items() if facts.get("role") != "worker"]
    first = data.get("first_control_plane") or (cps[0] if cps else None)

    try:
        plan.parse(target)
    except plan.PlanError as exc:
        return {
            "problems": [f"target: {exc}"],
            "cluster_version": None,
            "steps": [],
            "plan": [],
            "order": [],
            "mvp_proved": False,
        }

    apiserver_versions = [hosts[h].get("apiserver_version") for h in cps if hosts[h].get("apiserver_version")]
    cluster_version, steps = None, []
    try:
        cluster_version = plan.cluster_version(apiserver_versions)
        steps = plan.upgrade_steps(cluster_version, target, data.get("chained", False))
    except plan.PlanError as exc:
        problems.append(f"version: {exc}")
    if (
        cluster_version
        and len({plan.parse(v) for v in apiserver_versions}) > 1
        and plan.parse(target) != max(plan.parse(v) for v in apiserver_versions)
    ):
        problems.append(
            f"version: control planes run {', '.join(sorted(set(apiserver_versions)))}: finish the upgrade in progress "
            f"to {max(apiserver_versions, key=plan.parse)} first"
        )

    # A rerun after an interrupted upgrade: a control plane whose kube-apiserver already runs the target while
    # others do not is mid-upgrade; its static Pods (and, while its kube-apiserver restarts, its Node) may not be
    # Ready yet. The upgrade role finishes that node and waits until it is whole before anything else moves.
    mid_upgrade = set()
    if len(set(apiserver_versions)) > 1:
        mid_upgrade = {
            hosts[h].get("node_name") or h
            for h in cps
            if hosts[h].get("apiserver_version") and _same(hosts[h]["apiserver_version"], target)
        }
    by_node = {n.get("metadata", {}).get("name"): n for n in data.get("nodes") or []}
    node_plans, order_nodes = [], []
    for host, facts in hosts.items():
        node = facts.get("node_name") or host
        obj = by_node.get(node)
        if obj is None:
            problems.append(f"node {node} ({host}): no Node object with that name")
        elif not _ready(obj) and node in mid_upgrade:
            pass
        elif not _ready(obj) and (obj.get("spec") or {}).get("unschedulable") is not True:
            problems.append(f"node {node}: not Ready")
        elif not _ready(obj):
            problems.append(f"node {node}: not Ready and cordoned")
        role = (
            "worker" if facts.get("role") == "worker" else ("first_control_plane" if host == first else "control_plane")
        )
        if facts.get("kubelet_version"):
            components = (facts.get("apiserver_version") or None) if role != "worker" else None
            try:
                node_plans.append(plan.node_plan(node, facts["kubelet_version"], target, role, order, components))
                order_nodes.append(
                    {"node": node, "role": role, "kubelet": facts["kubelet_version"], "components": components}
                )
            except plan.PlanError as exc:
                problems.append(f"node {node}: {exc}")
        for cert in facts.get("expiring_certs") or []:
            problems.append(f"node {node}: certificate {cert} expires within {data.get('cert_min_days', 30)} days")
        drift = facts.get("manifest_drift") or {}
        if drift.get("patches_missing"):
            problems.append(
                f"node {node}: {drift.get('skipped')} (kubeadm fails on a --patches path that does not exist)"
            )
        would_go = (drift.get("lost") or []) + (drift.get("altered") or [])
        if would_go and not drift.get("accepted"):
            problems.append(
                f"node {node}: the live control-plane manifests differ from what kubeadm renders from kubeadm-config"
                f" (and the patches directory), so the next re-render would drop or change: {'; '.join(would_go)}."
                " Put these into kubeadm-config (extraArgs, extraVolumes) or a kubeadm patches directory"
                " (skewsafe_kubeadm_patches_dir), or accept the loss with skewsafe_accept_manifest_drift=true"
            )
        missing = facts.get("missing_packages") or []
        if missing:
            problems.append(
                f"packages: {', '.join(missing)} {target} not found in the v1.{plan.parse(target)[1]} repository"
            )

    for pdb in blocked_pdbs(data.get("pdbs")):
        problems.append(
            f"pdb {pdb}: allows no disruption and never will, so the drain of a node running its pods would block; "
            "relax it or scale the workload up before the upgrade"
        )

    for pod in data.get("pods") or []:
        if not _ready(pod) and (pod.get("spec") or {}).get("nodeName") in mid_upgrade:
            continue
        if not _ready(pod):
            problems.append(f"pod kube-system/{pod.get('metadata', {}).get('name')}: not Ready")

    cfg_text = data.get("kubeadm_config")
    if not cfg_text:
        problems.append("kubeadm-config: ConfigMap kube-system/kubeadm-config or its ClusterConfiguration is missing")
    elif HAS_YAML:
        problems += _kubeadm_config_problems(cfg_text, target, cluster_version)

    problems += _kubelet_config_problems(data.get("kubelet_config"), target)
    problems += _node_gate_problems(hosts, target)
    problems += [f"host names: {p}" for p in plan.hostname_problems([hosts[h].get("hostname") or h for h in cps])]

    problems += _drain_problems(data.get("drains"), node_plans)
    problems += _kubelet_drift_problems(hosts, node_plans)
    if data.get("check_drift", True):
        hosts = with_kubelet_flags_drift(hosts, target, cfg_text)
        problems += _kubelet_flags_problems(hosts, node_plans, data.get("accept_kubelet_config_drift", False))
    problems += etcd_member_problems(hosts, by_node)

    mvp = data.get("mvp") or {}
    mvp_proved = bool(mvp.get("passed"))
    if data.get("require_mvp", True) and not mvp_proved:
        problems.append(
            f"mvp: the Mixed Version Proxy is not proved on the running version ({mvp.get('msg', 'no result')}). "
            "Run the skewsafe.kubeadm.mvp_enable playbook first"
        )
    try:
        run_order = plan.run_order(order_nodes, target, order)
    except plan.PlanError as exc:
        problems.append(f"order: {exc}")
        run_order = []
    return {
        "problems": problems,
        "cluster_version": cluster_version,
        "steps": steps,
        "plan": node_plans,
        "order": run_order,
        "mvp_proved": mvp_proved,
        "compared": comparisons(hosts),
    }
