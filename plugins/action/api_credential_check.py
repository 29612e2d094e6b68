# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Refuse a Kubernetes API credential that would reach an unverified server; documented in
plugins/modules/api_credential_check.py."""

from __future__ import annotations

import os

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _api_credential as credential
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._action import ActionFailure, ControllerAction


class ActionModule(ControllerAction):
    @staticmethod
    def argument_spec():
        return {
            "kubeconfig": {"type": "raw"},
            "endpoints": {"type": "list", "elements": "dict", "default": []},
            "working_dir": {"type": "path"},
        }

    def act(self, params, task_vars):
        kubeconfig = params["kubeconfig"]
        if kubeconfig is not None and not isinstance(kubeconfig, str):
            raise ActionFailure("kubeconfig must be a path (or paths joined by ':'), not an inline kubeconfig")
        cwd = params["working_dir"] or os.getcwd()
        facts, refusals = credential.assess(kubeconfig, os.environ, cwd, params["endpoints"])
        if refusals:
            raise ActionFailure(
                "Refused before any API call, nothing was contacted: " + " ".join(refusals),
                refusals=refusals,
                **facts,
            )
        return {"changed": False, "refusals": [], **facts}
