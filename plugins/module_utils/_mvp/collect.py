# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Gather MVP evidence from every API server, each reached directly (never through a load balancer)."""

from __future__ import annotations

import datetime
import json
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import quote, urlsplit

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._discovery import (
    ACCEPT_V2,
    ACCEPT_V2_NOPEER,
    DiscoveryError,
    format_gvr,
    gvr_path,
    listable,
    parse_aggregated,
)
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._errors import SkewsafeError
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._metrics import MVP_METRICS, parse_samples
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.evaluate import (
    MVP_HOOKS,
    PEER_ADDRESS_ANNOTATION,
    classify_endpoint_error,
    match_leases,
    roles,
)
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._peer_dial import peer_tls_handshake

IDENTITY_SELECTOR = "apiserver.kubernetes.io/identity=kube-apiserver"
LEASES_PATH = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases?labelSelector=" + quote(IDENTITY_SELECTOR)
# kubeadm's kube-apiserver mirror Pods say which Node each server runs on and the address it advertises.
APISERVER_PODS_PATH = "/api/v1/namespaces/kube-system/pods?labelSelector=" + quote("component=kube-apiserver")
ADVERTISE_ANNOTATION = "kubeadm.kubernetes.io/kube-apiserver.advertise-address.endpoint"
PEER_PROXIED_HEADER = "x-kubernetes-peer-proxied"


class CollectError(SkewsafeError):
    """No evidence at all this round; ``kind`` is the cause (see ``_mvp.evaluate.classify_endpoint_error``)."""

    def __init__(self, message, kind="unreachable_endpoint"):
        super().__init__(message)
        self.kind = kind


def _now():
    return datetime.datetime.now(datetime.timezone.utc)


def server_time(headers):
    """The API server's clock from an answer's Date header (whole seconds), else the controller's: lease ages are
    judged on the server that renews them, so a controller whose clock is off calls no healthy peer crashed."""
    from email.utils import parsedate_to_datetime

    value = (headers or {}).get("Date") or (headers or {}).get("date")
    try:
        return parsedate_to_datetime(value) if value else _now()
    except (TypeError, ValueError):
        return _now()


def _parse_time(text):
    if not text:
        return None
    text = text.replace("Z", "+00:00")
    try:
        return datetime.datetime.fromisoformat(text)
    except ValueError:
        return None


def parse_leases(document, now=None):
    now = now or _now()
    leases = []
    for item in document.get("items") or []:
        meta, spec = item.get("metadata") or {}, item.get("spec") or {}
        renew = _parse_time(spec.get("renewTime"))
        leases.append(
            {
                "name": meta.get("name"),
                "hostname": (meta.get("labels") or {}).get("kubernetes.io/hostname"),
                "holder": spec.get("holderIdentity"),
                "renew_age": (now - renew).total_seconds() if renew else None,
                "peer_address": (meta.get("annotations") or {}).get(PEER_ADDRESS_ANNOTATION),
            }
        )
    return sorted(leases, key=lambda lease: lease["name"] or "")


def parse_readyz(text):
    """``{check name: "ok"|"failed"}`` from /readyz?verbose (post-start hooks without their prefix)."""
    hooks = {}
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("[+]") or line.startswith("[-]"):
            name = line[3:].split(" ", 1)[0]
            name = name.split("poststarthook/", 1)[-1]
            hooks[name] = "ok" if line.startswith("[+]") else "failed"
    return hooks


def summarize_metrics(text):
    samples = parse_samples(text, set(MVP_METRICS))
    out = {"rerouted": [], "proxy_errors": {}, "sync_errors": {}}
    for name, labels, value in samples:
        if name == "apiserver_rerouted_request_total":
            out["rerouted"].append(
                {
                    "code": labels.get("code", ""),
                    "group": labels.get("group", ""),
                    "version": labels.get("version", ""),
                    "resource": labels.get("resource", ""),
                    # 1.35 servers label only the code
                    "by_gvr": "resource" in labels,
                    "value": value,
                }
            )
        elif name == "apiserver_peer_proxy_errors_total":
            key = labels.get("type", "")
            out["proxy_errors"][key] = out["proxy_errors"].get(key, 0) + value
        elif name == "apiserver_peer_discovery_sync_errors_total":
            key = labels.get("type", "")
            out["sync_errors"][key] = out["sync_errors"].get(key, 0) + value
    return out


def rerouted_total(metrics, gvr, code="200"):
    """Proxied requests for a GVR; 1.35 servers label only ``code``, so count all of that code there."""
    return sum(
        r["value"]
        for r in metrics.get("rerouted", [])
        if r["code"] == code and (not r.get("by_gvr", True) or (r["group"], r["version"], r["resource"]) == tuple(gvr))
    )


