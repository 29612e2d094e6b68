# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""What the target kubeadm's upgrade does to a node's ``/var/lib/kubelet/kubeadm-flags.env``, and what the kubelet
would lose by it.

kubeadm 1.35 and 1.36 (feature gate NodeLocalCRISocket: beta on by default in 1.35, locked on in 1.36) move
``--container-runtime-endpoint`` out of the file into ``/var/lib/kubelet/instance-config.yaml`` when the node has
no instance configuration yet, and write the file again from what they parsed
(``cmd/kubeadm/app/phases/upgrade/postupgrade.go`` ``WriteKubeletConfigFiles``). Their parser
(``ReadKubeletDynamicEnvFile`` and ``ArgumentsFromCommand``) takes every field after ``KUBELET_KUBEADM_ARGS=``, pairs
a field without ``=`` with the next one and drops what is not ``--name=value``: a boolean flag without a value takes
the next flag as its value or is dropped, a second line of the file becomes flags, and a file that does not start
with the variable fails the step (``error reading kubeadm flags file``) in the middle of the upgrade. Its dry run
cannot show this (it reads a scratch directory without the file), so the rewrite is reproduced here from the source.
kubeadm 1.37 and 1.38 leave the file alone (read in v1.37.2 and v1.38.0-beta.0).
"""

from __future__ import annotations

import re

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _version
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._errors import PluginError

FLAGS_FILE = "/var/lib/kubelet/kubeadm-flags.env"
INSTANCE_CONFIG = "/var/lib/kubelet/instance-config.yaml"
VARIABLE = "KUBELET_KUBEADM_ARGS"
ENDPOINT = "container-runtime-endpoint"
GATE = "NodeLocalCRISocket"
# minor -> (the gate's default, whether the ClusterConfiguration may turn it off)
REWRITING_MINORS = {35: (True, True), 36: (True, False)}
FIRST_MODELLED_MINOR = 35


class KubeletFlagsError(PluginError, ValueError):
    """kubeadm's upgrade would fail on the file (it does not start with the variable)."""


def _kubeadm_fields(text):
    """``ReadKubeletDynamicEnvFile``: the whole file after the prefix, outer quotes trimmed, split on whitespace."""
    content = text.strip()
    prefix = VARIABLE + "="
    if not content.startswith(prefix):
        raise KubeletFlagsError(f'{FLAGS_FILE} does not start with "{prefix}" (kubeadm reads nothing else)')
    fields = content[len(prefix) :].strip('"').split()
    paired, i = [], 0
    while i < len(fields):
        if "=" in fields[i]:
            paired.append(fields[i])
        elif i + 1 < len(fields):
            paired.append(f"{fields[i]}={fields[i + 1]}")
            i += 1
        i += 1
    return paired


def _kubeadm_args(fields):
    """``ArgumentsFromCommand``: ``--name=value`` fields as (name, value), the others dropped, sorted."""
    args = []
    for field in fields:
        if field.startswith("--") and "=" in field:
            name, value = field[2:].split("=", 1)
            if name:
                args.append((name, value))
    return sorted(args)


def _systemd_values(text):
    """``{variable: value}`` as systemd's EnvironmentFile reads the file (the kubelet unit expands
    ``$KUBELET_KUBEADM_ARGS`` unquoted, and every variable is in the kubelet's environment)."""
    values = {}
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;" or "=" not in line:
            continue
        key, raw = line.split("=", 1)
        raw = raw.strip()
        if len(raw) >= 2 and raw[0] == raw[-1] and raw[0] in "\"'":
            raw = re.sub(r"\\(.)", r"\1", raw[1:-1])
        values[key.strip()] = raw
    return values


def _go_quote(value):
    """Go's %q for the printable ASCII kubeadm writes (strconv.Quote)."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def rewritten(text):
    """``(file text, endpoint)`` kubeadm 1.35/1.36 write in place of ``text`` on a node without an instance
    configuration; ``(None, None)`` when there is no endpoint to move (the file stays). Raises KubeletFlagsError where
    kubeadm's step fails."""
    args = _kubeadm_args(_kubeadm_fields(text))
    endpoints = [value for name, value in args if name == ENDPOINT]
    if not endpoints:
        return None, None
    kept = " ".join(f"--{name}={value}" for name, value in args if name != ENDPOINT)
    return f"{VARIABLE}={_go_quote(kept)}\n", endpoints[-1]


