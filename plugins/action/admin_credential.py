# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""A short-lived cluster-admin credential minted by kubeadm on a control plane; documented in
plugins/modules/admin_credential.py."""

from __future__ import annotations

import contextlib
import datetime
import json
import os

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _manifest
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _admin_credential as cred
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._action import ActionFailure, NodeAction


def argument_spec():
    return {
        "dest": {"type": "path", "required": True},
        "name": {"type": "str", "required": True},
        "state": {"type": "str", "choices": ["present", "absent"], "default": "present"},
        "client_name": {"type": "str", "default": cred.DEFAULT_CLIENT_NAME},
        "groups": {"type": "list", "elements": "str", "default": [cred.CLUSTER_ADMINS_GROUP]},
        "validity": {"type": "str", "default": "4h"},
        "remove_at_exit": {"type": "bool", "default": False},
        "admin_kubeconfig": {"type": "str", "default": "/etc/kubernetes/admin.conf"},
        "manifest": {"type": "str", "default": "/etc/kubernetes/manifests/kube-apiserver.yaml"},
        "kubeadm": {"type": "str", "default": "kubeadm"},
        "kubectl": {"type": "str", "default": "kubectl"},
    }


def now():
    return datetime.datetime.now(datetime.timezone.utc)


class ActionModule(NodeAction):
    @staticmethod
    def argument_spec():
        return argument_spec()

    @contextlib.contextmanager
    def _on_the_node(self):
        """What runs on the node reads only (kubeadm prints the kubeconfig, writes nothing): also in check mode, where
        the run needs the credential as much. The task's no_log keeps the node's own logs free of the commands."""
        check_mode, no_log = self._task.check_mode, self._task.no_log
        self._task.check_mode, self._task.no_log = False, True
        try:
            yield
        finally:
            self._task.check_mode, self._task.no_log = check_mode, no_log

    def _node(self, module, args, task_vars, what):
        with self._on_the_node():
            got = self.remote(module, args, task_vars)
        if got.get("failed") or got.get("rc", 0) != 0:
            # stderr and msg only: stdout may hold the key
            detail = (got.get("stderr") or got.get("msg") or "").strip()
            raise ActionFailure(f"admin_credential: {what} failed on {self._host_name(task_vars)}: {detail}")
        return got

    def _host_name(self, task_vars):
        return self._task.delegate_to or (task_vars or {}).get("inventory_hostname") or "the node"

    def _mint(self, params, validity, task_vars):
        """kubeadm's kubeconfig text, and the server it names (admin.conf's)."""
        # without --raw kubectl prints no certificate data, key or token (DATA+OMITTED, REDACTED)
        argv = [params["kubectl"], "config", "view", f"--kubeconfig={params['admin_kubeconfig']}", "--minify"]
        view = self._node(
            "ansible.builtin.command",
            {"argv": [*argv, "--output=json"]},
            task_vars,
            f"reading the server of {params['admin_kubeconfig']}",
        )
        try:
            cluster_name, server = cred.current_cluster(json.loads(view["stdout"]))
            endpoint = cred.control_plane_endpoint(server)
        except (ValueError, cred.CredentialError) as exc:
            raise ActionFailure(f"admin_credential: {params['admin_kubeconfig']}: {exc}") from exc
        manifest = self._node(
            "ansible.builtin.slurp", {"src": params["manifest"]}, task_vars, f"reading {params['manifest']}"
        )
        try:
            command = _manifest.summary(_manifest.decode(manifest["content"]))["command"]
        except _manifest.ManifestError as exc:
            raise ActionFailure(f"admin_credential: {params['manifest']} is {exc}") from exc
        certs_dir = cred.certificates_dir(_manifest.command_flags(command))
        version = self._node(
            "ansible.builtin.command",
            {"argv": [params["kubeadm"], "version", "--output=short"]},
            task_vars,
            "kubeadm version",
        )["stdout"].strip()
        config = cred.user_config(version, endpoint, cluster_name, certs_dir)
        minted = self._node(
            "ansible.builtin.command",
            {
                "argv": cred.kubeadm_args(params["kubeadm"], params["client_name"], params["groups"], validity),
                "stdin": config,
            },
            task_vars,
            f"kubeadm kubeconfig user (CA in {certs_dir})",
        )
        return minted["stdout"], server

    def act(self, params, task_vars):
        result = {}
        try:
            validity = cred.parse_duration(params["validity"])
        except cred.CredentialError as exc:
            raise ActionFailure(f"admin_credential: validity {exc}") from exc
        run_id = os.getppid()  # the ansible-playbook process: one credential per run, never another run's
        paths = cred.run_paths(params["dest"], params["name"], run_id)
        result.update(paths)
        if params["state"] == "absent":
            removed = cred.remove(paths.values())
            result.update(changed=bool(removed), removed=removed)
            return result
        try:
            cred.ensure_private_dir(params["dest"])
        except (OSError, cred.CredentialError) as exc:
            raise ActionFailure(f"admin_credential: {exc}") from exc
        started = now()
        result["pruned"] = cred.prune_expired(params["dest"], started)
        facts = cred.reusable(paths, params["client_name"], params["groups"], cred.renew_margin(validity), started)
        minted = facts is None
        if not minted:
            with open(paths["kubeconfig"]) as handle:
                server = cred.current_cluster(cred.yaml.safe_load(handle))[1]
        else:
            text, server = self._mint(params, validity, task_vars)
            try:
                kubeconfig, cert, key, named = cred.split_kubeconfig(
                    text, paths["client_certificate"], paths["client_key"]
                )
                facts = cred.certificate_facts(cert)
            except (cred.CredentialError, ValueError) as exc:
                raise ActionFailure(f"admin_credential: {exc}") from exc
            if named != server:
                raise ActionFailure(f"admin_credential: kubeadm named the server {named}, admin.conf {server}")
            cred.write_private(paths["client_key"], key)
            cred.write_private(paths["client_certificate"], cert)
            cred.write_private(paths["kubeconfig"], kubeconfig)
            if params["remove_at_exit"]:
                result["remover_pid"] = cred.remove_when_gone(run_id, list(paths.values()))
        # Run-scoped state on the controller, not a change to a host or the cluster: reported as `minted`, so that
        # a rerun of an idempotent playbook (mvp_enable, molecule's idempotence) stays at changed=0.
        result.update(
            changed=False,
            minted=minted,
            expires=facts["not_after"].isoformat(),
            client_name=facts["subject"]["CN"],
            groups=facts["subject"]["O"],
            server=server,
            remove_at_exit=params["remove_at_exit"],
        )
        return result
