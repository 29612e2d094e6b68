# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Read kube-apiserver flags from a kubeadm static Pod manifest."""

from __future__ import annotations

import os

try:
    import yaml

    HAS_YAML = True
except ImportError:  # pragma: no cover
    HAS_YAML = False

# Flags the Mixed Version Proxy depends on (reference: KEP-4020; kubeadm sets all but peer-*).
MVP_FLAGS = (
    "peer-ca-file",
    "peer-advertise-ip",
    "peer-advertise-port",
    "feature-gates",
    "advertise-address",
    "secure-port",
    "proxy-client-cert-file",
    "proxy-client-key-file",
    "requestheader-client-ca-file",
    "requestheader-allowed-names",
    "tls-cert-file",
)


def command_flags(command):
    """``--name=value`` arguments of a container command as a dict (last one wins)."""
    flags = {}
    for arg in command or []:
        if isinstance(arg, str) and arg.startswith("--"):
            name, _sep, value = arg[2:].partition("=")
            flags[name] = value
    return flags


def read_mvp_flags(path):
    if not path or not os.path.exists(path):
        return {"path": path, "present": False, "flags": {}}
    with open(path, encoding="utf-8") as handle:
        pod = yaml.safe_load(handle)
    containers = ((pod or {}).get("spec") or {}).get("containers") or [{}]
    flags = command_flags(containers[0].get("command"))
    return {"path": path, "present": True, "flags": {k: v for k, v in flags.items() if k in MVP_FLAGS}}
