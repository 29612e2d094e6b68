"""The warn_deprecated action: which old names warn, and the records the executor turns into warnings."""

from __future__ import annotations

from unittest import mock

import pytest
from ansible.errors import AnsibleActionFail

from ansible_collections.skewsafe.kubeadm.plugins.action import warn_deprecated as action_mod


def run(args, task_vars):
    task = mock.MagicMock()
    task.args = args
    task.check_mode = False
    task.async_val = 0
    action = action_mod.ActionModule(
        task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None
    )
    return action.run(task_vars=task_vars)


RENAMED = {"node_upgrade_trusted_repo": "control_plane_upgrade_trusted_repo", "old_b": "new_b"}


def test_only_old_names_that_are_set_warn():
    result = run(
        {"renamed_variables": RENAMED, "removed_in": "1.0.0", "context": "skewsafe.kubeadm.control_plane_upgrade"},
        {"node_upgrade_trusted_repo": True, "new_b": 1},
    )
    assert result["changed"] is False
    assert result["deprecated_variables"] == ["node_upgrade_trusted_repo"]
    assert result["deprecations"] == [
        {
            "msg": "skewsafe.kubeadm.control_plane_upgrade: node_upgrade_trusted_repo is deprecated; "
            "set control_plane_upgrade_trusted_repo instead.",
            "version": "1.0.0",
            "collection_name": "skewsafe.kubeadm",
        }
    ]


def test_nothing_set_no_warning():
    result = run({"renamed_variables": RENAMED, "removed_in": "1.0.0"}, {"unrelated": 1})
    assert result["deprecated_variables"] == []
    assert "deprecations" not in result


def test_message_form():
    result = run({"msg": "The playbook a is now b.", "removed_in": "1.0.0"}, {})
    assert [d["msg"] for d in result["deprecations"]] == ["The playbook a is now b."]


@pytest.mark.parametrize(
    "args",
    [
        {"removed_in": "1.0.0"},  # neither form
        {"msg": "x", "renamed_variables": RENAMED, "removed_in": "1.0.0"},  # both
        {"msg": "x"},  # no version
    ],
)
def test_bad_arguments_fail(args):
    with pytest.raises(AnsibleActionFail):
        run(args, {})
