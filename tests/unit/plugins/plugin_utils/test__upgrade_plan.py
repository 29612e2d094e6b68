from __future__ import annotations

import pytest

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _upgrade_plan as plan
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._upgrade_plan import (
    PlanError,
    cluster_version,
    node_plan,
    parse,
    upgrade_steps,
)


@pytest.mark.parametrize(
    "current, target, chained, expected",
    [
        ("1.36.5", "1.37.2", False, ["1.37.2"]),
        ("v1.36.1", "v1.36.5", False, ["1.36.5"]),
        ("1.36.5", "1.36.5", False, ["1.36.5"]),
        ("1.35.4", "1.37.2", True, ["1.36", "1.37.2"]),
    ],
)
def test_upgrade_steps(current, target, chained, expected):
    assert upgrade_steps(current, target, chained) == expected


@pytest.mark.parametrize(
    "current, target, message",
    [
        ("1.35.4", "1.37.2", "skips 1 minor"),
        ("1.37.2", "1.36.5", "does not downgrade"),
        ("1.37.2", "1.37.1", "does not downgrade"),
        ("1.36.5", "2.0.0", "major"),
        ("1.36", "1.37.2", "not a Kubernetes version"),
        ("1.36.5", "1.37.0-dev.1", "not a Kubernetes version"),
        ("1.36.5", "latest", "not a Kubernetes version"),
        # a pre-release of the running patch is older than it
        ("1.37.2", "1.37.2-rc.1", "does not downgrade"),
    ],
)
def test_upgrade_steps_refusals(current, target, message):
    with pytest.raises(PlanError, match=message):
        upgrade_steps(current, target)


def test_parse_and_cluster_version():
    assert parse("v1.37.2")[:3] == (1, 37, 2)
    assert cluster_version(["v1.37.2", "v1.36.5", None]) == "1.36.5"
    with pytest.raises(PlanError):
        cluster_version([])


def test_pre_releases_order_before_their_release():
    ordered = ["1.37.2", "1.38.0-alpha.1", "1.38.0-beta.0", "1.38.0-beta.2", "1.38.0-rc.0", "1.38.0-rc.1", "1.38.0"]
    assert sorted(reversed(ordered), key=parse) == ordered
    assert cluster_version(["v1.38.0", "v1.38.0-rc.1"]) == "1.38.0-rc.1"
    # a pre-release target: one step from the minor before, and the release after it is a patch-like step
    assert upgrade_steps("1.37.2", "1.38.0-beta.0") == ["1.38.0-beta.0"]
    assert upgrade_steps("1.38.0-beta.0", "1.38.0") == ["1.38.0"]
    assert node_plan("w", "v1.38.0-beta.0", "1.38.0", "worker")["action"].startswith("upgrade")
    assert node_plan("w", "v1.38.0-beta.0", "1.38.0-beta.0", "worker")["action"].startswith("skip")
    with pytest.raises(PlanError, match="newer than the target"):
        node_plan("w", "v1.38.0", "1.38.0-rc.1", "worker")
    assert plan.path_hops(["1.37.2", "1.38.0-rc.1"], ["v1.37.2"]) == ["1.38.0-rc.1"]
    assert plan.path_hops(["1.37.2", "1.38.0-rc.1"], ["v1.38.0-rc.1"]) == []


def test_node_plan():
    first = node_plan("cp-1", "v1.36.5", "1.37.2", "first_control_plane", "node_by_node")
    assert first["action"] == "upgrade (kubeadm upgrade apply, then the MVP gate, then the kubelet)"
    assert "steps" not in first
    # the default order is the playbooks' (components_first): the kubelet comes after every control plane's components
    assert node_plan("cp-1", "v1.36.5", "1.37.2", "first_control_plane")["action"].endswith("run the target)")
    other = node_plan("cp-2", "v1.36.5", "1.37.2", "control_plane", "node_by_node")
    assert other["action"] == "upgrade (kubeadm upgrade node, then the MVP gate, then the kubelet)"
    worker = node_plan("w-1", "1.36.5", "1.37.2", "worker")
    assert worker["action"] == "upgrade (kubeadm upgrade node, then the kubelet)"
    assert node_plan("w-1", "1.37.2", "1.37.2", "worker")["action"].startswith("skip")
    with pytest.raises(PlanError, match="newer than the target"):
        node_plan("w-1", "1.38.0", "1.37.2", "worker")
    with pytest.raises(PlanError, match="more than three minors"):
        node_plan("w-1", "1.33.0", "1.37.2", "worker")


def test_node_plan_components_first():
    later = "the kubelet once every control plane's components run the target"
    first = node_plan("cp-1", "v1.36.5", "1.37.2", "first_control_plane", "components_first", "v1.36.5")
    assert first["action"] == f"upgrade (kubeadm upgrade apply, then the MVP gate; {later})"
    # a rerun between the phases: only the kubelet is left
    other = node_plan("cp-2", "v1.36.5", "1.37.2", "control_plane", "components_first", "v1.37.2")
    assert other["action"] == f"upgrade (components at the target; {later})"
    worker = node_plan("w-1", "1.36.5", "1.37.2", "worker", "components_first")
    assert worker["action"] == "upgrade (kubeadm upgrade node, then the kubelet)"
    with pytest.raises(PlanError, match="one of components_first, node_by_node"):
        node_plan("cp-1", "v1.36.5", "1.37.2", "control_plane", "kubelets_first")


