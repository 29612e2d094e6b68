"""Dialling peers as kube-apiserver does: retries, addresses, and the input mvp_check takes."""

from __future__ import annotations

import pytest
from conftest import FakeClock

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.args import normalize_peer_dials
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._peer_dial import (
    dial_peers,
    peer_tls_handshake,
    split_address,
)


@pytest.mark.parametrize(
    "address, expected",
    [("10.0.0.1:6443", ("10.0.0.1", 6443)), ("[fd00::1]:6443", ("fd00::1", 6443)), ("cp-1", ("cp-1", 443))],
)
def test_split_address(address, expected):
    assert split_address(address) == expected


def test_a_peer_that_restarts_is_dialled_again_until_it_answers():
    answers = {"a:1": ["refused", "refused", None], "b:2": [None]}
    calls = []

    def handshake(host, port, ca, timeout):
        calls.append(f"{host}:{port}")
        queue = answers[f"{host}:{port}"]
        return queue.pop(0) if len(queue) > 1 else queue[0]

    clock = FakeClock()
    dials = dial_peers(
        ["a:1", "b:2"], "ca", wait_timeout=30, wait_sleep=2, handshake=handshake, sleep=clock.sleep, clock=clock
    )
    assert dials == [{"address": "a:1", "error": None}, {"address": "b:2", "error": None}]
    assert calls == ["a:1", "b:2", "a:1", "a:1"]  # a verified peer is not dialled again


def test_a_peer_that_never_answers_is_reported_after_the_wait():
    clock = FakeClock()
    dials = dial_peers(
        ["a:1"], "ca", wait_timeout=10, wait_sleep=2, handshake=lambda *a: "timed out", sleep=clock.sleep, clock=clock
    )
    assert dials == [{"address": "a:1", "error": "timed out"}]
    assert 8 <= clock.now <= 10


def test_a_missing_peer_ca_is_named(tmp_path):
    error = peer_tls_handshake("127.0.0.1", 9, str(tmp_path / "missing.crt"), timeout=1)
    assert error.startswith(f"cannot load peer CA {tmp_path / 'missing.crt'}")


def test_a_loop_of_dial_results_is_taken_as_it_is():
    results = [{"item": "cp-1", "node": "sslab-cp1", "dials": [{"address": "a:1", "error": None}], "changed": False}]
    assert normalize_peer_dials(results) == [{"node": "sslab-cp1", "dials": [{"address": "a:1", "error": None}]}]
    assert normalize_peer_dials(None) is None


@pytest.mark.parametrize("bad", [[{"skipped": True}], [{"dials": [{"error": None}]}], ["cp-1"]])
def test_anything_else_is_refused_with_what_is_expected(bad):
    with pytest.raises(ValueError, match="must be an apiserver_peer_dial_info result"):
        normalize_peer_dials(bad)
