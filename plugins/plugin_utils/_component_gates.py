# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Feature gates that the target's kube-apiserver, kube-controller-manager, kube-scheduler or kubelet refuses at
start-up (removed, or locked to the other value), from the measured table, and where a node sets them.

The kubelet is judged by kube-controller-manager's measurement: every k8s.io/kubernetes component registers the same
feature gates (pkg/features), and the three measured components refuse exactly the same gates at every measured minor
(hack/feature_gates.py); a kubelet's own --feature-gates flag is not validated before it starts, so it cannot be
probed the same way.
"""

from __future__ import annotations

import re

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._extra_args import ExtraArgsError, parse_feature_gates
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._component_gates_table import (
    LOCKED,
    MEASURED_VERSIONS,
    REMOVED,
)

try:
    import yaml
except ImportError:  # pragma: no cover - ansible-core brings PyYAML
    yaml = None

# ClusterConfiguration section -> the component its extraArgs go to
SECTIONS = {
    "apiServer": "kube-apiserver",
    "controllerManager": "kube-controller-manager",
    "scheduler": "kube-scheduler",
}
MEASURED_MINORS = frozenset(int(v.split(".")[1]) for v in MEASURED_VERSIONS)
# The component whose measurement stands for one that cannot be probed (see the module docstring).
MEASURED_AS = {"kubelet": "kube-controller-manager"}
# Where a node's kubelet takes gates from: its configuration file, and flag files the kubelet unit reads.
KUBELET_CONFIG = "/var/lib/kubelet/config.yaml"
KUBELET_FLAG_FILES = ("/var/lib/kubelet/kubeadm-flags.env", "/etc/default/kubelet", "/etc/sysconfig/kubelet")
FILE_MARK = "#skewsafe-file "
_FLAG = re.compile(r"--feature-gates[= ]([^\s\"']+)")


def _word(value):
    return "true" if value else "false"


def refused(component, gates, target_minor):
    """Why ``component`` at 1.<target_minor> would not start with ``gates`` (name -> bool): one line per gate.

    A minor outside the measured versions is not judged (nothing is known about it)."""
    table = MEASURED_AS.get(component, component)
    removed = set(REMOVED.get(table, {}).get(target_minor, ()))
    locked = LOCKED.get(table, {}).get(target_minor, {})
    was_locked = LOCKED.get(table, {}).get(target_minor - 1, {})
    out = []
    for name, value in sorted(gates.items()):
        if name in removed:
            why = f"{name}: {component} 1.{target_minor} no longer knows this gate and would not start"
            if name in was_locked:
                why += f" (1.{target_minor - 1} had it locked to {_word(was_locked[name])}: drop the line)"
            out.append(why)
        elif name in locked and locked[name] != value:
            out.append(
                f"{name}={_word(value)}: {component} 1.{target_minor} accepts only {_word(locked[name])} "
                "(the gate is locked) and would not start"
            )
    return out


def node_sources(text):
    """``[(path, component, gates, error)]`` from the output of the node read (a ``FILE_MARK <path>`` line before
    each file's text): the kubelet's configuration file and flag files, and static Pod manifests. Files that set no
    gate are left out; ``error`` says why a file could not be read (its gates are then None)."""
    sources = []
    for path, body in node_files(text).items():
        sources += _gates_in(path, body)
    return sources


def node_files(text):
    """``{path: text}`` of the node read (a ``FILE_MARK <path>`` line before each file's text)."""
    files, path, lines = {}, None, []
    for line in [*(text or "").splitlines(), FILE_MARK]:
        if line.startswith(FILE_MARK):
            if path:
                files[path] = "\n".join(lines)
            path, lines = line[len(FILE_MARK) :].strip(), []
        else:
            lines.append(line)
    return files


def _gates_in(path, text):
    if path == KUBELET_CONFIG:
        try:
            document = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            return [(path, "kubelet", None, f"not YAML: {exc}")]
        gates = document.get("featureGates") if isinstance(document, dict) else None
        gates = {str(k): bool(v) for k, v in (gates or {}).items()}
        return [(path, "kubelet", gates, None)] if gates else []
    # a static Pod manifest (/etc/kubernetes/manifests/<component>.yaml) or a kubelet flag file
    name = path.rsplit("/", 1)[-1]
    component = name[: -len(".yaml")] if name.endswith(".yaml") else "kubelet"
    if component not in (*SECTIONS.values(), "kubelet"):
        return []
    gates = {}
    try:
        for value in _FLAG.findall(text):
            gates.update(parse_feature_gates(value))
    except ExtraArgsError as exc:
        return [(path, component, None, str(exc))]
    return [(path, component, gates, None)] if gates else []


def kubelet_config_gates(text):
    """The featureGates of the kubelet-config ConfigMap's KubeletConfiguration (its ``kubelet`` key)."""
    try:
        document = yaml.safe_load(text or "") or {}
    except yaml.YAMLError as exc:
        raise ValueError(f"the KubeletConfiguration is not YAML: {exc}") from exc
    gates = document.get("featureGates") if isinstance(document, dict) else None
    return {str(k): bool(v) for k, v in (gates or {}).items()}
