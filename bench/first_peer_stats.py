"""Pure parts of the first-peer window benchmark (bench/first_peer.py): no network, no harness.

A *poll* is ``(t_sent, t_received, status)`` in epoch seconds, status ``None`` for a transport
error. A *start* record (one start of the new kube-apiserver, written by the runner) holds the
polls reduced to what the statistics need; see ``reduce_polls`` and ``derive``.

The retry model is the one of k8s.io/apiserver pkg/util/peerproxy (v0.36.5, v0.37.2): one failed
peer-discovery sync is re-queued with the workqueue's DefaultTypedControllerRateLimiter, whose
per-item part waits ``5 ms * 2**n`` after the n-th failure (n from 0), up to 20 failures.
"""

from __future__ import annotations

import math
import re
import statistics
from datetime import datetime

BASE_DELAY = 0.005  # client-go workqueue DefaultTypedControllerRateLimiter: ItemExponentialFailure base
MAX_RETRIES = 20  # peerproxy maxRetries


# ------------------------------------------------------------------ the retry model
def attempt_offsets(retries: int = MAX_RETRIES, base: float = BASE_DELAY) -> list[float]:
    """Offsets from the first (failed) sync at which the worker syncs again, without the syncs' own time.

    Attempt 0 is the sync the lease's Add event queues; after the n-th failure (n = 0, 1, ...) the key
    waits ``base * 2**n``, so attempt k runs at ``base * (2**k - 1)``; after ``retries`` failures the key
    is dropped (no attempt ``retries + 1``).
    """
    return [base * (2**k - 1) for k in range(retries + 1)]


def next_attempt(failures: list, base: float = BASE_DELAY) -> float | None:
    """When the worker syncs again after the failures it logged: the last one + ``base * 2**(n - 1)``.

    Each logged time is the end of a failed sync; a sync also fetches every other peer's discovery, so
    the gaps between log lines are the back-off plus that sync's own duration, not the back-off alone.
    """
    if not failures:
        return None
    return failures[-1] + base * 2 ** (len(failures) - 1)


def parse_gvr(text: str) -> tuple:
    """'group/version/resource' or 'version/resource' (core) as (group, version, resource)."""
    parts = text.split("/")
    if len(parts) == 2:
        return ("", parts[0], parts[1])
    if len(parts) == 3 and all(parts):
        return tuple(parts)
    raise ValueError(f"{text!r} is not group/version/resource")


# ------------------------------------------------------------------ polls
def first_status(polls: list, status: int = 200, after: float | None = None) -> dict | None:
    """The first poll answered ``status`` (received after ``after``), bracketed by the poll before it.

    ``t`` is when that answer arrived, ``lo`` when the previous poll (another answer) was sent: the
    change happened between the two. None if no poll got ``status``.
    """
    previous = None
    for poll in polls:
        t_sent, t_received, got = poll
        if after is not None and t_received < after:
            previous = poll
            continue
        if got == status:
            lo = previous[0] if previous is not None else t_sent
            return {"t": t_received, "lo": lo}
        previous = poll
    return None


def runs(polls: list) -> list:
    """Polls collapsed into runs of one status: ``[status, first t_received, last t_received, count]``."""
    out = []
    for _sent, received, status in polls:
        if out and out[-1][0] == status:
            out[-1][2] = received
            out[-1][3] += 1
        else:
            out.append([status, received, received, 1])
    return out


def after_first_200(polls: list) -> dict:
    """What a client polling one endpoint saw once it had a 200: 404s after it (false 404s), other errors."""
    first = first_status(polls, 200)
    if first is None:
        return {"first_200": None, "false_404": 0, "false_404_window": 0.0, "other_errors": 0, "requests": len(polls)}
    later = [p for p in polls if p[1] > first["t"]]
    false_404 = [p for p in later if p[2] == 404]
    window = (false_404[-1][1] - first["t"]) if false_404 else 0.0
    other = [p for p in later if p[2] not in (200, 404)]
    return {
        "first_200": first["t"],
        "false_404": len(false_404),
        "false_404_window": round(window, 3),
        "other_errors": len(other),
        "requests": len(polls),
    }


# ------------------------------------------------------------------ kube-apiserver logs
KLOG = re.compile(r"^[IWEF](\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{6})\s+\d+ \S+\] (.*)$")
SYNC_ERROR = "Error syncing discovery for peer lease "
DROPPED = "Dropping lease "


