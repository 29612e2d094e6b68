# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Which static Pod containers to stop, in which order and with which grace, before a new kubelet starts.

A new kubelet does not recognise the static Pods the old one started (a static Pod's UID hashes its defaulted spec)
and kills them as orphans with a 1 s grace. So every static Pod's running container is stopped first with its Pod's
own ``terminationGracePeriodSeconds`` (the kubelet records it on the container as an annotation): the
controller-manager and scheduler first (they hand their leader leases over), then any Pod kubeadm does not own
(kube-vip, keepalived, haproxy: the virtual IP moves before the server behind it stops), then kube-apiserver, and the
local etcd member last. Read from ``crictl pods -o json`` and ``crictl ps -o json`` on the node. Pure.
"""

from __future__ import annotations

import json

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._errors import PluginError

CONTAINERS_MARK = "#skewsafe-containers"

# kubeadm's container names; any other static Pod ranks between the leader-elected ones and kube-apiserver.
_RANK = {"kube-controller-manager": 0, "kube-scheduler": 0, "kube-apiserver": 2, "etcd": 3}
_OTHER = 1
_GRACE = "io.kubernetes.pod.terminationGracePeriod"
_SOURCE = "kubernetes.io/config.source"


class StopPlanError(PluginError, ValueError):
    pass


def _items(text, key, what):
    try:
        doc = json.loads(text or "{}")
    except ValueError as exc:
        raise StopPlanError(f"{what} is not JSON: {exc}") from exc
    items = doc.get(key) if isinstance(doc, dict) else None
    if not isinstance(items, list):
        raise StopPlanError(f"{what} has no {key!r} list")
    return items


def plan(read, default_grace):
    """``[{pod, container, id, grace}]`` in stop order from the node read: ``crictl pods --state ready -o json``,
    a ``CONTAINERS_MARK`` line, ``crictl ps --state running -o json``. ``default_grace`` where none is recorded."""
    pods_text, mark, containers_text = (read or "").partition(CONTAINERS_MARK)
    if not mark:
        raise StopPlanError(f"the node read has no {CONTAINERS_MARK} line between the Pods and the containers")
    static = {
        pod.get("id"): (pod.get("metadata") or {}).get("name")
        for pod in _items(pods_text, "items", "crictl pods")
        if (pod.get("annotations") or {}).get(_SOURCE) == "file"
    }
    stops = []
    for container in _items(containers_text, "containers", "crictl ps"):
        pod = static.get(container.get("podSandboxId"))
        if pod is None:
            continue  # an API Pod: the new kubelet knows it by its UID and leaves it running
        name = (container.get("metadata") or {}).get("name") or ""
        grace = (container.get("annotations") or {}).get(_GRACE)
        stops.append(
            {
                "pod": pod,
                "container": name,
                "id": container.get("id"),
                "grace": int(grace) if str(grace or "").isdigit() else int(default_grace),
            }
        )
    return sorted(stops, key=lambda s: (_RANK.get(s["container"], _OTHER), s["pod"], s["container"]))