def nodes(cp1=("v1.36.5", "v1.36.5"), cp2=("v1.36.5", "v1.36.5"), cp3=("v1.36.5", "v1.36.5"), w1="v1.36.5"):
    """Inventory order with the first control plane (cp-2 here) not first in the group."""
    return [
        {"node": "cp-1", "role": "control_plane", "kubelet": cp1[0], "components": cp1[1]},
        {"node": "cp-2", "role": "first_control_plane", "kubelet": cp2[0], "components": cp2[1]},
        {"node": "cp-3", "role": "control_plane", "kubelet": cp3[0], "components": cp3[1]},
        {"node": "w-1", "role": "worker", "kubelet": w1, "components": None},
    ]


def steps(order, **kw):
    return [(s["step"], s["node"], s["phase"], s["what"]) for s in plan.run_order(nodes(**kw), "1.37.2", order)]


KUBELET = "drain, kubelet and kubectl, restart, health gate, uncordon"
WORKER = "kubeadm upgrade node, drain, kubelet and kubectl, restart, uncordon"


def test_run_order_components_first():
    assert steps("components_first") == [
        (1, "cp-2", "control-plane components", "kubeadm upgrade apply, health gate, MVP gate (mixed)"),
        (2, "cp-1", "control-plane components", "kubeadm upgrade node, health gate, MVP gate (mixed)"),
        (3, "cp-3", "control-plane components", "kubeadm upgrade node, health gate, MVP gate (steady)"),
        (4, "cp-2", "control-plane kubelet", KUBELET),
        (5, "cp-1", "control-plane kubelet", KUBELET),
        (6, "cp-3", "control-plane kubelet", KUBELET),
        (7, "w-1", "worker", WORKER),
    ]


def test_run_order_node_by_node_is_kubeadms():
    assert steps("node_by_node") == [
        (1, "cp-2", "control plane", f"kubeadm upgrade apply, health gate, MVP gate (mixed), {KUBELET}"),
        (2, "cp-1", "control plane", f"kubeadm upgrade node, health gate, MVP gate (mixed), {KUBELET}"),
        (3, "cp-3", "control plane", f"kubeadm upgrade node, health gate, MVP gate (steady), {KUBELET}"),
        (4, "w-1", "worker", WORKER),
    ]


def test_run_order_of_a_rerun_shows_what_is_left():
    # killed after cp-2 (first) and cp-1's components and cp-2's kubelet
    left = steps("components_first", cp2=("v1.37.2", "v1.37.2"), cp1=("v1.36.5", "v1.37.2"), cp3=("v1.36.5", "v1.36.5"))
    assert left == [
        (1, "cp-1", "control-plane components", "already at the target: health gate, MVP gate"),
        (2, "cp-3", "control-plane components", "kubeadm upgrade node, health gate, MVP gate (steady)"),
        (3, "cp-1", "control-plane kubelet", KUBELET),
        (4, "cp-3", "control-plane kubelet", KUBELET),
        (5, "w-1", "worker", WORKER),
    ]
    done = ("v1.37.2", "v1.37.2")
    assert steps("components_first", cp1=done, cp2=done, cp3=done, w1="v1.37.2") == []


def test_run_order_of_a_patch_upgrade_has_only_steady_gates():
    patch = [{**n, "kubelet": "v1.37.1", "components": n["components"] and "v1.37.1"} for n in nodes()]
    whats = [s["what"] for s in plan.run_order(patch, "1.37.2") if s["phase"] == "control-plane components"]
    assert whats and all(w.endswith("MVP gate (steady)") for w in whats), whats


def test_run_order_refuses_an_unknown_order():
    with pytest.raises(PlanError, match="one of components_first, node_by_node"):
        plan.run_order(nodes(), "1.37.2", "whatever")


# --- chained upgrade paths (the upgrade_path playbook) ---


def test_path_hops_from_the_start_of_the_path():
    assert plan.path_hops(["1.36.5", "1.37.2"], ["v1.35.4", "v1.35.4", "v1.35.4"]) == ["1.36.5", "1.37.2"]


def test_path_hops_resume_at_the_interrupted_hop():
    # killed while hop 1's workers were upgraded: the control planes are at 1.36.5, a worker is not
    assert plan.path_hops(["1.36.5", "1.37.2"], ["v1.36.5", "v1.36.5", "v1.35.4"]) == ["1.36.5", "1.37.2"]
    # killed during hop 2: every version is at least 1.36.5
    assert plan.path_hops(["1.36.5", "1.37.2"], ["v1.37.2", "v1.36.5", "v1.36.5"]) == ["1.37.2"]


def test_path_hops_none_left_at_the_end():
    assert plan.path_hops(["1.36.5", "1.37.2"], ["v1.37.2", "v1.37.2"]) == []


@pytest.mark.parametrize(
    ("path", "versions", "message"),
    [
        ([], ["v1.35.4"], "non-empty list"),
        ("1.37.2", ["v1.35.4"], "non-empty list"),
        (["1.36.5", "1.38.0"], ["v1.35.4"], "each hop must be the next minor"),
        (["1.36.5", "1.37.2", "1.38.1", "1.39.0"], ["v1.35.4"], "at most 3"),
        (["1.37.2"], ["v1.35.4"], "start at 1.36"),
        (["1.36.5"], ["v1.37.2"], "newer than the path's end"),
        (["1.36.5", "v1.37"], ["v1.35.4"], "not a Kubernetes version"),
    ],
)
def test_path_hops_refuses_a_bad_path(path, versions, message):
    with pytest.raises(plan.PlanError, match=message):
        plan.path_hops(path, versions)
