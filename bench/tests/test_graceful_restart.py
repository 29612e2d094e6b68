"""Unit tests of bench/graceful_restart.py's pure parts (variants, the summary, the table)."""

from __future__ import annotations

import argparse
from collections import Counter

import pytest

from bench import graceful_restart as gr  # imports the harness: tests/harness must be on PYTHONPATH (hack/test.sh)


def test_variants_parse_to_flag_maps():
    assert gr.parse_variant("kubeadm=") == ("kubeadm", {})
    assert gr.parse_variant("d=--shutdown-delay-duration=5s,shutdown-send-retry-after=true") == (
        "d",
        {"shutdown-delay-duration": "5s", "shutdown-send-retry-after": "true"},
    )
    for bad in ("nameonly", "=x=1", "d=shutdown-delay-duration"):
        with pytest.raises(argparse.ArgumentTypeError):
            gr.parse_variant(bad)
    assert gr.parse_variant(gr.DEFAULT_VARIANTS[0])[0] == "kubeadm"


class FakeWatchers:
    opened, failed = 3, Counter(ProtocolError=2)


def test_summary_counts_retry_after_apart_from_other_errors():
    records = [
        {"t": 1, "target": "lb-lab", "kind": "core", "status": 200},
        {"t": 2, "target": "lb-lab", "kind": "core", "status": 429, "error": gr.SHUTTING_DOWN + ", please try again"},
        {"t": 3, "target": "lb-lab", "kind": "core", "status": None, "error": "ProtocolError: reset"},
        {"t": 4, "target": "lb-lab", "kind": "core", "status": None, "skipped": True},
    ]
    summary = gr.summarize(records, FakeWatchers())
    assert (summary["errors"], summary["retry_after_429"], summary["errors_without_retry_after"]) == (2, 1, 1)
    assert summary["outcomes"] == {"ok": 1, "http_error": 1, "transport_error": 1, "not_sent": 1}
    assert summary["watch_failures"] == {"ProtocolError": 2}


def test_table_has_a_row_per_variant_with_exit_times_and_both_balancers():
    balancer = {"errors": 1, "retry_after_429": 0, "requests": 10, "errors_by_text": [["- reset", 1]]}
    result = {
        "meta": {
            "started_utc": "now",
            "command": "c",
            "version": "1.37.2",
            "cpus": 2,
            "rounds": 1,
            "rate": 20,
            "workers": 4,
            "watches": 4,
            "grace": 30,
            "wall_s": 1,
        },
        "variants": {
            "kubeadm": {
                "flags": {},
                "restarts": [{"exit_s": 30.0, "killed": True}] * 3,
                "balancers": {name: balancer for name in gr.BALANCERS},
            },
        },
    }
    text = gr.markdown(result)
    assert "| kubeadm | (kubeadm's defaults) | 30.0 (30.0) | 3 | 1 (0) of 10 | 1 (0) of 10 |" in text
    assert "kubeadm, lab: 1 x `- reset`" in text
