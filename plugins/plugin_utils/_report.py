# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""The upgrade report: per node from -> to, duration and MVP evidence, as data and Markdown. Pure."""

from __future__ import annotations

import datetime


def _seconds(started, finished):
    try:
        start = datetime.datetime.fromisoformat(started)
        end = datetime.datetime.fromisoformat(finished)
    except (TypeError, ValueError):
        return None
    # now(utc=true).isoformat() has no offset; a time with one is compared in UTC as well
    start, end = (t if t.tzinfo else t.replace(tzinfo=datetime.timezone.utc) for t in (start, end))
    return round((end - start).total_seconds(), 1)


# What each phase of a control plane is called in the report (the roles record ``steps``); a worker has no steps.
STEP_NAMES = {"components": "control-plane components", "kubelet": "control-plane kubelet"}


def run_order(rows):
    """The steps of the run in the order they started: ``[{"node", "step", "action", "started", "finished",
    "seconds"}]``. A control plane's row holds its ``steps`` (components, then kubelet: in the default order every
    control plane's components come before the first kubelet); a worker's row is one step."""
    out = []
    for row in rows:
        steps = row.get("steps") or [
            {
                "step": "worker" if row.get("role") == "worker" else "node",
                "action": row.get("action"),
                "started": row.get("started"),
                "finished": row.get("finished"),
            }
        ]
        for step in steps:
            name = STEP_NAMES.get(step.get("step"), step.get("step"))
            out.append(
                {
                    "node": row.get("node"),
                    "step": name,
                    "action": step.get("action"),
                    "started": step.get("started"),
                    "finished": step.get("finished"),
                    "seconds": _seconds(step.get("started"), step.get("finished")),
                }
            )
    return sorted(out, key=lambda s: s["started"] or "")


STATUSES = ("succeeded", "failed", "incomplete", "plan")


def status(not_reached, check_mode, failures=(), unreachable=()):
    """``plan`` in check mode (nothing was upgraded), ``failed`` when a host's step failed or a host of the run could
    not be reached, ``incomplete`` while a host has no record for this target, else ``succeeded``."""
    if check_mode:
        return "plan"
    if failures or unreachable:
        return "failed"
    return "incomplete" if not_reached else "succeeded"


def failures_for(failures, target):
    """The failure records (``{host, step, msg, ...}``, the fact ``skewsafe_run_failure`` of each host) of this
    target: a record of another target is an earlier hop's (upgrade_path.yml), which the run went past."""
    want = str(target).lstrip("v")
    return [f for f in failures or [] if f and str(f.get("target", want)).lstrip("v") == want]


def unreachable_hosts(reach_results):
    """host -> message for the hosts a last try could not reach (the registered loop of ``ansible.builtin.ping``
    with ``ignore_unreachable``, one item per host)."""
    return {
        r.get("item"): r.get("msg") or "unreachable"
        for r in reach_results or []
        if isinstance(r, dict) and r.get("unreachable") and r.get("item")
    }


def host_outcomes(hosts, rows, failures, not_reached, unreachable=None):
    """Every inventory host with what happened to it: ``upgraded``, ``skipped`` (with why), ``failed`` (at which
    step, with the message), ``unreachable`` (with the connection's message) or ``not reached`` (stopped before its
    step, left out by --limit or --tags)."""
    by_node = {r.get("host") or r.get("node"): r for r in rows}
    failed = {f.get("host"): f for f in failures}
    unreachable = unreachable or {}
    out = []
    for host in hosts or []:
        if host in failed:
            f = failed[host]
            out.append({"host": host, "outcome": "failed", "step": f.get("step"), "msg": f.get("msg")})
        elif host in unreachable and host in not_reached:
            out.append({"host": host, "outcome": "unreachable", "msg": unreachable[host]})
        elif host in by_node or any(r.get("node") == host for r in rows):
            row = by_node.get(host) or next(r for r in rows if r.get("node") == host)
            action = str(row.get("action") or "")
            outcome = "skipped" if action.startswith("skipped") else "upgraded"
            out.append({"host": host, "outcome": outcome, "detail": action})
        else:
            out.append({"host": host, "outcome": "not reached" if host in not_reached else "no record"})
    return out