class Collector:
    """One round of evidence per call; ``client`` is an ``ApiServerClient``."""

    def __init__(
        self, client, peer_ca_file=None, probe_limit=2, front_proxy_client=None, metrics_timeout=None, peer_dials=None
    ):
        self.client = client
        # what the control-plane nodes saw dialling their peers (apiserver_peer_dial_info); None: dial from here
        self.peer_dials = peer_dials
        # /metrics of a busy server is megabytes: a slow download must not pass for "not proxied"
        self.metrics_timeout = metrics_timeout or max(15.0, 3 * float(getattr(client, "timeout", 5.0)))
        self.peer_ca_file = peer_ca_file
        self.probe_limit = probe_limit
        self.front_proxy_client = front_proxy_client  # ApiServerClient with the node's front-proxy cert, optional

    # -------------------------------------------------------------- endpoints
    def leases(self, endpoints):
        errors, kinds = [], set()
        for url in endpoints:
            resp = self.client.get(url, LEASES_PATH)
            if resp.ok:
                return parse_leases(resp.json(), now=server_time(resp.headers))
            errors.append(f"{url}: {resp.error or resp.status}")
            kinds.add(classify_endpoint_error(resp.status, resp.error))
        # one kind for every endpoint names it (credentials, RBAC, DNS...); a mix stays "does not answer"
        kind = kinds.pop() if len(kinds) == 1 else "unreachable_endpoint"
        raise CollectError(f"cannot list kube-apiserver identity leases ({'; '.join(errors)})", kind)

    def advertised_by_node(self, endpoints):
        """``{node name: advertised host:port}`` from the kube-apiserver mirror Pods; {} when they cannot be read
        (no kubelet, no permission): matching then falls back to the endpoint's address and host name."""
        for url in endpoints:
            resp = self.client.get(url, APISERVER_PODS_PATH)
            if resp.ok:
                try:
                    items = resp.json().get("items") or []
                except ValueError:
                    return {}
                out = {}
                for pod in items:
                    node = (pod.get("spec") or {}).get("nodeName")
                    address = ((pod.get("metadata") or {}).get("annotations") or {}).get(ADVERTISE_ANNOTATION)
                    if node and address:
                        out[node] = address
                return out
        return {}

    def discover_endpoints(self, seed_url):
        """Endpoints from the identity leases' peer-advertise-address annotations."""
        return [f"https://{lease['peer_address']}" for lease in self.leases([seed_url]) if lease.get("peer_address")]

    # -------------------------------------------------------------- per server
    def server(self, endpoint):
        url, name, hostname = endpoint["url"], endpoint.get("name"), endpoint.get("hostname")
        info = {"name": name or urlsplit(url).hostname, "endpoint": url, "hostname": hostname or name, "error": None}
        for key in ("node_name", "advertise_address"):
            if endpoint.get(key):
                info[key] = endpoint[key]
        version = self.client.get(url, "/version")
        if not version.ok:
            info["error"] = version.error or f"/version answered {version.status}"
            info["error_kind"] = classify_endpoint_error(version.status, version.error)
            return info
        info["version"] = version.json().get("gitVersion")
        readyz = self.client.get(url, "/readyz?verbose")
        info["ready"] = readyz.status == 200
        info["hooks"] = {k: v for k, v in parse_readyz(readyz.text()).items() if k in MVP_HOOKS or "peer" in k}
        metrics = self.client.get(url, "/metrics", timeout=self.metrics_timeout)
        info["metrics"] = summarize_metrics(metrics.text()) if metrics.ok else {}
        if not metrics.ok:
            info["metrics_error"] = metrics.error or f"/metrics answered {metrics.status}"
        try:
            local = {}
            for path in ("/api", "/apis"):
                resp = self.client.get(url, path, {"Accept": ACCEPT_V2_NOPEER})
                local.update(parse_aggregated(resp.json()))
            merged = self.client.get(url, "/apis", {"Accept": ACCEPT_V2})
            merged_info = parse_aggregated(merged.json())
            info["local_info"] = {**merged_info, **local}
            info["local"] = set(local)
            info["merged"] = set(merged_info)
        except (ValueError, DiscoveryError) as exc:
            info["error"] = f"discovery: {exc}"
        return info

    def peer_tls(self, server, lease):
        address = (lease or {}).get("peer_address") or server["endpoint"].split("://", 1)[-1]
        host, _sep, port = address.rpartition(":")
        return {"address": address, "error": peer_tls_handshake(host.strip("[]"), port or 443, self.peer_ca_file)}

    def requestheader(self, server):
        """The call a peer makes for discovery: front-proxy client cert + X-Remote-* headers."""
        headers = {
            "Accept": ACCEPT_V2_NOPEER,
            "X-Remote-User": "skewsafe-mvp-check",
            "X-Remote-Group": "system:authenticated",
        }
        return self.front_proxy_client.get(server["endpoint"], "/apis", headers).status

    def probes(self, servers, plan=None):
        """Mixed mode: each proxying server asked for resources only its peers serve, with the negative control.

        Candidates per server: what newer servers serve locally and it does not, plus what its merged
        discovery lists beyond its own (so a crashed peer's resources are still probed). ``plan`` (a dict) gets, per
        proxying server, what differs (``peer_only``) and what was probed of it (``probed``, listable resources
        only): a server with nothing there had nothing to prove, which the checks report as such.
        """
        reachable = [s for s in servers if not s.get("error") and s.get("local") is not None]
        old, new = roles(reachable)
        sources = old if new else [s["name"] for s in reachable]
        by_name = {s["name"]: s for s in reachable}
        new_local, info = set(), {}
        for s in reachable:
            info.update(s.get("local_info") or {})
        for name in new:
            new_local |= by_name[name]["local"]
        out = []
        for name in sources:
            server = by_name[name]
            peer_only = (new_local | {g for g in server["merged"] if g[0]}) - server["local"]
            probes = []
            chosen = listable(peer_only, info)[: self.probe_limit]
            if plan is not None:
                plan[name] = {
                    "peer_only": sorted(format_gvr(g) for g in peer_only),
                    "probed": [format_gvr(g) for g in chosen],
                }
            for gvr in chosen:
                path = gvr_path(gvr) + "?limit=1"
                proxied = self.client.get(server["endpoint"], path)
                local = self.client.get(server["endpoint"], path, {PEER_PROXIED_HEADER: "true"})
                probes.append(
                    {
                        "server": name,
                        "gvr": gvr,
                        "path": path,
                        "status": proxied.status,
                        # an error's Status text explains a failure; a served object stays out of reports
                        "body": proxied.error or ("" if proxied.ok else proxied.text()[:300]),
                        "status_local": local.status,
                    }
                )
            if not probes:
                continue
            after = self.client.get(server["endpoint"], "/metrics", timeout=self.metrics_timeout)
            after_metrics = summarize_metrics(after.text()) if after.ok else {}
            metrics_error = server.get("metrics_error") or (
                None if after.ok else after.error or f"/metrics answered {after.status}"
            )
            for probe in probes:
                probe["rerouted_before"] = rerouted_total(server.get("metrics") or {}, probe["gvr"])
                probe["rerouted_after"] = rerouted_total(after_metrics, probe["gvr"])
                if metrics_error:
                    probe["metrics_error"] = metrics_error
            out.extend(probes)
        return out

    # -------------------------------------------------------------- a round
    def collect(self, endpoints, mode):
        """``endpoints``: [{"url", "name"?, "hostname"?, "node_name"?, "advertise_address"?}]. One round of evidence."""
        leases = self.leases([e["url"] for e in endpoints])
        with ThreadPoolExecutor(max_workers=min(8, len(endpoints))) as pool:
            servers = list(pool.map(self.server, endpoints))
        # What the cluster says first: the address each server's own Pod advertises, found by its Node name.
        if any(s.get("node_name") and not s.get("advertise_address") for s in servers):
            advertised = self.advertised_by_node([e["url"] for e in endpoints])
            for s in servers:
                if s.get("node_name") in advertised and not s.get("advertise_address"):
                    s["advertise_address"] = advertised[s["node_name"]]
        matched, _extra = match_leases(servers, leases)
        evidence = {"servers": servers, "leases": leases, "peer_tls": {}, "requestheader": {}, "probes": []}
        from_nodes = peer_tls_from_dials(servers, matched, self.peer_dials or [])
        evidence["peer_tls"].update(from_nodes)
        for server in servers:
            if server.get("error"):
                continue
            if self.peer_ca_file and server["name"] not in from_nodes:
                evidence["peer_tls"][server["name"]] = self.peer_tls(server, matched.get(server["name"]))
            if self.front_proxy_client is not None:
                evidence["requestheader"][server["name"]] = self.requestheader(server)
        if mode == "mixed":
            evidence["probe_plan"] = {}
            evidence["probes"] = self.probes(servers, evidence["probe_plan"])
        return evidence


