"""The node_drain action: its argument checks and how the engine's answers become results (failed, never raised)."""

from __future__ import annotations

from unittest import mock

from drain_fakes import FakeApis, Namespaced, pod

from ansible_collections.skewsafe.kubeadm.plugins.action import node_drain as action_mod
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._client import ApiException


def run(monkeypatch, api, args, check_mode=False):
    task = mock.MagicMock()
    task.args = {"kubeconfig": "/nonexistent", **args}
    task.check_mode, task.diff, task.async_val = check_mode, False, 0
    action = action_mod.ActionModule(
        task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None
    )
    monkeypatch.setattr(action_mod._client, "HAS_KUBERNETES", True)
    monkeypatch.setattr(action, "_apis", lambda params: FakeApis(api))
    return action.run(task_vars={})


def test_bad_arguments_are_a_failed_result_before_any_request(monkeypatch):
    api = Namespaced([pod("web")])
    assert "at least 1 second" in run(monkeypatch, api, {"name": "w1", "timeout": 0})["msg"]
    assert "needs name" in run(monkeypatch, api, {})["msg"]
    assert "0 or more" in run(monkeypatch, api, {"name": "w1", "grace_period": -1})["msg"]
    assert api.evictions == []


def test_a_refused_drain_is_a_failed_result_with_the_pods(monkeypatch):
    result = run(monkeypatch, Namespaced([pod("debug", owner=None)]), {"name": "w1"})
    assert result["failed"] and result["name"] == "w1"
    assert result["refused"] == [{"pod": "default/debug", "why": "no controller: nothing would recreate it"}]


def test_check_mode_and_an_api_error(monkeypatch):
    api = Namespaced([pod("web")], workloads={"web-owner": [{"spec": {"replicas": 1}, "status": {}}]})
    result = run(monkeypatch, api, {"name": "w1"}, check_mode=True)
    assert result["changed"] and not result.get("failed") and api.evictions == []

    class Forbidden(Namespaced):
        def list_pod_for_all_namespaces(self, field_selector, _request_timeout):
            raise ApiException(status=403, reason="Forbidden")

    denied = run(monkeypatch, Forbidden([]), {"name": "w1"})
    assert denied["failed"] and denied["msg"] == "API request failed: 403 Forbidden"
