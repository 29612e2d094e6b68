"""Per-task timing and node transitions from the bench_events callback's JSON lines (stdlib only).

Time is split into the work any kubeadm upgrade needs (kubeadm itself, package installs,
kubelet restarts, drains, waiting for the restarted API server) and the collection's own
orchestration (preflight, enabling MVP, the MVP gates, the etcd snapshot, facts, reporting,
and the gaps between tasks that Ansible and SSH spend).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

# Ordered: the first match wins. Matched against the task name without the "role : " prefix
# the callback records (get_name(include_role_fqcn=False) gives "preflight : Preflight | ...").
CATEGORIES = (
    # the operator's load-balancer tasks (control_plane_upgrade_take_out_tasks/put_back_tasks; the lab's haproxy)
    ("balancer", r"^Balancer \||load balancer"),
    ("mvp_gate", r"\| Gate \||Prove MVP|Check the Mixed Version Proxy"),
    # Once per cluster: kubeadm re-renders kube-apiserver with the peer flags and it restarts.
    (
        "mvp_enable_restart",
        r"^Enable MVP \| (Regenerate the control-plane manifests|Wait until whole again)",
    ),
    ("kubeadm", r"Run kubeadm upgrade (apply|node)|with kubeadm upgrade plan"),
    ("packages", r"^Packages \|"),
    ("kubelet_restart", r"Restart kubelet|Wait until the node is Ready"),
    # waiting for what kubeadm and the kubelet restarted (control_plane_health)
    ("apiserver_wait", r"^Control plane \| Wait until whole"),
    ("drain", r"\| (Drain|Uncordon) "),
    ("enable_mvp", r"^Enable MVP \|"),
    ("etcd_backup", r"^Etcd backup \|"),
    ("preflight", r"^Preflight \|"),
    ("facts", r"^Gathering Facts|Gather the minimal facts"),
)
EXTERNAL = ("kubeadm", "packages", "kubelet_restart", "apiserver_wait", "drain")
ONE_TIME = ("mvp_enable_restart", "enable_mvp")  # a cluster that already runs MVP skips these

# (task pattern, at start or end, label) for the markers drawn on the timeline.
TRANSITIONS = (
    (r"Run kubeadm upgrade (apply|node)", "host_start", "kubeadm upgrade"),
    (r"Run kubeadm upgrade (apply|node)", "host_end", "upgraded"),
    (r"Regenerate the control-plane manifests", "host_end", "MVP on"),
    (r"Restart kubelet", "host_end", "kubelet restarted"),
)


def load(path: Path) -> list:
    return [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]


def category(name: str) -> str:
    name = (name or "").split(" : ", 1)[-1]
    for cat, pattern in CATEGORIES:
        if re.search(pattern, name):
            return cat
    return "other"


def task_spans(events: list) -> list:
    """One span per task start: to the last host result (hosts of a batch run in parallel)."""
    spans, current = [], {}
    for ev in events:
        if ev["event"] == "task_start":  # a uuid repeats for each serial batch: the latest start owns it
            current[ev["uuid"]] = {"task": ev["task"], "start": ev["t"], "end": ev["t"], "hosts": {}}
            spans.append(current[ev["uuid"]])
        elif ev["event"] == "host_end" and ev["uuid"] in current:
            span = current[ev["uuid"]]
            span["end"] = max(span["end"], ev["t"])
            span["hosts"][ev["host"]] = ev["status"]
    return spans


def timing(events: list) -> dict:
    """Upgrade wall time and where it went, by category."""
    if not events:
        return {}
    spans = task_spans(events)
    total = events[-1]["t"] - events[0]["t"]
    by_cat: dict = {}
    for span in spans:
        cat = category(span["task"])
        by_cat[cat] = by_cat.get(cat, 0.0) + span["end"] - span["start"]
    in_tasks = sum(by_cat.values())
    by_cat["between_tasks"] = max(0.0, total - in_tasks)
    external = sum(v for k, v in by_cat.items() if k in EXTERNAL)
    one_time = sum(v for k, v in by_cat.items() if k in ONE_TIME)
    repeat_total = total - one_time
    slowest = sorted(spans, key=lambda s: s["start"] - s["end"])[:12]
    return {
        "total_seconds": round(total, 1),
        "by_category": {k: round(v, 1) for k, v in sorted(by_cat.items(), key=lambda kv: -kv[1])},
        "external_seconds": round(external, 1),
        "orchestration_seconds": round(total - external, 1),
        "orchestration_share": round((total - external) / total, 3) if total else None,
        # The same upgrade of a cluster that already runs MVP (enable_mvp finds nothing to do).
        "one_time_mvp_enable_seconds": round(one_time, 1),
        "orchestration_share_mvp_already_on": (
            round((repeat_total - external) / repeat_total, 3) if repeat_total > 0 else None
        ),
        "mvp_gate_seconds": round(by_cat.get("mvp_gate", 0.0), 1),
        "failed": any(e["event"] == "playbook_end" and (e["failures"] or e["unreachable"]) for e in events),
        "slowest_tasks": [
            {"task": s["task"], "seconds": round(s["end"] - s["start"], 1), "hosts": sorted(s["hosts"])}
            for s in slowest
        ],
    }


def transitions(events: list) -> list:
    """Timeline markers: [{t, host, event}] for node-level steps that happened (not skipped)."""
    out = []
    # host_start carries no status: drop the start of a task that the host then skipped.
    skipped = {(ev["uuid"], ev["host"]) for ev in events if ev["event"] == "host_end" and ev.get("status") == "skipped"}
    for ev in events:
        if ev["event"] not in ("host_start", "host_end") or ev.get("status") == "skipped":
            continue
        if ev["event"] == "host_start" and (ev["uuid"], ev["host"]) in skipped:
            continue
        for pattern, when, label in TRANSITIONS:
            if ev["event"] == when and re.search(pattern, ev.get("task") or ""):
                out.append({"t": ev["t"], "host": ev["host"], "event": f"{ev['host']} {label}"})
    return out
