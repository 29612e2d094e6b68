"""The e2e story's control-plane health summary: what counts as two down at once, a lost quorum, and a stall."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "e2e"))
from health_sampler import summarize

UP = {"apiserver": 200, "etcd_live": True, "etcd_ok": True}
RESTARTING = {
    "apiserver": None,
    "apiserver_error": "ConnectionRefusedError",
    "etcd_live": False,
    "etcd_error": "ConnectionRefusedError",
    "etcd_ok": False,
}
TIMED_OUT = {
    "apiserver": None,
    "apiserver_error": "timeout",
    "etcd_live": False,
    "etcd_error": "timeout",
    "etcd_ok": False,
}


def _samples(*rounds):
    return [{"t": float(i), "nodes": [dict(n, node=f"cp{j}") for j, n in enumerate(r)]} for i, r in enumerate(rounds)]


def test_one_node_restarting_is_no_outage():
    summary = summarize(_samples([UP] * 3, [RESTARTING, UP, UP], [RESTARTING, UP, UP], [UP] * 3))
    assert summary["quorum_lost_samples"] == 0 and summary["longest_two_unhealthy_s"] == 0, summary


def test_two_members_refusing_is_a_lost_quorum_and_two_down():
    summary = summarize(_samples([UP] * 3, [RESTARTING, RESTARTING, UP], [RESTARTING, RESTARTING, UP], [UP] * 3))
    assert summary["quorum_lost_samples"] == 2 and summary["longest_two_unhealthy_s"] == 2.0, summary


def test_a_sample_where_every_request_timed_out_is_a_stall_counted_apart():
    summary = summarize(_samples([UP] * 3, [TIMED_OUT] * 3, [UP] * 3))
    assert summary["unanswered_samples"] == 1 and summary["longest_unanswered_s"] == 1.0, summary
    assert summary["samples"] == 2 and summary["quorum_lost_samples"] == 0, summary


def test_timeouts_beside_a_refusal_are_no_stall_and_the_quorum_is_unknown_not_lost():
    summary = summarize(_samples([UP] * 3, [TIMED_OUT, TIMED_OUT, RESTARTING], [UP] * 3))
    assert summary["unanswered_samples"] == 0 and summary["quorum_lost_samples"] == 0, summary
    assert summary["quorum_unknown_samples"] == 1 and summary["longest_quorum_unknown_s"] == 1.0, summary


def test_one_member_stopped_and_one_slow_for_a_sample_is_measured_apart():
    """CI, 2026-12-07: cp1 stopped for its kubelet restart, cp2 timed out for one sample, cp3 served."""
    summary = summarize(_samples([RESTARTING, UP, UP], [RESTARTING, TIMED_OUT, UP], [RESTARTING, UP, UP]))
    assert summary["quorum_lost_samples"] == 0 and summary["quorum_unknown_samples"] == 1, summary
    assert summary["longest_two_unhealthy_s"] == 0, summary
    assert summary["longest_two_unhealthy_or_unknown_s"] == 1.0, summary


def test_a_slow_sample_inside_two_down_breaks_the_known_run_but_not_the_one_with_unknowns():
    """CI, 2026-12-07: cp1 restarting, cp2 timed out for a 1.9 s sample, then not ready for 1.6 s (etcd election)."""
    not_ready = dict(UP, apiserver=500)
    samples = _samples([UP] * 3, [RESTARTING, TIMED_OUT, UP], [RESTARTING, not_ready, UP], [RESTARTING, not_ready, UP])
    samples[2]["t"], samples[3]["t"] = 2.9, 3.7  # the slow sample took 1.9 s
    samples.append({"t": 4.5, "nodes": [dict(UP, node=f"cp{j}") for j in range(3)]})
    summary = summarize(samples)
    assert summary["longest_two_unhealthy_s"] == 1.6, summary
    assert summary["longest_two_unhealthy_or_unknown_s"] == 3.5, summary


def test_two_members_refusing_for_long_is_caught_by_both_measures():
    summary = summarize(_samples([UP] * 3, *[[RESTARTING, RESTARTING, UP]] * 12, [UP] * 3))
    assert summary["longest_two_unhealthy_s"] == 12.0, summary
    assert summary["longest_two_unhealthy_or_unknown_s"] == 12.0, summary


def test_two_members_refusing_beside_a_slow_one_is_a_lost_quorum():
    summary = summarize(_samples([UP] * 3, [RESTARTING, RESTARTING, TIMED_OUT], [UP] * 3))
    assert summary["quorum_lost_samples"] == 1 and summary["quorum_unknown_samples"] == 0, summary


def test_a_long_unknown_quorum_is_measured_so_the_story_can_refuse_it():
    summary = summarize(_samples([UP] * 3, *[[RESTARTING, TIMED_OUT, UP]] * 5, [UP] * 3))
    assert summary["longest_quorum_unknown_s"] == 5.0, summary


def test_a_long_stall_is_measured_so_the_story_can_refuse_it():
    summary = summarize(_samples([UP] * 3, *[[TIMED_OUT] * 3] * 6, [UP] * 3))
    assert summary["longest_unanswered_s"] == 6.0, summary


def test_single_requests_timing_out_on_every_node_are_no_lost_quorum():
    """CI, 2026-12-07: one 1.5 s sample; cp1's and cp2's /livez and cp3's /readyz timed out, cp2's /health said healthy."""
    livez_slow = dict(UP, etcd_live=False, etcd_ok=False, etcd_error="timeout")
    readyz_slow = dict(UP, apiserver=None, apiserver_error="timeout")
    summary = summarize(_samples([UP] * 3, [livez_slow, dict(livez_slow, etcd_ok=True), readyz_slow], [UP] * 3))
    assert summary["quorum_lost_samples"] == 0 and summary["quorum_unknown_samples"] == 0, summary
    assert summary["longest_two_unhealthy_s"] == 0, summary
    assert summary["longest_two_unhealthy_or_unknown_s"] == 1.0, summary


def test_two_members_refusing_beside_a_slow_livez_is_a_lost_quorum_and_two_down():
    livez_slow = dict(UP, etcd_live=False, etcd_ok=False, etcd_error="timeout")
    summary = summarize(_samples([UP] * 3, [RESTARTING, RESTARTING, livez_slow], [UP] * 3))
    assert summary["quorum_lost_samples"] == 1 and summary["longest_two_unhealthy_s"] == 1.0, summary


def test_a_member_answering_not_ready_is_known_down():
    not_serving = dict(UP, etcd_live=False, etcd_ok=False)  # answered, not 200
    summary = summarize(_samples([UP] * 3, [not_serving, not_serving, UP], [UP] * 3))
    assert summary["quorum_lost_samples"] == 1 and summary["longest_two_unhealthy_s"] == 1.0, summary
