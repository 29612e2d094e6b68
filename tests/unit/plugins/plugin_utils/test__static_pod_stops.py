"""The static Pods stopped before a new kubelet starts, in order, each with its own grace.

The fixture is real: `crictl pods --state ready -o json`, the mark line, `crictl ps --state running -o json` on a lab
control plane (v1.36.5, containerd), as the node_upgrade role reads it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._static_pod_stops import (
    CONTAINERS_MARK,
    StopPlanError,
    plan,
)

READ = (Path(__file__).parent / "fixtures" / "crictl-v1.36.5-control-plane.txt").read_text()
KUBEADM_ORDER = ["kube-controller-manager", "kube-scheduler", "kube-apiserver", "etcd"]


def split(read):
    pods, containers = read.split(CONTAINERS_MARK, 1)
    return json.loads(pods), json.loads(containers)


def join(pods, containers):
    return f"{json.dumps(pods)}\n{CONTAINERS_MARK}\n{json.dumps(containers)}"


def test_a_kubeadm_control_plane_stops_its_four_static_pods_in_order_with_their_grace():
    stops = plan(READ, 99)
    assert [s["container"] for s in stops] == KUBEADM_ORDER
    assert all(s["pod"].startswith(s["container"] + "-") for s in stops), stops
    assert {s["grace"] for s in stops} == {30}  # kubeadm's manifests leave the default grace period
    containers = split(READ)[1]
    running = {c["id"] for c in containers["containers"]}
    assert {s["id"] for s in stops} <= running
    # the Pods from the API server (kube-proxy, the CNI's) are left to the new kubelet, which knows their UIDs
    assert len(running) > len(stops)


def test_a_static_pod_kubeadm_does_not_own_goes_before_kube_apiserver_with_its_own_grace():
    pods, containers = split(READ)
    api_pod = next(p for p in pods["items"] if p["annotations"].get("kubernetes.io/config.source") != "file")
    api_pod["annotations"]["kubernetes.io/config.source"] = "file"  # as a kube-vip manifest would be
    for c in containers["containers"]:
        if c["podSandboxId"] == api_pod["id"]:
            c["annotations"]["io.kubernetes.pod.terminationGracePeriod"] = "90"
    stops = plan(join(pods, containers), 30)
    names = [s["pod"] for s in stops]
    assert names[:2] == [s["pod"] for s in plan(READ, 30)][:2]
    assert names.index(api_pod["metadata"]["name"]) == 2 and [s["container"] for s in stops][-2:] == KUBEADM_ORDER[2:]
    assert {s["grace"] for s in stops if s["pod"] == api_pod["metadata"]["name"]} == {90}


def test_a_container_without_a_recorded_grace_gets_the_default():
    pods, containers = split(READ)
    for c in containers["containers"]:
        c["annotations"].pop("io.kubernetes.pod.terminationGracePeriod", None)
    assert {s["grace"] for s in plan(join(pods, containers), 45)} == {45}


def test_a_node_without_static_pods_gets_an_empty_plan():
    pods, containers = split(READ)
    for p in pods["items"]:
        p["annotations"].pop("kubernetes.io/config.source", None)
    assert plan(join(pods, containers), 30) == []


@pytest.mark.parametrize(
    ("read", "message"),
    [
        ('{"items": []}', "no #skewsafe-containers line"),
        (f"not json\n{CONTAINERS_MARK}\n{{}}", "crictl pods is not JSON"),
        (f'{{"items": []}}\n{CONTAINERS_MARK}\n{{"other": 1}}', "crictl ps has no 'containers' list"),
    ],
)
def test_a_read_that_is_not_what_crictl_prints_is_an_error(read, message):
    with pytest.raises(StopPlanError, match=message):
        plan(read, 30)
