# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""What the API shows of a control-plane upgrade, read in one process (control_plane_state_info)."""

from __future__ import annotations

import yaml

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _client
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._manifest import container, image_tag, summary
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._errors import PluginError

NAMESPACE = "kube-system"


class StateError(PluginError):
    """The API did not answer what the decision needs."""


def _call(what, fn, *args, **kwargs):
    """fn's answer; None for 404 (an object that does not exist is an answer too)."""
    try:
        return fn(*args, **kwargs)
    except _client.ApiException as exc:
        if exc.status == 404:
            return None
        raise StateError(f"cannot read {what}: {_client.api_error_message(exc)}") from exc
    except _client.TRANSPORT_ERRORS as exc:
        raise StateError(f"cannot read {what}: {exc}") from exc


def kubelet_version(node):
    return ((node.get("status") or {}).get("nodeInfo") or {}).get("kubeletVersion")


def cluster_version(config_map):
    """kubernetesVersion of kubeadm-config's ClusterConfiguration (None without the ConfigMap)."""
    if config_map is None:
        return None
    text = (config_map.get("data") or {}).get("ClusterConfiguration")
    if not text:
        raise StateError("kubeadm-config has no ClusterConfiguration")
    try:
        return (yaml.safe_load(text) or {}).get("kubernetesVersion")
    except yaml.YAMLError as exc:
        raise StateError(f"kubeadm-config's ClusterConfiguration is not YAML: {exc}") from exc


def kube_proxy_version(daemon_set):
    """Image tag of the kube-proxy container (None without the DaemonSet)."""
    if daemon_set is None:
        return None
    pod_spec = ((daemon_set.get("spec") or {}).get("template") or {}).get("spec") or {}
    for item in pod_spec.get("containers") or []:
        if item.get("name") == "kube-proxy":
            return image_tag(item.get("image"))
    return image_tag(container({"spec": pod_spec}).get("image"))


def read(core, apps, serialize, node_name, request_timeout):
    """``{kubelet, apiservers, cluster_version, kube_proxy}`` from the API.

    core and apps are CoreV1Api and AppsV1Api; serialize turns a client object into plain data.
    """
    timeout = {"_request_timeout": request_timeout}
    node = _call(f"Node {node_name}", core.read_node, node_name, **timeout)
    if node is None:
        raise StateError(f"Node {node_name} does not exist (is node_name what kubectl get nodes shows?)")
    pods = _call(
        "the kube-apiserver Pods",
        core.list_namespaced_pod,
        NAMESPACE,
        label_selector="component=kube-apiserver",
        **timeout,
    )
    config_map = _call(
        "ConfigMap kube-system/kubeadm-config", core.read_namespaced_config_map, "kubeadm-config", NAMESPACE, **timeout
    )
    daemon_set = _call(
        "DaemonSet kube-system/kube-proxy", apps.read_namespaced_daemon_set, "kube-proxy", NAMESPACE, **timeout
    )
    # serialize(None) is None: a 404 stays None
    return {
        "kubelet": kubelet_version(serialize(node)),
        "apiservers": [summary(pod)["version"] for pod in (serialize(pods) or {}).get("items") or []],
        "cluster_version": cluster_version(serialize(config_map)),
        "kube_proxy": kube_proxy_version(serialize(daemon_set)),
    }