def klog_time(line: str, year: int) -> float | None:
    """Epoch seconds of a klog header (local time, as klog writes it); None if the line has no header."""
    match = KLOG.match(line)
    if not match:
        return None
    month, day, hour, minute, second, micro = (int(x) for x in match.groups()[:6])
    return datetime(year, month, day, hour, minute, second, micro).timestamp()


def sync_failures(log_text: str, lease: str, since: float, until: float, year: int) -> dict:
    """The peer-discovery sync failures (and a drop) a kube-apiserver logged for one peer lease in a window.

    ``reasons`` counts the error's last part ("missing port in address": no endpoint lease yet).
    """
    failures, dropped, reasons = [], None, {}
    for line in log_text.splitlines():
        match = KLOG.match(line)
        if not match:
            continue
        message = match.group(7)
        if not (message.startswith(SYNC_ERROR + lease) or message.startswith(DROPPED + lease)):
            continue
        t = klog_time(line, year)
        if t is None or not since <= t <= until:
            continue
        if message.startswith(DROPPED):
            dropped = t
        else:
            failures.append(t)
            reason = message.rsplit(": ", 1)[-1][:80]
            reasons[reason] = reasons.get(reason, 0) + 1
    return {"failures": failures, "dropped": dropped, "reasons": reasons}


