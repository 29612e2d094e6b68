"""The mvp_check polling loop (module_utils/_mvp/run.py), with the collector replaced (no network)."""

from __future__ import annotations

import pytest
from conftest import FakeClock

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp import run as _mvp_run
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.collect import CollectError
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.evaluate import MVP_HOOKS


def evidence(hooks_ok=True):
    servers = []
    for i, version in enumerate(["v1.36.5", "v1.36.5"], 1):
        servers.append(
            {
                "name": f"cp-{i}",
                "endpoint": f"https://10.0.0.{i}:6443",
                "hostname": f"cp-{i}",
                "error": None,
                "version": version,
                "ready": True,
                "hooks": {**dict.fromkeys(MVP_HOOKS, "ok"), "peer-discovery-workers": "ok"}
                if hooks_ok or i == 1
                else {},
                "metrics": {"rerouted": [], "proxy_errors": {}, "sync_errors": {}},
                "local": set(),
                "merged": set(),
            }
        )
    leases = [
        {"name": f"l{i}", "hostname": f"cp-{i}", "holder": "h", "renew_age": 1.0, "peer_address": f"10.0.0.{i}:6443"}
        for i in (1, 2)
    ]
    return {"servers": servers, "leases": leases, "peer_tls": {}, "requestheader": {}, "probes": []}


class FakeCollector:
    def __init__(self, rounds):
        self.rounds = list(rounds)
        self.client = type("C", (), {"requests": 0})()

    def collect(self, endpoints, mode):
        self.client.requests += 10
        answer = self.rounds.pop(0) if len(self.rounds) > 1 else self.rounds[0]
        if isinstance(answer, Exception):
            raise answer
        return answer


def run(monkeypatch, rounds, **params):
    collector = FakeCollector(rounds)
    monkeypatch.setattr(_mvp_run, "build_collector", lambda p: (collector, [{"url": "https://10.0.0.1:6443"}]))
    clock = FakeClock()
    base = {"mode": "steady", "wait_timeout": 60, "wait_sleep": 5, "success_threshold": 2, "fail_fast": True}
    base.update(params)
    lines = []
    return _mvp_run.check_until_proved(base, sleep=clock.sleep, clock=clock, progress=lines.append), lines


def test_needs_consecutive_passes(monkeypatch):
    result, lines = run(monkeypatch, [evidence(), evidence()], success_threshold=3)
    assert result["passed"] and result["attempts"] == 3
    assert result["changed"] is False
    assert len(lines) == 3 and lines[0].startswith("round 1")


def test_fail_fast_on_permanent_cause(monkeypatch):
    result, _lines = run(monkeypatch, [evidence(hooks_ok=False)])
    assert not result["passed"]
    assert result["attempts"] == 2
    assert result["failed_checks"][0]["cause"] == "no_peer_ca_file"
    assert "cp-2" in result["msg"]


def test_waits_until_timeout_without_fail_fast(monkeypatch):
    result, _lines = run(monkeypatch, [evidence(hooks_ok=False)], fail_fast=False, wait_timeout=30)
    assert not result["passed"]
    assert result["attempts"] == 7  # rounds at t = 0, 5, ..., 30
    assert result["history"]["readiness"]["failed"] == 7


def test_recovers_when_cluster_heals(monkeypatch):
    result, _lines = run(monkeypatch, [evidence(hooks_ok=False), evidence(), evidence()], fail_fast=True)
    assert result["passed"] and result["attempts"] == 3


def test_unknown_check_is_refused(monkeypatch):
    with pytest.raises(_mvp_run.RunError, match="unknown checks"):
        run(monkeypatch, [evidence()], checks=["nope"])


@pytest.mark.parametrize(
    "params, message",
    [
        ({"endpoints": ["http://10.0.0.1:6443"]}, "https://"),
        ({"endpoints": [{"name": "a"}]}, "mapping with 'url'"),
        ({"endpoints": [{"url": "https://a", "name": "x"}, {"url": "https://b", "name": "x"}]}, "unique"),
        ({"front_proxy_client_cert": "/x"}, "together"),
        ({"validate_certs": False}, "never turns TLS verification off"),
    ],
)
def test_bad_input_is_refused_before_any_request(params, message):
    with pytest.raises(_mvp_run.RunError, match=message):
        _mvp_run.build_collector({"probe_limit": 2, **params})


def refused(error="Failed to establish a new connection: [Errno 111] Connection refused"):
    rounds = evidence()
    rounds["servers"][1].update(error=error, error_kind="endpoint_refused", version=None)
    return rounds


def test_a_refusing_endpoint_stops_the_gate_after_a_minute_not_after_wait_timeout(monkeypatch):
    """Nothing listening is what a restart looks like for a while, so it is waited on, but not for 5 minutes."""
    result, _lines = run(monkeypatch, [refused()], wait_timeout=300)
    assert not result["passed"]
    assert "endpoint_refused" in {c["cause"] for c in result["failed_checks"]}
    assert 60 <= result["elapsed"] <= 75, result["elapsed"]
    # a server that comes back within the minute passes
    healed, _lines = run(monkeypatch, [refused()] * 6 + [evidence()], wait_timeout=300)
    assert healed["passed"]


@pytest.mark.parametrize(
    "kind", ["endpoint_unauthorized", "endpoint_forbidden", "endpoint_unresolvable", "endpoint_tls"]
)
def test_controller_side_failures_stop_at_once_and_say_so(monkeypatch, kind):
    error = CollectError("cannot list kube-apiserver identity leases (https://10.0.0.1:6443: 401)", kind)
    result, _lines = run(monkeypatch, [error], wait_timeout=300)
    assert not result["passed"] and result["attempts"] == 2
    assert result["failed_checks"][0]["cause"] == kind
    assert "controller side" in result["msg"]


def test_a_slow_endpoint_is_waited_on(monkeypatch):
    slow = evidence()
    slow["servers"][1].update(error="Read timed out. (read timeout=5.0)", error_kind="endpoint_timeout", version=None)
    result, _lines = run(monkeypatch, [slow], wait_timeout=120)
    assert not result["passed"] and result["elapsed"] >= 115


def test_mixed_versions_serving_the_same_resources_pass_as_nothing_to_proxy_never_as_a_proof(monkeypatch):
    """1.37 and 1.38 may serve the same built-in resources: the gate passes on the configuration and says that
    nothing was there to proxy (outcome nothing_to_proxy), not 'MVP proved' over zero probes."""
    mixed = evidence()
    mixed["servers"][1]["version"] = "v1.37.2"
    mixed["probe_plan"] = {"cp-1": {"peer_only": [], "probed": []}}
    result, _lines = run(monkeypatch, [mixed], mode="mixed", checks=["versions", "readiness", "proxy_probe"])
    assert result["passed"] is True and result["outcome"] == "nothing_to_proxy"
    assert result["msg"].startswith("no resource differs between v1.36.5 and v1.37.2; configuration proved")
    assert "MVP proved" not in result["msg"]


def test_a_timeout_before_enough_passing_rounds_is_not_called_proved(monkeypatch):
    result, _lines = run(monkeypatch, [evidence()], success_threshold=30, wait_timeout=20)
    assert result["passed"] is False and result["outcome"] == "failed"
    assert result["msg"].startswith("MVP not proved: ") and "30 needed" in result["msg"]