def peer_tls_from_dials(servers, matched, peer_dials):
    """``{server name: {"address", "error", "from"}}`` for each server whose lease address the nodes dialled.

    Servers the controller cannot reach are judged too: the path between peers does not depend on it.
    """
    out = {}
    for s in servers:
        address = (matched.get(s["name"]) or {}).get("peer_address")
        seen = [(d["node"], e["error"]) for d in peer_dials for e in d["dials"] if address and e["address"] == address]
        if not seen:
            continue
        errors = [f"from {node}: {error}" for node, error in seen if error]
        out[s["name"]] = {"address": address, "error": "; ".join(errors) or None, "from": [n for n, _e in seen]}
    return out


def public(evidence):
    """Evidence as JSON-safe data for module results (sets -> sorted lists of 'g/v/r')."""
    servers = []
    for s in evidence["servers"]:
        item = {k: v for k, v in s.items() if k not in ("local", "merged", "local_info")}
        if s.get("local") is not None:
            local, merged = set(s["local"]), set(s.get("merged") or ())
            item["discovery"] = {
                "local_count": len(local),
                "merged_count": len(merged),
                "peer_only": sorted(format_gvr(g) for g in merged - local),
            }
        servers.append(item)
    probes = [{**p, "gvr": format_gvr(p["gvr"])} for p in evidence.get("probes", [])]
    return json.loads(json.dumps({**evidence, "servers": servers, "probes": probes}, default=str))