def without_record(hosts, host_records, target):
    """The hosts with no record for ``target`` in any of ``host_records`` (dicts host -> record: the control-plane
    records, the worker records)."""
    want = str(target).lstrip("v")
    return [
        host
        for host in hosts
        if not any(str((records.get(host) or {}).get("to", "")).lstrip("v") == want for records in host_records or [])
    ]


def build(
    nodes,
    target,
    cluster_version=None,
    etcd_backup=None,
    started=None,
    finished=None,
    not_reached=(),
    check_mode=False,
    failures=(),
    hosts=(),
    unreachable=None,
    compared=None,
):
    """Normalise per-node records (the ``*_upgrade_result`` facts of the roles) into one report dict.

    ``not_reached``: the inventory hosts without a record for this target (unreachable, failed before their step,
    or left out): the report says so, never a finished upgrade. ``failures``: the failure records of the run's hosts
    (status ``failed``); a failed host is listed as failed, not as not reached. ``hosts``: every inventory host, in
    order, for the per-host outcome list. ``unreachable``: host -> message for the hosts without a record a last try
    could not reach (status ``failed``, listed in ``unreachable``). ``compared``: the preflight's per-node list of
    what was compared with kubeadm's renderings before the first change (``preflight_result.compared``)."""
    rows, want = [], str(target).lstrip("v")
    for node in nodes or []:
        # A row for another target is a fact left by an earlier hop of the same run (upgrade_path.yml)
        # on a host this hop never reached: it says nothing about this upgrade.
        if not node or (node.get("to") and str(node["to"]).lstrip("v") != want):
            continue
        row = dict(node)
        row["seconds"] = _seconds(node.get("started"), node.get("finished"))
        rows.append(row)
    failures = failures_for(failures, target)
    failed_hosts = {f.get("host") for f in failures}
    not_reached = [] if check_mode else [h for h in not_reached or [] if h not in failed_hosts]
    unreachable = {h: m for h, m in (unreachable or {}).items() if h in not_reached}
    return {
        "target": target,
        "status": status(not_reached, check_mode, failures, unreachable),
        "not_reached": not_reached,
        "unreachable": [{"host": h, "msg": m} for h, m in unreachable.items()],
        "failed": [{"host": f.get("host"), "step": f.get("step"), "msg": f.get("msg")} for f in failures],
        "hosts": [] if check_mode else host_outcomes(hosts or [], rows, failures, not_reached, unreachable),
        "from": cluster_version,
        "started": started,
        "finished": finished,
        "seconds": _seconds(started, finished),
        "nodes": rows,
        "upgraded": [r["node"] for r in rows if r.get("action") == "upgraded"],
        "skipped": [r["node"] for r in rows if str(r.get("action", "")).startswith("skipped")],
        # cordoned before the run by someone else: drained and upgraded, but not uncordoned
        "kept_cordoned": [r["node"] for r in rows if r.get("kept_cordoned")],
        "order": run_order(rows),
        "etcd_backup": etcd_backup,
        "compared": list(compared or []),
    }


# What a gate that had nothing to probe reports: never a count of probes that did not run.
UNPROBED_OUTCOMES = {
    "nothing_to_proxy": "nothing to proxy (no resource differs; configuration proved)",
    "not_probed": "proxying not probed (no listable resource differs; configuration proved)",
}


