# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Drain a Node as kubectl drain does, or wait until what a drain evicted is whole again; documented in
plugins/modules/node_drain.py."""

from __future__ import annotations

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _client
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._args import auth_argspec
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _node_drain as engine
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._action import ActionFailure, ControllerAction


class ActionModule(ControllerAction):
    @staticmethod
    def argument_spec():
        spec = auth_argspec()
        spec.update(
            name={"type": "str"},
            state={"type": "str", "choices": ["drained", "settled"], "default": "drained"},
            force={"type": "bool", "default": False},
            delete_emptydir_data={"type": "bool", "default": True},
            grace_period={"type": "int"},
            timeout={"type": "int", "default": 300},
            retry_delay={"type": "int", "default": 5},
            poll={"type": "int", "default": 2},
            workloads={"type": "list", "elements": "dict", "default": []},
            request_timeout={"type": "int", "default": _client.REQUEST_TIMEOUT},
        )
        return spec

    def _apis(self, params):
        """The typed APIs for the auth params (replaced in the unit tests)."""
        return engine.Apis(_client.build_api_client(params))

    def act(self, params, task_vars):
        self.require_seconds(params, "timeout", "request_timeout", "retry_delay", "poll")
        if params["grace_period"] is not None and params["grace_period"] < 0:
            raise ActionFailure(f"grace_period must be 0 or more seconds, not {params['grace_period']}")
        if params["state"] == "drained" and not params["name"]:
            raise ActionFailure("state=drained needs name, the Node to drain")
        self.require_kubernetes()
        try:
            apis = self._apis(params)
            if params["state"] == "settled":
                # Only reads: in check mode too, so a check run says how long it would wait.
                return engine.settle(apis, params)
            return dict(engine.drain(apis, params, self._task.check_mode), name=params["name"])
        except engine.DrainError as exc:
            raise ActionFailure(str(exc), name=params["name"], **exc.fields) from exc
        except _client.ClientError as exc:
            raise ActionFailure(str(exc), name=params["name"]) from exc
        except _client.ApiException as exc:
            raise ActionFailure(f"API request failed: {_client.api_error_message(exc)}", name=params["name"]) from exc
        except _client.TRANSPORT_ERRORS as exc:
            raise ActionFailure(f"cannot reach the API server: {exc}", name=params["name"]) from exc
