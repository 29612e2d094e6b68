# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The static Pod and node configuration filters (each documented in <name>.yml beside)."""

from __future__ import annotations

from collections.abc import Mapping

from ansible.errors import AnsibleFilterError

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _manifest
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _drift, _etcd_drift, _static_pod_stops


def static_pod(value):
    """``{image, version, command, flags}`` of a kubeadm static Pod manifest.

    ``value`` is the registered result of ``ansible.builtin.slurp`` of the manifest, its YAML text,
    or the parsed document.
    """
    try:
        if isinstance(value, Mapping) and "content" in value:
            pod = _manifest.decode(value["content"])
        elif isinstance(value, (str, bytes)):
            pod = _manifest.load(value)
        else:
            pod = value
    except _manifest.ManifestError as exc:
        raise AnsibleFilterError(f"static_pod: the manifest is {exc}") from exc
    if not isinstance(pod, Mapping):
        raise AnsibleFilterError(f"static_pod expects a static Pod manifest, got {type(pod).__name__}")
    return _manifest.summary(pod)


def manifest_drift(dryrun_stdout, live):
    try:
        return _drift.drift(dryrun_stdout, live)
    except _drift.DriftError as exc:
        raise AnsibleFilterError(f"manifest_drift: {exc}") from exc


def kubelet_config_drift(dryrun_stdout, live_text):
    try:
        return _drift.kubelet_config_drift(dryrun_stdout, live_text)
    except _drift.DriftError as exc:
        raise AnsibleFilterError(f"kubelet_config_drift: {exc}") from exc


def etcd_render_config(cluster_configuration, apiserver_manifest, node_name):
    try:
        return _etcd_drift.render_config(cluster_configuration, apiserver_manifest, node_name)
    except _etcd_drift.EtcdDriftError as exc:
        raise AnsibleFilterError(f"etcd_render_config: {exc}") from exc


def etcd_manifest_drift(dryrun_stdout, live_text):
    try:
        return _etcd_drift.drift(dryrun_stdout, live_text)
    except _etcd_drift.EtcdDriftError as exc:
        raise AnsibleFilterError(f"etcd_manifest_drift: {exc}") from exc


def static_pod_stops(read, default_grace=30):
    try:
        return _static_pod_stops.plan(read, default_grace)
    except _static_pod_stops.StopPlanError as exc:
        raise AnsibleFilterError(f"static_pod_stops: {exc}") from exc


class FilterModule:
    def filters(self):
        return {
            "static_pod": static_pod,
            "manifest_drift": manifest_drift,
            "kubelet_config_drift": kubelet_config_drift,
            "etcd_render_config": etcd_render_config,
            "etcd_manifest_drift": etcd_manifest_drift,
            "static_pod_stops": static_pod_stops,
        }
