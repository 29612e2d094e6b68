# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Real deprecation warnings for old names; documented in plugins/modules/warn_deprecated.py."""

from __future__ import annotations

from ansible.plugins.action import ActionBase

COLLECTION = "skewsafe.kubeadm"


def argument_spec():
    return {
        "renamed_variables": {"type": "dict"},
        "msg": {"type": "str"},
        "removed_in": {"type": "str", "required": True},
        "context": {"type": "str", "default": COLLECTION},
    }


def deprecations(params, defined):
    """The deprecation records for ``params``; ``defined`` says whether a variable is set."""
    if params["msg"]:
        return [], [params["msg"]]
    old = sorted(name for name in params["renamed_variables"] if defined(name))
    messages = [
        f"{params['context']}: {name} is deprecated; set {params['renamed_variables'][name]} instead." for name in old
    ]
    return old, messages


class ActionModule(ActionBase):
    TRANSFERS_FILES = False
    _requires_connection = False

    def run(self, tmp=None, task_vars=None):
        result = super().run(tmp, task_vars)
        _validation, params = self.validate_argument_spec(
            argument_spec=argument_spec(),
            mutually_exclusive=[("renamed_variables", "msg")],
            required_one_of=[("renamed_variables", "msg")],
        )
        task_vars = task_vars or {}
        old, messages = deprecations(params, lambda name: name in task_vars)
        result.update(changed=False, deprecated_variables=old)
        if messages:
            # The executor turns these into Display.deprecated calls, as for a module's own deprecations.
            result["deprecations"] = [
                {"msg": m, "version": params["removed_in"], "collection_name": COLLECTION} for m in messages
            ]
        return result
