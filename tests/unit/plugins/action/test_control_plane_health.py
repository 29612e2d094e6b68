"""The control_plane_health action: its wait loop over node reads and the API, with both replaced."""

from __future__ import annotations

import base64
import json
from unittest import mock

import yaml
from conftest import NEW, manifest, pod_for

from ansible_collections.skewsafe.kubeadm.plugins.action import control_plane_health as action_mod
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _control_plane_health as health


class Node:
    """What the node answers: manifests, /readyz status per round, etcdctl output per round."""

    def __init__(self, readyz, etcd_rounds, etcd_manifest=True):
        self.manifests = {c: manifest(c, "3.6.8-0" if c == "etcd" else NEW) for c in health.COMPONENTS}
        if not etcd_manifest:
            self.manifests["etcd"] = None
        self.readyz, self.etcd_rounds, self.calls = list(readyz), list(etcd_rounds), []

    def __call__(self, name, args, task_vars):
        self.calls.append((name, args))
        if name == "skewsafe.kubeadm.static_pod_manifests_info":
            return {
                "manifests": {
                    c: None
                    if self.manifests[c] is None
                    else {"content": base64.b64encode(yaml.safe_dump(self.manifests[c]).encode()).decode()}
                    for c in args["names"]
                }
            }
        if name == "ansible.builtin.uri" and args["url"].endswith("/readyz"):
            status = self.readyz.pop(0) if len(self.readyz) > 1 else self.readyz[0]
            return {"status": status, "msg": "OK" if status == 200 else f"Status code was {status}"}
        if name == "ansible.builtin.uri":  # external etcd /health
            return {"status": 200, "json": {"health": "true"}}
        members = self.etcd_rounds.pop(0) if len(self.etcd_rounds) > 1 else self.etcd_rounds[0]
        rows = [{"endpoint": f"https://10.0.0.1{i}:2379", "health": ok} for i, ok in enumerate(members, 1)]
        return {"rc": 0 if all(members) else 1, "stdout": json.dumps(rows), "stderr": ""}


def make_action(monkeypatch, node, pods, args=None, check_mode=False):
    task = mock.MagicMock()
    task.args = {"node_name": "cp-2", "kubeconfig": "/nonexistent", "wait_sleep": 1, "wait_timeout": 20, **(args or {})}
    task.check_mode = check_mode
    task.async_val = 0
    action = action_mod.ActionModule(
        task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None
    )
    monkeypatch.setattr(action_mod._client, "HAS_KUBERNETES", True)
    monkeypatch.setattr(action_mod._client, "build_api_client", lambda params: object())
    monkeypatch.setattr(action, "remote", node)
    rounds = list(pods)
    monkeypatch.setattr(action, "_pods", lambda api, params: rounds.pop(0) if len(rounds) > 1 else rounds[0])
    clock = {"now": 0.0}
    monkeypatch.setattr(action_mod._poll.time, "monotonic", lambda: clock["now"])
    monkeypatch.setattr(action_mod._poll.time, "sleep", lambda s: clock.__setitem__("now", clock["now"] + s))
    return action


def whole_pods(node):
    return [pod_for(c, doc) for c, doc in node.manifests.items() if doc is not None]


def test_waits_until_whole_in_consecutive_rounds(monkeypatch):
    node = Node(readyz=[503, 200], etcd_rounds=[[True, False, True], [True, True, True]])
    pods = whole_pods(node)
    not_ready = [pod_for(c, node.manifests[c], ready=c != "kube-apiserver") for c in health.COMPONENTS]
    action = make_action(monkeypatch, node, [(not_ready, None), (pods, None)])
    result = action.run(task_vars={})
    assert result["passed"] and not result.get("failed"), result
    assert result["attempts"] == 3  # round 1 not whole, rounds 2 and 3 whole (threshold 2)
    assert result["components"]["kube-apiserver"] == NEW
    assert result["apiserver_url"] == "https://10.0.0.12:6443"
    # manifests are read once, every one in a single module run on the node; the live state every round
    reads = [call[1]["names"] for call in node.calls if call[0] == "skewsafe.kubeadm.static_pod_manifests_info"]
    assert reads == [list(health.COMPONENTS)]


def test_times_out_naming_what_is_not_whole(monkeypatch):
    node = Node(readyz=[200], etcd_rounds=[[True, False, False]])
    action = make_action(monkeypatch, node, [(whole_pods(node), None)], args={"wait_timeout": 10})
    result = action.run(task_vars={})
    assert result["failed"] and not result["passed"]
    assert "cp-2 is not whole after" in result["msg"]
    assert "etcd: only 1 of 3 members healthy (no quorum)" in result["msg"]


def test_api_unreachable_is_one_problem_not_one_per_component(monkeypatch):
    node = Node(readyz=[200], etcd_rounds=[[True, True, True]])
    action = make_action(
        monkeypatch, node, [(None, "cannot list the control-plane Pods of cp-2: timed out")], args={"wait_timeout": 3}
    )
    result = action.run(task_vars={})
    assert result["problems"] == ["cannot list the control-plane Pods of cp-2: timed out"]


def test_external_etcd_is_asked_through_the_apiserver_client_settings(monkeypatch):
    node = Node(readyz=[200], etcd_rounds=[[True]], etcd_manifest=False)
    action = make_action(monkeypatch, node, [(whole_pods(node), None)])
    result = action.run(task_vars={})
    assert result["passed"], result
    assert result["etcd"]["mode"] == "external"
    etcd_calls = [a for n, a in node.calls if n == "ansible.builtin.uri" and a["url"].endswith("/health")]
    assert etcd_calls[0]["client_cert"] == "/pki/apiserver-etcd-client.crt"


def test_check_mode_skips(monkeypatch):
    node = Node(readyz=[200], etcd_rounds=[[True]])
    result = make_action(monkeypatch, node, [(whole_pods(node), None)], check_mode=True).run(task_vars={})
    assert result["skipped"] and not node.calls


def test_missing_node_name_is_refused_before_anything_runs(monkeypatch):
    node = Node(readyz=[200], etcd_rounds=[[True]])
    action = make_action(monkeypatch, node, [(whole_pods(node), None)])
    action._task.args = {"kubeconfig": "/x"}
    result = action.run(task_vars={})
    assert result["failed"] and "node_name" in result["msg"], result
    assert not node.calls
