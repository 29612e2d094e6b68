"""Unit tests of bench/etcd_leader_stop.py: which requests count, and how a trial directory is read."""

from __future__ import annotations

import json

from bench import etcd_leader_stop as els


def rec(t, target, latency, status=200, kind="core"):
    return {"t": t, "target": target, "kind": kind, "status": status, "latency": latency}


def test_only_requests_near_the_stop_count_and_the_stopped_node_is_kept_apart():
    records = [
        rec(97.0, "cp2", 9.0),  # before the window
        rec(99.0, "cp2", 1.5),
        rec(101.0, "cp3", 0.2),
        rec(102.0, "cp3", 0.1, kind="version"),  # /version polls do not count
        rec(105.0, "cp1", 5.0, status=None),  # the stopped node's own server
        rec(106.0, "lb", 5.0, status=503),
        rec(121.0, "cp3", 3.0),  # after the window
    ]
    s = els.summarise(records, 100.0, "cp1")
    assert s["others_slow"] == 1 and s["others_max_s"] == 1.5 and s["others_failed"] == 0
    assert s["targets"]["cp1"] == {"requests": 1, "failed": 1, "slow": 1, "max_s": 5.0}
    assert s["targets"]["lb"]["failed"] == 1
    assert set(s["targets"]) == {"cp1", "cp2", "cp3", "lb"}


def test_trials_are_read_in_number_order(tmp_path, capsys):
    for n, mode, grace in ((10, "g30", 30), (2, "k1", 1)):
        d = tmp_path / f"{n}-{mode}"
        d.mkdir()
        (d / "stop.txt").write_text(f"100.0 cp1 {grace}\n101.5\n")
        (d / "requests.jsonl").write_text(json.dumps(rec(100.5, "cp2", 1.2)) + "\n")
    assert els.main([str(tmp_path)]) == 0
    rows = capsys.readouterr().out.splitlines()[2:]
    assert rows[0].startswith("| 2-k1 | cp1 | 1 s | 1.5 s | 1 / 1.20 s / 0 |")
    assert rows[1].startswith("| 10-g30 |")
    assert len(json.loads((tmp_path / "etcd-leader.json").read_text())) == 2
