# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""The one reader of kubeadm static Pod manifests: the container, its image tag, command and flags."""

from __future__ import annotations

import base64
import binascii
import os

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._errors import SkewsafeError

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


class ManifestError(SkewsafeError, ValueError):
    """The manifest cannot be read as a static Pod document."""


def load(text):
    """A static Pod document from YAML text (str or bytes)."""
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise ManifestError(f"not YAML: {exc}") from exc


def decode(content):
    """A static Pod document from base64 YAML, as ``ansible.builtin.slurp`` returns it."""
    try:
        return load(base64.b64decode(content))
    except (binascii.Error, TypeError, ValueError) as exc:
        if isinstance(exc, ManifestError):
            raise
        raise ManifestError(f"not base64: {exc}") from exc


def container(pod):
    """The first container of a static Pod document or a mirror Pod (kubeadm writes exactly one)."""
    containers = ((pod or {}).get("spec") or {}).get("containers") or []
    return containers[0] if containers else {}


def image_tag(image):
    """``registry.k8s.io/kube-apiserver:v1.37.2@sha256:...`` -> ``v1.37.2`` (None without a tag)."""
    name = (image or "").split("@", 1)[0]
    last = name.rsplit("/", 1)[-1]
    return last.rsplit(":", 1)[1] if ":" in last else None


def summary(pod):
    """``{image, version, command, flags}`` of a static Pod: version is the image tag (None without one)."""
    first = container(pod)
    command = list(first.get("command") or [])
    return {
        "image": first.get("image"),
        "version": image_tag(first.get("image")),
        "command": command,
        "flags": command_flags(command),
    }


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
        pod = load(handle.read())
    flags = command_flags(container(pod).get("command"))
    return {"path": path, "present": True, "flags": {k: v for k, v in flags.items() if k in MVP_FLAGS}}
