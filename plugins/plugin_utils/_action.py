# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection.
"""One base for the collection's controller-side actions: every failure is a failed result.

ansible-core ends a task whose action raises before it applies failed_when, until, ignore_errors or a block's
rescue (executor/task_executor.py); a failed result goes through them as a module's does. So an action built on
this base raises ActionFailure, and the base turns it, and a bad argument, into ``failed: true`` with ``msg``.
"""

from __future__ import annotations

from ansible.errors import AnsibleActionFail
from ansible.plugins.action import ActionBase

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _client
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._errors import PluginError


class ActionFailure(PluginError):
    """The action cannot do what it was asked; ``fields`` go into the failed result beside ``msg``."""

    def __init__(self, msg, **fields):
        super().__init__(msg)
        self.fields = fields


class ControllerAction(ActionBase):
    """An action that runs in the controller's process and needs no connection to the host.

    Subclasses set ``argument_spec()`` and ``act(params, task_vars) -> dict``.
    """

    TRANSFERS_FILES = False
    _requires_connection = False
    _supports_check_mode = True
    _supports_async = False

    @staticmethod
    def argument_spec():
        raise NotImplementedError

    def act(self, params, task_vars):
        raise NotImplementedError

    @staticmethod
    def require_kubernetes():
        """The kubernetes Python client, which these actions use in the controller's process."""
        if not _client.HAS_KUBERNETES:
            raise ActionFailure(_client.missing_library_message() + " (it runs on the controller)")

    @staticmethod
    def require_seconds(params, *names, minimum=1):
        """Each named option is at least ``minimum`` seconds (a timeout of 0 would never let a request finish)."""
        for name in names:
            if params.get(name) is not None and params[name] < minimum:
                raise ActionFailure(f"{name} must be at least {minimum} second(s), not {params[name]}")

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        del tmp
        try:
            _validation, params = self.validate_argument_spec(argument_spec=self.argument_spec())
            result.update(self.act(params, task_vars or {}))
        except ActionFailure as exc:
            result.update(exc.fields, failed=True, msg=str(exc))
        except AnsibleActionFail as exc:  # bad arguments, as a module's fail_json
            result.update(failed=True, msg=exc.message)
        return result


class NodeAction(ControllerAction):
    """A controller action that also runs modules on its host (reads files, runs commands there)."""

    _requires_connection = True

    def remote(self, name, args, task_vars):
        """The result of module ``name`` run with ``args`` on the task's host."""
        return self._execute_module(module_name=name, module_args=args, task_vars=task_vars)
