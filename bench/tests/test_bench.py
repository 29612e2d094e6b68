"""Unit tests of bench's pure parts: python -m pytest bench/tests (no network, no harness)."""

from __future__ import annotations

from bench import events
from bench.analyse import goals, headline
from bench.micro_report import linear_fit
from bench.stats import (
    client_go_retries,
    false_404_window_split,
    mark_unserved,
    median_range,
    mixed_windows,
    new_server_first_200s,
    outcome,
    percentile,
    summarize,
)


def rec(t, target, kind="core", status=200, **extra):
    return {"t": t, "target": target, "kind": kind, "gvr": "v1/namespaces", "status": status, "latency": 0.01, **extra}


def version(t, target, v):
    return rec(t, target, kind="version", version=v)


def test_outcomes():
    assert outcome(rec(0, "a")) == "ok"
    assert outcome(rec(0, "a", kind="new-only", status=404)) == "false_404"
    assert outcome(rec(0, "a", kind="core", status=404)) == "http_error"
    assert outcome(rec(0, "a", status=None)) == "transport_error"
    assert outcome(rec(0, "a", status=None, skipped=True)) == "not_sent"


LOST = "ProtocolError: ('Connection aborted.', RemoteDisconnected('Remote end closed connection without response'))"


def test_client_go_retries_only_gets_that_lost_their_connection():
    reset = "ProtocolError: ('Connection aborted.', ConnectionResetError(104, 'Connection reset by peer'))"
    assert client_go_retries(rec(0, "lb", status=None, error=LOST))
    assert client_go_retries(rec(0, "lb", status=None, error=reset))
    refused = "NewConnectionError: Failed to establish a new connection: [Errno 111] Connection refused"
    assert not client_go_retries(rec(0, "lb", status=None, error=refused))
    assert not client_go_retries(
        rec(0, "lb", status=None, error="ReadTimeoutError: Read timed out. (read timeout=5.0)")
    )
    assert not client_go_retries(rec(0, "lb", status=503, error="Connection aborted."))


def test_percentile_nearest_rank():
    assert percentile([], 50) is None
    assert percentile([3, 1, 2], 50) == 2
    assert percentile(list(range(1, 101)), 99) == 99


def test_mixed_window_follows_the_version_polls_and_survives_a_silent_server():
    records = [
        version(0, "cp1", "v1"),
        version(0, "cp2", "v1"),
        version(10, "cp1", "v2"),  # mixed from here
        rec(12, "cp2", status=None),  # cp2 down: keeps its last known version
        version(20, "cp2", "v2"),  # uniform again
        version(30, "cp1", "v2"),
    ]
    assert mixed_windows(records) == [(10, 20)]


def test_summary_counts_false_404s_per_target_and_window():
    records = [version(0, "cp1", "v1"), version(0, "cp2", "v2")]
    records += [
        rec(0.5, "cp2", kind="new-only"),  # the new server serves it: from here a 404 is false
        rec(1, "cp1", kind="new-only", status=404),
        rec(2, "cp1", kind="new-only"),
        rec(3, "cp2", kind="new-only"),
    ]
    records += [version(4, "cp1", "v2"), rec(5, "cp1", kind="new-only")]
    summary = summarize(records)
    new_only = summary["targets"]["cp1"]["new-only"]
    assert (new_only["requests"], new_only["false_404"], new_only["false_404_in_mixed"]) == (3, 1, 1)
    assert summary["false_404_total"] == 1 and summary["mixed_seconds"] == 4


