"""Markdown for bench.analyse's summary: goals first, then one section per run."""

from __future__ import annotations

import datetime


def _met(value) -> str:
    return {True: "yes", False: "**no**", None: "-"}[value]


def _lat(lat: dict) -> str:
    if not lat["n"]:
        return "-"
    return f"{lat['p50_ms']} / {lat['p99_ms']}"


def _time(epoch) -> str:
    return datetime.datetime.fromtimestamp(epoch, datetime.timezone.utc).strftime("%H:%M:%S") if epoch else "-"


def run_section(run: dict, title: str | None = None) -> list:
    load, lines = run["load"], [f"## {title or run['label']}", ""]
    windows = ", ".join(f"{_time(w['start'])}-{_time(w['end'])} UTC ({w['seconds']} s)" for w in load["mixed_windows"])
    seen = "; ".join(f"{t}: {' → '.join(v)}" for t, v in sorted(load["versions_seen"].items()))
    lines += [
        f"- load: {load['requests']} requests, {_time(load['start'])}-{_time(load['end'])} UTC "
        f"({(load['end'] or 0) - (load['start'] or 0):.0f} s)",
        f"- control plane mixed: {load['mixed_seconds']} s ({windows or 'never'})",
        f"- versions seen: {seen or '-'}",
        f"- **false 404s: {load['false_404_total']}**, other errors: {load['other_errors_total']}, "
        f"right 404s before any server served the new-only resource: "
        f"{load.get('unserved_404_total', 0)}, "
        f"not sent (all of the target's workers waiting on it): {load['not_sent_total']}",
        "",
    ]
    split = load.get("first_peer_split")
    if split:
        outside = sum(v["outside"] for v in split["targets"].values())
        lines.append(
            f"- false 404s outside the first-peer window ({split['window_s']:g} s after one of "
            f"{split['new_server_starts']} new-server first 200s): **{outside}**"
            + "".join(
                f"; {t} {v['inside']} inside, {v['outside']} outside" for t, v in sorted(split["targets"].items())
            )
        )
    lines += [
        "",
        "| target | kind | requests | false 404 (rate) | other errors | not sent | p50 / p99 ms, mixed "
        "| p50 / p99 ms, steady |",
        "|---|---|---:|---:|---:|---:|---:|---:|",
    ]
    for target, kinds in load["targets"].items():
        for kind, s in kinds.items():
            f404 = f"{s['false_404']} ({s['false_404_rate']:.1%})" if kind == "new-only" else "-"
            other = s["http_error"] + s["transport_error"]
            lines.append(
                f"| {target} | {kind} | {s['requests']} | {f404} | {other} | {s['not_sent']} | {_lat(s['latency_mixed'])} "
                f"| {_lat(s['latency_steady'])} |"
            )
    if load["top_errors"]:
        lines += ["", "Most frequent other errors:", ""]
        lines += [f"- {e['count']} x `{e['what']}`" for e in load["top_errors"]]
    lines += _upgrade(run.get("upgrade") or {}, bool(run.get("meta", {}).get("mvp_enabled_before")))
    return [*lines, ""]


def _upgrade(up: dict, mvp_before: bool = False) -> list:
    if not up:
        return []
    one_time = ""
    if mvp_before:
        one_time = (
            " MVP was enabled before the run (skewsafe.kubeadm.mvp_enable, not timed): this is the share on a cluster "
            "already running it, measured, nothing subtracted."
        )
    elif up.get("one_time_mvp_enable_seconds"):
        one_time = (
            f" The one-time MVP enablement (peer flags into kubeadm-config, every kube-apiserver re-rendered "
            f"and restarted) took {up['one_time_mvp_enable_seconds']} s; without it, as on a cluster already "
            f"running MVP, orchestration is **{up['orchestration_share_mvp_already_on']:.1%}**."
        )
    balancer = ""
    if up["by_category"].get("balancer"):  # the operator's tasks (here the lab's haproxy), counted as orchestration
        seconds = up["by_category"]["balancer"]
        balancer = (
            f" and the load-balancer tasks {seconds} s (the lab's haproxy; without them "
            f"{(up['orchestration_seconds'] - seconds) / up['total_seconds']:.1%})"
        )
    lines = [
        "",
        f"Upgrade: {up['total_seconds']} s wall{' (**playbook failed**)' if up['failed'] else ''}; "
        f"kubeadm/packages/kubelet/drain/API-server restart {up['external_seconds']} s, collection "
        f"orchestration {up['orchestration_seconds']} s (**{up['orchestration_share']:.1%}**), "
        f"of which MVP gates {up['mvp_gate_seconds']} s{balancer}.{one_time}",
        "",
        "| category | seconds |",
        "|---|---:|",
    ]
    lines += [f"| {k} | {v} |" for k, v in up["by_category"].items()]
    lines += [
        "",
        "Slowest tasks: "
        + "; ".join(f"{t['task']} [{', '.join(t['hosts'])}] {t['seconds']} s" for t in up["slowest_tasks"][:6]),
    ]
    return lines


def markdown(summary: dict, png: str | None) -> str:
    m = summary["machine"]
    lines = [
        f"# {summary['title']}",
        "",
        f"Generated {summary['generated']} on {m['cpus']} CPUs / {m['mem_gib']} GiB "
        f"(load average at analysis {m['load_avg'][0]:.1f}).",
        "",
    ]
    if summary["goals"]:
        lines += ["| goal | run | measured | met |", "|---|---|---|---|"]
        lines += [f"| {g['goal']} | {g['run']} | {g['measured']} | {_met(g['met'])} |" for g in summary["goals"]]
        lines.append("")
    if png:
        lines += [f"![timeline: requests over time per target, failures in red/orange/black]({png})", ""]
    totals: dict = {}
    for run in summary["runs"]:
        totals[run["label"]] = totals.get(run["label"], 0) + 1
    seen: dict = {}
    for run in summary["runs"]:  # BENCH_REPEATS: the runs of one configuration are numbered
        seen[run["label"]] = seen.get(run["label"], 0) + 1
        repeat = f" (run {seen[run['label']]} of {totals[run['label']]})" if totals[run["label"]] > 1 else ""
        lines += run_section(run, run["label"] + repeat)
    lines += [
        "Latency is over every answered request (any status) of that kind; 'mixed' is the time the",
        "direct API servers' /version polls disagreed. A false 404 is a 404 to a LIST of a resource",
        "that only the newer version serves, after some API server has answered 200 for it: the",
        "server neither served nor proxied it. Before that, 404 is the right answer and counted",
        "apart; the false-404 rate is over the new-only requests sent after that point.",
        "",
    ]
    return "\n".join(lines)
