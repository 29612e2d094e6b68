"""The collector and checks replayed on answers recorded from real kube-apiservers.

fixtures/mvp-healthy-mixed.json: every request the collector made to a healthy mixed control
plane (cp-1, cp-2 at the older pin with --peer-ca-file, cp-3 at the newer one), recorded by
``python -m skewsafe_harness record-mvp`` (see fixtures/README.md). Failure cases edit the
recorded answers the way the real servers answered in tests/integration/test_mvp_check.py.
"""

from __future__ import annotations

import copy
import datetime
import json
from pathlib import Path

import pytest

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _mvp_collect
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._apiserver_http import Response
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp import evaluate
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp_collect import Collector

RECORDING = json.loads((Path(__file__).parent / "fixtures" / "mvp-healthy-mixed.json").read_text())


def request_key(base_url, path, headers=None):
    extra = ";".join(f"{k}={v}" for k, v in sorted((headers or {}).items()))
    return f"{base_url}{path} [{extra}]"


class ReplayClient:
    def __init__(self, responses):
        self.responses = copy.deepcopy(responses)
        self.requests = 0

    def get(self, base_url, path, headers=None):
        self.requests += 1
        answers = self.responses.get(request_key(base_url, path, headers))
        if not answers:
            return Response(None, {}, b"", error=f"not recorded: {base_url}{path}")
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        return Response(answer["status"], {}, answer["body"].encode(), error=answer["error"])


@pytest.fixture
def responses():
    return copy.deepcopy(RECORDING["responses"])


@pytest.fixture(autouse=True)
def recorded_clock(monkeypatch):
    leases = next(v for k, v in RECORDING["responses"].items() if "/leases?" in k)[0]
    renewed = max(item["spec"]["renewTime"] for item in json.loads(leases["body"])["items"])
    now = datetime.datetime.fromisoformat(renewed.replace("Z", "+00:00")) + datetime.timedelta(seconds=2)
    monkeypatch.setattr(_mvp_collect, "_now", lambda: now)


def run(responses, mode="mixed"):
    client = ReplayClient(responses)
    evidence = Collector(client, peer_ca_file=None, probe_limit=2).collect(RECORDING["endpoints"], mode)
    return evidence, evaluate(evidence, mode), client.requests


def endpoint(name):
    return next(e["url"] for e in RECORDING["endpoints"] if e["name"] == name)


def failing(results):
    return {(r["server"], r["cause"]) for r in results if not r["passed"]}


def test_recorded_healthy_mixed_control_plane_passes(responses):
    evidence, results, requests = run(responses)
    assert failing(results) == set()
    assert [s["version"].split(".")[1] for s in evidence["servers"]] == ["36", "36", "37"]
    probes = evidence["probes"]
    assert {p["server"] for p in probes} == {"cp-1", "cp-2"}
    assert all(p["status"] == 200 and p["status_local"] == 404 for p in probes)
    assert all(p["rerouted_after"] > p["rerouted_before"] for p in probes)
    # one leases call + 6 per server + per old server 2 probes x 2 + 1 metrics
    assert requests == 1 + 3 * 6 + 2 * (2 * 2 + 1)


def test_recorded_new_only_resources_are_found_by_diffing(responses):
    evidence, _results, _n = run(responses)
    old, new = evidence["servers"][0], evidence["servers"][2]
    assert new["local"] - old["local"]
    assert set(old["merged"] - old["local"]) == {g for g in new["local"] - old["local"] if g[0]}


def test_recorded_without_mvp_hooks_is_no_peer_ca_file(responses):
    key = request_key(endpoint("cp-2"), "/readyz?verbose")
    responses[key][0]["body"] = "\n".join(
        line
        for line in responses[key][0]["body"].splitlines()
        if "mixed-version-proxy" not in line and "peer-discovery" not in line and "local-discovery" not in line
    )
    _evidence, results, _n = run(responses)
    assert ("cp-2", "no_peer_ca_file") in failing(results)


def test_recorded_steady_mode_is_refused(responses):
    _evidence, results, _n = run(responses, mode="steady")
    assert (None, "mode_mismatch") in failing(results)
