"""The drain's rules (kubectl drain's filters) and its engine against stand-ins for the typed APIs.

The engine's evictions, refusals and waits against a real kube-apiserver are in tests/integration/test_node_drain.py.
"""

from __future__ import annotations

import pytest
from conftest import FakeClock as Clock
from drain_fakes import FakeApis, Namespaced, params, pod

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _drain as rules
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _node_drain as engine


def decided(plan):
    return {
        "evict": sorted(rules.pod_key(p) for p in plan["evict"]),
        "terminating": sorted(rules.pod_key(p) for p in plan["terminating"]),
        "left": sorted(item["pod"] for item in plan["left"]),
        "refused": sorted(item["pod"] for item in plan["refused"]),
    }


def test_a_daemonsets_pod_stays_even_when_it_mounts_emptydir():
    # kubernetes.core.k8s_drain evicts this one (emptyDir is checked before the owner); kubectl leaves it.
    plan = rules.classify([pod("csi-node", owner="DaemonSet", emptydir=True), pod("web", emptydir=True)])
    assert decided(plan) == {"evict": ["default/web"], "terminating": [], "left": ["default/csi-node"], "refused": []}
    assert plan["left"][0]["why"] == "DaemonSet csi-node-owner"


def test_a_pod_without_a_controller_is_refused_unless_forced():
    pods = [pod("debug", owner=None), pod("web")]
    assert decided(rules.classify(pods))["refused"] == ["default/debug"]
    assert decided(rules.classify(pods, force=True))["evict"] == ["default/debug", "default/web"]


def test_an_owner_that_is_not_the_controller_does_not_count():
    unmanaged = pod("tool", owner=None)
    unmanaged["metadata"]["ownerReferences"] = [{"kind": "ReplicaSet", "name": "x"}]  # no controller: true
    assert decided(rules.classify([unmanaged]))["refused"] == ["default/tool"]


def test_emptydir_data_is_refused_only_when_it_may_not_go():
    pods = [pod("cache", emptydir=True)]
    assert decided(rules.classify(pods, delete_emptydir_data=False))["refused"] == ["default/cache"]
    assert decided(rules.classify(pods, delete_emptydir_data=True))["evict"] == ["default/cache"]


def test_finished_pods_are_evicted_without_questions_and_mirror_pods_stay():
    pods = [
        pod("job-x", owner=None, emptydir=True, phase="Succeeded"),
        pod("kube-apiserver-cp1", owner="Node", mirror=True),
    ]
    plan = decided(rules.classify(pods, delete_emptydir_data=False))
    assert plan == {
        "evict": ["default/job-x"],
        "terminating": [],
        "left": ["default/kube-apiserver-cp1"],
        "refused": [],
    }


def test_a_pod_of_a_daemonset_that_is_gone_is_nobodys():
    pods = [pod("agent", owner="DaemonSet", owner_name="gone")]
    assert decided(rules.classify(pods, missing_daemonsets={"default/gone"}))["refused"] == ["default/agent"]
    assert decided(rules.classify(pods, force=True, missing_daemonsets={"default/gone"}))["evict"] == ["default/agent"]


def test_pods_already_terminating_are_waited_for_not_evicted():
    assert decided(rules.classify([pod("old", owner=None, deleting=True)]))["terminating"] == ["default/old"]


def test_workload_availability():
    assert rules.workload_of(pod("web", owner_name="web-5d9c7")) == {
        "kind": "ReplicaSet",
        "namespace": "default",
        "name": "web-5d9c7",
    }
    assert rules.workload_of(pod("j", owner="Job")) is None
    assert rules.workload_of(pod("web", phase="Succeeded")) is None
    rs = {
        "metadata": {"generation": 2},
        "spec": {"replicas": 3},
        "status": {"observedGeneration": 2, "availableReplicas": 3},
    }
    assert rules.available(rs)
    assert not rules.available({**rs, "status": {"observedGeneration": 2, "availableReplicas": 2}})
    assert not rules.available({**rs, "status": {"observedGeneration": 1, "availableReplicas": 3}})  # not yet seen
    assert rules.available({"spec": {"replicas": 0}, "status": {}})


WHOLE = {"spec": {"replicas": 2}, "status": {"availableReplicas": 2}}
SHORT = {"spec": {"replicas": 2}, "status": {"availableReplicas": 1}}


def test_drain_evicts_retries_what_a_budget_refuses_and_waits_until_gone():
    api = Namespaced(
        [
            pod("web", owner_name="web-rs"),
            pod("db", owner="StatefulSet", owner_name="db"),
            pod("agent", owner="DaemonSet", owner_name="ds"),
        ],
        workloads={"web-rs": [WHOLE], "db": [SHORT]},
        refuse={"db": 2},
        linger={"web": 3},
    )
    clock = Clock()
    out = engine.drain(FakeApis(api), params(grace_period=7), False, clock=clock, sleep=clock.sleep)
    assert out["changed"] and out["evicted"] == ["default/db", "default/web"]
    assert [name for name, _grace in api.evictions] == ["web", "db"] and {g for _name, g in api.evictions} == {7}
    assert out["left"] == [{"pod": "default/agent", "why": "DaemonSet ds"}]
    assert out["workloads"] == [
        {"kind": "ReplicaSet", "namespace": "default", "name": "web-rs", "available_before": True},
        {"kind": "StatefulSet", "namespace": "default", "name": "db", "available_before": False},
    ]
    assert clock.now == 2 * 5 + 3 * 2  # two refusals (5 s each), then web still there on three reads (2 s each)


