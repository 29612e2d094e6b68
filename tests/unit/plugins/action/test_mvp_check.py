"""The mvp_check action plugin itself: its options, its defaults and how it turns outcomes into results."""

from __future__ import annotations

from unittest import mock

import pytest
import yaml

from ansible_collections.skewsafe.kubeadm.plugins.action import mvp_check as action_mod
from ansible_collections.skewsafe.kubeadm.plugins.doc_fragments._apiservers import ModuleDocFragment
from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _client
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.args import (
    APISERVERS_ARG_SPEC,
    MVP_CHECK_ARG_SPEC,
)
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.run import RunError
from ansible_collections.skewsafe.kubeadm.plugins.modules import mvp_check as module_doc

ENDPOINTS = [{"name": "cp-1", "url": "https://10.0.0.1:6443"}]


def make_action(monkeypatch, args, outcome=None, error=None, has_kubernetes=True):
    task = mock.MagicMock()
    task.args = args
    task.check_mode = False
    task.async_val = 0
    task.get_name.return_value = "gate"
    action = action_mod.ActionModule(
        task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None
    )
    monkeypatch.setattr(_client, "HAS_KUBERNETES", has_kubernetes)
    seen = {}

    def check_until_proved(params, progress=None):
        seen["params"] = params
        progress("round 1: 0 failed")
        if error:
            raise error
        return dict(outcome)

    monkeypatch.setattr(action_mod, "check_until_proved", check_until_proved)
    return action, seen


def test_passes_validated_options_with_their_defaults(monkeypatch):
    action, seen = make_action(
        monkeypatch, {"endpoints": ENDPOINTS}, {"passed": True, "msg": "proved", "changed": False}
    )
    result = action.run(task_vars={})
    assert result["passed"] is True and not result.get("failed")
    params = seen["params"]
    assert params["endpoints"] == ENDPOINTS
    assert params["mode"] == "auto" and params["wait_timeout"] == 300 and params["wait_sleep"] == 5
    assert params["success_threshold"] == 2 and params["fail_fast"] is True
    assert params["probe_limit"] == 2 and params["request_timeout"] == 5.0


def test_a_check_that_does_not_pass_fails_the_task(monkeypatch):
    outcome = {"passed": False, "msg": "cp-1: no --peer-ca-file", "failed_checks": ["peer_tls"], "changed": False}
    action, _seen = make_action(monkeypatch, {"endpoints": ENDPOINTS, "wait_timeout": 10}, outcome)
    result = action.run(task_vars={})
    assert result["failed"] is True and result["msg"] == "cp-1: no --peer-ca-file"
    assert result["failed_checks"] == ["peer_tls"]


def test_bad_input_is_a_failed_result_with_the_reason(monkeypatch):
    """A result, not an exception: ansible-core applies failed_when, ignore_errors and rescue only to results."""
    action, seen = make_action(monkeypatch, {"endpoints": ENDPOINTS}, error=RunError("endpoints[0] has no url"))
    result = action.run(task_vars={})
    assert result["failed"] is True and result["msg"].startswith("mvp_check cannot run: endpoints")
    assert result["passed"] is False and result["outcome"] == "failed"
    assert "params" in seen


@pytest.mark.parametrize(
    "args, message",
    [
        ({"mode": "sometimes"}, "mode"),
        ({"wait_timeout": "soon"}, "wait_timeout"),
        ({"checks": ["versions", "luck"]}, "checks"),
        ({"no_such_option": 1}, "no_such_option"),
    ],
)
def test_options_are_validated_before_anything_runs(monkeypatch, args, message):
    action, seen = make_action(monkeypatch, {"endpoints": ENDPOINTS, **args}, {"passed": True})
    result = action.run(task_vars={})
    assert result["failed"] is True and message in result["msg"]
    assert "params" not in seen


def test_without_the_kubernetes_library_it_says_where_it_is_needed(monkeypatch):
    action, seen = make_action(monkeypatch, {"endpoints": ENDPOINTS}, {"passed": True}, has_kubernetes=False)
    result = action.run(task_vars={})
    assert result["failed"] is True and "runs on the controller" in result["msg"]
    assert "params" not in seen


def _documented(options):
    return {name: (o.get("type", "str"), o.get("default"), o.get("choices")) for name, o in options.items()}


def _specified(spec):
    return {name: (o.get("type", "str"), o.get("default"), o.get("choices")) for name, o in spec.items()}


def test_documentation_mirrors_the_option_specs():
    """The docs are the one place users read; the specs the one place the defaults are defined."""
    assert _documented(yaml.safe_load(module_doc.DOCUMENTATION)["options"]) == _specified(MVP_CHECK_ARG_SPEC)
    assert _documented(yaml.safe_load(ModuleDocFragment.DOCUMENTATION)["options"]) == _specified(APISERVERS_ARG_SPEC)
