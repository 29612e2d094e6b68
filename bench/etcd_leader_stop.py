"""Summarise bench/etcd_leader_stop.sh: per trial, how the API servers answered while the etcd leader stopped.

python -m bench.etcd_leader_stop DIR prints a Markdown table. Each trial directory (<n>-<mode>) holds the
loadgen's requests.jsonl and stop.txt ("<start epoch> <node> <grace>" then "<end epoch>"). Only requests
sent from 2 s before the stop to 20 s after it count; /version polls do not.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench.stats import outcome

BEFORE, AFTER, SLOW = 2.0, 20.0, 1.0


def summarise(records, stop: float, stopped_node: str) -> dict:
    """Per target: requests, failed (an HTTP error or none), slower than 1 s, slowest; the stopped node apart."""
    rows: dict[str, dict] = {}
    for r in records:
        if r.get("kind") == "version" or outcome(r) == "not_sent" or not stop - BEFORE <= r["t"] <= stop + AFTER:
            continue
        row = rows.setdefault(r["target"], {"requests": 0, "failed": 0, "slow": 0, "max_s": 0.0})
        latency = r.get("latency") or 0.0
        row["requests"] += 1
        row["failed"] += outcome(r) in ("http_error", "transport_error")
        row["slow"] += latency > SLOW
        row["max_s"] = max(row["max_s"], latency)
    others = [v for k, v in rows.items() if k not in (stopped_node, "lb")]
    return {
        "targets": rows,
        "others_slow": sum(v["slow"] for v in others),
        "others_max_s": max((v["max_s"] for v in others), default=0.0),
        "others_failed": sum(v["failed"] for v in others),
    }


def trial_number(d: Path) -> int:
    head = d.name.split("-", 1)[0]
    return int(head) if head.isdigit() else -1


def load_trial(d: Path) -> dict:
    first, *rest = (d / "stop.txt").read_text().splitlines()
    start, node, grace = first.split()
    records = [json.loads(line) for line in (d / "requests.jsonl").read_text().splitlines() if line]
    result = summarise(records, float(start), node)
    result.update(trial=d.name, node=node, grace=int(grace), stop_s=float(rest[0]) - float(start) if rest else None)
    return result


def markdown(trials: list[dict]) -> str:
    lines = [
        "| trial | leader stopped | grace | stop took | other API servers: >1 s / slowest / failed "
        "| stopped node's API server: failed | balancer: failed / slowest |",
        "|---|---|---:|---:|---|---:|---|",
    ]
    for t in trials:
        own = t["targets"].get(t["node"], {"failed": 0})
        lb = t["targets"].get("lb", {"failed": 0, "max_s": 0.0})
        took = "?" if t["stop_s"] is None else f"{t['stop_s']:.1f} s"
        lines.append(
            f"| {t['trial']} | {t['node']} | {t['grace']} s | {took} "
            f"| {t['others_slow']} / {t['others_max_s']:.2f} s / {t['others_failed']} | {own['failed']} "
            f"| {lb['failed']} / {lb['max_s']:.2f} s |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        raise SystemExit("usage: python -m bench.etcd_leader_stop DIR")
    trials = [load_trial(d) for d in sorted(Path(argv[0]).glob("*-*"), key=trial_number) if (d / "stop.txt").is_file()]
    if not trials:
        raise SystemExit(f"no trials (<n>-<mode>/stop.txt) under {argv[0]}")
    sys.stdout.write(markdown(trials))
    (Path(argv[0]) / "etcd-leader.json").write_text(json.dumps(trials, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
