# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Cordon or uncordon a Node with the collection's mark; documented in plugins/modules/node_cordon.py."""

from __future__ import annotations

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _client
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._args import auth_argspec
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _node_cordon as cordon
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._action import ActionFailure, ControllerAction

# A Node's status changes under the write (a kubelet restarting): re-read and re-plan, a few times.
CONFLICT_RETRIES = 5


def argument_spec():
    spec = auth_argspec()
    spec.update(
        name={"type": "str", "required": True},
        state={"type": "str", "required": True, "choices": list(cordon.STATES)},
        mark={"type": "str", "default": "skewsafe.kubeadm/cordoned"},
        mark_value={"type": "str"},
        request_timeout={"type": "int", "default": _client.REQUEST_TIMEOUT},
    )
    return spec


def converge(core, serialize, params, check_mode):
    """Read, plan, write with the read's resourceVersion; on 409 start again. Returns (changed, facts)."""
    for _attempt in range(CONFLICT_RETRIES):
        try:
            node = serialize(core.read_node(params["name"], _request_timeout=params["request_timeout"]))
        except _client.ApiException as exc:
            raise cordon.CordonError(f"cannot read Node {params['name']}: {_client.api_error_message(exc)}") from exc
        patch, facts = cordon.plan(node, params["state"], params["mark"], params["mark_value"])
        if patch is None or check_mode:
            return patch is not None, facts
        try:
            core.patch_node(params["name"], patch, _request_timeout=params["request_timeout"])
        except _client.ApiException as exc:
            if exc.status == 409:
                continue
            raise cordon.CordonError(f"cannot patch Node {params['name']}: {_client.api_error_message(exc)}") from exc
        return True, facts
    raise cordon.CordonError(
        f"Node {params['name']} changed under every one of {CONFLICT_RETRIES} writes (409 Conflict); run again"
    )


class ActionModule(ControllerAction):
    @staticmethod
    def argument_spec():
        return argument_spec()

    def _api(self, params):
        """CoreV1Api and the serializer for the auth params (replaced in the unit tests)."""
        api = _client.build_api_client(params)
        return _client.k8s_client.CoreV1Api(api), api.sanitize_for_serialization

    def act(self, params, task_vars):
        if params["state"] == "cordoned" and not params["mark_value"]:
            raise ActionFailure("state=cordoned needs mark_value: the mark says who cordoned the node and why")
        self.require_seconds(params, "request_timeout")
        self.require_kubernetes()
        try:
            core, serialize = self._api(params)
            changed, facts = converge(core, serialize, params, self._task.check_mode)
        except (_client.ClientError, cordon.CordonError) as exc:
            raise ActionFailure(str(exc), name=params["name"]) from exc
        result = {
            "changed": changed,
            "name": params["name"],
            "cordoned_by_operator": facts["cordoned_by_operator"],
            "unschedulable": facts["after"]["unschedulable"],
            "mark": facts["after"]["mark"],
        }
        if self._task.diff and changed:
            result["diff"] = {
                "before": facts["before"],
                "after": facts["after"],
                "before_header": f"Node {params['name']}",
                "after_header": f"Node {params['name']}",
            }
        return result
