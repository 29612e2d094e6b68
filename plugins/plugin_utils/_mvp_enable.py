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
