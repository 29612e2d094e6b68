"""Pure functions over load-generator records (stdlib and the collection's stdlib-only _version: runs in the plotting venv too)."""

from __future__ import annotations

import math

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._version import triple

OUTCOMES = ("ok", "false_404", "unserved_404", "http_error", "transport_error", "not_sent")

# urllib3's words for a connection that ended or was reset after the request went out (bench.loadgen error_text)
CONNECTION_LOST = ("Connection aborted.", "RemoteDisconnected", "ConnectionResetError", "Connection reset by peer")


def outcome(record: dict) -> str:
    """ok | false_404 | unserved_404 | http_error | transport_error | not_sent.

    not_sent: due while all of the target's workers hung. unserved_404: a 404 for a new-only
    resource before any target had answered 200 for it, which is the right answer
    (mark_unserved sets ``served``; records without it count as served).
    """
    if record.get("skipped"):
        return "not_sent"
    status = record.get("status")
    if status is None:
        return "transport_error"
    if 200 <= status < 300:
        return "ok"
    if status == 404 and record.get("kind") == "new-only":
        if not record.get("served", True):
            return "unserved_404"
        return "false_404"  # a LIST of a served resource never 404s: this server did not proxy it
    return "http_error"


def client_go_retries(record: dict) -> bool:
    """Would client-go have retried this failed request rather than return the error?

    The load generator sends only GETs, without retries. client-go retries a GET whose connection was reset, ended
    (EOF) or, over HTTP/2, was lost, after 1 s (k8s.io/client-go rest/request.go, ``request``: IsConnectionReset,
    IsProbableEOF, IsHTTP2ConnectionLost; the same in 0.35.4 to 0.37.2), and never a write. A refused connection, a
    timeout or an HTTP error is returned (a 429/5xx with Retry-After would be retried, which the records do not keep).
    """
    error = record.get("error") or ""
    return outcome(record) == "transport_error" and any(words in error for words in CONNECTION_LOST)


def mark_unserved(records: list) -> dict:
    """Set ``served`` on new-only records: had any target answered 200 for that resource by then?

    Before the first new API server is up nobody serves the new-only resources and 404 is the
    right answer. The first 200 for a resource (from any server, direct or through the balancer)
    is the observed proof that the cluster serves it; a /version answer is not, as a starting
    kube-apiserver reports its version before it serves its APIs. Records in time order.
    """
    versions = [r["version"] for r in records if r["kind"] == "version" and r.get("version")]
    newest = max(versions, key=lambda v: triple(v) or (0, 0, 0)) if versions else None
    served_from: dict = {}
    for rec in records:
        if rec["kind"] != "new-only":
            continue
        if rec.get("status") == 200 and rec["gvr"] not in served_from:
            served_from[rec["gvr"]] = rec["t"]
        rec["served"] = rec["gvr"] in served_from
    return {"newest": newest, "served_from": min(served_from.values()) if served_from else None}


