"""skewsafe.kubeadm.node_drain against a real kube-apiserver: the Eviction API's own answers.

The harness runs API servers and etcd and no kubelet or controller: a Pod bound to a node stays until it is
deleted with grace period 0 (with a longer one it stays Terminating, as under a kubelet that is slow to stop it), a
PodDisruptionBudget that no controller has processed refuses the eviction of a running Pod (429; a Pending one may
always go), and Pod and workload status say what the test writes into them, as a kubelet and controllers would.
So each answer the drain acts on is the real server's.
"""

from __future__ import annotations

import pytest
from conftest import LAB_PAIR, only_pairs

NODE = "w1"
NS = "drain-test"


@pytest.fixture(scope="module")
def server(harness_factory, pair):
    harness = harness_factory([("cp-1", pair.new)])
    must(harness, "POST", "/api/v1/namespaces", {"metadata": {"name": NS}})
    # no controller-manager: the namespace's default ServiceAccount, which Pod admission needs, is made by hand
    must(harness, "POST", f"/api/v1/namespaces/{NS}/serviceaccounts", {"metadata": {"name": "default"}})
    return harness


def must(harness, method, path, body=None):
    resp = harness.request("cp-1", path, method=method, body=body)
    assert resp.status in (200, 201), f"{method} {path}: {resp.status} {resp.body[:400]!r}"
    return resp.json()


