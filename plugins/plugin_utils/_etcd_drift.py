# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Drift between a node's live etcd manifest and what kubeadm's upgrade would write in its place.

``kubeadm upgrade apply|node`` re-renders a stacked member's ``/etc/kubernetes/manifests/etcd.yaml`` with
``CreateLocalEtcdStaticPodManifestFile`` from kubeadm-config (``etcd.local``) and the ``etcd`` patches, for the
node's name and advertise address: a flag, volume or variable only the live file has is lost. Its upgrade dry run
renders the three other components only, so the rendering comes from ``kubeadm init phase etcd local --dry-run``,
the same function, given the node's InitConfiguration built here.
"""

from __future__ import annotations

import yaml

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _manifest
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _drift
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._errors import PluginError

ETCD_MANIFEST = "/etc/kubernetes/manifests/etcd.yaml"
# Read by etcd only when it bootstraps an empty data directory; kubeadm renders the member alone (a joined member's
# file lists every member and says "existing"), so every upgrade rewrites them and nothing is lost.
BOOTSTRAP_ONLY = ("initial-cluster", "initial-cluster-state")
# kubeadm's upgrade takes the node's advertise address from this annotation of its kube-apiserver (the mirror Pod).
ADVERTISE_ANNOTATION = "kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint"


class EtcdDriftError(PluginError, ValueError):
    pass


def _load(text, what):
    try:
        doc = _manifest.load(text)
    except _manifest.ManifestError as exc:
        raise EtcdDriftError(f"{what}: {exc}") from exc
    if not isinstance(doc, dict):
        raise EtcdDriftError(f"{what} is not a YAML mapping")
    return doc


def _advertise_address(apiserver_text):
    pod = _load(apiserver_text, "the kube-apiserver manifest")
    endpoint = ((pod.get("metadata") or {}).get("annotations") or {}).get(ADVERTISE_ANNOTATION)
    if not endpoint:
        raise EtcdDriftError(f"the kube-apiserver manifest has no {ADVERTISE_ANNOTATION} annotation")
    host = endpoint.rsplit(":", 1)[0] if endpoint.count(":") == 1 or endpoint.startswith("[") else endpoint
    return host.strip("[]")


def render_config(cluster_configuration, apiserver_text, node_name):
    """The kubeadm configuration (YAML text) under which ``kubeadm init phase etcd local`` renders this node's member
    as the upgrade would: kubeadm-config's ClusterConfiguration, the node's name and its advertise address."""
    cluster = _load(cluster_configuration, "kubeadm-config's ClusterConfiguration")
    if cluster.get("kind") != "ClusterConfiguration" or not cluster.get("apiVersion"):
        raise EtcdDriftError("kubeadm-config's ClusterConfiguration has no kind ClusterConfiguration or no apiVersion")
    if not node_name:
        raise EtcdDriftError("no node name")
    init = {
        "apiVersion": cluster["apiVersion"],
        "kind": "InitConfiguration",
        "localAPIEndpoint": {"advertiseAddress": _advertise_address(apiserver_text)},
        "nodeRegistration": {"name": node_name},
    }
    return "\n".join([yaml.safe_dump(init, sort_keys=False).rstrip(), "---", str(cluster_configuration).rstrip(), ""])


def _without_bootstrap_flags(pod):
    """A copy of the manifest whose container command has no bootstrap-only flag, and those flags."""
    pod = {**pod, "spec": {**(pod.get("spec") or {})}}
    containers = list(pod["spec"].get("containers") or [])
    if not containers:
        return pod, {}
    command = list(containers[0].get("command") or [])
    flags = _manifest.command_flags(command)
    dropped = {name: flags[name] for name in BOOTSTRAP_ONLY if name in flags}
    kept = [arg for arg in command if not (isinstance(arg, str) and arg[2:].partition("=")[0] in dropped)]
    containers[0] = {**containers[0], "command": kept}
    pod["spec"]["containers"] = containers
    return pod, dropped


def drift(dryrun_stdout, live_text):
    """What the upgrade's re-render would drop or change in this node's etcd manifest.

    Returns ``{compared, components, lost, altered, bootstrap_only}`` like the control-plane comparison, or
    ``skipped`` with the reason when the live member runs another etcd than the installed kubeadm renders (an
    upgrade in progress, or a manifest written by an older kubeadm): its differences would then be kubeadm's own.
    """
    rendered = {path.rsplit("/", 1)[-1]: text for path, text in _drift.parse_dryrun(dryrun_stdout).items()}
    if "etcd.yaml" not in rendered:
        raise EtcdDriftError(f"the kubeadm dry run printed no etcd manifest (it printed {sorted(rendered) or 'none'})")
    live, new = _load(live_text, ETCD_MANIFEST), _load(rendered["etcd.yaml"], "the rendered etcd manifest")
    live_tag = _manifest.image_tag(_manifest.container(live).get("image"))
    new_tag = _manifest.image_tag(_manifest.container(new).get("image"))
    if live_tag != new_tag:
        return {
            "compared": [],
            "components": {},
            "lost": [],
            "altered": [],
            "skipped": f"etcd runs {live_tag}, the installed kubeadm renders {new_tag} (an upgrade in progress, or a"
            " manifest an older kubeadm wrote): not comparable",
        }
    live, live_boot = _without_bootstrap_flags(live)
    new, new_boot = _without_bootstrap_flags(new)
    found = _drift.compare(live, new)
    bootstrap = [
        f"flag --{name}: {value} -> {new_boot.get(name, '(none)')}"
        for name, value in live_boot.items()
        if new_boot.get(name) != value
    ]
    return {
        "compared": ["etcd"],
        "components": {"etcd": found},
        "lost": [f"etcd: {item}" for item in found["lost"]],
        "altered": [f"etcd: {item}" for item in found["altered"]],
        "bootstrap_only": bootstrap,
    }
