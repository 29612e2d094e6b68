# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Wait until a control-plane node is whole again; documented in plugins/modules/control_plane_health.py."""

from __future__ import annotations

from ansible.utils.display import Display

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _client, _manifest, _poll
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._args import control_plane_node_argspec
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _control_plane_health as health
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _node_manifests as node_manifests
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._action import ActionFailure, NodeAction

display = Display()

ETCD_PKI = "/etc/kubernetes/pki/etcd"


def argument_spec():
    spec = control_plane_node_argspec()
    spec.update(
        ca_file={"type": "path", "default": "/etc/kubernetes/pki/ca.crt"},
        expected_version={"type": "str"},
        etcd={"type": "str", "choices": ["auto", "stacked", "external", "skip"], "default": "auto"},
        wait_timeout={"type": "int", "default": 600},
        wait_sleep={"type": "int", "default": 5},
        success_threshold={"type": "int", "default": 2},
        request_timeout={"type": "int", "default": 10},
    )
    return spec


class ActionModule(NodeAction):
    @staticmethod
    def argument_spec():
        return argument_spec()

    def _read_manifests(self, params, task_vars):
        try:
            return node_manifests.read(
                lambda name, args: self.remote(name, args, task_vars), params["manifests_dir"], health.COMPONENTS
            )
        except node_manifests.NodeManifestError as exc:
            raise ActionFailure(str(exc)) from exc

    def _readyz(self, url, params, task_vars):
        if not url:
            return {"url": None, "status": None, "msg": "no --advertise-address in the manifest"}
        got = self.remote(
            "ansible.builtin.uri",
            {"url": f"{url}/readyz", "ca_path": params["ca_file"], "timeout": params["request_timeout"]},
            task_vars,
        )
        return {"url": url, "status": got.get("status"), "msg": None if got.get("status") == 200 else got.get("msg")}

    def _etcd(self, mode, manifests, params, task_vars):
        timeout = params["request_timeout"]
        if mode == "stacked":
            # etcdctl from the running etcd container, with kubeadm's health-check client certificate.
            script = (
                "cid=$(crictl ps --name '^etcd$' --state running --quiet | head -n 1); "
                '[ -n "$cid" ] || { echo "no running etcd container on this node" >&2; exit 3; }; '
                f'exec crictl exec "$cid" etcdctl --endpoints=https://127.0.0.1:2379 --cacert={ETCD_PKI}/ca.crt '
                f"--cert={ETCD_PKI}/healthcheck-client.crt --key={ETCD_PKI}/healthcheck-client.key "
                f"--dial-timeout=3s --command-timeout={timeout}s endpoint health --cluster -w json"
            )
            got = self.remote("ansible.builtin.command", {"argv": ["sh", "-c", script]}, task_vars)
            members = health.parse_etcdctl_health(got.get("stdout"))
            if members is None or (got.get("rc") == 3 and not members):
                return {"mode": mode, "members": [], "error": (got.get("stderr") or got.get("msg") or "").strip()}
            return {"mode": mode, "members": members, "error": None}
        client = health.etcd_client_settings(manifests.get("kube-apiserver"))
        if not client["servers"]:
            return {"mode": mode, "members": [], "error": "kube-apiserver names no --etcd-servers"}
        members = []
        for server in client["servers"]:
            got = self.remote(
                "ansible.builtin.uri",
                {
                    "url": f"{server.rstrip('/')}/health",
                    "ca_path": client["ca_file"],
                    "timeout": timeout,
                    "client_cert": client["cert_file"],
                    "client_key": client["key_file"],
                    "return_content": True,
                },
                task_vars,
            )
            members.append(health.etcd_health_member(server, got))
        return {"mode": mode, "members": members, "error": None}

    def _pods(self, api, params):
        try:
            listed = _client.k8s_client.CoreV1Api(api).list_namespaced_pod(
                "kube-system",
                field_selector=f"spec.nodeName={params['node_name']}",
                label_selector="tier=control-plane",
                _request_timeout=params["request_timeout"],
            )
        except Exception as exc:  # the client raises ApiException, urllib3 and socket errors alike
            detail = _client.api_error_message(exc) if isinstance(exc, _client.ApiException) else str(exc)
            return None, f"cannot list the control-plane Pods of {params['node_name']}: {detail}"
        return [api.sanitize_for_serialization(p) for p in listed.items], None

    def act(self, params, task_vars):
        if self._task.check_mode:
            return {"skipped": True, "msg": "not run in check mode: nothing was changed that it would wait for"}
        self.require_seconds(params, "wait_timeout", "wait_sleep", "request_timeout")
        self.require_kubernetes()
        try:
            api = _client.build_api_client(params)
        except _client.ClientError as exc:
            raise ActionFailure(str(exc)) from exc
        node = params["node_name"]
        manifests = self._read_manifests(params, task_vars)
        etcd_mode = params["etcd"]
        if etcd_mode == "auto":
            etcd_mode = "stacked" if manifests.get("etcd") is not None else "external"
        url = health.apiserver_address(manifests.get("kube-apiserver"))
        state = {}

        def one_round(attempt, elapsed):
            pods, pods_error = self._pods(api, params)
            readyz = self._readyz(url, params, task_vars)
            etcd = {"mode": "skipped"} if etcd_mode == "skip" else self._etcd(etcd_mode, manifests, params, task_vars)
            problems = [pods_error] if pods_error else []
            problems += health.evaluate(manifests, pods, readyz, etcd, params.get("expected_version"))
            display.vv(f"control_plane_health {node} round {attempt} ({elapsed():.0f}s): {problems or 'whole'}")
            state.update(problems=problems, etcd=etcd)
            return not problems

        ended = _poll.poll(one_round, params["success_threshold"], params["wait_timeout"], params["wait_sleep"])
        problems, etcd, elapsed, attempts = state["problems"], state["etcd"], ended.elapsed, ended.attempts
        result = dict(
            changed=False,
            passed=not problems,
            node=node,
            problems=problems,
            attempts=attempts,
            elapsed=round(elapsed, 1),
            apiserver_url=url,
            etcd=etcd,
            components={n: _manifest.summary(m)["version"] for n, m in manifests.items() if m},
        )
        if problems:
            raise ActionFailure(f"{node} is not whole after {elapsed:.0f}s: " + "; ".join(problems), **result)
        result["msg"] = f"{node} is whole: every static Pod runs its manifest and is Ready, /readyz ok, etcd healthy"
        return result
