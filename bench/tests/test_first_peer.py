"""Unit tests of the first-peer window's pure parts (bench/first_peer_stats.py)."""

from __future__ import annotations

from datetime import datetime

import pytest

from bench import first_peer_stats as fps


def test_attempts_double_from_5_ms_and_stop_after_20_failures():
    offsets = fps.attempt_offsets()
    assert len(offsets) == 21
    assert offsets[:4] == pytest.approx([0, 0.005, 0.015, 0.035])
    assert offsets[10] == pytest.approx(5.115)
    # the last attempt, 20 failures after the first one: about 87 minutes, not the "60-90 seconds" of the comment
    assert offsets[20] == pytest.approx(5242.875)


def test_the_next_attempt_follows_the_last_logged_failure():
    assert fps.next_attempt([]) is None
    assert fps.next_attempt([10.0]) == pytest.approx(10.005)
    # the sync's own time makes the gaps between the lines longer than the back-off alone
    assert fps.next_attempt([10.0, 10.04, 10.09, 10.16]) == pytest.approx(10.16 + 0.04)


def test_parse_gvr():
    assert fps.parse_gvr("certificates.k8s.io/v1/clustertrustbundles") == (
        "certificates.k8s.io",
        "v1",
        "clustertrustbundles",
    )
    assert fps.parse_gvr("v1/pods") == ("", "v1", "pods")
    with pytest.raises(ValueError):
        fps.parse_gvr("pods")


def test_first_status_is_bracketed_by_the_poll_before():
    polls = [(0.0, 0.01, None), (0.05, 0.06, 404), (0.10, 0.12, 200), (0.15, 0.16, 200)]
    assert fps.first_status(polls) == {"t": 0.12, "lo": 0.05}
    assert fps.first_status(polls, 503) is None
    assert fps.first_status([(1.0, 1.1, 200)]) == {"t": 1.1, "lo": 1.0}
    assert fps.first_status(polls, 200, after=0.13) == {"t": 0.16, "lo": 0.10}


def test_runs_collapse_equal_statuses():
    polls = [(0, 1, None), (1, 2, None), (2, 3, 404), (3, 4, 200), (4, 5, 200)]
    assert fps.runs(polls) == [[None, 1, 2, 2], [404, 3, 3, 1], [200, 4, 5, 2]]


def test_false_404s_through_a_balancer_are_the_404s_after_its_first_200():
    polls = [(0, 0.1, 404), (1, 1.1, 200), (2, 2.1, 404), (3, 3.1, 503), (4, 4.1, 404), (5, 5.1, 200)]
    view = fps.after_first_200(polls)
    assert view == {"first_200": 1.1, "false_404": 2, "false_404_window": 3.0, "other_errors": 1, "requests": 6}
    assert fps.after_first_200([(0, 0.1, 404)])["false_404"] == 0


def test_sync_failures_are_read_from_the_old_servers_klog_lines():
    year = 2026
    lines = [
        'I1203 06:00:00.500000   77 peer_discovery.go:232] "Starting worker"',
        "I1203 06:00:01.000000   77 peer_discovery.go:232] Error syncing discovery for peer lease apiserver-abc: "
        "failed to get host port info from identity lease for server apiserver-abc: missing port in address",
        "I1203 06:00:01.005123   77 peer_discovery.go:232] Error syncing discovery for peer lease apiserver-other: x",
        "I1203 06:00:01.006000   77 peer_discovery.go:232] Error syncing discovery for peer lease apiserver-abc: y",
        "I1203 06:00:09.000000   77 peer_discovery.go:239] Dropping lease apiserver-abc out of the queue: z",
        "not a klog line",
    ]
    since = datetime(year, 12, 3, 6, 0, 0).timestamp()
    got = fps.sync_failures("\n".join(lines), "apiserver-abc", since, since + 60, year)
    assert [round(t - since, 6) for t in got["failures"]] == [1.0, 1.006]
    assert round(got["dropped"] - since, 6) == 9.0
    assert got["reasons"] == {"missing port in address": 1, "y": 1}
    assert fps.sync_failures("\n".join(lines), "apiserver-abc", since + 2, since + 5, year) == {
        "failures": [],
        "dropped": None,
        "reasons": {},
    }


def test_distribution_and_correlations():
    assert fps.distribution([None]) == {"n": 0, "min": None, "median": None, "p90": None, "max": None}
    dist = fps.distribution([float(x) for x in range(1, 11)])
    assert dist == {"n": 10, "min": 1.0, "median": 5.5, "p90": 9.0, "max": 10.0}
    assert fps.pearson([1, 2, 3, 4], [2, 4, 6, 8]) == 1.0
    assert fps.pearson([1, 2], [1, 2]) is None
    assert fps.pearson([1, 1, 1], [1, 2, 3]) is None
    assert fps.spearman([1, 2, 3, 4], [1, 8, 27, 64]) == 1.0
    assert fps.spearman([1, 2, 3, 4], [4, 3, 2, 1]) == -1.0
    assert fps.ranks([10, 20, 20, 30]) == [1.0, 2.5, 2.5, 4.0]


