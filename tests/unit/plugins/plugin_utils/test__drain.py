"""Which PodDisruptionBudgets block a drain."""

from __future__ import annotations

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._drain import blockers


def pod(name, labels, namespace="default", owner="ReplicaSet", phase="Running", mirror=False):
    meta = {"name": name, "namespace": namespace, "labels": labels, "ownerReferences": [{"kind": owner}]}
    if mirror:
        meta["annotations"] = {"kubernetes.io/config.mirror": "x"}
    return {"metadata": meta, "status": {"phase": phase}}


def pdb(name, selector, allowed, namespace="default"):
    return {
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"selector": selector},
        "status": {"disruptionsAllowed": allowed},
    }


def test_names_only_budgets_at_zero_that_cover_pods_left():
    pods = [pod("db-0", {"app": "db"}), pod("web-1", {"app": "web"})]
    pdbs = [
        pdb("db", {"matchLabels": {"app": "db"}}, 0),
        pdb("web", {"matchLabels": {"app": "web"}}, 1),  # still allows one
        pdb("cache", {"matchLabels": {"app": "cache"}}, 0),  # no pod of it here
        pdb("db", {"matchLabels": {"app": "db"}}, 0, namespace="other"),  # other namespace
    ]
    assert blockers(pods, pdbs) == ["default/db"]


def test_match_expressions_and_pods_the_drain_does_not_evict():
    pods = [
        pod("proxy", {"app": "db"}, owner="DaemonSet"),
        pod("done", {"app": "db"}, phase="Succeeded"),
        pod("kube-apiserver", {"app": "db"}, mirror=True),
    ]
    selector = {"matchExpressions": [{"key": "app", "operator": "In", "values": ["db"]}]}
    assert blockers(pods, [pdb("db", selector, 0)]) == []
    pods.append(pod("db-1", {"app": "db", "tier": "x"}))
    assert blockers(pods, [pdb("db", selector, 0)]) == ["default/db"]
    not_in = {"matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["x"]}]}
    exists = {"matchExpressions": [{"key": "tier", "operator": "Exists"}]}
    absent = {"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}
    assert blockers(pods, [pdb("a", not_in, 0), pdb("b", exists, 0), pdb("c", absent, 0)]) == ["default/b"]


def test_empty_selector_covers_every_pod_and_no_input_is_no_blocker():
    assert blockers([pod("x", {})], [pdb("all", {}, 0)]) == ["default/all"]
    assert blockers(None, None) == []