def _kubelet_settings(tokens):
    """``{flag: value}`` as the kubelet's flag parser reads the words: ``--a=b``, ``--a b``, or ``--a`` alone
    (a boolean, true); the last of a repeated flag wins."""
    settings, i = {}, 0
    while i < len(tokens):
        token = tokens[i]
        if token.startswith("-"):
            name = token.lstrip("-")
            if "=" in name:
                name, value = name.split("=", 1)
            elif i + 1 < len(tokens) and not tokens[i + 1].startswith("-"):
                value = tokens[i + 1]
                i += 1
            else:
                value = "true"
            settings[name] = value
        else:
            settings["(stray words)"] = f"{settings.get('(stray words)', '')} {token}".strip()
        i += 1
    return settings


def _rewrites(target, feature_gates):
    """None when the target's kubeadm leaves the file alone, else why it rewrites it; raises for a minor not read."""
    minor = _version.minor(target)
    if minor is None:
        raise ValueError(f"target {target!r} is not a version")
    if minor < FIRST_MODELLED_MINOR:
        return "not modelled"
    if minor not in REWRITING_MINORS:
        return None
    default, may_disable = REWRITING_MINORS[minor]
    if may_disable and (feature_gates or {}).get(GATE, default) is False:
        return None
    return f"kubeadm 1.{minor}"


def drift(files, target, feature_gates=None):
    """What the upgrade to ``target`` would change in the kubelet's flags from ``kubeadm-flags.env``.

    ``files``: ``{path: text}`` of the node's files (the preflight's node read); ``feature_gates``: kubeadm-config's
    ClusterConfiguration ``featureGates``. Returns ``{compared, lost, altered, moved, fails}`` or
    ``{compared: [], ..., skipped: why}``.
    """
    empty = {"compared": [], "lost": [], "altered": [], "moved": [], "fails": None}
    text = files.get(FLAGS_FILE)
    if text is None:
        return dict(empty, skipped=f"{FLAGS_FILE}: the node has none (nothing for kubeadm to rewrite)")
    why = _rewrites(target, feature_gates)
    if why == "not modelled":
        return dict(
            empty, skipped=f"{FLAGS_FILE}: what kubeadm before 1.{FIRST_MODELLED_MINOR} does to it is not modelled"
        )
    result = dict(empty, compared=[FLAGS_FILE])
    if why is None or INSTANCE_CONFIG in files:
        return result  # kubeadm leaves the file as it is
    try:
        new_text, endpoint = rewritten(text)
    except KubeletFlagsError as exc:
        return dict(
            result,
            fails=f"{why} would fail its upgrade step: {exc}; write the file as kubeadm does "
            f'({VARIABLE}="--name=value ...") before the upgrade',
        )
    if new_text is None:
        return result  # nothing to move: the file stays
    old_vars, new_vars = _systemd_values(text), _systemd_values(new_text)
    before = _kubelet_settings(old_vars.get(VARIABLE, "").split())
    after = _kubelet_settings(new_vars[VARIABLE].split())
    result["moved"] = [f"--{ENDPOINT}={endpoint} -> {INSTANCE_CONFIG} (containerRuntimeEndpoint)"]
    before.pop(ENDPOINT, None)
    result["lost"] = [f"--{name}={value}" for name, value in before.items() if name not in after]
    result["lost"] += [
        f"{key}={value} (the kubelet's environment)" for key, value in old_vars.items() if key not in new_vars
    ]
    result["altered"] = [
        f"--{name}={value} -> --{name}={after[name]}"
        for name, value in before.items()
        if name in after and after[name] != value
    ]
    result["altered"] += [f"(new) --{name}={value}" for name, value in after.items() if name not in before]
    result["rewritten"] = new_text
    return result
