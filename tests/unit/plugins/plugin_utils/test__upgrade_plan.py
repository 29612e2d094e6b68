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
        ("1.36", "1.37.2", "not a Kubernetes release version"),
        ("1.36.5", "1.37.0-rc.1", "not a Kubernetes release version"),
        ("1.36.5", "latest", "not a Kubernetes release version"),
    ],
)
def test_upgrade_steps_refusals(current, target, message):
    with pytest.raises(PlanError, match=message):
        upgrade_steps(current, target)


def test_parse_and_cluster_version():
    assert parse("v1.37.2") == (1, 37, 2)
    assert cluster_version(["v1.37.2", "v1.36.5", None]) == "1.36.5"
    with pytest.raises(PlanError):
        cluster_version([])


def test_node_plan():
    first = node_plan("cp-1", "v1.36.5", "1.37.2", "first_control_plane")
    assert first["action"] == "upgrade (kubeadm upgrade apply, then the MVP gate, then the kubelet)"
    assert "steps" not in first
    other = node_plan("cp-2", "v1.36.5", "1.37.2", "control_plane")
    assert other["action"] == "upgrade (kubeadm upgrade node, then the MVP gate, then the kubelet)"
    worker = node_plan("w-1", "1.36.5", "1.37.2", "worker")
    assert worker["action"] == "upgrade (kubeadm upgrade node, then the kubelet)"
    assert node_plan("w-1", "1.37.2", "1.37.2", "worker")["action"].startswith("skip")
    with pytest.raises(PlanError, match="newer than the target"):
        node_plan("w-1", "1.38.0", "1.37.2", "worker")
    with pytest.raises(PlanError, match="more than three minors"):
        node_plan("w-1", "1.33.0", "1.37.2", "worker")


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
        (["1.36.5", "v1.37"], ["v1.35.4"], "not a Kubernetes release version"),
    ],
)
def test_path_hops_refuses_a_bad_path(path, versions, message):
    with pytest.raises(plan.PlanError, match=message):
        plan.path_hops(path, versions)
