# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Check a playbook's inputs before any host is contacted; documented in plugins/modules/inputs_check.py."""

from __future__ import annotations

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _inputs
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._action import ActionFailure, ControllerAction


class ActionModule(ControllerAction):
    @staticmethod
    def argument_spec():
        return {
            "playbook": {"type": "str", "required": True, "choices": list(_inputs.PLAYBOOKS)},
            "inputs": {"type": "dict", "default": {}},
            "groups": {"type": "dict", "required": True},
            "limited_hosts": {"type": "list", "elements": "str"},
        }

    def act(self, params, task_vars):
        found = _inputs.problems(params["playbook"], params["inputs"], params["groups"], params["limited_hosts"])
        if found:
            raise ActionFailure(
                f"Invalid input for {params['playbook']}, nothing was contacted or changed: " + " | ".join(found),
                problems=found,
            )
        return {"changed": False, "problems": []}
