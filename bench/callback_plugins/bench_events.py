"""Ansible callback: one JSON line per task start and per host result, with wall-clock times.

Enabled by bench/lab_upgrade.py only (ANSIBLE_CALLBACK_PLUGINS=bench/callback_plugins,
ANSIBLE_CALLBACKS_ENABLED=bench_events, SKEWSAFE_BENCH_EVENTS=<file>). profile_tasks prints
durations for people; this keeps start/end per host so bench/events.py can place node
transitions on the load timeline and split the time into kubeadm, packages, kubelet and
the collection's own orchestration.
"""

from __future__ import annotations

import json
import os
import time

from ansible.plugins.callback import CallbackBase

DOCUMENTATION = """
name: bench_events
type: aggregate
short_description: task and host timing as JSON lines for the skewsafe benchmark
description: Writes to the file named by the SKEWSAFE_BENCH_EVENTS environment variable.
requirements: [enable in configuration]
"""


class CallbackModule(CallbackBase):
    CALLBACK_VERSION = 2.0
    CALLBACK_TYPE = "aggregate"
    CALLBACK_NAME = "bench_events"
    CALLBACK_NEEDS_ENABLED = True

    def __init__(self):
        super().__init__()
        path = os.environ.get("SKEWSAFE_BENCH_EVENTS")
        self._handle = open(path, "a", buffering=1) if path else None

    def _emit(self, event, **fields):
        if self._handle:
            self._handle.write(json.dumps({"t": round(time.time(), 3), "event": event, **fields}) + "\n")

    @staticmethod
    def _task(task):
        return {"uuid": task._uuid, "task": task.get_name(include_role_fqcn=False), "action": task.action}

    def v2_playbook_on_start(self, playbook):
        self._emit("playbook_start", playbook=os.path.basename(playbook._file_name))

    def v2_playbook_on_play_start(self, play):
        self._emit("play_start", play=play.get_name())

    def v2_playbook_on_task_start(self, task, is_conditional):
        self._emit("task_start", **self._task(task))

    def v2_playbook_on_handler_task_start(self, task):
        self._emit("task_start", handler=True, **self._task(task))

    def v2_runner_on_start(self, host, task):
        self._emit("host_start", host=host.get_name(), **self._task(task))

    def _result(self, result, status):
        self._emit(
            "host_end",
            host=result._host.get_name(),
            status=status,
            changed=bool(result._result.get("changed")),
            **self._task(result._task),
        )

    def v2_runner_on_ok(self, result):
        self._result(result, "ok")

    def v2_runner_on_failed(self, result, ignore_errors=False):
        self._result(result, "ignored" if ignore_errors else "failed")

    def v2_runner_on_skipped(self, result):
        self._result(result, "skipped")

    def v2_runner_on_unreachable(self, result):
        self._result(result, "unreachable")

    def v2_playbook_on_stats(self, stats):
        self._emit("playbook_end", failures=sum(stats.failures.values()), unreachable=sum(stats.dark.values()))
        if self._handle:
            self._handle.close()
            self._handle = None
