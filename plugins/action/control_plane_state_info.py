# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a control-plane upgrade decides from, in one task; documented in plugins/modules/control_plane_state_info.py."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _client, _manifest
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._args import control_plane_node_argspec
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _control_plane_health as health
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _control_plane_state as state
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _node_manifests as node_manifests


def argument_spec():
    spec = control_plane_node_argspec()
    spec.update(
        request_timeout={"type": "int", "default": _client.REQUEST_TIMEOUT},
    )
    return spec


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _supports_check_mode = True  # reads only
    _supports_async = False

    def _remote(self, name, args, task_vars):
        return self._execute_module(module_name=name, module_args=args, task_vars=task_vars)

    def _read_api(self, params):
        api = _client.build_api_client(params)
        return state.read(
            _client.k8s_client.CoreV1Api(api),
            _client.k8s_client.AppsV1Api(api),
            api.sanitize_for_serialization,
            params["node_name"],
            params["request_timeout"],
        )

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        _validation, params = self.validate_argument_spec(argument_spec=argument_spec())
        if params["request_timeout"] < 1:
            raise AnsibleActionFail(f"request_timeout must be at least 1 second, not {params['request_timeout']}")
        if not _client.HAS_KUBERNETES:
            raise AnsibleActionFail(_client.missing_library_message() + " (it runs on the controller)")
        try:
            cluster = self._read_api(params)
        except (_client.ClientError, state.StateError) as exc:
            raise AnsibleActionFail(str(exc)) from exc
        try:
            manifests = node_manifests.read(
                lambda name, args: self._remote(name, args, task_vars), params["manifests_dir"], health.VERSIONED
            )
        except node_manifests.NodeManifestError as exc:
            raise AnsibleActionFail(str(exc)) from exc
        result.update(
            changed=False,
            node=params["node_name"],
            manifests={name: _manifest.summary(doc)["version"] if doc else None for name, doc in manifests.items()},
            **cluster,
        )
        return result
