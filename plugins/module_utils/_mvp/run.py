# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Shared flow of apiserver_peers_info (one round) and mvp_check (rounds until proved or timeout)."""

from __future__ import annotations

import time

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _poll, _version
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._apiserver_http import ApiServerClient, Credentials
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._client import ClientError
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._errors import SkewsafeError
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.args import (
    normalize_endpoints,
    normalize_peer_dials,
    with_defaults,
)
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.collect import CollectError, Collector, public
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.evaluate import (
    CHECKS,
    PERMANENT_CAUSES,
    error_totals,
    evaluate,
    outcome,
    outcome_message,
    roles,
    summarize,
)

# Causes a restart explains for a while (a kube-apiserver restarting refuses connections), not for long.
PERMANENT_AFTER = {"endpoint_refused": 60.0}


class RunError(SkewsafeError):
    """Bad input or an environment that cannot work; nothing was checked."""


def build_collector(params):
    params = with_defaults(params)
    try:
        endpoints = normalize_endpoints(params.get("endpoints"))
        peer_dials = normalize_peer_dials(params.get("peer_dials"))
    except ValueError as exc:
        raise RunError(str(exc)) from exc
    if params["probe_limit"] < 1:
        raise RunError("probe_limit must be at least 1")
    if bool(params.get("front_proxy_client_cert")) != bool(params.get("front_proxy_client_key")):
        raise RunError("give front_proxy_client_cert and front_proxy_client_key together")
    try:
        creds = Credentials.from_params(params)
    except ClientError as exc:
        raise RunError(str(exc)) from exc
    timeout = params["request_timeout"]
    client = ApiServerClient(creds, timeout=timeout)
    front = None
    if params.get("front_proxy_client_cert"):
        front_creds = Credentials(
            ca_file=creds.ca_file,
            cert_file=params["front_proxy_client_cert"],
            key_file=params["front_proxy_client_key"],
        )
        front = ApiServerClient(front_creds, timeout=timeout)
    collector = Collector(
        client,
        peer_ca_file=params.get("peer_ca_file") or creds.ca_file,
        probe_limit=params["probe_limit"],
        front_proxy_client=front,
        peer_dials=peer_dials,
    )
    if not endpoints:
        if not creds.host:
            raise RunError("give endpoints, or host / a kubeconfig to discover them from the identity leases")
        try:
            endpoints = [
                {"url": url, "name": None, "hostname": None} for url in collector.discover_endpoints(creds.host)
            ]
        except CollectError as exc:
            raise RunError(str(exc)) from exc
        if not endpoints:
            raise RunError("no kube-apiserver identity lease advertises a peer address; give endpoints explicitly")
    return collector, endpoints


def resolve_mode(requested, evidence):
    if requested != "auto":
        return requested
    reachable = [s for s in evidence["servers"] if not s.get("error")]
    _old, new = roles(reachable)
    # Resources differ between minors, not between patch releases: a patch upgrade has nothing to proxy.
    minors = {v[1] for v in (_version.triple(s.get("version")) for s in reachable) if v}
    return "mixed" if new and len(minors) > 1 else "steady"


def check_until_proved(params, sleep=time.sleep, clock=time.monotonic, progress=None):
    """Poll rounds until ``success_threshold`` consecutive passes or ``wait_timeout``; return the result dict."""
    params = with_defaults(params)
    collector, endpoints = build_collector(params)
    checks = tuple(params.get("checks") or CHECKS)
    names = {e.get("name") for e in endpoints}
    unknown_sources = sorted(set(params.get("proxy_sources") or []) - names)
    if unknown_sources:
        raise RunError(
            f"proxy_sources {unknown_sources} are not names of endpoints ({', '.join(sorted(map(str, names)))})"
        )
    unknown = sorted(set(checks) - set(CHECKS))
    if unknown:
        raise RunError(f"unknown checks {unknown}; known: {', '.join(CHECKS)}")
    threshold = max(1, params["success_threshold"])
    mode = params["mode"]
    state = {"baseline": None, "permanent_streak": 0, "results": [], "evidence": None, "mode": mode}
    history = {}
    first_seen = {}  # cause -> elapsed seconds when it was first seen without a break (PERMANENT_AFTER)

    def one_round(attempt, elapsed):
        try:
            evidence = collector.collect(endpoints, "steady" if mode == "steady" else "mixed")
            round_mode = resolve_mode(mode, evidence)
            if round_mode != "mixed":
                evidence["probes"], evidence["probe_plan"] = [], {}
            if state["baseline"] is None:
                state["baseline"] = {s["name"]: error_totals(s) for s in evidence["servers"] if not s.get("error")}
            results = evaluate(
                evidence, round_mode, baseline=state["baseline"], checks=checks, sources=params.get("proxy_sources")
            )
            state["evidence"] = evidence
        except CollectError as exc:
            round_mode = mode
            results = [{"check": "versions", "server": None, "passed": False, "detail": str(exc), "cause": exc.kind}]
        passed = all(r["passed"] for r in results)
        for r in results:
            history.setdefault(r["check"], {"passed": 0, "failed": 0})["passed" if r["passed"] else "failed"] += 1
        state.update(results=results, mode=round_mode)
        causes = {r["cause"] for r in results if not r["passed"]}
        seconds = elapsed()
        for cause in list(first_seen):
            if cause not in causes:
                del first_seen[cause]
        for cause in causes & set(PERMANENT_AFTER):
            first_seen.setdefault(cause, seconds)
        lasting = {c for c, since in first_seen.items() if seconds - since >= PERMANENT_AFTER[c]}
        permanent = causes & (set(PERMANENT_CAUSES) | lasting)
        state["permanent_streak"] = state["permanent_streak"] + 1 if permanent else 0
        if progress:
            failed = [f"{r['server'] or '-'}:{r['cause']}" for r in results if not r["passed"]]
            progress(f"round {attempt} ({seconds:.1f}s): {'pass' if passed else 'fail ' + ', '.join(failed)}")
        return passed, params["fail_fast"] and state["permanent_streak"] >= 2

    started = clock()
    ended = _poll.poll(one_round, threshold, params["wait_timeout"], params["wait_sleep"], clock=clock, sleep=sleep)
    attempts, streak, results, evidence = ended.attempts, ended.streak, state["results"], state["evidence"]
    round_mode = state["mode"]
    failed = [r for r in results if not r["passed"]]
    kind = outcome(results, round_mode, checks) if streak >= threshold else "failed"
    if not failed and streak < threshold:
        message = f"MVP not proved: {streak} passing round(s) in a row before the timeout, {threshold} needed"
    else:
        message = summarize(results) if failed else outcome_message(kind, (evidence or {}).get("servers") or [], streak)
    return {
        "changed": False,
        "passed": not failed and streak >= threshold,
        "mode": round_mode,
        "outcome": kind,
        "msg": message,
        "checks": results,
        "failed_checks": failed,
        "history": history,
        "attempts": attempts,
        "elapsed": round(clock() - started, 3),
        "requests": collector.client.requests,
        "endpoints": [e["url"] for e in endpoints],
        "evidence": public(evidence) if evidence else None,
    }


def collect_once(params, mode="auto"):
    collector, endpoints = build_collector(params)
    try:
        evidence = collector.collect(endpoints, "mixed")
    except CollectError as exc:
        raise RunError(str(exc)) from exc
    actual = resolve_mode(mode, evidence)
    if actual != "mixed":
        evidence["probes"], evidence["probe_plan"] = [], {}
    return actual, public(evidence), collector.client.requests