def test_404_before_any_server_serves_the_resource_is_right_not_false():
    records = [version(0, "cp1", "v1.9.3"), version(0, "cp2", "v1.9.3")]
    records += [rec(1, "cp1", kind="new-only", status=404), rec(1, "lb", kind="new-only", status=404)]
    records += [version(4, "cp1", "v1.10.0")]  # numerically newer, although "v1.10" < "v1.9" as text
    records += [rec(4.5, "cp2", kind="new-only", status=404)]  # cp1 reports 1.10 but serves nothing yet
    records += [rec(5, "cp1", kind="new-only"), rec(6, "cp2", kind="new-only", status=404)]
    records += [rec(7, "lb", kind="new-only", status=404)]
    summary = summarize(records)
    assert summary["newest_version"] == "v1.10.0" and summary["new_only_served_from"] == 5
    assert (summary["false_404_total"], summary["unserved_404_total"]) == (2, 3)
    lb = summary["targets"]["lb"]["new-only"]
    assert (lb["false_404"], lb["unserved_404"], lb["false_404_rate"]) == (1, 1, 1.0)


def rolling(restart_at=None):
    """cp1 upgraded at 10 (serves the new-only resource at 12), cp2 old; optionally cp1 restarts at restart_at."""
    records = [version(0, "cp1", "v1.36.5"), version(0, "cp2", "v1.36.5"), rec(1, "cp2", kind="new-only", status=404)]
    records += [rec(9, "cp1", status=None), version(10, "cp1", "v1.37.2"), rec(11, "cp1", kind="new-only", status=404)]
    records += [rec(12, "cp1", kind="new-only"), rec(13, "cp2", kind="new-only", status=404)]
    records += [rec(14, "lb", kind="new-only", status=404), rec(15, "cp2", kind="new-only")]
    if restart_at is not None:
        records += [version(restart_at, "cp1", None) | {"status": None}, version(restart_at + 1, "cp1", "v1.37.2")]
        records += [rec(restart_at + 2, "cp1", kind="new-only")]
    records += [rec(300, "cp2", kind="new-only", status=404)]  # long after: not the first-peer window
    return sorted(records, key=lambda r: r["t"])


def test_first_200s_start_at_every_new_version_start_including_a_restart():
    assert new_server_first_200s(rolling()) == [12]
    assert new_server_first_200s(rolling(restart_at=280)) == [12, 282]
    assert new_server_first_200s([rec(0, "lb")]) == []


def test_false_404s_are_split_by_the_first_peer_window():
    records = rolling()
    mark_unserved(records)
    split = false_404_window_split(records, 60)
    assert split["new_server_starts"] == 1
    assert split["targets"] == {"cp2": {"inside": 1, "outside": 1}, "lb": {"inside": 1, "outside": 0}}
    records = rolling(restart_at=280)
    mark_unserved(records)
    assert false_404_window_split(records, 60)["targets"]["cp2"] == {"inside": 2, "outside": 0}


def test_the_first_200_through_the_balancer_opens_the_window_too():
    records = [version(0, "cp1", "v1.36.5"), version(0, "cp2", "v1.36.5"), version(10, "cp1", "v1.37.2")]
    records += [rec(11, "lb", kind="new-only"), rec(11.5, "cp2", kind="new-only", status=404)]
    records += [rec(12, "cp1", kind="new-only"), rec(12.5, "cp2", kind="new-only", status=404)]
    mark_unserved(records)
    split = false_404_window_split(records, 60)
    assert split["new_server_starts"] == 2
    assert split["targets"] == {"cp2": {"inside": 2, "outside": 0}}


def test_median_and_range():
    assert median_range([3, None, 1, 2]) == {"n": 3, "median": 2, "min": 1, "max": 3}
    assert median_range([4, 1])["median"] == 2.5
    assert median_range([None]) == {"n": 0, "median": None, "min": None, "max": None}


def run_of(label, mvp, lb_errors, share, again=None, lb_lost=0):
    records = rolling()
    records += [rec(20 + i, "lb", status=503) for i in range(lb_errors)]
    records += [rec(30 + i, "lb", status=None, error=LOST) for i in range(lb_lost)]
    load = summarize(sorted(records, key=lambda r: r["t"]), 60)
    upgrade = {"orchestration_share": share}
    if again is not None:
        upgrade |= {"orchestration_share_mvp_already_on": again, "one_time_mvp_enable_seconds": 100}
    return {"label": label, "meta": {"mvp": mvp}, "load": load, "upgrade": upgrade}


