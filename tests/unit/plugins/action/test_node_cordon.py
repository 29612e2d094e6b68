"""The node_cordon action: the plan over Node dicts, and the conditional write against a CoreV1Api stand-in."""

from __future__ import annotations

import copy
from unittest import mock

import pytest

from ansible_collections.skewsafe.kubeadm.plugins.action import node_cordon as action_mod
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._client import ApiException
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _node_cordon as cordon

MARK = "skewsafe.kubeadm/cordoned"


def node(unschedulable=False, mark=None, rv="7"):
    annotations = {"other": "kept"} if mark is None else {"other": "kept", MARK: mark}
    return {
        "metadata": {"name": "w1", "resourceVersion": rv, "annotations": annotations},
        "spec": {"unschedulable": True} if unschedulable else {},
    }


def test_cordon_marks_and_cordons_in_one_conditional_patch():
    patch, facts = cordon.plan(node(), "cordoned", MARK, "upgrade to v1.37.2")
    assert patch == {
        "metadata": {"resourceVersion": "7", "annotations": {MARK: "upgrade to v1.37.2"}},
        "spec": {"unschedulable": True},
    }
    assert facts["after"] == {"unschedulable": True, "mark": "upgrade to v1.37.2"}
    assert not facts["cordoned_by_operator"]


def test_cordon_leaves_the_operators_cordon_alone():
    patch, facts = cordon.plan(node(unschedulable=True), "cordoned", MARK, "upgrade to v1.37.2")
    assert patch is None and facts["cordoned_by_operator"]
    assert facts["after"] == {"unschedulable": True, "mark": None}


def test_cordon_again_is_no_change_and_a_new_reason_rewrites_the_mark():
    marked = node(unschedulable=True, mark="upgrade to v1.37.2")
    assert cordon.plan(marked, "cordoned", MARK, "upgrade to v1.37.2")[0] is None
    patch, _facts = cordon.plan(marked, "cordoned", MARK, "failed at the kubelet")
    assert patch["metadata"]["annotations"] == {MARK: "failed at the kubelet"}


def test_uncordon_only_what_carries_the_mark():
    patch, facts = cordon.plan(node(unschedulable=True, mark="x"), "uncordoned", MARK)
    assert patch == {
        "metadata": {"resourceVersion": "7", "annotations": {MARK: None}},
        "spec": {"unschedulable": False},
    }
    assert not facts["cordoned_by_operator"]
    patch, facts = cordon.plan(node(unschedulable=True), "uncordoned", MARK)
    assert patch is None and facts["cordoned_by_operator"] and facts["after"]["unschedulable"]
    assert cordon.plan(node(), "uncordoned", MARK)[0] is None


def test_a_stray_mark_on_a_schedulable_node_is_removed():
    patch, _facts = cordon.plan(node(mark="x"), "uncordoned", MARK)
    assert patch["metadata"]["annotations"] == {MARK: None}


def test_unknown_state_is_refused():
    with pytest.raises(ValueError, match="state must be one of"):
        cordon.plan(node(), "drained", MARK)


def conflict():
    exc = ApiException()
    exc.status, exc.reason, exc.body = 409, "Conflict", None
    return exc


class Core:
    """CoreV1Api stand-in: serves a Node, applies strategic-merge-like patches, raises 409 on a stale version."""

    def __init__(self, current, conflicts=0, status=None):
        self.current, self.conflicts, self.status = current, conflicts, status
        self.patches, self.timeouts = [], []

    def read_node(self, name, **kwargs):
        self.timeouts.append(kwargs.get("_request_timeout"))
        if self.status:
            exc = ApiException()
            exc.status, exc.reason, exc.body = self.status, "Forbidden", None
            raise exc
        return copy.deepcopy(self.current)

    def patch_node(self, name, body, **kwargs):
        self.timeouts.append(kwargs.get("_request_timeout"))
        self.patches.append(body)
        if body["metadata"]["resourceVersion"] != self.current["metadata"]["resourceVersion"]:
            raise AssertionError("the stand-in only sees current versions")
        if self.conflicts:
            self.conflicts -= 1
            self.current["metadata"]["resourceVersion"] = str(int(self.current["metadata"]["resourceVersion"]) + 1)
            raise conflict()
        annotations = self.current["metadata"]["annotations"]
        for key, value in body["metadata"]["annotations"].items():
            if value is None:
                annotations.pop(key, None)
            else:
                annotations[key] = value
        self.current["spec"]["unschedulable"] = body["spec"]["unschedulable"]
        self.current["metadata"]["resourceVersion"] = str(int(self.current["metadata"]["resourceVersion"]) + 1)
        return self.current


