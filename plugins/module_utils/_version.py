# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""The one parser of Kubernetes version strings, and the version facts the collection relies on.

Pure and stdlib only: modules, plugins, the test harness and the benchmark all import it.
"""

from __future__ import annotations

import re
from collections import namedtuple

# 'v1.37.2', '1.37.2', '1.37', 'v1.35.0-rc.1', 'v1.36.5+k3s1'; kubeadm channels as 'stable-1.36'.
_VERSION_RE = re.compile(r"^(?:stable-)?v?(\d+)\.(\d+)(?:\.(\d+))?([-+].*)?$")

# The Mixed Version Proxy's feature gate. MVP is on by default (beta) from MVP_DEFAULT_ON_MINOR;
# before it the gate must be set explicitly (alpha, off by default on 1.35). Source: k8s.io/apiserver
# pkg/features/kube_features.go, UnknownVersionInteroperabilityProxy: {1.28 Alpha false} in v0.35.4,
# {1.28 Alpha false}, {1.36 Beta true} in v0.36.5. Every later minor counts as on by default; when the
# gate is locked (GA) or removed, the removed-gates table of _upgrade_plan gets the entry.
MVP_GATE = "UnknownVersionInteroperabilityProxy"
MVP_DEFAULT_ON_MINOR = 36

# patch is None when absent; suffix is the pre-release or build part ('' when none).
Version = namedtuple("Version", ["major", "minor", "patch", "suffix"])


def parse(text):
    """The parts of a Kubernetes version string as a ``Version``, or None when it is not one."""
    if not isinstance(text, str):
        return None
    match = _VERSION_RE.match(text.strip())
    if not match:
        return None
    major, minor, patch, suffix = match.groups()
    return Version(int(major), int(minor), None if patch is None else int(patch), suffix or "")


def triple(text):
    """(major, minor, patch) of a version with a patch ('v1.36.5-rc.0' included), else None."""
    version = parse(text)
    if version is None or version.patch is None:
        return None
    return (version.major, version.minor, version.patch)


# Pre-release stages in the order Kubernetes cuts them (v1.38.0-alpha.1 < -beta.0 < -rc.1 < v1.38.0); a release sorts
# after all of them. Build metadata ('+k3s1') does not order.
PRERELEASE_STAGES = ("alpha", "beta", "rc")
_PRERELEASE_RE = re.compile(r"^-(alpha|beta|rc)\.(\d+)$")
_RELEASE_RANK = len(PRERELEASE_STAGES)


def key(text):
    """A sort key that orders versions as Kubernetes does, pre-releases before their release:
    (major, minor, patch, stage, number), stage 0-2 for alpha, beta, rc and 3 for the release. None when ``text`` is
    not a version with a patch, or its suffix is neither a pre-release (``-beta.0``) nor build metadata (``+...``)."""
    version = parse(text)
    if version is None or version.patch is None:
        return None
    suffix = version.suffix.split("+", 1)[0]
    if not suffix:
        return (version.major, version.minor, version.patch, _RELEASE_RANK, 0)
    match = _PRERELEASE_RE.match(suffix)
    if not match:
        return None
    return (version.major, version.minor, version.patch, PRERELEASE_STAGES.index(match.group(1)), int(match.group(2)))


def format_key(parts):
    """'1.38.0' or '1.38.0-beta.0' for a ``key``."""
    text = "{}.{}.{}".format(*parts[:3])
    if parts[3] < _RELEASE_RANK:
        text += f"-{PRERELEASE_STAGES[parts[3]]}.{parts[4]}"
    return text


def is_prerelease(text):
    """True for 'v1.38.0-beta.0' and the like, False for a release; None when not a version."""
    parts = key(text)
    return None if parts is None else parts[3] < _RELEASE_RANK


def release(text):
    """(major, minor, patch) of a release version: 'v1.37.2' or '1.37.2', no pre-release; else None."""
    version = parse(text)
    if version is None or version.patch is None or version.suffix or str(text).strip().startswith("stable-"):
        return None
    return (version.major, version.minor, version.patch)


def minor(text):
    """The minor of a Kubernetes 1.x version ('v1.36.2', '1.37', 'stable-1.36'), else None."""
    version = parse(text)
    if version is None or version.major != 1:
        return None
    return version.minor


def mvp_default_on(text):
    """True when MVP is on by default at this version; False before; None when the version is unknown."""
    version_minor = minor(text)
    if version_minor is None:
        return None
    return version_minor >= MVP_DEFAULT_ON_MINOR


def mvp_feature_gates(text):
    """The feature gates kube-apiserver needs for MVP at this version: {} when on by default, else the gate."""
    default_on = mvp_default_on(text)
    if default_on is None:
        raise ValueError(f"{text!r} is not a Kubernetes 1.x version")
    return {} if default_on else {MVP_GATE: True}
