# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Mixed Version Proxy checks and diagnosis: pure functions over collected evidence.

Evidence is what ``_mvp.collect.Collector.collect`` gathers (plain dicts). Every check returns
results ``{"check", "server", "passed", "detail", "cause"}``; a failing result names a
``cause`` from :data:`CAUSES`, the failure-signature table of KEP-4020 as it shows from
outside, with what to do about it.
"""

from __future__ import annotations

from typing import NamedTuple

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _version
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._discovery import format_gvr, proxy_candidates

# Post-start hooks kube-apiserver registers only when the proxy is built (--peer-ca-file set), as
# seen on real servers (tests/integration/test_mvp_real_apiservers.py): all of MVP_HOOKS, and one of
# PEER_DISCOVERY_HOOKS, whose name changed: peer-discovery-cache-sync on 1.35.4,
# peer-discovery-workers on 1.36.5 and 1.37.2. Either proves the proxy was built.
MVP_HOOKS = ("mixed-version-proxy-handler", "local-discovery-cache-sync")
PEER_DISCOVERY_HOOKS = ("peer-discovery-workers", "peer-discovery-cache-sync")
PEER_ADDRESS_ANNOTATION = "kubernetes.io/peer-advertise-address"
# Identity leases are renewed every 10 s; a lease this old belongs to a server that stopped.
STALE_LEASE_SECONDS = 45.0

CHECKS = (
    "versions",
    "identity_leases",
    "readiness",
    "peer_tls",
    "requestheader_trust",
    "discovery_merge",
    "proxy_probe",
    "proxy_errors",
)

# cause -> (summary, remedy, permanent): permanent when no amount of waiting fixes it (the gate stops early once it
# persists).
_CAUSE_ROWS = {
    "unreachable_endpoint": (
        "the API server endpoint does not answer",
        "Check that kube-apiserver runs on that node and that the address is right.",
        False,
    ),
    "endpoint_refused": (
        "nothing listens at the endpoint (connection refused)",
        "kube-apiserver is not running there or listens elsewhere: check its static Pod on that node "
        "(crictl ps -a --name kube-apiserver) and the endpoint's address and port.",
        False,
    ),
    "endpoint_timeout": (
        "the endpoint did not answer in time",
        "The server is overloaded or a firewall drops the packets between the controller and the node; "
        "raise request_timeout if it is only slow.",
        False,
    ),
    "endpoint_unresolvable": (
        "the endpoint's host name does not resolve on the controller (controller side)",
        "Fix the endpoint (skewsafe_apiserver_address / ansible_host) or the controller's DNS.",
        True,
    ),
    "endpoint_tls": (
        "the endpoint's certificate does not verify against the controller's CA (controller side)",
        "Give the cluster CA (ca_cert or the kubeconfig's certificate-authority) and an address the serving "
        "certificate names.",
        True,
    ),
    "endpoint_unauthorized": (
        "the API server rejected the controller's credentials with 401 (controller side)",
        "The token or client certificate is expired, revoked or from another cluster: renew the credential.",
        True,
    ),
    "endpoint_forbidden": (
        "the credentials are valid but not allowed to read what the gate reads, 403 (controller side)",
        "The gate reads /version, /readyz, /metrics, discovery, identity leases in kube-system and lists the "
        "probed resources: bind the credential to a role that allows that (cluster-admin, or get/list on those).",
        True,
    ),
    "metrics_unavailable": (
        "/metrics could not be read, so a proxied request cannot be counted",
        "The server's /metrics is slow or not allowed for these credentials; the gate tries again next round.",
        False,
    ),
    "version_skew": (
        "the API servers are more than one minor apart",
        "Kubernetes supports one minor of skew between API servers; finish or roll back the upgrade of the newest ones.",
        True,
    ),
    "mode_mismatch": (
        "the control plane is not in the requested mode",
        "Use mode=mixed while API servers run two versions and mode=steady when all run one.",
        True,
    ),
    "no_peer_ca_file": (
        "kube-apiserver runs without --peer-ca-file, so it never proxies (kubeadm does not set it)",
        "Run the skewsafe.kubeadm.mvp_enable playbook: it puts peer-ca-file=/etc/kubernetes/pki/ca.crt into "
        "kubeadm-config and re-renders each kube-apiserver one at a time. On 1.35 the gate "
        "UnknownVersionInteroperabilityProxy=true is needed as well.",
        True,
    ),
    "gate_off": (
        "the UnknownVersionInteroperabilityProxy gate is off on this server (no peer-advertise-address on its "
        "identity lease), so peers cannot find its address",
        "Set feature_gates UnknownVersionInteroperabilityProxy=true for it (alpha and off by default on 1.35), "
        "then restart it.",
        True,
    ),
    "lease_missing": (
        "no identity lease names this server, so no peer will ever proxy to it",
        "Identity leases are named after the host name: control-plane host names must be unique and at most 63 "
        "bytes. Fix the host name, then restart kube-apiserver there. If its lease is there, the endpoint was not "
        "matched to it: give the endpoint its node_name (gather facts, or set skewsafe_node_name) or its "
        "advertise_address (skewsafe_apiserver_advertise_address).",
        True,
    ),
    "duplicate_hostname": (
        "two API servers share one identity lease (the same host name)",
        "Give every control-plane node a unique host name, then restart kube-apiserver on them.",
        True,
    ),
    "endpoint_unreachable_here": (
        "the API server runs (it renews its identity lease) but does not answer from where the check runs",
        "Look at the path from the controller to that endpoint (route, firewall, NAT, a bastion) before blaming "
        "the server; give endpoints the controller can reach. If it is restarting, this clears within a minute.",
        False,
    ),
    "crashed_peer": (
        "an API server that stopped without shutting down is still listed by its identity lease",
        "Requests for resources only it served get 503 until the lease is garbage-collected (up to 1 h). Restart "
        "that server or delete its lease: kubectl -n kube-system delete lease <name>.",
        False,
    ),
    "peer_ca_mismatch": (
        "peer TLS fails: a serving certificate does not verify against the peer CA (or, when blamed on a source "
        "whose peers verify fine from here, that source's --peer-ca-file is not the CA that signs them)",
        "--peer-ca-file must hold the CA that signs every kube-apiserver serving certificate; on kubeadm "
        "clusters that is /etc/kubernetes/pki/ca.crt (not front-proxy-ca.crt). Then restart the other "
        "kube-apiservers unchanged: a source stops retrying a peer after 20 failures.",
        True,
    ),
    "peer_san_missing": (
        "the server's certificate is not valid for kubernetes.default.svc, the name peers verify",
        "Reissue the kube-apiserver serving certificate with the SAN kubernetes.default.svc "
        "(kubeadm certs renew apiserver does this).",
        True,
    ),
    "peer_unreachable": (
        "peers cannot connect to the address this server advertises",
        "Make the --advertise-address (or --peer-advertise-ip/--peer-advertise-port, set both or neither) "
        "reachable from every control-plane node. Then restart the other kube-apiservers unchanged: a source "
        "stops retrying a peer after 20 failures.",
        True,
    ),
    "proxy_client_rejected": (
        "a peer rejects this server's proxy client certificate",
        "Every kube-apiserver must trust the same front-proxy CA (--requestheader-client-ca-file) and allow the "
        "client CN (--requestheader-allowed-names, kubeadm: front-proxy-client). Restart the proxying server "
        "after fixing the peer: it stops retrying after 20 failures.",
        True,
    ),
    "discovery_incomplete": (
        "merged discovery lacks resources its peers serve",
        "The server has not synced its peers yet, or the sync fails; see the other findings for this server.",
        False,
    ),
    "proxy_404": (
        "a resource only newer servers serve is answered 404 instead of being proxied",
        "Controllers act on this wrong 404 (garbage collection, namespace deletion). See the other findings for "
        "this server; do not upgrade the next node until it is fixed.",
        False,
    ),
    "proxy_503": (
        "the proxied request failed with 503",
        "The destination is listed but not reachable (crashed, wrong address or TLS failure); see the other findings.",
        False,
    ),
    "proxy_not_counted": (
        "the request succeeded but apiserver_rerouted_request_total did not rise, so it was not proxied",
        "The server seems to serve the resource itself; check its --runtime-config.",
        False,
    ),
    "negative_control_failed": (
        "with x-kubernetes-peer-proxied: true the server still answered non-404, so the probe proves nothing",
        "The old server serves the probed resource itself; check the version pins and --runtime-config.",
        True,
    ),
    "proxy_errors_rising": (
        "peer proxy errors are rising",
        "See apiserver_peer_proxy_errors_total and apiserver_peer_discovery_sync_errors_total on that server.",
        False,
    ),
    "requestheader_rejected": (
        "the server rejects the front-proxy client certificate used for peer calls",
        "Check --requestheader-client-ca-file and --requestheader-allowed-names on that server.",
        False,
    ),
}


class Cause(NamedTuple):
    summary: str
    remedy: str
    permanent: bool


CAUSES = {key: Cause(*row) for key, row in _CAUSE_ROWS.items()}
PERMANENT_CAUSES = tuple(key for key, cause in CAUSES.items() if cause.permanent)


def missing_mvp_hooks(hooks):
    """The MVP post-start hooks not ``ok`` in ``hooks`` (name -> "ok"|"failed"); [] when the proxy runs."""
    hooks = hooks or {}
    missing = [h for h in MVP_HOOKS if hooks.get(h) != "ok"]
    if not any(hooks.get(h) == "ok" for h in PEER_DISCOVERY_HOOKS):
        missing.append(" or ".join(PEER_DISCOVERY_HOOKS))
    return missing


# urllib3's reason texts of transport failures, in the order they are told apart.
_TRANSPORT_CAUSES = (
    ("endpoint_refused", ("refused",)),
    ("endpoint_tls", ("certificate verify failed", "certificate_verify_failed", "hostname mismatch")),
    (
        "endpoint_unresolvable",
        (
            "name or service not known",
            "temporary failure in name resolution",
            "nodename nor servname",
            "no address associated",
            "failed to resolve",
        ),
    ),
    ("endpoint_timeout", ("timed out", "timeout")),
)


def classify_endpoint_error(status, error):
    """The cause of a failed request to an endpoint: who is at fault and whether waiting can help.

    ``status`` is the HTTP status (None for a transport error), ``error`` urllib3's reason text.
    """
    by_status = {401: "endpoint_unauthorized", 403: "endpoint_forbidden"}
    if status in by_status:
        return by_status[status]
    text = (error or "").lower()
    if status is None:
        for cause, needles in _TRANSPORT_CAUSES:
            if any(needle in text for needle in needles):
                return cause
    return "unreachable_endpoint"


def result(check, server, passed, detail, cause=None):
    return {"check": check, "server": server, "passed": bool(passed), "detail": detail, "cause": cause}


def roles(servers):
    """Split reachable servers into (old, new) by version; both empty when versions are unknown.

    Old is every server below the highest version (with three versions at once, the middle one must
    proxy too), new the servers at the highest.
    """
    # pre-releases order before their release (v1.38.0-rc.1 is older than v1.38.0)
    versions = {s["name"]: _version.key(s.get("version")) for s in servers if s.get("version")}
    known = [v for v in versions.values() if v]
    if not known:
        return [], []
    low, high = min(known), max(known)
    old = [name for name, v in versions.items() if v and v < high]
    new = [name for name, v in versions.items() if v == high]
    return (old, new) if low != high else (list(versions), [])


def proxy_sources(servers, mode, sources=None):
    """The servers that must proxy: ``sources`` when given, else the old ones in mixed mode, all in steady mode."""
    if sources is not None:
        return list(sources)
    old, new = roles(servers)
    return old if mode == "mixed" and new else [s["name"] for s in servers]


# ---------------------------------------------------------------- checks


def check_versions(servers, mode):
    results = []
    for s in servers:
        if s.get("error"):
            results.append(
                result(
                    "versions",
                    s["name"],
                    False,
                    f"{s['endpoint']}: {s['error']}",
                    s.get("error_kind") or "unreachable_endpoint",
                )
            )
    parsed = {s["name"]: _version.key(s.get("version")) for s in servers if s.get("version")}
    minors = sorted({v[1] for v in parsed.values() if v})
    versions = sorted({s.get("version") for s in servers if s.get("version")})
    if len(minors) > 1 and minors[-1] - minors[0] > 1:
        results.append(result("versions", None, False, f"versions {', '.join(versions)}", "version_skew"))
    if mode == "mixed" and len(versions) < 2:
        results.append(result("versions", None, False, f"mixed mode, but all servers run {versions}", "mode_mismatch"))
    if mode == "steady" and len(minors) > 1:
        results.append(
            result("versions", None, False, f"steady mode, but servers run {', '.join(versions)}", "mode_mismatch")
        )
    if not results:
        results.append(result("versions", None, True, f"versions {', '.join(versions)} ({mode})"))
    return results


def _address(server):
    return server["endpoint"].split("://", 1)[-1].rstrip("/")


def match_leases(servers, leases):
    """Map server name -> lease; plus unmatched leases.

    By what the cluster says before what the inventory says: the address the server advertises (its kube-apiserver
    Pod's, when known), then the address it was reached at, then its host name (the lease's kubernetes.io/hostname
    is the server's OS host name, not the inventory name).
    """
    by_address = {}
    for lease in leases:
        if lease.get("peer_address"):
            by_address.setdefault(lease["peer_address"], []).append(lease)
    matched, used = {}, set()
    for s in servers:
        candidates = (
            by_address.get(s.get("advertise_address") or "")
            or by_address.get(_address(s))
            or [lease for lease in leases if lease.get("hostname") and lease["hostname"] == s.get("hostname")]
        )
        if candidates:
            matched[s["name"]] = candidates[0]
            used.add(candidates[0]["name"])
    extra = [lease for lease in leases if lease["name"] not in used]
    return matched, extra


def check_identity_leases(servers, leases, judged=None):
    """``judged``: the servers whose gate must be on (None: all). A server outside it has not been
    enabled in this round yet (1.35, gate off by default) and nothing proxies to it, so a lease
    without a peer address is expected there."""
    results = []
    matched, extra = match_leases(servers, leases)
    owners = {}
    for s in servers:
        lease = matched.get(s["name"])
        if lease is None:
            results.append(
                result(
                    "identity_leases",
                    s["name"],
                    False,
                    f"no kube-apiserver identity lease advertises {s.get('advertise_address') or _address(s)} "
                    f"or has host name {s.get('hostname')}",
                    "lease_missing",
                )
            )
            continue
        owners.setdefault(lease["name"], []).append(s["name"])
        age = lease.get("renew_age")
        if s.get("error") and age is not None and age <= STALE_LEASE_SECONDS:
            # It renews its lease (every 10 s), so it runs: the path from here is what fails, not the server.
            results.append(
                result(
                    "identity_leases",
                    s["name"],
                    False,
                    f"{_address(s)} does not answer from here, but lease {lease['name']} was renewed {age:.0f}s ago",
                    "endpoint_unreachable_here",
                )
            )
        elif s.get("error"):
            # Since 1.35 a graceful shutdown deletes the lease: a lease left behind and not renewed means a crash.
            results.append(
                result(
                    "identity_leases",
                    s["name"],
                    False,
                    f"{_address(s)} does not answer but lease {lease['name']} is still there "
                    f"(renewed {age or 0:.0f}s ago)",
                    "crashed_peer",
                )
            )
        elif not lease.get("peer_address") and judged is not None and s["name"] not in judged:
            results.append(
                result(
                    "identity_leases",
                    s["name"],
                    True,
                    f"lease {lease['name']} has no peer address yet: not enabled in this round, nothing proxies to it",
                )
            )
        elif not lease.get("peer_address"):
            results.append(
                result(
                    "identity_leases",
                    s["name"],
                    False,
                    f"lease {lease['name']} has no {PEER_ADDRESS_ANNOTATION} annotation",
                    "gate_off",
                )
            )
        elif age is not None and age > STALE_LEASE_SECONDS:
            results.append(
                result(
                    "identity_leases", s["name"], False, f"lease {lease['name']} renewed {age:.0f}s ago", "crashed_peer"
                )
            )
        else:
            results.append(
                result(
                    "identity_leases",
                    s["name"],
                    True,
                    f"lease {lease['name']} (host {lease.get('hostname')}) renewed {age or 0:.0f}s ago",
                )
            )
    for name, names in owners.items():
        if len(names) > 1:
            results.append(
                result(
                    "identity_leases",
                    ",".join(names),
                    False,
                    f"{', '.join(names)} share lease {name}",
                    "duplicate_hostname",
                )
            )
    for lease in extra:
        age = lease.get("renew_age")
        if age is not None and age > STALE_LEASE_SECONDS:
            results.append(
                result(
                    "identity_leases",
                    lease.get("hostname") or lease["name"],
                    False,
                    f"lease {lease['name']} for {lease.get('peer_address') or 'no address'} renewed "
                    f"{age:.0f}s ago and no endpoint answers for it",
                    "crashed_peer",
                )
            )
        else:
            results.append(
                result(
                    "identity_leases",
                    lease.get("hostname") or lease["name"],
                    False,
                    f"lease {lease['name']} ({lease.get('peer_address')}) belongs to an API server that "
                    "is not among the checked endpoints",
                    "unreachable_endpoint",
                )
            )
    return results


def check_readiness(servers, mode, sources=None):
    results = []
    sources = proxy_sources(servers, mode, sources)
    for s in servers:
        if s.get("error"):
            continue
        if not s.get("ready"):
            failed = [h for h, state in (s.get("hooks") or {}).items() if state != "ok"]
            results.append(
                result(
                    "readiness",
                    s["name"],
                    False,
                    f"/readyz is not ok ({', '.join(failed) or 'no detail'})",
                    "unreachable_endpoint",
                )
            )
            continue
        missing = missing_mvp_hooks(s.get("hooks"))
        if s["name"] in sources and missing:
            results.append(
                result(
                    "readiness",
                    s["name"],
                    False,
                    f"MVP post-start hooks absent: {', '.join(missing)}",
                    "no_peer_ca_file",
                )
            )
        else:
            results.append(
                result(
                    "readiness",
                    s["name"],
                    True,
                    "ready, MVP hooks ok" if not missing else "ready (not a proxy source in this mode)",
                )
            )
    return results


def classify_tls_error(error):
    text = (error or "").lower()
    if "hostname mismatch" in text or "not valid for" in text or "doesn't match" in text:
        return "peer_san_missing"
    if "verify failed" in text or "unknown authority" in text or "unable to get local issuer" in text:
        return "peer_ca_mismatch"
    return "peer_unreachable"


def check_peer_tls(servers, peer_tls):
    """``peer_tls``: server name -> {"address", "error"} from a handshake as a peer would do it."""
    results = []
    for s in servers:
        probe = peer_tls.get(s["name"])
        if probe is None:
            continue
        if probe.get("error"):
            results.append(
                result(
                    "peer_tls",
                    s["name"],
                    False,
                    f"TLS to {probe['address']} as kubernetes.default.svc: {probe['error']}",
                    classify_tls_error(probe["error"]),
                )
            )
        else:
            where = f" from {', '.join(probe['from'])}" if probe.get("from") else ""
            results.append(
                result("peer_tls", s["name"], True, f"{probe['address']} verified as kubernetes.default.svc{where}")
            )
    return results


def check_requestheader(servers, requestheader):
    results = []
    for s in servers:
        status = requestheader.get(s["name"])
        if status is None:
            continue
        if status == 200:
            results.append(result("requestheader_trust", s["name"], True, "front-proxy client accepted"))
        else:
            results.append(
                result(
                    "requestheader_trust",
                    s["name"],
                    False,
                    f"peer discovery call as front-proxy client answered {status}",
                    "requestheader_rejected",
                )
            )
    return results


def sync_failure_cause(server, servers, leases, peer_tls):
    """Why a source's peer sync fails, from its metrics and what its peers show from here.

    Returns ``(cause, server to blame)``. A destination is blamed when it is wrong as seen from
    here (gate off, TLS or address); otherwise the source: when every peer verifies from here as
    ``kubernetes.default.svc`` against the cluster CA but the source's own discovery calls fail
    with 503, its ``--peer-ca-file`` is the likely fault.
    """
    matched, _extra = match_leases(servers, leases)
    for other in servers:
        if other["name"] == server["name"]:
            continue
        lease = matched.get(other["name"])
        if lease is not None and not lease.get("peer_address"):
            return "gate_off", other["name"]
        probe = peer_tls.get(other["name"]) or {}
        if probe.get("error"):
            return classify_tls_error(probe["error"]), other["name"]
    rerouted = (server.get("metrics") or {}).get("rerouted", [])
    discovery_codes = {r["code"] for r in rerouted if not r.get("resource") and r["code"] != "200" and r["value"] > 0}
    if discovery_codes & {"401", "403"}:
        return "proxy_client_rejected", server["name"]
    if "503" in discovery_codes and peer_tls:
        return "peer_ca_mismatch", server["name"]
    if "503" in discovery_codes:
        return "peer_unreachable", server["name"]
    return "discovery_incomplete", server["name"]


def check_discovery_merge(servers, leases, mode, peer_tls, sources=None):
    results = []
    sources = proxy_sources(servers, mode, sources)
    for s in servers:
        if s.get("error") or s["name"] not in sources or s.get("local") is None:
            continue
        if missing_mvp_hooks(s.get("hooks")):
            continue  # reported by check_readiness
        peers = [o["local"] for o in servers if o is not s and o.get("local") is not None]
        # Core (/api) is never peer-merged, so only named groups are expected in merged discovery.
        expected = {g for g in proxy_candidates(set(s["local"]), peers) if g[0]}
        missing = expected - set(s.get("merged") or ())
        if missing:
            shown = ", ".join(format_gvr(g) for g in sorted(missing)[:5])
            cause, blamed = sync_failure_cause(s, servers, leases, peer_tls)
            results.append(
                result(
                    "discovery_merge",
                    blamed,
                    False,
                    f"merged discovery of {s['name']} lacks {len(missing)} peer resource(s): {shown}",
                    cause,
                )
            )
        else:
            results.append(
                result(
                    "discovery_merge",
                    s["name"],
                    True,
                    f"merged discovery has all {len(expected)} resource(s) only peers serve",
                )
            )
    return results


def unprobed_results(plan):
    """A passing result, marked ``unprobed``, for each proxying server of ``plan`` (the collector's ``probe_plan``)
    that had nothing listable to be asked for: it proves nothing about proxying and says so."""
    results = []
    for name, entry in sorted((plan or {}).items()):
        if entry.get("probed"):
            continue
        peer_only = entry.get("peer_only") or []
        if peer_only:
            detail = (
                f"{len(peer_only)} resource(s) only its peers serve ({', '.join(peer_only[:5])}), none listable: "
                "proxying not probed"
            )
        else:
            detail = "nothing to proxy: it serves every resource its peers serve"
        results.append({**result("proxy_probe", name, True, detail), "unprobed": True, "peer_only": peer_only})
    return results


def check_proxy_probe(servers, probes, leases, peer_tls, plan=None):
    """``probes``: [{"server", "gvr", "status", "body", "status_local", "rerouted_before", "rerouted_after"}];
    ``plan``: what each proxying server had to be asked for (a server without probes gets an ``unprobed`` result)."""
    results = unprobed_results(plan)
    by_name = {s["name"]: s for s in servers}
    for p in probes:
        s = by_name[p["server"]]
        what = f"GET {format_gvr(p['gvr'])} on {p['server']}"
        if p["status"] == 404:
            if missing_mvp_hooks(s.get("hooks")):
                cause, blamed = "no_peer_ca_file", p["server"]
            else:
                cause, blamed = sync_failure_cause(s, servers, leases, peer_tls)
                cause = "proxy_404" if cause == "discovery_incomplete" else cause
            results.append(result("proxy_probe", blamed, False, f"{what}: 404 (not proxied)", cause))
        elif p["status"] == 503 or p["status"] is None:
            body = (p.get("body") or "")[:200]
            if "ip and port info" in body:
                cause, blamed = "crashed_peer", p["server"]
            else:
                cause, blamed = sync_failure_cause(s, servers, leases, peer_tls)
                cause = "proxy_503" if cause == "discovery_incomplete" else cause
            results.append(result("proxy_probe", blamed, False, f"{what}: {p['status']} {body}".strip(), cause))
        elif not 200 <= p["status"] < 300:
            results.append(
                result(
                    "proxy_probe",
                    p["server"],
                    False,
                    f"{what}: {p['status']}",
                    "proxy_client_rejected" if p["status"] in (401, 403) else "proxy_503",
                )
            )
        elif p["status_local"] != 404:
            results.append(
                result(
                    "proxy_probe",
                    p["server"],
                    False,
                    f"{what} with x-kubernetes-peer-proxied: {p['status_local']}",
                    "negative_control_failed",
                )
            )
        elif p["rerouted_after"] <= p["rerouted_before"] and p.get("metrics_error"):
            results.append(
                result(
                    "proxy_probe",
                    p["server"],
                    False,
                    f"{what}: 200, but the proxy counter could not be read ({p['metrics_error']})",
                    "metrics_unavailable",
                )
            )
        elif p["rerouted_after"] <= p["rerouted_before"]:
            results.append(
                result(
                    "proxy_probe",
                    p["server"],
                    False,
                    f"{what}: 200 but apiserver_rerouted_request_total stayed at {p['rerouted_before']:.0f}",
                    "proxy_not_counted",
                )
            )
        else:
            results.append(
                result(
                    "proxy_probe",
                    p["server"],
                    True,
                    f"{what}: 200 via a peer; locally 404; rerouted {p['rerouted_before']:.0f}->"
                    f"{p['rerouted_after']:.0f}",
                )
            )
    return results


def error_totals(server):
    m = server.get("metrics") or {}
    rerouted_503 = sum(r["value"] for r in m.get("rerouted", []) if r["code"] == "503")
    return rerouted_503 + sum(m.get("proxy_errors", {}).values())


def check_proxy_errors(servers, baseline, leases=(), peer_tls=None):
    """Errors must not rise between the first round (``baseline``: name -> total) and this one.

    A rise is explained like a failed discovery merge when the evidence allows (a source whose
    peer discovery calls get 503 while its peers verify fine from here has the wrong peer CA);
    otherwise it stays ``proxy_errors_rising``.
    """
    results = []
    for s in servers:
        if s.get("error") or s["name"] not in baseline:
            continue
        now = error_totals(s)
        if now > baseline[s["name"]]:
            cause, blamed = sync_failure_cause(s, servers, leases, peer_tls or {})
            if cause == "discovery_incomplete":
                cause, blamed = "proxy_errors_rising", s["name"]
            results.append(
                result(
                    "proxy_errors",
                    blamed,
                    False,
                    f"proxy errors of {s['name']} rose {baseline[s['name']]:.0f} -> {now:.0f}",
                    cause,
                )
            )
        else:
            results.append(result("proxy_errors", s["name"], True, f"no new proxy errors ({now:.0f} total)"))
    return results


def evaluate(evidence, mode, baseline=None, checks=CHECKS, sources=None):
    """Run the selected checks over one round of evidence; return the list of results."""
    servers, leases = evidence["servers"], evidence["leases"]
    peer_tls, probes = evidence.get("peer_tls", {}), evidence.get("probes", [])
    out = []
    if "versions" in checks:
        out += check_versions(servers, mode)
    if "identity_leases" in checks:
        judged = None
        if sources is not None:
            # Mixed: the old sources proxy to the new servers, so those must advertise a peer address too.
            judged = set(sources) | (set(roles(servers)[1]) if mode == "mixed" else set())
        out += check_identity_leases(servers, leases, judged)
    if "readiness" in checks:
        out += check_readiness(servers, mode, sources)
    if "peer_tls" in checks:
        out += check_peer_tls(servers, peer_tls)
    if "requestheader_trust" in checks:
        out += check_requestheader(servers, evidence.get("requestheader", {}))
    if "discovery_merge" in checks:
        out += check_discovery_merge(servers, leases, mode, peer_tls, sources)
    if "proxy_probe" in checks and mode == "mixed":
        out += check_proxy_probe(servers, probes, leases, peer_tls, evidence.get("probe_plan"))
    if "proxy_errors" in checks and baseline is not None:
        out += check_proxy_errors(servers, baseline, leases, peer_tls)
    return out


def outcome(results, mode, checks=CHECKS):
    """What a passing round proved: ``proxied`` (mixed: old servers answered through a peer), ``nothing_to_proxy``
    (mixed, but no old server lacks a resource its peers serve), ``not_probed`` (mixed, resources differ but none
    could be asked for, or the probe was not selected), ``steady``; ``failed`` when a check failed."""
    if any(not r["passed"] for r in results):
        return "failed"
    if mode != "mixed":
        return "steady"
    probed = [r for r in results if r["check"] == "proxy_probe"]
    if "proxy_probe" not in checks or not probed:
        return "not_probed"
    if any(not r.get("unprobed") for r in probed):
        return "proxied"
    return "not_probed" if any(r.get("peer_only") for r in probed) else "nothing_to_proxy"


def outcome_message(kind, servers, rounds):
    """The message of a passing gate; never 'proved' over probes that did not run."""
    old, new = roles([s for s in servers if not s.get("error")])
    by_name = {s["name"]: s.get("version") for s in servers}
    olds = ", ".join(sorted({str(by_name[n]) for n in old})) or "?"
    news = ", ".join(sorted({str(by_name[n]) for n in new})) or "?"
    if kind == "nothing_to_proxy":
        return (
            f"no resource differs between {olds} and {news}; configuration proved (hooks, peer TLS, discovery merge); "
            f"nothing to proxy ({rounds} consecutive round(s))"
        )
    if kind == "not_probed":
        return (
            f"configuration proved (hooks, peer TLS, discovery merge) between {olds} and {news}; proxying not probed: "
            f"no resource only the newer servers serve could be listed ({rounds} consecutive round(s))"
        )
    return f"MVP proved in {rounds} consecutive round(s) ({'mixed' if kind == 'proxied' else 'steady'} mode)"


def summarize(results):
    """One message naming each failing server and cause, with what to do."""
    failed = [r for r in results if not r["passed"]]
    if not failed:
        return "MVP proved: every check passed"
    lines, seen = [], set()
    for r in failed:
        summary, remedy, _permanent = CAUSES.get(r["cause"], Cause(r["cause"] or "check failed", "", False))
        key = (r["server"], r["cause"])
        if key in seen:
            continue
        seen.add(key)
        lines.append(f"{r['server'] or 'cluster'}: {summary} [{r['check']}: {r['detail']}]. {remedy}".strip())
    return "MVP not proved: " + " | ".join(lines)