def make_action(monkeypatch, core, args, check_mode=False, diff=False):
    task = mock.MagicMock()
    task.args = {"name": "w1", "kubeconfig": "/nonexistent", **args}
    task.check_mode, task.diff, task.async_val = check_mode, diff, 0
    action = action_mod.ActionModule(
        task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None
    )
    monkeypatch.setattr(action_mod._client, "HAS_KUBERNETES", True)
    monkeypatch.setattr(action, "_api", lambda params: (core, lambda obj: obj))
    return action


CORDON = {"state": "cordoned", "mark_value": "upgrade to v1.37.2", "request_timeout": 9}


def test_action_cordons_then_a_second_run_changes_nothing(monkeypatch):
    core = Core(node())
    result = make_action(monkeypatch, core, CORDON, diff=True).run(task_vars={})
    assert result["changed"] and result["unschedulable"] and result["mark"] == "upgrade to v1.37.2"
    assert result["diff"]["before"] == {"unschedulable": False, "mark": None}
    assert core.current["spec"]["unschedulable"] and core.current["metadata"]["annotations"]["other"] == "kept"
    assert set(core.timeouts) == {9}
    again = make_action(monkeypatch, core, CORDON, diff=True).run(task_vars={})
    assert not again["changed"] and "diff" not in again and len(core.patches) == 1


def test_action_check_mode_predicts_and_writes_nothing(monkeypatch):
    core = Core(node(unschedulable=True, mark="x"))
    result = make_action(monkeypatch, core, {"state": "uncordoned"}, check_mode=True).run(task_vars={})
    assert result["changed"] and result["unschedulable"] is False and result["mark"] is None
    assert core.patches == [] and core.current["spec"]["unschedulable"]


def test_action_rereads_and_replans_after_a_conflict(monkeypatch):
    core = Core(node(unschedulable=True, mark="x"), conflicts=2)
    result = make_action(monkeypatch, core, {"state": "uncordoned"}).run(task_vars={})
    assert result["changed"] and [p["metadata"]["resourceVersion"] for p in core.patches] == ["7", "8", "9"]
    assert not core.current["spec"]["unschedulable"] and MARK not in core.current["metadata"]["annotations"]


def test_action_gives_up_after_repeated_conflicts(monkeypatch):
    core = Core(node(), conflicts=99)
    result = make_action(monkeypatch, core, CORDON).run(task_vars={})
    assert result["failed"] and "409 Conflict" in result["msg"], result
    assert len(core.patches) == action_mod.CONFLICT_RETRIES


def test_action_reports_the_operators_cordon_on_uncordon(monkeypatch):
    core = Core(node(unschedulable=True))
    result = make_action(monkeypatch, core, {"state": "uncordoned"}).run(task_vars={})
    assert not result["changed"] and result["cordoned_by_operator"] and result["unschedulable"]
    assert core.patches == []


def test_action_read_failure_names_the_node(monkeypatch):
    result = make_action(monkeypatch, Core(node(), status=403), CORDON).run(task_vars={})
    assert result["failed"] and result["msg"].startswith("cannot read Node w1: 403 Forbidden"), result


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"state": "cordoned"}, "state=cordoned needs mark_value"),
        ({"state": "uncordoned", "request_timeout": 0}, "request_timeout must be at least 1"),
    ],
)
def test_action_refuses_bad_input_before_any_request(monkeypatch, args, message):
    core = Core(node())
    result = make_action(monkeypatch, core, args).run(task_vars={})
    # a failed result, not a raise: failed_when, ignore_errors and rescue apply as to any module
    assert result["failed"] and message in result["msg"], result
    assert core.timeouts == []