def test_drain_refuses_before_evicting_anything():
    api = Namespaced([pod("web"), pod("debug", owner=None)])
    with pytest.raises(engine.DrainError) as err:
        engine.drain(FakeApis(api), params(), False, clock=Clock(), sleep=Clock().sleep)
    assert api.evictions == []
    assert err.value.fields["refused"] == [{"pod": "default/debug", "why": "no controller: nothing would recreate it"}]
    assert "nothing was evicted" in str(err.value) and "default/debug" in str(err.value)


def test_check_mode_decides_and_evicts_nothing():
    api = Namespaced([pod("web")], workloads={"web-owner": [WHOLE]})
    out = engine.drain(FakeApis(api), params(), True)
    assert out["changed"] and out["evicted"] == ["default/web"] and api.evictions == []


def test_a_budget_that_never_yields_runs_out_within_the_timeout_and_is_named():
    budget = {
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"selector": {"matchLabels": {"app": "web"}}},
        "status": {"disruptionsAllowed": 0},
    }
    api = Namespaced([pod("web")], workloads={"web-owner": [WHOLE]}, refuse={"web": 1000}, pdbs=[budget])
    clock = Clock()
    with pytest.raises(engine.DrainError) as err:
        engine.drain(FakeApis(api), params(timeout=30), False, clock=clock, sleep=clock.sleep)
    assert clock.now <= 30
    assert err.value.fields["remaining"] == ["default/web"] and err.value.fields["blockers"] == ["default/web"]


def test_settle_waits_for_what_was_whole_and_names_what_was_not():
    api = Namespaced([], workloads={"web-rs": [SHORT, SHORT, WHOLE], "db": [SHORT]})
    workloads = [
        {"kind": "ReplicaSet", "namespace": "default", "name": "web-rs", "available_before": True},
        {"kind": "StatefulSet", "namespace": "default", "name": "db", "available_before": False},
        {"kind": "ReplicaSet", "namespace": "default", "name": "gone-rs", "available_before": True},
    ]
    clock = Clock()
    out = engine.settle(FakeApis(api), params(workloads=workloads), clock=clock, sleep=clock.sleep)
    assert out["settled"] == ["ReplicaSet/default/web-rs", "ReplicaSet/default/gone-rs"]
    assert out["not_waited"] == ["StatefulSet/default/db"] and out["waited_seconds"] == 4


def test_settle_fails_with_the_workloads_still_short():
    api = Namespaced([], workloads={"web-rs": [SHORT]})
    workloads = [{"kind": "ReplicaSet", "namespace": "default", "name": "web-rs", "available_before": True}]
    clock = Clock()
    with pytest.raises(engine.DrainError) as err:
        engine.settle(FakeApis(api), params(workloads=workloads, timeout=10), clock=clock, sleep=clock.sleep)
    assert err.value.fields["not_settled"] == ["ReplicaSet/default/web-rs"] and clock.now <= 10


def _budget(name, allowed, app="web", namespace="default"):
    return {
        "metadata": {"name": name, "namespace": namespace, "generation": 1},
        "spec": {"selector": {"matchLabels": {"app": app}}},
        "status": {"disruptionsAllowed": allowed, "observedGeneration": 1},
    }


def test_the_budgets_covering_evicted_pods_are_recorded_and_waited_for_until_they_allow_a_disruption():
    covering, other_ns, unrelated = _budget("web", 1), _budget("web", 1, namespace="prod"), _budget("db", 1, app="db")
    api = Namespaced(
        [pod("web", owner_name="web-rs")],
        workloads={"web-rs": [WHOLE], "web": [_budget("web", 0), _budget("web", 0), _budget("web", 1)]},
        pdbs=[covering, other_ns, unrelated],
    )
    out = engine.drain(FakeApis(api), params(), False, clock=Clock(), sleep=Clock().sleep)
    assert out["workloads"] == [
        {"kind": "ReplicaSet", "namespace": "default", "name": "web-rs", "available_before": True},
        {"kind": "PodDisruptionBudget", "namespace": "default", "name": "web", "available_before": True},
    ]
    clock = Clock()
    settled = engine.settle(FakeApis(api), params(workloads=out["workloads"]), clock=clock, sleep=clock.sleep)
    # the ReplicaSet is whole at once; the budget allows a disruption on the third read
    assert settled["settled"] == ["ReplicaSet/default/web-rs", "PodDisruptionBudget/default/web"]
    assert clock.now == 2 * 2


def test_a_budget_that_allowed_no_disruption_before_the_drain_is_not_waited_for():
    api = Namespaced([pod("web", owner_name="web-rs")], workloads={"web-rs": [WHOLE]}, pdbs=[_budget("web", 0)])
    out = engine.drain(FakeApis(api), params(), True)
    assert out["workloads"][-1] == {
        "kind": "PodDisruptionBudget",
        "namespace": "default",
        "name": "web",
        "available_before": False,
    }


def test_budget_availability_reads_disruptions_allowed_on_a_current_status():
    assert rules.available(_budget("b", 1), "PodDisruptionBudget")
    assert not rules.available(_budget("b", 0), "PodDisruptionBudget")
    stale = _budget("b", 1)
    stale["metadata"]["generation"] = 2
    assert not rules.available(stale, "PodDisruptionBudget")