TEMPLATE = {
    "metadata": {"labels": {"app": "x"}},
    "spec": {"containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]},
}


def workload(harness, kind, name, replicas=1, available=None):
    """A ReplicaSet or DaemonSet; ``available`` writes that many available replicas into its status."""
    path = f"/apis/apps/v1/namespaces/{NS}/{kind.lower()}s"
    spec = {"selector": {"matchLabels": {"app": name}}, "template": {**TEMPLATE, "metadata": {"labels": {"app": name}}}}
    if kind != "DaemonSet":
        spec["replicas"] = replicas
    obj = must(harness, "POST", path, {"metadata": {"name": name}, "spec": spec})
    if available is not None:
        obj["status"] = {
            "replicas": replicas,
            "readyReplicas": available,
            "availableReplicas": available,
            "observedGeneration": obj["metadata"]["generation"],
        }
        obj = must(harness, "PUT", f"{path}/{name}/status", obj)
    return obj


def pod(harness, name, owner=None, emptydir=False, labels=None):
    meta = {"name": name, "labels": labels or {"app": name}}
    if owner:
        meta["ownerReferences"] = [
            {
                "apiVersion": "apps/v1",
                "kind": owner["kind"],
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
            }
        ]
    spec = {"nodeName": NODE, "automountServiceAccountToken": False, **TEMPLATE["spec"]}
    if emptydir:
        spec["volumes"] = [{"name": "scratch", "emptyDir": {}}]
    return must(harness, "POST", f"/api/v1/namespaces/{NS}/pods", {"metadata": meta, "spec": spec})


def running(harness, obj):
    """Write the status a kubelet would: the Eviction API lets a Pending Pod go whatever its budget says."""
    obj["status"] = {
        "phase": "Running",
        "conditions": [{"type": "Ready", "status": "True", "lastTransitionTime": "2026-12-05T06:00:00Z"}],
    }
    return must(harness, "PUT", f"/api/v1/namespaces/{NS}/pods/{obj['metadata']['name']}/status", obj)


def pods_on_node(harness):
    items = must(harness, "GET", f"/api/v1/namespaces/{NS}/pods")["items"]
    return sorted(p["metadata"]["name"] for p in items if p["spec"].get("nodeName") == NODE)


def clear(harness):
    for name in pods_on_node(harness):
        harness.request("cp-1", f"/api/v1/namespaces/{NS}/pods/{name}", method="DELETE", body={"gracePeriodSeconds": 0})
    for path in (
        "apis/apps/v1/namespaces/{ns}/replicasets",
        "apis/apps/v1/namespaces/{ns}/daemonsets",
        "apis/policy/v1/namespaces/{ns}/poddisruptionbudgets",
    ):
        base = "/" + path.format(ns=NS)
        for item in must(harness, "GET", base)["items"]:
            harness.request("cp-1", f"{base}/{item['metadata']['name']}", method="DELETE")


def drain(ansible_module, harness, check=False, **args):
    base = {"kubeconfig": str(harness.kubeconfig), "name": NODE, "grace_period": 0, "timeout": 20, "poll": 1}
    return ansible_module("skewsafe.kubeadm.node_drain", {**base, **args}, check=check)


@only_pairs([LAB_PAIR], "the lab's versions (the Eviction API does not depend on them)")
def test_evicts_as_kubectl_leaves_a_daemonsets_pod_with_emptydir_and_records_the_workloads(
    server, ansible_module, pair
):
    clear(server)
    agents = workload(server, "DaemonSet", "csi-node")
    web = workload(server, "ReplicaSet", "web", replicas=2, available=2)
    batch = workload(server, "ReplicaSet", "batch", replicas=3, available=1)
    pod(server, "csi-node-x", owner=agents, emptydir=True)  # the case kubernetes.core.k8s_drain evicts
    pod(server, "web-a", owner=web, emptydir=True)
    pod(server, "batch-a", owner=batch)
    # web's budget, its status written as the disruption controller would: it allows one disruption
    budgets = f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets"
    budget = must(
        server,
        "POST",
        budgets,
        {"metadata": {"name": "web"}, "spec": {"maxUnavailable": 1, "selector": {"matchLabels": {"app": "web-a"}}}},
    )
    budget["status"] = {
        "disruptionsAllowed": 1,
        "currentHealthy": 2,
        "desiredHealthy": 1,
        "expectedPods": 2,
        "observedGeneration": budget["metadata"]["generation"],
    }
    budget = must(server, "PUT", f"{budgets}/web/status", budget)

    planned = drain(ansible_module, server, check=True)
    assert not planned.get("failed"), planned
    assert planned["changed"] and planned["evicted"] == [f"{NS}/batch-a", f"{NS}/web-a"]
    assert pods_on_node(server) == ["batch-a", "csi-node-x", "web-a"]  # check mode evicted nothing

    done = drain(ansible_module, server)
    assert not done.get("failed"), done
    assert done["changed"] and done["evicted"] == [f"{NS}/batch-a", f"{NS}/web-a"]
    assert done["left"] == [{"pod": f"{NS}/csi-node-x", "why": "DaemonSet csi-node"}]
    assert pods_on_node(server) == ["csi-node-x"]
    assert sorted((w["kind"], w["name"], w["available_before"]) for w in done["workloads"]) == [
        ("PodDisruptionBudget", "web", True),
        ("ReplicaSet", "batch", False),
        ("ReplicaSet", "web", True),
    ]

    again = drain(ansible_module, server)
    assert not again.get("failed") and not again["changed"] and again["evicted"] == []

    # The workload that was whole is waited for (its status says whole: at once); the one that was short is not.
    settled = ansible_module(
        "skewsafe.kubeadm.node_drain",
        {"kubeconfig": str(server.kubeconfig), "state": "settled", "workloads": done["workloads"], "timeout": 10},
    )
    assert not settled.get("failed"), settled
    assert settled["settled"] == [f"ReplicaSet/{NS}/web", f"PodDisruptionBudget/{NS}/web"]
    assert settled["not_waited"] == [f"ReplicaSet/{NS}/batch"]

    # A budget that allows no disruption (its replica not Ready elsewhere yet) is waited for, and named at the end.
    budget = must(server, "GET", f"{budgets}/web")
    budget["status"]["disruptionsAllowed"] = 0
    must(server, "PUT", f"{budgets}/web/status", budget)
    short = ansible_module(
        "skewsafe.kubeadm.node_drain",
        {"kubeconfig": str(server.kubeconfig), "state": "settled", "workloads": done["workloads"], "timeout": 4},
    )
    assert short.get("failed") and short["not_settled"] == [f"PodDisruptionBudget/{NS}/web"], short


@only_pairs([LAB_PAIR], "the lab's versions (the Eviction API does not depend on them)")
def test_a_pod_without_a_controller_stops_the_drain_before_any_eviction_unless_forced(server, ansible_module, pair):
    clear(server)
    web = workload(server, "ReplicaSet", "web", replicas=1, available=1)
    pod(server, "web-a", owner=web)
    pod(server, "debug")

    refused = drain(ansible_module, server)
    assert refused.get("failed"), refused
    assert refused["refused"] == [{"pod": f"{NS}/debug", "why": "no controller: nothing would recreate it"}]
    assert "nothing was evicted" in refused["msg"]
    assert pods_on_node(server) == ["debug", "web-a"]

    forced = drain(ansible_module, server, force=True)
    assert not forced.get("failed"), forced
    assert pods_on_node(server) == []


@only_pairs([LAB_PAIR], "the lab's versions (the Eviction API does not depend on them)")
def test_a_budget_that_refuses_and_a_pod_that_does_not_go_fail_within_the_timeout_and_say_why(
    server, ansible_module, pair
):
    clear(server)
    web = workload(server, "ReplicaSet", "web", replicas=1, available=1)
    running(server, pod(server, "web-a", owner=web, labels={"app": "web"}))
    must(
        server,
        "POST",
        f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets",
        {"metadata": {"name": "web"}, "spec": {"minAvailable": 1, "selector": {"matchLabels": {"app": "web"}}}},
    )
    blocked = drain(ansible_module, server, timeout=8, retry_delay=2)
    assert blocked.get("failed"), blocked
    assert blocked["remaining"] == [f"{NS}/web-a"] and blocked["blockers"] == [f"{NS}/web"]
    assert "refused by a PodDisruptionBudget" in blocked["msg"]
    assert pods_on_node(server) == ["web-a"]

    # Evicted with a grace period and no kubelet to end it: the Pod stays Terminating, and the drain says so.
    server.request("cp-1", f"/apis/policy/v1/namespaces/{NS}/poddisruptionbudgets/web", method="DELETE")
    slow = drain(ansible_module, server, grace_period=300, timeout=5)
    assert slow.get("failed"), slow
    assert slow["remaining"] == [f"{NS}/web-a"] and "still terminating" in slow["msg"]
