# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja tests over results of this collection's modules (pure; documented in the .yml files beside)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._extra_args import ExtraArgsError, parse_feature_gates
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._manifest import command_flags
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._version import MVP_GATE, mvp_default_on


def _flags(value):
    """Flags from an apiserver_peers_info result, its ``manifest``, a flags dict or a command list."""
    if isinstance(value, list):
        return command_flags(value)
    if not isinstance(value, dict):
        raise AnsibleFilterError(
            f"mvp_configured expects a flags dict, a command list or a module result, got {type(value).__name__}"
        )
    if "manifest" in value:
        value = value["manifest"]
    if "flags" in value:
        value = value["flags"]
    return value


def mvp_configured(value, version=None):
    """True when kube-apiserver flags turn MVP on: peer-ca-file, plus the gate before 1.36.

    ``version`` (for example ``v1.35.4``) decides whether the gate is needed; without it the gate is
    required unless the flags already set it.
    """
    flags = _flags(value)
    if not flags.get("peer-ca-file"):
        return False
    try:
        gates = parse_feature_gates(flags.get("feature-gates", ""))
    except ExtraArgsError as exc:
        raise AnsibleFilterError(str(exc)) from exc
    if gates.get(MVP_GATE) is False:
        return False
    if version and mvp_default_on(version):
        return True
    return gates.get(MVP_GATE) is True


class TestModule:
    def tests(self):
        return {"mvp_configured": mvp_configured}
