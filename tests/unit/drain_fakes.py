"""Stand-ins for the typed APIs a drain uses (tests of plugin_utils/_node_drain and the node_drain action)."""

from __future__ import annotations

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._client import ApiException


def pod(name, owner="ReplicaSet", owner_name=None, emptydir=False, phase="Running", mirror=False, deleting=False):
    meta = {"name": name, "namespace": "default", "uid": f"uid-{name}", "labels": {"app": name}}
    if owner:
        meta["ownerReferences"] = [{"kind": owner, "name": owner_name or f"{name}-owner", "controller": True}]
    if mirror:
        meta["annotations"] = {"kubernetes.io/config.mirror": "x"}
    if deleting:
        meta["deletionTimestamp"] = "2026-12-05T06:00:00Z"
    spec = {"volumes": [{"name": "scratch", "emptyDir": {}}] if emptydir else [{"name": "cfg", "configMap": {}}]}
    return {"metadata": meta, "spec": spec, "status": {"phase": phase}}


def api_error(status):
    return ApiException(status=status, reason={404: "Not Found", 429: "Too Many Requests", 500: "Internal"}[status])


class Namespaced:
    """The calls the engine makes, over dicts; ``refuse`` counts 429s per Pod, ``linger`` reads before a Pod goes."""

    def __init__(self, pods, workloads=None, refuse=None, linger=None, daemonsets=("ds",), pdbs=()):
        self.pods = {p["metadata"]["name"]: p for p in pods}
        self.workloads = workloads or {}
        self.refuse = dict(refuse or {})
        self.linger = dict(linger or {})
        self.daemonsets = set(daemonsets)
        self.pdbs = list(pdbs)
        self.evictions = []

    # core
    def list_pod_for_all_namespaces(self, field_selector, _request_timeout):
        assert field_selector == "spec.nodeName=w1"
        return {"items": list(self.pods.values())}

    def create_namespaced_pod_eviction(self, name, namespace, body, _request_timeout):
        assert body.delete_options.preconditions.uid == f"uid-{name}"
        if self.refuse.get(name, 0) > 0:
            self.refuse[name] -= 1
            raise api_error(429)
        self.evictions.append((name, body.delete_options.grace_period_seconds))

    def read_namespaced_pod(self, name, namespace, _request_timeout):
        if self.linger.get(name, 0) > 0:
            self.linger[name] -= 1
            return self.pods[name]
        raise api_error(404)

    def read_namespaced_replication_controller(self, name, namespace, _request_timeout):
        return self._workload(name)

    # apps
    def read_namespaced_daemon_set(self, name, namespace, _request_timeout):
        if name not in self.daemonsets:
            raise api_error(404)
        return {}

    def read_namespaced_replica_set(self, name, namespace, _request_timeout):
        return self._workload(name)

    read_namespaced_stateful_set = read_namespaced_replica_set

    def _workload(self, name):
        states = self.workloads.get(name)
        if states is None:
            raise api_error(404)
        return states.pop(0) if len(states) > 1 else states[0]

    # policy
    def list_pod_disruption_budget_for_all_namespaces(self, _request_timeout):
        return {"items": self.pdbs}

    def read_namespaced_pod_disruption_budget(self, name, namespace, _request_timeout):
        return self._workload(name)


class FakeApis:
    def __init__(self, api):
        self.core = self.apps = self.policy = api
        self.to_dict = lambda obj: obj


def params(**over):
    base = {
        "name": "w1",
        "force": False,
        "delete_emptydir_data": True,
        "grace_period": None,
        "timeout": 60,
        "retry_delay": 5,
        "poll": 2,
        "request_timeout": 10,
        "workloads": [],
    }
    return {**base, **over}
