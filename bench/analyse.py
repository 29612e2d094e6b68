"""Summarise load runs: JSON + Markdown + PNG timeline.

    python -m bench.analyse RUN_DIR [RUN_DIR...] --out bench/out/report [--micro micro.json]

A run directory holds ``requests.jsonl`` (bench.loadgen), and optionally ``meta.json``
(``label``, ``mvp``), ``transitions.json`` ([{t, event}]) and ``events.jsonl`` (the
bench_events Ansible callback: per-task timing and node transitions). Stdlib only, except
the PNG (matplotlib, skipped with a note when missing).
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import sys
from pathlib import Path

from . import events as ansible_events
from . import report
from .stats import median_range, summarize


def first_peer_window(path: Path) -> float | None:
    """The longest measured time from a new server's first 200 to an old server's first proxied 200."""
    data = _json(path)
    return data["summary"]["worst_old_server"]["gap_from_new_200"]["max"] if data else None


def load_run(run_dir: Path, window: float | None = None) -> dict:
    records = [json.loads(x) for x in (run_dir / "requests.jsonl").read_text().splitlines() if x.strip()]
    records.sort(key=lambda r: r["t"])
    meta = _json(run_dir / "meta.json") or {}
    marks = _json(run_dir / "transitions.json") or []
    upgrade = {}
    if (run_dir / "events.jsonl").exists():
        evs = ansible_events.load(run_dir / "events.jsonl")
        upgrade = ansible_events.timing(evs)
        marks = marks + ansible_events.transitions(evs)
    load = summarize(records, window)
    return {
        "label": meta.get("label") or run_dir.name,
        "dir": str(run_dir),
        "meta": meta,
        "load": load,
        "upgrade": upgrade,
        "transitions": sorted(marks, key=lambda m: m["t"]),
        # for the plot only, not written out
        "records": records,
        "windows": [(w["start"], w["end"]) for w in load["mixed_windows"]],
    }


def _json(path: Path):
    return json.loads(path.read_text()) if path.exists() else None


# The goals (#17), judged on the worst run of a configuration: (key, goal, limit, unit).
GOALS_MVP_ON = (
    ("errors_lb", "errors through the balancer", 0, ""),
    ("errors_lb_client_go_retries", "of those, GETs that lost their connection, which client-go retries", None, ""),
    ("false_404_lb_outside", "false 404s through the balancer outside the first-peer window", 0, ""),
    ("false_404_old_outside", "false 404s at the old servers outside the first-peer window", 0, ""),
    ("share_first_run", "collection's own share of the upgrade, first run (enables MVP)", 0.20, "%"),
    ("share_mvp_on", "same, cluster already running MVP", 0.12, "%"),
)
GOALS_MVP_OFF = (
    ("errors_lb", "errors through the balancer, MVP off (for comparison)", None, ""),
    ("errors_lb_client_go_retries", "of those, GETs that lost their connection, which client-go retries", None, ""),
    ("false_404_lb", "false 404s through the balancer, MVP off (for comparison)", None, ""),
    ("false_404_old", "false 404s at the API servers, MVP off (for comparison)", None, ""),
    ("share_first_run", "collection's own share of the upgrade, MVP off", None, "%"),
)


def headline(run: dict) -> dict:
    """The figures the goals are about, from one run."""
    load, up = run["load"], run.get("upgrade") or {}
    direct = set(load.get("direct_targets") or [])
    balancers = [t for t in load["targets"] if t not in direct]
    split = (load.get("first_peer_split") or {}).get("targets") or {}
    measured_on = run["meta"].get("mvp_enabled_before")
    estimate_on = up.get("orchestration_share_mvp_already_on") if up.get("one_time_mvp_enable_seconds") else None

    def false_404(targets, where=None):
        if where:
            return sum(split.get(t, {}).get(where, 0) for t in targets)
        return sum(load["targets"][t].get("new-only", {}).get("false_404", 0) for t in targets)

    return {
        "errors_lb": sum(
            s["http_error"] + s["transport_error"] for t in balancers for s in load["targets"][t].values()
        ),
        # client-go retries those GETs (bench.stats.client_go_retries), so a controller's read sees 1 s more, not an error
        "errors_lb_client_go_retries": sum(
            s["client_go_retries"] for t in balancers for s in load["targets"][t].values()
        ),
        "false_404_lb": false_404(balancers),
        "false_404_lb_outside": false_404(balancers, "outside") if load.get("first_peer_split") else None,
        "false_404_old": false_404(direct),
        "false_404_old_outside": false_404(direct, "outside") if load.get("first_peer_split") else None,
        # MVP enabled before the run: the share on a cluster already running it is measured, nothing subtracted
        "share_first_run": None if measured_on else up.get("orchestration_share"),
        "share_mvp_on": up.get("orchestration_share") if measured_on else estimate_on,
    }


def groups(runs: list) -> dict:
    """Runs of one configuration (same label: make bench's BENCH_REPEATS) together, in order."""
    out: dict = {}
    for run in runs:
        out.setdefault(run["label"], []).append(run)
    return out


def _figure(value, unit: str) -> str:
    if value is None:
        return "-"
    return f"{value:.1%}" if unit == "%" else f"{value:g}"


def goals(runs: list, micro: dict | None) -> list:
    """The issue's targets, each against what was measured (never assumed): median and range over the runs of a
    configuration, met only when the worst run meets it."""
    out = []
    for label, members in groups(runs).items():
        mvp = members[0]["meta"].get("mvp")
        table = GOALS_MVP_ON if mvp is True else GOALS_MVP_OFF if mvp is False else ()
        figures = [headline(r) for r in members]
        for key, goal, limit, unit in table:
            spread = median_range([f[key] for f in figures])
            if not spread["n"]:
                continue
            measured = _figure(spread["median"], unit)
            if spread["n"] > 1:
                measured += f" (median of {spread['n']} runs, range {_figure(spread['min'], unit)}-{_figure(spread['max'], unit)})"
            if key.endswith("_outside"):
                total = median_range([f[key.removesuffix("_outside")] for f in figures])
                window = members[0]["load"]["first_peer_split"]["window_s"]
                measured += f"; {_figure(total['median'], '')} in all, window {window:g} s"
            met = None if limit is None else (spread["max"] < limit if unit == "%" else spread["max"] <= limit)
            out.append({"goal": goal, "run": label, "measured": measured, "met": met, "spread": spread})
    for goal in (micro or {}).get("goals", []):
        out.append(goal)
    return out


def machine() -> dict:
    mem = next(
        (line.split()[1] for line in Path("/proc/meminfo").read_text().splitlines() if line.startswith("MemTotal")), "0"
    )
    return {"cpus": os.cpu_count(), "mem_gib": round(int(mem) / 2**20, 1), "load_avg": os.getloadavg()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.analyse", description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True, help="output prefix: <out>.json, .md, .png")
    parser.add_argument("--micro", type=Path, help="bench.micro JSON to fold into the goals")
    parser.add_argument("--title", default="MVP availability benchmark")
    parser.add_argument(
        "--first-peer",
        type=Path,
        default=Path(__file__).parent / "samples" / "first-peer.json",
        help="make bench-first-peer's first-peer.json: its longest window decides which false 404s are inside it",
    )
    args = parser.parse_args(argv)
    window = first_peer_window(args.first_peer)
    runs = [load_run(d, window) for d in args.runs]
    micro = _json(args.micro) if args.micro else None
    summary = {
        "title": args.title,
        "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": machine(),
        "goals": goals(runs, micro),
        "runs": [{k: v for k, v in run.items() if k not in ("records", "windows")} for run in runs],
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    png = Path(f"{args.out}.png")
    try:
        from .plot import timeline

        timeline(runs, png)
    except ImportError as exc:
        print(f"analyse: no PNG ({exc}); run with the plotting venv of bench/env.sh", file=sys.stderr)
        png = None
    Path(f"{args.out}.json").write_text(json.dumps(summary, indent=1) + "\n")
    Path(f"{args.out}.md").write_text(report.markdown(summary, png.name if png else None))
    print(f"analyse: wrote {args.out}.json/.md" + (f" and {png}" if png else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