def gate_summary(mvp):
    """'mixed: 2/2 probes proxied', 'mixed: nothing to proxy (...)' or 'steady' for a node's gate record."""
    if mvp.get("outcome") in UNPROBED_OUTCOMES:
        return f"{mvp.get('mode')}: {UNPROBED_OUTCOMES[mvp['outcome']]}"
    probes = mvp.get("probes") or []
    if mvp.get("mode") != "mixed":
        return str(mvp.get("mode"))
    proxied = sum(1 for p in probes if p.get("status") == 200 and p.get("status_local") == 404)
    return f"mixed: {proxied}/{len(probes)} probes proxied"


def markdown(report):
    lines = [
        f"# kubeadm upgrade to v{str(report.get('target', '')).lstrip('v')}",
        "",
        f"- status: {report.get('status', 'succeeded')}"
        + (f" (no record for: {', '.join(report['not_reached'])})" if report.get("not_reached") else ""),
        *(f"- failed: {f.get('host')} at '{f.get('step')}': {f.get('msg')}" for f in report.get("failed") or []),
        *(f"- unreachable: {u.get('host')}: {u.get('msg')}" for u in report.get("unreachable") or []),
        f"- from: {report.get('from') or 'unknown'}",
        f"- started: {report.get('started') or '-'}, finished: {report.get('finished') or '-'}"
        + (f" ({report['seconds']} s)" if report.get("seconds") is not None else ""),
    ]
    if report.get("kept_cordoned"):
        lines.append(
            f"- left cordoned (cordoned before the run, not by skewsafe.kubeadm): {', '.join(report['kept_cordoned'])}"
        )
    backup = report.get("etcd_backup") or {}
    if backup.get("skipped"):
        lines.append(f"- etcd snapshot: none taken by this run ({backup.get('reason') or 'skipped'})")
    elif backup.get("path") or backup.get("node_path"):
        where = [f"`{p}`" for p in (backup.get("node_path"), backup.get("path")) if p]
        lines.append(f"- etcd snapshot: {' and '.join(where)} (sha256 `{(backup.get('sha256') or '')[:16]}…`)")
    lines += ["", "| node | role | from | to | result | seconds | MVP gate |", "|---|---|---|---|---|---|---|"]
    for row in report.get("nodes", []):
        mvp = row.get("mvp") or {}
        gate = "-"
        if mvp:
            gate = f"{gate_summary(mvp)}, {mvp.get('elapsed', 0):.1f} s"
        lines.append(
            f"| {row.get('node')} | {row.get('role')} | {row.get('from')} | {row.get('to')} | {row.get('action')} | "
            f"{row.get('seconds') if row.get('seconds') is not None else '-'} | {gate} |"
        )
    if report.get("order"):
        lines += ["", "## Order of the run", ""]
        for n, step in enumerate(report["order"], 1):
            took = f", {step['seconds']} s" if step.get("seconds") is not None else ""
            lines.append(f"{n}. {step.get('node')}: {step.get('step')} ({step.get('action')}){took}")
    if report.get("compared"):
        lines += ["", "## Compared with kubeadm's renderings before the first change", ""]
        for row in report["compared"]:
            missed = "; ".join(row.get("not_compared") or [])
            lines.append(
                f"- {row.get('node')}: {', '.join(row.get('compared') or []) or 'nothing'}"
                + (f"; not compared: {missed}" if missed else "")
            )
    evidence = [
        (row.get("node"), p) for row in report.get("nodes", []) for p in (row.get("mvp") or {}).get("probes") or []
    ]
    if evidence:
        lines += ["", "## MVP evidence captured while the control plane was mixed", ""]
        for node, probe in evidence:
            lines.append(
                f"- after {node}: `GET {probe.get('gvr')}` on {probe.get('server')}: {probe.get('status')} through a peer, "
                f"{probe.get('status_local')} served locally (x-kubernetes-peer-proxied: true), "
                f"apiserver_rerouted_request_total {probe.get('rerouted_before', 0):.0f} -> {probe.get('rerouted_after', 0):.0f}"
            )
    return "\n".join(lines) + "\n"
