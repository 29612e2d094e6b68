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
from .stats import summarize


def load_run(run_dir: Path) -> dict:
    records = [json.loads(x) for x in (run_dir / "requests.jsonl").read_text().splitlines() if x.strip()]
    records.sort(key=lambda r: r["t"])
    meta = _json(run_dir / "meta.json") or {}
    marks = _json(run_dir / "transitions.json") or []
    upgrade = {}
    if (run_dir / "events.jsonl").exists():
        evs = ansible_events.load(run_dir / "events.jsonl")
        upgrade = ansible_events.timing(evs)
        marks = marks + ansible_events.transitions(evs)
    load = summarize(records)
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


def goals(runs: list, micro: dict | None) -> list:
    """The issue's targets, each against what was measured (never assumed)."""
    out = []
    for run in runs:
        mvp = run["meta"].get("mvp")
        n = run["load"]["false_404_total"]
        if mvp is True:
            out.append({"goal": "0 false 404s with MVP", "run": run["label"], "measured": n, "met": n == 0})
        elif mvp is False:
            out.append(
                {"goal": "false 404s without MVP (for comparison)", "run": run["label"], "measured": n, "met": None}
            )
        share = run["upgrade"].get("orchestration_share")
        if share is not None:
            out.append(
                {
                    "goal": "orchestration overhead < 15% of upgrade time",
                    "run": run["label"],
                    "measured": f"{share:.1%}",
                    "met": share < 0.15,
                }
            )
        again = run["upgrade"].get("orchestration_share_mvp_already_on")
        if mvp is True and again is not None and run["upgrade"].get("one_time_mvp_enable_seconds"):
            out.append(
                {
                    "goal": "orchestration overhead < 15%, cluster already running MVP "
                    "(this run less the one-time enable_mvp)",
                    "run": run["label"],
                    "measured": f"{again:.1%}",
                    "met": again < 0.15,
                }
            )
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
    args = parser.parse_args(argv)
    runs = [load_run(d) for d in args.runs]
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
