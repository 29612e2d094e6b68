# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Is one control-plane node whole again? Pure rules over what the control_plane_health action read."""

from __future__ import annotations

import json

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._manifest import command_flags, image_tag
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._manifest import container as manifest_container

# kubeadm's static Pods, in the order kubeadm writes them; etcd only where it is stacked.
COMPONENTS = ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
# The components whose image tag is the Kubernetes version (etcd has its own).
VERSIONED = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")


def apiserver_address(manifest):
    """``https://<advertise-address>:<secure-port>`` of a kube-apiserver static Pod document."""
    flags = command_flags(manifest_container(manifest).get("command"))
    address = flags.get("advertise-address")
    if not address:
        return None
    host = f"[{address}]" if ":" in address else address
    return f"https://{host}:{flags.get('secure-port') or '6443'}"


def etcd_client_settings(manifest):
    """What kube-apiserver uses to reach etcd: servers and client certificate paths."""
    flags = command_flags(manifest_container(manifest).get("command"))
    return {
        "servers": [s for s in (flags.get("etcd-servers") or "").split(",") if s],
        "ca_file": flags.get("etcd-cafile"),
        "cert_file": flags.get("etcd-certfile"),
        "key_file": flags.get("etcd-keyfile"),
    }


def etcd_health_member(endpoint, got):
    """One member from the ``uri`` result of its ``/health``: etcd answers ``{"health":"true",...}`` as
    text/plain, so ``uri`` sets no ``json`` and the body is in ``content``."""
    body = got.get("json")
    if body is None:
        try:
            body = json.loads(got.get("content") or "null")
        except ValueError:
            body = None
    healthy = got.get("status") == 200 and isinstance(body, dict) and body.get("health") in ("true", True)
    if healthy:
        return {"endpoint": endpoint, "healthy": True, "error": None}
    reason = (body or {}).get("reason") if isinstance(body, dict) else None
    return {"endpoint": endpoint, "healthy": False, "error": reason or got.get("msg") or f"HTTP {got.get('status')}"}


def parse_etcdctl_health(stdout):
    """``etcdctl endpoint health --cluster -w json`` -> [{endpoint, healthy, error}]."""
    try:
        rows = json.loads(stdout or "[]")
    except ValueError:
        return None
    if isinstance(rows, dict):
        rows = [rows]
    return [
        {"endpoint": r.get("endpoint"), "healthy": bool(r.get("health")), "error": r.get("error") or None}
        for r in rows
        if isinstance(r, dict)
    ]


def _pod_ready(pod):
    conditions = (pod.get("status") or {}).get("conditions") or []
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions)


def manifest_problems(name, manifest, expected_version=None):
    """A kubeadm step that left this manifest behind the expected version."""
    tag = image_tag(manifest_container(manifest).get("image"))
    if expected_version and name in VERSIONED and tag != expected_version:
        return [f"{name}: manifest has {tag}, expected {expected_version}"]
    return []


def component_problems(name, manifest, pod, expected_version=None):
    """Problems of one static Pod: manifest vs expected version, mirror Pod vs manifest, running and Ready."""
    container = manifest_container(manifest)
    want_image = container.get("image")
    problems = manifest_problems(name, manifest, expected_version)
    if pod is None:
        return [*problems, f"{name}: no Pod in the API for its manifest"]
    pod_container = manifest_container(pod)
    # The mirror Pod is replaced when the kubelet picks up a changed manifest; until then it shows the old one.
    if pod_container.get("image") != want_image or pod_container.get("command") != container.get("command"):
        return [*problems, f"{name}: the kubelet has not started the current manifest yet"]
    statuses = (pod.get("status") or {}).get("containerStatuses") or []
    status = statuses[0] if statuses else {}
    running_tag = image_tag(status.get("image"))
    if "running" not in (status.get("state") or {}):
        problems.append(f"{name}: container not running")
    elif running_tag != image_tag(want_image):
        problems.append(f"{name}: runs {running_tag}, manifest has {image_tag(want_image)}")
    elif not (status.get("ready") and _pod_ready(pod)):
        problems.append(f"{name}: not Ready")
    return problems


def evaluate(manifests, pods, readyz, etcd, expected_version=None):
    """Everything that keeps the node from being whole, as sentences; [] when whole.

    manifests: {component: parsed static Pod or None (no manifest)}; pods: control-plane Pods of the node,
    or None when they could not be read (then only the manifests themselves are judged);
    readyz: {status, msg} of the local kube-apiserver's /readyz; etcd: {mode, members, error}.
    """
    problems = []
    if manifests.get("kube-apiserver") is None:
        problems.append("kube-apiserver: no manifest on the node")
    by_component = {}
    for pod in pods or []:
        component = ((pod.get("metadata") or {}).get("labels") or {}).get("component")
        by_component.setdefault(component, pod)
    for name in COMPONENTS:
        if manifests.get(name) is None:
            continue
        if pods is None:
            problems.extend(manifest_problems(name, manifests[name], expected_version))
        else:
            problems.extend(component_problems(name, manifests[name], by_component.get(name), expected_version))
    if readyz.get("status") != 200:
        problems.append(f"kube-apiserver /readyz at {readyz.get('url')}: {readyz.get('msg') or readyz.get('status')}")
    problems.extend(etcd_problems(etcd))
    return problems


def etcd_problems(etcd):
    if etcd.get("mode") == "skipped":
        return []
    if etcd.get("error"):
        return [f"etcd: {etcd['error']}"]
    members = etcd.get("members") or []
    if not members:
        return ["etcd: no member answered"]
    sick = [m for m in members if not m["healthy"]]
    problems = [f"etcd member {m['endpoint']}: {m.get('error') or 'unhealthy'}" for m in sick]
    if len(sick) * 2 >= len(members):
        problems.append(f"etcd: only {len(members) - len(sick)} of {len(members)} members healthy (no quorum)")
    return problems
