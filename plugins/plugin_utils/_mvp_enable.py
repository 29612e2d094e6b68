# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""What turning the Mixed Version Proxy on does to one control plane (the mvp_enable role). Pure function.

The servers that must proxy are the old ones, so MVP is rolled out at the running version before the upgrade. Before
an upgrade, the first control plane needs no re-render: ``kubeadm upgrade apply`` renders its kube-apiserver from
kubeadm-config (which has the flag by then) as the first new server; only the control planes still old when it starts
are re-rendered at the running version, one restart fewer.
"""

from __future__ import annotations

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _upgrade_plan as plan

ACTIONS = ("none", "record_only", "apply_renders", "rerender")

# kubeadm's --etcd-servers for stacked etcd (the local member only) and where its etcd static Pod says how clients
# reach that member (k8s.io/kubernetes cmd/kubeadm/app/constants EtcdAdvertiseClientUrlsAnnotationKey).
LOCAL_ETCD = "https://127.0.0.1:2379"
ADVERTISE_CLIENT_URLS = "kubeadm.kubernetes.io/etcd.advertise-client-urls"


def step(observed):
    """``{"action", "source", "reason"}`` for one control plane.

    ``observed``: ``configured`` (its kube-apiserver already runs with MVP on), ``single`` (the cluster has one
    control plane), ``first`` (it is the control plane ``kubeadm upgrade apply`` runs on), ``version`` (its
    kube-apiserver's), ``upgrade_to`` (the target of the upgrade that follows; empty when MVP is enabled on its own).

    ``action``: ``none`` (already on), ``record_only`` (one control plane: nothing to proxy to, no restart; the flag
    waits in kubeadm-config), ``apply_renders`` (the first control plane before an upgrade that upgrades it), or
    ``rerender`` (``kubeadm upgrade node phase control-plane`` at the running version). ``source``: it must proxy
    from now on, so the gates during enablement prove it.
    """
    if observed.get("configured"):
        return {"action": "none", "source": True, "reason": "its kube-apiserver already runs with MVP on"}
    if observed.get("single"):
        return {
            "action": "record_only",
            "source": False,
            "reason": "the only control plane: nothing to proxy to, so no restart (kubeadm upgrade renders the flag)",
        }
    upgrade_to = observed.get("upgrade_to")
    if upgrade_to and observed.get("first"):
        try:
            behind = plan.parse(observed.get("version")) < plan.parse(upgrade_to)
        except plan.PlanError as exc:
            raise ValueError(f"mvp_enable_step: {exc}") from exc
        if behind:
            return {
                "action": "apply_renders",
                "source": False,
                "reason": (
                    f"the first control plane: kubeadm upgrade apply {upgrade_to} renders the flag from kubeadm-config "
                    "when it makes this the first new API server, so it is not restarted at the running version"
                ),
            }
    return {"action": "rerender", "source": True, "reason": "re-rendered at the running version"}


def etcd_servers(pods):
    """``--etcd-servers`` naming every stacked etcd member, the local one first, or ``""`` when there is nothing to add.

    ``pods``: the etcd static Pods (``kube-system``, ``component=etcd``) as API objects. kubeadm points each
    kube-apiserver at its local member only, so a restart of that member (``kubeadm upgrade``, a kubelet upgrade)
    hangs the server's requests until the member is back; etcd's client balances over every endpoint it is given
    and skips one that is down. The value is the same on every control plane (kubeadm-config is cluster-wide):
    ``127.0.0.1`` first, then each member's advertised client URL. ``""`` with fewer than two members (nothing to
    fail over to) or none at all (external etcd, where kubeadm already lists every endpoint).
    """
    urls = set()
    for pod in pods or []:
        annotations = ((pod or {}).get("metadata") or {}).get("annotations") or {}
        urls.update(u.strip() for u in (annotations.get(ADVERTISE_CLIENT_URLS) or "").split(",") if u.strip())
    urls.discard(LOCAL_ETCD)
    if len(urls) < 2:
        return ""
    return ",".join([LOCAL_ETCD, *sorted(urls)])
