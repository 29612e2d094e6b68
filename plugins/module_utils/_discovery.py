# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Aggregated discovery (apidiscovery.k8s.io/v2): parsing and the sets MVP reasoning needs.

A GVR is the tuple ``(group, version, resource)``; the core group is ``""``.
"""

from __future__ import annotations

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._errors import SkewsafeError

ACCEPT_V2 = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
# client-go's AcceptV2NoPeer: the server's local view only. Servers that do not know
# the profile ignore it and answer their local view anyway.
ACCEPT_V2_NOPEER = ACCEPT_V2 + ";profile=nopeer"


class DiscoveryError(SkewsafeError, ValueError):
    pass


def parse_aggregated(document):
    """``{(group, version, resource): {"verbs": [...], "scope": str, "subresources": [...]}}``."""
    if not isinstance(document, dict) or document.get("kind") != "APIGroupDiscoveryList":
        kind = document.get("kind") if isinstance(document, dict) else type(document).__name__
        raise DiscoveryError(f"expected an APIGroupDiscoveryList, got {kind!r}")
    result = {}
    for group in document.get("items") or []:
        name = (group.get("metadata") or {}).get("name", "")
        for version in group.get("versions") or []:
            for resource in version.get("resources") or []:
                gvr = (name, version.get("version", ""), resource.get("resource", ""))
                result[gvr] = {
                    "verbs": sorted(resource.get("verbs") or []),
                    "scope": resource.get("scope", ""),
                    "subresources": sorted(s.get("subresource", "") for s in resource.get("subresources") or []),
                }
    return result


def group_versions(gvrs):
    return {(g, v) for g, v, _r in gvrs}


def format_gvr(gvr):
    group, version, resource = gvr
    return f"{group}/{version}/{resource}" if group else f"{version}/{resource}"


def format_gv(gv):
    group, version = gv
    return f"{group}/{version}" if group else version


def gvr_path(gvr, namespace=None):
    """The list URL of a GVR (namespaced resources in ``namespace`` when given)."""
    group, version, resource = gvr
    base = f"/apis/{group}/{version}" if group else f"/api/{version}"
    if namespace:
        return f"{base}/namespaces/{namespace}/{resource}"
    return f"{base}/{resource}"


def listable(gvrs, info):
    """The GVRs among ``gvrs`` that can be listed (top-level resources with the list verb)."""
    return sorted(gvr for gvr in gvrs if "list" in info[gvr]["verbs"] and "/" not in gvr[2])


def proxy_candidates(local, peers):
    """GVRs a server would proxy: served by some peer, not by itself (KEP-4020 §4)."""
    served_by_peers = set()
    for peer in peers:
        served_by_peers |= set(peer)
    return served_by_peers - set(local)
