# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Controller-side MVP gate; documented in plugins/modules/mvp_check.py."""

from __future__ import annotations

from ansible.utils.display import Display

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.args import mvp_check_argspec
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.run import RunError, check_until_proved
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._action import ActionFailure, ControllerAction

display = Display()


class ActionModule(ControllerAction):
    @staticmethod
    def argument_spec():
        return mvp_check_argspec()

    def act(self, params, task_vars):
        self.require_kubernetes()
        host = self._task.get_name()
        try:
            outcome = check_until_proved(params, progress=lambda line: display.vv(f"mvp_check: {line}", host=host))
        except RunError as exc:
            # a failed result, not an exception: failed_when, ignore_errors and rescue see it
            raise ActionFailure(f"mvp_check cannot run: {exc}", passed=False, outcome="failed") from exc
        if not outcome["passed"]:
            outcome["failed"] = True
        return outcome