def start(spawned, lease, new_200, ready, old, failures, quota="none", balancers=None):
    return {
        "spawned": spawned,
        "lease": lease,
        "new_200": new_200,
        "ready": ready,
        "old_200": old,
        "logs": {n: {"failures": f} for n, f in failures.items()},
        "cpu_quota": quota,
        "load": [2.0, 2.0, 2.0],
        "balancers": balancers or {},
    }


def test_derive_measures_from_the_new_servers_first_200_and_its_readyz():
    failures = [4.0, 4.04, 4.09, 4.16, 4.26, 4.44, 4.79, 5.45, 6.77]  # 9 failed syncs, the last before ready
    s = start(0.0, 4.0, 5.0, 7.0, {"a": 8.1, "b": None}, {"a": failures, "b": []})
    d = fps.derive(s, ["a", "b"])
    assert d["startup_s"] == 7.0 and d["lease_to_ready_s"] == 3.0
    assert d["gap_from_new_200"] == {"a": 3.1, "b": None}
    assert d["gap_from_ready"] == {"a": 1.1, "b": None}
    assert d["predicted_gap_from_ready"] == {"a": 1.05, "b": None}  # 6.77 + 5 ms * 2**8 = 8.05
    assert d["model_error"] == {"a": 0.05, "b": None}
    assert d["failed_attempts"] == {"a": 9, "b": 0}
    assert d["worst_gap_from_ready"] is None and d["gap_over_lease_to_ready"] is None  # b never synced
    assert d["old_sync_spread_s"] is None and d["balancer_window_model"] == {"readyz": None, "gate": None}


def test_balancer_windows_from_the_direct_polls():
    d = fps.derive(start(0, 1, 2, 5.0, {"a": 6.0, "b": 8.5}, {"a": [], "b": []}), ["a", "b"])
    assert d["old_sync_spread_s"] == 2.5
    assert d["balancer_window_model"] == {"readyz": 3.5, "gate": 2.5}
    # an old server that synced before the new one was ready opens the window itself
    d = fps.derive(start(0, 1, 2, 5.0, {"a": 4.0, "b": 5.5}, {"a": [], "b": []}), ["a", "b"])
    assert d["balancer_window_model"] == {"readyz": 1.5, "gate": 1.5}


def test_summary_per_old_server_balancers_and_quota_groups():
    lb_bad = {"first_200": 1, "false_404": 3, "false_404_window": 1.5, "other_errors": 0, "requests": 50}
    lb_ok = {"first_200": 1, "false_404": 0, "false_404_window": 0.0, "other_errors": 1, "requests": 50}
    starts = [
        start(0, 1, 2, 3, {"a": 4, "b": 5}, {"a": [1], "b": [1]}, "none", {"readyz": lb_bad, "gate": lb_ok}),
        start(0, 1, 2, 6, {"a": 9, "b": 7}, {"a": [1], "b": [1]}, "50", {"readyz": lb_ok, "gate": lb_ok}),
        start(0, 1, 2, 9, {"a": 10, "b": 15}, {"a": [1], "b": [1]}, "50", {"readyz": lb_bad, "gate": lb_ok}),
    ]
    for index, s in enumerate(starts):
        s["index"], s["derived"] = index, fps.derive(s, ["a", "b"])
    summary = fps.summarize(starts, ["a", "b"])
    assert summary["per_old_server"]["a"]["gap_from_ready"] == {"n": 3, "min": 1, "median": 1, "p90": 3, "max": 3}
    assert summary["worst_old_server"]["gap_from_ready"]["max"] == 6
    assert summary["hidden_by_admission_delay"] == {"2s": 1, "4s": 2, "10s": 3}
    assert summary["balancers"]["readyz"]["starts_with_false_404"] == 2
    assert summary["balancers"]["readyz"]["false_404"] == 6
    assert summary["balancers"]["gate"]["false_404"] == 0
    assert list(summary["by_cpu_quota"]) == ["none", "50"]
    assert summary["by_cpu_quota"]["50"]["starts"] == 2
    assert summary["correlation"]["startup_vs_worst_gap"]["spearman"] == 1.0
    assert summary["old_sync_spread_s"]["max"] == 5
    assert summary["balancer_window_model"]["readyz"]["max"] == 6
    assert summary["gap_over_lease_to_ready"]["median"] == 0.75  # 6 s after a lease 8 s before ready
    result = {
        "meta": {
            "started_utc": "2026-12-03 06:00 UTC",
            "cpus": 2,
            "old_servers": ["a", "b"],
            "new_server": "c",
            "old": "1.36.5",
            "new": "1.37.2",
            "gvr": "g/v1/r",
            "interval": 0.05,
            "lb_interval": 0.1,
            "cpu_quotas": ["none", "50"],
            "command": "python -m bench.first_peer --starts 3",
            "wall_s": 100.0,
        },
        "summary": summary,
        "starts": starts,
    }
    text = fps.markdown(result)
    assert "| a: new server's /readyz 200 | 3 | 1 s | 1 s | 3 s | 3 s |" in text
    assert "| gate | 3 | 0 | 0 / 150 |" in text
    assert "| 2 | 50 | 2 | 9 | 8 | 1 | 6 | 1/1 | 5 | 3 / 0 |" in text