def test_headline_counts_balancer_errors_and_old_server_404s():
    figures = headline(run_of("on", True, 2, 0.18, 0.1, lb_lost=1))
    assert (figures["errors_lb"], figures["errors_lb_client_go_retries"]) == (3, 1)
    assert (figures["false_404_lb"], figures["false_404_lb_outside"]) == (1, 0)
    assert (figures["false_404_old"], figures["false_404_old_outside"]) == (2, 1)
    assert (figures["share_first_run"], figures["share_mvp_on"]) == (0.18, 0.1)


def test_a_run_on_a_cluster_already_running_mvp_is_measured_not_subtracted():
    run = run_of("pre", True, 0, 0.11, 0.05)
    run["meta"]["mvp_enabled_before"] = True
    figures = headline(run)
    assert (figures["share_first_run"], figures["share_mvp_on"]) == (None, 0.11)
    table = {g["goal"]: g for g in goals([run], None)}
    assert "collection's own share of the upgrade, first run (enables MVP)" not in table
    assert table["same, cluster already running MVP"]["measured"] == "11.0%"


def test_goals_report_median_and_range_and_judge_the_worst_run():
    runs = [run_of("on", True, n, share, 0.1) for n, share in ((0, 0.15), (3, 0.19), (1, 0.25))]
    runs.append(run_of("off", False, 5, 0.1))
    table = {(g["run"], g["goal"]): g for g in goals(runs, None)}
    errors = table[("on", "errors through the balancer")]
    assert errors["measured"] == "1 (median of 3 runs, range 0-3)" and errors["met"] is False
    share = table[("on", "collection's own share of the upgrade, first run (enables MVP)")]
    assert share["spread"]["max"] == 0.25 and share["met"] is False
    assert table[("on", "same, cluster already running MVP")]["met"] is True
    old = table[("on", "false 404s at the old servers outside the first-peer window")]
    assert old["measured"].startswith("1 (median of 3 runs") and "2 in all, window 60 s" in old["measured"]
    assert table[("off", "errors through the balancer, MVP off (for comparison)")]["met"] is None


def test_timing_splits_external_work_from_orchestration():
    # Task names as the callback records them: "role : Task name".
    apply = "control_plane_upgrade : Control plane | Run kubeadm upgrade apply on cp1"
    rerender = "mvp_enable : Enable MVP | Regenerate the control-plane manifests from kubeadm-config at v1.36.5"
    evs = [
        {"t": 0, "event": "playbook_start"},
        {"t": 0, "event": "task_start", "uuid": "a", "task": "preflight : Preflight | List the nodes"},
        {"t": 2, "event": "host_end", "uuid": "a", "host": "cp1", "status": "ok"},
        {"t": 2, "event": "task_start", "uuid": "c", "task": rerender},
        {"t": 6, "event": "host_end", "uuid": "c", "host": "cp1", "status": "changed"},
        {"t": 6, "event": "task_start", "uuid": "d", "task": "packages : Packages | Install kubeadm 1.37.2"},
        {"t": 7, "event": "host_end", "uuid": "d", "host": "cp1", "status": "changed"},
        {"t": 7, "event": "task_start", "uuid": "b", "task": apply},
        {"t": 7, "event": "host_start", "uuid": "b", "host": "cp1", "task": apply},
        {"t": 14, "event": "host_end", "uuid": "b", "host": "cp1", "status": "ok", "task": apply},
        {"t": 15, "event": "playbook_end", "failures": 0, "unreachable": 0},
    ]
    timing = events.timing(evs)
    assert timing["by_category"] == {
        "kubeadm": 7,
        "mvp_enable_restart": 4,
        "preflight": 2,
        "packages": 1,
        "between_tasks": 1,
    }
    assert timing["orchestration_share"] == round(7 / 15, 3)  # preflight 2 + MVP enable 4 + gaps 1
    assert timing["one_time_mvp_enable_seconds"] == 4
    assert timing["orchestration_share_mvp_already_on"] == round(3 / 11, 3)
    assert [m["event"] for m in events.transitions(evs)] == ["cp1 kubeadm upgrade", "cp1 upgraded"]
    node = "control_plane_upgrade : Control plane | Run kubeadm upgrade node on cp1"  # skipped on the first
    evs[-1:-1] = [
        {"t": 14, "event": "task_start", "uuid": "e", "task": node},
        {"t": 14, "event": "host_start", "uuid": "e", "host": "cp1", "task": node},
        {"t": 14, "event": "host_end", "uuid": "e", "host": "cp1", "status": "skipped", "task": node},
    ]
    assert [m["event"] for m in events.transitions(evs)] == ["cp1 kubeadm upgrade", "cp1 upgraded"]