# ------------------------------------------------------------------ statistics
def percentile(values: list, p: float) -> float | None:
    """Nearest-rank percentile (as bench.stats); None for no data."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def distribution(values: list) -> dict:
    values = [v for v in values if v is not None]
    if not values:
        return {"n": 0, "min": None, "median": None, "p90": None, "max": None}
    return {
        "n": len(values),
        "min": round(min(values), 3),
        "median": round(statistics.median(values), 3),
        "p90": round(percentile(values, 90), 3),
        "max": round(max(values), 3),
    }


def pearson(xs: list, ys: list) -> float | None:
    pairs = [(x, y) for x, y in zip(xs, ys) if x is not None and y is not None]
    if len(pairs) < 3:
        return None
    mx = statistics.fmean(x for x, _ in pairs)
    my = statistics.fmean(y for _, y in pairs)
    sxy = sum((x - mx) * (y - my) for x, y in pairs)
    sxx = sum((x - mx) ** 2 for x, _ in pairs)
    syy = sum((y - my) ** 2 for _, y in pairs)
    if sxx == 0 or syy == 0:
        return None
    return round(sxy / math.sqrt(sxx * syy), 3)


def ranks(values: list) -> list:
    """1-based ranks, ties get their average rank."""
    order = sorted(range(len(values)), key=lambda i: values[i])
    out = [0.0] * len(values)
    i = 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and values[order[j + 1]] == values[order[i]]:
            j += 1
        for k in range(i, j + 1):
            out[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return out


def spearman(xs: list, ys: list) -> float | None:
    pairs = [(x, y) for x, y in zip(xs, ys) if x is not None and y is not None]
    if len(pairs) < 3:
        return None
    return pearson(ranks([x for x, _ in pairs]), ranks([y for _, y in pairs]))


# ------------------------------------------------------------------ one start
def _minus(a, b):
    return None if a is None or b is None else round(a - b, 3)


def derive(start: dict, old_names: list) -> dict:
    """The figures of one start from its times (epoch seconds; None = never seen).

    ``start`` holds ``spawned``, ``lease`` (the identity lease first seen), ``new_200`` (the new server's
    first 200 for the new-only resource), ``ready`` (its first /readyz 200), ``old_200`` {name: first
    proxied 200}, and per old server ``failures`` (sync failures it logged for the new server's lease).
    """
    out = {
        "startup_s": _minus(start.get("ready"), start["spawned"]),
        "lease_after_spawn_s": _minus(start.get("lease"), start["spawned"]),
        "new_200_after_spawn_s": _minus(start.get("new_200"), start["spawned"]),
        "lease_to_ready_s": _minus(start.get("ready"), start.get("lease")),
        "gap_from_new_200": {},
        "gap_from_ready": {},
        "predicted_gap_from_ready": {},
        "model_error": {},
        "failed_attempts": {},
    }
    for name in old_names:
        old = (start.get("old_200") or {}).get(name)
        out["gap_from_new_200"][name] = _minus(old, start.get("new_200"))
        out["gap_from_ready"][name] = _minus(old, start.get("ready"))
        failures = ((start.get("logs") or {}).get(name) or {}).get("failures") or []
        out["failed_attempts"][name] = len(failures)
        # The attempt after the last logged failure is the one that found the endpoint lease (the new server
        # writes it once its own /readyz answers 200) and fetched the new server's discovery.
        predicted = next_attempt(failures)
        out["predicted_gap_from_ready"][name] = _minus(predicted, start.get("ready"))
        out["model_error"][name] = _minus(old, predicted)
    gaps = [g for g in out["gap_from_ready"].values() if g is not None]
    out["worst_gap_from_ready"] = max(gaps) if len(gaps) == len(old_names) else None
    gaps = [g for g in out["gap_from_new_200"].values() if g is not None]
    out["worst_gap_from_new_200"] = max(gaps) if len(gaps) == len(old_names) else None
    # The back-off before the successful attempt is as long as all earlier ones together, so the gap after
    # ready stays below the time from the identity lease to ready (plus that attempt's own duration).
    worst, lead = out["worst_gap_from_ready"], out["lease_to_ready_s"]
    out["gap_over_lease_to_ready"] = round(worst / lead, 3) if worst is not None and lead else None
    synced = [(start.get("old_200") or {}).get(name) for name in old_names]
    if None in synced or start.get("ready") is None:
        out["old_sync_spread_s"] = None
        out["balancer_window_model"] = {"readyz": None, "gate": None}
    else:
        # A round-robin balancer answers 200 and 404 by turns while some server in it serves the resource and
        # another does not: admitting the new server at its /readyz, from then (or the first old server's
        # sync) to the last old server's sync; admitting it after the gate, between the old servers' syncs.
        out["old_sync_spread_s"] = round(max(synced) - min(synced), 3)
        out["balancer_window_model"] = {
            "readyz": round(max(0.0, max(synced) - min(*synced, start["ready"])), 3),
            "gate": out["old_sync_spread_s"],
        }
    return out


def summarize(starts: list, old_names: list, hidden_by: tuple = (2.0, 4.0, 10.0)) -> dict:
    """Distributions per old server over every start, correlations with the start-up time, balancer figures."""
    derived = [s["derived"] for s in starts]
    per_old = {}
    for name in old_names:
        from_new = [d["gap_from_new_200"][name] for d in derived]
        from_ready = [d["gap_from_ready"][name] for d in derived]
        per_old[name] = {
            "gap_from_new_200": distribution(from_new),
            "gap_from_ready": distribution(from_ready),
            "never_synced": sum(1 for g in from_ready if g is None),
            "failed_attempts": distribution([d["failed_attempts"][name] for d in derived]),
            # measured first proxied 200 minus the attempt after the last logged failure: that sync's own
            # duration plus the poll interval, if the model holds
            "model_error": distribution([d["model_error"][name] for d in derived]),
        }
    startup = [d["startup_s"] for d in derived]
    lease_to_ready = [d["lease_to_ready_s"] for d in derived]
    worst = [d["worst_gap_from_ready"] for d in derived]
    summary = {
        "starts": len(starts),
        "per_old_server": per_old,
        "worst_old_server": {
            "gap_from_new_200": distribution([d["worst_gap_from_new_200"] for d in derived]),
            "gap_from_ready": distribution(worst),
        },
        "old_sync_spread_s": distribution([d["old_sync_spread_s"] for d in derived]),
        "balancer_window_model": {
            lb: distribution([d["balancer_window_model"][lb] for d in derived]) for lb in ("readyz", "gate")
        },
        "gap_over_lease_to_ready": distribution([d["gap_over_lease_to_ready"] for d in derived]),
        "startup_s": distribution(startup),
        "lease_to_ready_s": distribution(lease_to_ready),
        "new_200_before_ready_s": distribution(
            [_minus(s.get("ready"), s.get("new_200")) for s in starts if s.get("ready") and s.get("new_200")]
        ),
        "correlation": {
            "startup_vs_worst_gap": {"pearson": pearson(startup, worst), "spearman": spearman(startup, worst)},
            "lease_to_ready_vs_worst_gap": {
                "pearson": pearson(lease_to_ready, worst),
                "spearman": spearman(lease_to_ready, worst),
            },
        },
        # A balancer that adds the new server d seconds after its /readyz turns 200 (health-check interval x
        # rise) hides a start's window when every old server synced within d.
        "hidden_by_admission_delay": {f"{d:g}s": sum(1 for w in worst if w is not None and w <= d) for d in hidden_by},
    }
    by_quota = {}
    for s, d in zip(starts, derived):
        by_quota.setdefault(s.get("cpu_quota") or "none", []).append(d)
    summary["by_cpu_quota"] = {
        str(q): {
            "starts": len(ds),
            "startup_s": distribution([d["startup_s"] for d in ds]),
            "worst_gap_from_ready": distribution([d["worst_gap_from_ready"] for d in ds]),
        }
        # unthrottled first, then from the most CPU to the least
        for q, ds in sorted(by_quota.items(), key=lambda kv: (kv[0] != "none", -float(kv[0]) if kv[0] != "none" else 0))
    }
    lbs = {}
    for s in starts:
        for lb, view in (s.get("balancers") or {}).items():
            lbs.setdefault(lb, []).append(view)
    summary["balancers"] = {
        lb: {
            "starts": len(views),
            "starts_with_false_404": sum(1 for v in views if v["false_404"]),
            "false_404": sum(v["false_404"] for v in views),
            "requests": sum(v["requests"] for v in views),
            "false_404_window": distribution([v["false_404_window"] for v in views]),
            "other_errors": sum(v["other_errors"] for v in views),
        }
        for lb, views in lbs.items()
    }
    loads = [s.get("load") for s in starts if s.get("load")]
    summary["load_1m"] = distribution([load[0] for load in loads])
    return summary


# ------------------------------------------------------------------ Markdown
def _f(value, unit: str = " s") -> str:
    return "-" if value is None else f"{value:g}{unit}"


def _row(label: str, dist: dict, extra: str = "") -> str:
    cells = [_f(dist[k]) for k in ("min", "median", "p90", "max")]
    return f"| {label} | {dist['n']} | " + " | ".join(cells) + f" |{extra}"


def markdown(result: dict) -> str:
    meta, summary = result["meta"], result["summary"]
    old_names = meta["old_servers"]
    lines = [
        f"# First-peer 404 window ({meta['started_utc']}, {meta['cpus']} CPUs)",
        "",
        f"Harness: {', '.join(old_names)} at v{meta['old']} (MVP on: `--peer-ca-file`), {meta['new_server']} at "
        f"v{meta['new']} started {summary['starts']} times (stopped with SIGTERM between starts, which deletes its "
        f"identity lease, as the kubelet stops the old static Pod in `kubeadm upgrade apply`"
        + (
            f"; before each start it ran at v{meta['old']} and was rendered again by v{meta['new']}'s kubeadm"
            if meta.get("upgrade")
            else ""
        )
        + "). New-only resource: "
        f"`{meta['gvr']}`; every {meta['interval'] * 1000:g} ms each server is asked directly. CPU quota of the new "
        f"server per start: {', '.join(str(q) for q in meta['cpu_quotas'])} (% of one CPU; none = unthrottled). "
        f"Load average (1 min) at the starts: median {_f(summary['load_1m']['median'], '')}, "
        f"range {_f(summary['load_1m']['min'], '')} to {_f(summary['load_1m']['max'], '')}. "
        f"`uptime` before: {meta.get('uptime_before', '-')}; after: {meta.get('uptime_after', '-')}. "
        f"Command: `{meta['command']}` ({meta['wall_s']:.0f} s).",
        "",
        "Time until each old server first answers the new-only resource with 200 (proxied):",
        "",
        "| from | n | min | median | p90 | max |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for name in old_names:
        per = summary["per_old_server"][name]
        lines.append(_row(f"{name}: new server's first 200", per["gap_from_new_200"]))
        lines.append(_row(f"{name}: new server's /readyz 200", per["gap_from_ready"]))
    worst = summary["worst_old_server"]
    lines.append(_row("worst old server: new server's first 200", worst["gap_from_new_200"]))
    lines.append(_row("worst old server: new server's /readyz 200", worst["gap_from_ready"]))
    lines.append(_row("last old server: first old server's proxied 200 (spread)", summary["old_sync_spread_s"]))
    lines += [
        "",
        "| new server | n | min | median | p90 | max |",
        "|---|---:|---:|---:|---:|---:|",
        _row("process start to /readyz 200 (start-up)", summary["startup_s"]),
        _row("identity lease seen to /readyz 200", summary["lease_to_ready_s"]),
        _row("first 200 for the new-only resource before /readyz 200", summary["new_200_before_ready_s"]),
        "",
    ]
    corr = summary["correlation"]
    lines.append(
        "Correlation with the worst old server's gap (from /readyz): start-up time Pearson "
        f"{_f(corr['startup_vs_worst_gap']['pearson'], '')}, Spearman {_f(corr['startup_vs_worst_gap']['spearman'], '')}; "
        f"identity lease to ready Pearson {_f(corr['lease_to_ready_vs_worst_gap']['pearson'], '')}, "
        f"Spearman {_f(corr['lease_to_ready_vs_worst_gap']['spearman'], '')}."
    )
    ratio = summary["gap_over_lease_to_ready"]
    lines.append(
        "Worst gap from /readyz divided by the time from the identity lease to /readyz: "
        f"median {_f(ratio['median'], '')}, p90 {_f(ratio['p90'], '')}, max {_f(ratio['max'], '')}."
    )
    model = [summary["per_old_server"][n]["model_error"] for n in old_names]
    lines.append(
        "Retry model (the attempt after the n-th logged failure runs 5 ms * 2^(n-1) after it): first proxied 200 "
        "minus that attempt "
        + "; ".join(
            f"{n} min {_f(m['min'])}, median {_f(m['median'])}, max {_f(m['max'])} (n {m['n']})"
            for n, m in zip(old_names, model)
        )
        + ". Failed attempts logged per start: "
        + "; ".join(
            f"{n} median {_f(summary['per_old_server'][n]['failed_attempts']['median'], '')}, max "
            f"{_f(summary['per_old_server'][n]['failed_attempts']['max'], '')}"
            for n in old_names
        )
        + "."
    )
    hidden = summary["hidden_by_admission_delay"]
    lines.append(
        "Starts whose window a balancer would hide by adding the new server this long after its /readyz: "
        + ", ".join(f"{d}: {c} of {summary['starts']}" for d, c in hidden.items())
        + "."
    )
    lines += [
        "",
        "| CPU quota | starts | start-up median (max) | worst gap from /readyz median (max) |",
        "|---|---:|---:|---:|",
    ]
    for quota, q in summary["by_cpu_quota"].items():
        lines.append(
            f"| {quota} | {q['starts']} | {_f(q['startup_s']['median'])} ({_f(q['startup_s']['max'])}) | "
            f"{_f(q['worst_gap_from_ready']['median'])} ({_f(q['worst_gap_from_ready']['max'])}) |"
        )
    if summary["balancers"]:
        lines += [
            "",
            f"Through two round-robin TCP balancers over all three servers, polled every {meta['lb_interval'] * 1000:g} ms "
            "with a new connection per request:",
            "",
            "| balancer | starts | starts with a false 404 | false 404s / requests | window median (max) | other errors |",
            "|---|---:|---:|---:|---:|---:|",
        ]
        labels = meta.get("balancer_labels", {})
        for lb, b in summary["balancers"].items():
            lines.append(
                f"| {labels.get(lb, lb)} | {b['starts']} | {b['starts_with_false_404']} | {b['false_404']} / {b['requests']} | "
                f"{_f(b['false_404_window']['median'])} ({_f(b['false_404_window']['max'])}) | {b['other_errors']} |"
            )
        model = summary["balancer_window_model"]
        lines += [
            "",
            "The same windows from the direct polls (a balancer answers 404 and 200 by turns while one server in it "
            "serves the resource and another does not): admitted at /readyz "
            f"median {_f(model['readyz']['median'])}, p90 {_f(model['readyz']['p90'])}, max {_f(model['readyz']['max'])}; "
            f"admitted after the gate median {_f(model['gate']['median'])}, p90 {_f(model['gate']['p90'])}, "
            f"max {_f(model['gate']['max'])} (n {model['gate']['n']}).",
        ]
    starts = result.get("starts") or []
    if starts:
        lines += [
            "",
            "Per start (seconds; gaps from the new server's /readyz 200; attempts = failed syncs each old server "
            "logged; false 404s through the balancers that admit cp-3 at /readyz and after the gate):",
            "",
            "| # | CPU quota | load | start-up | lease to ready | "
            + " | ".join(f"gap {n}" for n in old_names)
            + " | attempts | spread | false 404s readyz / gate |",
            "|---:|---|---:|---:|---:|" + "---:|" * len(old_names) + "---:|---:|---:|",
        ]
        for s in starts:
            d = s["derived"]
            lbs = s.get("balancers") or {}
            lb = " / ".join(str(lbs[k]["false_404"]) if k in lbs else "-" for k in ("readyz", "gate"))
            attempts = "/".join(str(d["failed_attempts"][n]) for n in old_names)
            load = s.get("load") or [None]
            lines.append(
                f"| {s.get('index', '')} | {s.get('cpu_quota')} | {_f(load[0] and round(load[0], 1), '')} | "
                f"{_f(d['startup_s'], '')} | {_f(d['lease_to_ready_s'], '')} | "
                + " | ".join(_f(d["gap_from_ready"][n], "") for n in old_names)
                + f" | {attempts} | {_f(d['old_sync_spread_s'], '')} | {lb} |"
            )
    lines.append("")
    return "\n".join(lines)
