# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Controller-side MVP gate; documented in plugins/modules/mvp_check.py."""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase
from ansible.utils.display import Display

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _client
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp_args import mvp_check_argspec
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp_run import RunError, check_until_proved

display = Display()


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _supports_async = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        _validation, params = self.validate_argument_spec(argument_spec=mvp_check_argspec())
        if not _client.HAS_KUBERNETES:
            raise AnsibleActionFail(_client.missing_library_message() + " (it runs on the controller)")
        host = self._task.get_name()
        try:
            outcome = check_until_proved(params, progress=lambda line: display.vv(f"mvp_check: {line}", host=host))
        except RunError as exc:
            raise AnsibleActionFail(f"mvp_check cannot run: {exc}") from exc
        result.update(outcome)
        if not outcome["passed"]:
            result["failed"] = True
        return result