def test_linear_fit():
    fit = linear_fit([(3, 1.0), (5, 1.4), (7, 1.8)])
    assert fit["per_server_s"] == 0.2 and fit["worst_residual"] == 0


def test_lab_upgrade_passes_extra_vars_before_the_mvp_switch():
    from argparse import Namespace
    from pathlib import Path

    from bench.lab_upgrade import playbook_cmd

    extra = '{"mvp_enable_apiserver_shutdown_args": {}}'
    args = Namespace(playbook="p", out=Path("/tmp/x"), order=None, extra_vars=[extra], mvp="on")
    cmd = playbook_cmd(args, Path("inventory.ini"), "1.37.2")
    assert cmd[-2:] == ["-e", extra]


def test_lab_upgrade_control_plane_order():
    from argparse import Namespace
    from pathlib import Path

    from bench.lab_upgrade import playbook_cmd

    def order(**kw):
        args = Namespace(playbook="skewsafe.kubeadm.upgrade", out=Path("/tmp/x"), order=None, extra_vars=None, **kw)
        cmd = playbook_cmd(args, Path("inventory.ini"), "1.37.2")
        return [a.split("=", 1)[1] for a in cmd if a.startswith("skewsafe_control_plane_order=")]

    # the collection's order with MVP on; stock kubeadm (its own order, no MVP) with MVP off
    assert order(mvp="on") == ["components_first"]
    assert order(mvp="off") == ["node_by_node"]
    args = Namespace(playbook="p", out=Path("/tmp/x"), order="node_by_node", mvp="on", extra_vars=None)
    assert "skewsafe_control_plane_order=node_by_node" in playbook_cmd(args, Path("i"), "1.37.2")


def test_lab_upgrade_tells_the_balancer_with_the_lab_files():
    import json
    from argparse import Namespace
    from pathlib import Path

    from bench.lab_upgrade import BALANCER_HOOKS, playbook_cmd

    args = Namespace(playbook="p", out=Path("/tmp/x"), order=None, extra_vars=None, mvp="on", tell_balancer=True)
    cmd = playbook_cmd(args, Path("inventory.ini"), "1.37.2")
    hooks = json.loads(cmd[cmd.index("-e", cmd.index("skewsafe_control_plane_order=components_first")) + 1])
    assert hooks == BALANCER_HOOKS and all(Path(path).is_file() for path in hooks.values())
    args.tell_balancer = False
    assert not any("take_out" in a for a in playbook_cmd(args, Path("inventory.ini"), "1.37.2"))


def test_balancer_tasks_have_their_own_category():
    from bench.events import category

    assert category(
        "control_plane_upgrade : Control plane | Before the kubeadm step, take out of the load balancer x"
    ) == ("balancer")
    assert category("Balancer | Lab haproxy, wait until UP sslab-cp1") == "balancer"
    assert category("control_plane_upgrade : Control plane | Run kubeadm upgrade node on x") == "kubeadm"
