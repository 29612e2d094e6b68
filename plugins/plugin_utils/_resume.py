# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection.
"""What is left to upgrade on one node, from what the cluster shows now, never from binaries on disk.

A run killed anywhere leaves some of these behind the target; the rerun repeats the kubeadm step
when any kubeadm-owned part is behind (kubeadm skips a static Pod whose manifest is already current)
and the kubelet step when the Node still reports the old kubelet.

In the ``components_first`` order (the default) every control plane's components are upgraded before the first
control-plane kubelet, so a control plane whose components run the target while its kubelet does not is the normal
state between the two phases; its kubelet step waits until every kube-apiserver runs the target (a kubelet must
not be newer than any kube-apiserver it may reach, version-skew policy).
"""

from __future__ import annotations

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _version
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _upgrade_plan as plan
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._errors import PluginError

ROLES = ("first_control_plane", "control_plane", "worker")
# How the control planes are upgraded: one table and one default, in _upgrade_plan.
ORDERS = plan.CONTROL_PLANE_ORDERS
# The static Pods kubeadm upgrades on every control plane (etcd only where stacked, so not required).
COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")


class ResumeError(PluginError, ValueError):
    pass


def _release(text, what):
    parsed = _version.key(text) if text else None
    if parsed is None:
        raise ResumeError(f"{what} is not a Kubernetes version: {text!r}")
    return parsed


def _fmt(parsed):
    return "v" + plan.fmt(parsed)


def left_to_do(observed):
    """``{"kubeadm", "kubelet", "any", "behind", "next_step", "kubelet_waits_for"}`` for one node.

    ``observed``: ``target``, ``role`` (one of ROLES), ``kubelet`` (the Node's ``kubeletVersion``); on a
    control plane ``manifests`` (component name to the image tag of its manifest, None when it is missing),
    ``apiservers`` (the image tag of every kube-apiserver mirror Pod of the cluster) and ``kube_proxy`` (the
    image tag of the kube-proxy DaemonSet, None when the cluster has none); on the first one also
    ``cluster_version`` (kubeadm-config's ``kubernetesVersion``).

    kubeadm upgrades the add-ons only once every kube-apiserver runs the new image (the addon phase of
    ``upgrade apply`` and ``upgrade node`` skips them before, cmd/kubeadm/app/cmd/phases/upgrade/addons.go),
    so kube-proxy behind the target counts against a control plane only when all of them are upgraded: then
    rerunning that control plane's kubeadm step upgrades it. The phase upgrades CoreDNS first and kube-proxy
    last, so kube-proxy at the target also means the CoreDNS step ran.

    ``order`` (one of ORDERS, default ``components_first`` as the playbooks'): with ``components_first``, a control plane's kubelet step
    waits for every kube-apiserver Pod to run the target (and, with ``control_planes``, the number of control
    planes, for that many Pods to be listed): ``kubelet_waits_for`` then says what it waits for (empty when the
    step may run, or there is none).
    """
    role = observed.get("role")
    if role not in ROLES:
        raise ResumeError(f"role must be one of {', '.join(ROLES)}, not {role!r}")
    order = observed.get("order") or plan.DEFAULT_CONTROL_PLANE_ORDER
    if order not in ORDERS:
        raise ResumeError(f"order must be one of {', '.join(ORDERS)}, not {order!r}")
    target = _release(observed.get("target"), "the target")
    behind = []

    def check(what, text, required=True):
        """Record ``what`` when it is behind the target; True if it is."""
        if text is None:
            if required:
                behind.append(f"{what} missing")
            return required
        found = _release(text, what)
        if found > target:
            raise ResumeError(f"{what} is {_fmt(found)}, newer than the target {_fmt(target)}")
        if found != target:
            behind.append(f"{what} at {_fmt(found)}")
        return found != target

    if role != "worker":
        manifests = observed.get("manifests") or {}
        for component in COMPONENTS:
            check(f"{component} manifest", manifests.get(component))
    if role == "first_control_plane":
        check("kubeadm-config kubernetesVersion", observed.get("cluster_version"))
    apiservers = observed.get("apiservers") or []
    apiservers_behind = [v for v in apiservers if not v or _release(v, "a kube-apiserver Pod") != target]
    if role != "worker" and apiservers and not apiservers_behind:
        check("kube-proxy DaemonSet", observed.get("kube_proxy"), required=False)
    kubeadm_behind = bool(behind)
    kubelet_behind = check("kubelet", observed.get("kubelet"))
    if role == "worker":  # kubeadm upgrade node on a worker only rewrites the kubelet configuration
        kubeadm_behind = kubelet_behind
    if kubeadm_behind:
        next_step = "kubeadm upgrade apply" if role == "first_control_plane" else "kubeadm upgrade node"
    else:
        next_step = "kubelet" if kubelet_behind else "none"
    waits_for = []
    if role != "worker" and order == "components_first" and kubelet_behind:
        if kubeadm_behind:
            waits_for.append("this control plane's components")
        if apiservers_behind:
            waits_for.append(f"{len(apiservers_behind)} of {len(apiservers)} kube-apiserver Pods not at the target yet")
        expected = int(observed.get("control_planes") or 1)
        if len(apiservers) < expected:
            waits_for.append(f"{len(apiservers)} kube-apiserver Pods listed for {expected} control planes")
    return {
        "kubeadm": kubeadm_behind,
        "kubelet": kubelet_behind,
        "any": kubeadm_behind or kubelet_behind,
        "behind": behind,
        "next_step": next_step,
        "kubelet_waits_for": waits_for,
    }
