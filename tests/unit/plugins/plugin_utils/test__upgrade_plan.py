from __future__ import annotations

import pytest

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
