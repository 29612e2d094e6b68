# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""One run per cluster, with a Lease; documented in plugins/modules/run_lock.py."""

from __future__ import annotations

import datetime
import getpass
import os
import socket

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _client
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._args import auth_argspec
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _run_lock as lock
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._action import ActionFailure, ControllerAction
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._admin_credential import process_start


def who_runs(playbook, task_vars):
    """The holder: this ansible-playbook process, and what names it for a person."""
    pid = os.getppid()  # the action runs in a worker forked from ansible-playbook
    return {
        "run": f"{pid}-{process_start(pid)}",
        "pid": pid,
        "user": getpass.getuser(),
        "host": socket.gethostname(),
        "awx_job": str(task_vars.get("awx_job_id") or task_vars.get("tower_job_id") or os.environ.get("JOB_ID") or ""),
        "playbook": playbook,
        "started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
    }


class ActionModule(ControllerAction):
    @staticmethod
    def argument_spec():
        spec = auth_argspec()
        spec.update(
            state={"type": "str", "choices": ["present", "absent"], "default": "present"},
            name={"type": "str", "default": lock.DEFAULT_NAME},
            namespace={"type": "str", "default": "kube-system"},
            duration={"type": "int", "default": 45},
            wait={"type": "int"},
            playbook={"type": "str", "default": "upgrade"},
            renew={"type": "bool", "default": True},
            request_timeout={"type": "int", "default": _client.REQUEST_TIMEOUT},
        )
        return spec

    def _store(self, params):
        """The Lease store for the auth params (replaced in the unit tests)."""
        return lock.open_store(params, params["name"], params["namespace"], params["request_timeout"])

    def act(self, params, task_vars):
        self.require_kubernetes()
        if params["duration"] < 15:
            raise ActionFailure(f"duration must be at least 15 seconds, not {params['duration']}")
        who = who_runs(params["playbook"], task_vars)
        where = {"name": params["name"], "namespace": params["namespace"], "holder": lock.holder_identity(who)}
        write = not self._task.check_mode
        try:
            store = self._store(params)
            if params["state"] == "absent":
                released = lock.release(store, who) if write else False
                # run-scoped state, like the run's credential: an idempotent playbook's rerun stays at changed=0
                return {"changed": False, "released": released, **where}
            wait = params["duration"] + 15 if params["wait"] is None else params["wait"]
            action, facts = lock.acquire(store, who, params["duration"], write, wait=wait)
        except lock.LockHeld as exc:
            raise ActionFailure(str(exc), **where) from exc
        except (_client.ClientError, lock.LockError) as exc:
            raise ActionFailure(f"run_lock: Lease {params['namespace']}/{params['name']}: {exc}", **where) from exc
        result = {
            "changed": False,
            "action": action,
            "taken_over_from": facts.get("previous"),
            "waited": facts.get("waited"),
            **where,
        }
        if facts.get("previous"):
            result["expired_for"] = facts.get("expired_for")
        if write and params["renew"] and action in ("create", "take_over"):
            auth = {k: params.get(k) for k in auth_argspec()}
            result["renewer_pid"] = lock.start_renewer(
                {
                    "auth": auth,
                    "name": params["name"],
                    "namespace": params["namespace"],
                    "who": who,
                    "duration": params["duration"],
                    "pid": who["pid"],
                    "pid_start": process_start(who["pid"]),
                }
            )
        return result
