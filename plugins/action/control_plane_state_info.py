# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""What a control-plane upgrade decides from, in one task; documented in plugins/modules/control_plane_state_info.py."""

from __future__ import annotations

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _client, _manifest
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._args import control_plane_node_argspec
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _control_plane_health as health
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _control_plane_state as state
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _node_manifests as node_manifests
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._action import ActionFailure, NodeAction


def argument_spec():
    spec = control_plane_node_argspec()
    spec.update(
        request_timeout={"type": "int", "default": _client.REQUEST_TIMEOUT},
    )
    return spec


class ActionModule(NodeAction):
    _supports_check_mode = True  # reads only

    @staticmethod
    def argument_spec():
        return argument_spec()

    def _read_api(self, params):
        api = _client.build_api_client(params)
        return state.read(
            _client.k8s_client.CoreV1Api(api),
            _client.k8s_client.AppsV1Api(api),
            api.sanitize_for_serialization,
            params["node_name"],
            params["request_timeout"],
        )

    def act(self, params, task_vars):
        self.require_seconds(params, "request_timeout")
        self.require_kubernetes()
        try:
            cluster = self._read_api(params)
        except (_client.ClientError, state.StateError) as exc:
            raise ActionFailure(str(exc)) from exc
        try:
            manifests = node_manifests.read(
                lambda name, args: self.remote(name, args, task_vars), params["manifests_dir"], health.VERSIONED
            )
        except node_manifests.NodeManifestError as exc:
            raise ActionFailure(str(exc)) from exc
        return dict(
            changed=False,
            node=params["node_name"],
            manifests={name: _manifest.summary(doc)["version"] if doc else None for name, doc in manifests.items()},
            **cluster,
        )