def percentile(values: list, p: float) -> float | None:
    """Nearest-rank percentile; None for no data."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def mixed_windows(records: list) -> list:
    """[(start, end)] during which the direct targets' last known versions differed.

    Taken from the /version polls, so it is what the servers said, not what the playbook
    intended. A server that does not answer keeps its last known version.
    """
    known: dict = {}
    windows, start, last_t = [], None, None
    for rec in records:
        if rec["kind"] != "version" or not rec.get("version"):
            continue
        known[rec["target"]] = rec["version"]
        last_t = rec["t"]
        mixed = len(set(known.values())) > 1
        if mixed and start is None:
            start = rec["t"]
        elif not mixed and start is not None:
            windows.append((start, rec["t"]))
            start = None
    if start is not None:
        windows.append((start, last_t))
    return windows


def inside(t: float, windows: list) -> bool:
    return any(a <= t <= b for a, b in windows)


def versions_seen(records: list) -> dict:
    seen: dict = {}
    for rec in records:
        if rec["kind"] == "version" and rec.get("version"):
            seen.setdefault(rec["target"], [])
            if rec["version"] not in seen[rec["target"]]:
                seen[rec["target"]].append(rec["version"])
    return seen


def _latency(records: list) -> dict:
    values = [r["latency"] for r in records if r.get("status") is not None]
    p50, p99 = percentile(values, 50), percentile(values, 99)
    return {"n": len(values), "p50_ms": _ms(p50), "p99_ms": _ms(p99)}


def _ms(seconds):
    return None if seconds is None else round(seconds * 1000, 1)


def group_stats(records: list, windows: list) -> dict:
    """Counts and latency for one (target, kind) group, split into mixed and steady windows."""
    counts = dict.fromkeys(OUTCOMES, 0)
    retried = 0
    for rec in records:
        counts[outcome(rec)] += 1
        retried += client_go_retries(rec)
    total = len(records) - counts["not_sent"]
    served = total - counts["unserved_404"]
    mixed = [r for r in records if inside(r["t"], windows)]
    steady = [r for r in records if not inside(r["t"], windows)]
    return {
        "requests": total,
        **counts,
        "false_404_rate": round(counts["false_404"] / served, 4) if served else 0.0,
        "false_404_in_mixed": sum(1 for r in mixed if outcome(r) == "false_404"),
        "client_go_retries": retried,
        "latency_mixed": _latency(mixed),
        "latency_steady": _latency(steady),
    }


def top_errors(records: list, limit: int = 5) -> list:
    """The most frequent non-404 error texts, for 'other errors'."""
    counts: dict = {}
    for rec in records:
        if outcome(rec) in ("http_error", "transport_error"):
            key = f"{rec['target']} {rec.get('status') or '-'} {(rec.get('error') or '')[:90]}"
            counts[key] = counts.get(key, 0) + 1
    return [{"what": k, "count": v} for k, v in sorted(counts.items(), key=lambda kv: -kv[1])[:limit]]


def summarize(records: list, first_peer_window: float | None = None) -> dict:
    """Per target and kind (new-only, core), plus the mixed window, from one run's records; with
    ``first_peer_window`` (s) also the false 404s inside and outside that window (false_404_window_split)."""
    served = mark_unserved(records)
    requests = [r for r in records if r["kind"] != "version"]
    totals = dict.fromkeys(OUTCOMES, 0)
    for rec in requests:
        totals[outcome(rec)] += 1
    windows = mixed_windows(records)
    groups: dict = {}
    for rec in requests:
        groups.setdefault((rec["target"], rec["kind"]), []).append(rec)
    per_target: dict = {}
    for (target, kind), recs in sorted(groups.items()):
        per_target.setdefault(target, {})[kind] = group_stats(recs, windows)
    times = [r["t"] for r in records]
    return {
        "start": min(times) if times else None,
        "end": max(times) if times else None,
        "requests": sum(1 for r in requests if not r.get("skipped")),
        "not_sent_total": sum(1 for r in requests if r.get("skipped")),
        "mixed_windows": [{"start": a, "end": b, "seconds": round(b - a, 1)} for a, b in windows],
        "mixed_seconds": round(sum(b - a for a, b in windows), 1),
        "versions_seen": versions_seen(records),
        "targets": per_target,
        "newest_version": served["newest"],
        "new_only_served_from": served["served_from"],
        "false_404_total": totals["false_404"],
        "unserved_404_total": totals["unserved_404"],
        "other_errors_total": totals["http_error"] + totals["transport_error"],
        "top_errors": top_errors(requests),
        # the targets whose /version was polled: single API servers, not balancers
        "direct_targets": sorted({r["target"] for r in records if r["kind"] == "version"}),
        "first_peer_split": false_404_window_split(records, first_peer_window) if first_peer_window else None,
    }


def new_server_first_200s(records: list) -> list:
    """When each API server, once (re)started at the newest version, first answered a new-only LIST with 200.

    A start is a /version poll naming the newest version after one that did not (another version, or no answer:
    a restart at the same version removes the server's identity lease, so its peers learn it again). These are the
    moments bench.first_peer measures its window from (``gap_from_new_200``). Records in time order.
    """
    versions = [r["version"] for r in records if r["kind"] == "version" and r.get("version")]
    if not versions:
        return []
    newest = max(versions, key=lambda v: triple(v) or (0, 0, 0))
    waiting: dict = {}
    firsts = []
    for rec in records:
        target = rec["target"]
        if rec["kind"] == "version":
            is_new = rec.get("version") == newest
            if is_new and waiting.get(target) is None:
                waiting[target] = True
            elif not is_new:
                waiting[target] = None
        elif rec["kind"] == "new-only" and rec.get("status") == 200 and waiting.get(target):
            firsts.append(rec["t"])
            waiting[target] = False
    return firsts


def false_404_window_split(records: list, window: float) -> dict:
    """Per target, false 404s within ``window`` s after some new server's first 200, or the run's first 200 for a
    new-only resource from any target (the first-peer window bench.first_peer measured), and outside it.
    ``mark_unserved`` must have run."""
    starts = new_server_first_200s(records)
    # The very first 200 may come through a balancer before the new server's own poller gets one.
    first = next((r["t"] for r in records if r["kind"] == "new-only" and r.get("status") == 200), None)
    starts = sorted({*starts, first} - {None})
    split: dict = {}
    for rec in records:
        if rec["kind"] != "new-only" or outcome(rec) != "false_404":
            continue
        where = "inside" if any(0 <= rec["t"] - s <= window for s in starts) else "outside"
        split.setdefault(rec["target"], {"inside": 0, "outside": 0})[where] += 1
    return {"window_s": window, "new_server_starts": len(starts), "targets": split}


def median_range(values: list) -> dict:
    """Median (mean of the middle two for an even count), min and max; None for no data."""
    values = sorted(v for v in values if v is not None)
    if not values:
        return {"n": 0, "median": None, "min": None, "max": None}
    mid = len(values) // 2
    median = values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2
    return {"n": len(values), "median": median, "min": values[0], "max": values[-1]}
