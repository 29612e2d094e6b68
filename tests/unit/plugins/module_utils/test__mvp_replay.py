"""The collector and checks replayed on answers recorded from real kube-apiservers.

fixtures/mvp-healthy-mixed*.json: every request the collector made to a healthy mixed control
plane (cp-1, cp-2 at the older version with --peer-ca-file, and the gate where MVP is alpha, cp-3 at
the newer one), recorded by ``python -m skewsafe_harness record-mvp`` (see fixtures/README.md), one
file per harness pair: mvp-healthy-mixed.json for 1.36.5/1.37.2, mvp-healthy-mixed-v1.35.4-v1.36.5.json. Failure cases edit the
recorded answers the way the real servers answered in tests/integration/test_mvp_check.py.
"""

from __future__ import annotations

import copy
import datetime
import json
from pathlib import Path

import pytest

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._apiserver_http import Response
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp import collect as _mvp_collect
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.collect import Collector
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.evaluate import evaluate

RECORDINGS = sorted((Path(__file__).parent / "fixtures").glob("mvp-healthy-mixed*.json"))


def request_key(base_url, path, headers=None):
    extra = ";".join(f"{k}={v}" for k, v in sorted((headers or {}).items()))
    return f"{base_url}{path} [{extra}]"


class ReplayClient:
    def __init__(self, responses):
        self.responses = copy.deepcopy(responses)
        self.requests = 0

    def get(self, base_url, path, headers=None, timeout=None):
        self.requests += 1
        answers = self.responses.get(request_key(base_url, path, headers))
        if not answers:
            return Response(None, {}, b"", error=f"not recorded: {base_url}{path}")
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        return Response(answer["status"], {}, answer["body"].encode(), error=answer["error"])


@pytest.fixture(params=RECORDINGS, ids=lambda p: p.stem)
def recording(request):
    return json.loads(request.param.read_text())


@pytest.fixture
def responses(recording):
    return copy.deepcopy(recording["responses"])


@pytest.fixture(autouse=True)
def recorded_clock(monkeypatch, recording):
    leases = next(v for k, v in recording["responses"].items() if "/leases?" in k)[0]
    renewed = max(item["spec"]["renewTime"] for item in json.loads(leases["body"])["items"])
    now = datetime.datetime.fromisoformat(renewed.replace("Z", "+00:00")) + datetime.timedelta(seconds=2)
    monkeypatch.setattr(_mvp_collect, "_now", lambda: now)


def run(recording, responses, mode="mixed"):
    client = ReplayClient(responses)
    evidence = Collector(client, peer_ca_file=None, probe_limit=2).collect(recording["endpoints"], mode)
    return evidence, evaluate(evidence, mode), client.requests


def endpoint(recording, name):
    return next(e["url"] for e in recording["endpoints"] if e["name"] == name)


def failing(results):
    return {(r["server"], r["cause"]) for r in results if not r["passed"]}


def test_both_pairs_are_recorded():
    # the alpha pair (1.35 sources: other hook names, rerouted counter labelled by code only) and the lab's
    assert len(RECORDINGS) >= 2, RECORDINGS


def test_recorded_healthy_mixed_control_plane_passes(recording, responses):
    evidence, results, requests = run(recording, responses)
    assert failing(results) == set()
    old = int(evidence["servers"][0]["version"].split(".")[1])
    assert [int(s["version"].split(".")[1]) for s in evidence["servers"]] == [old, old, old + 1]
    probes = evidence["probes"]
    assert {p["server"] for p in probes} == {"cp-1", "cp-2"}
    assert all(p["status"] == 200 and p["status_local"] == 404 for p in probes)
    assert all(p["rerouted_after"] > p["rerouted_before"] for p in probes)
    assert all(p["body"] == "" for p in probes), "a served object's body must stay out of the evidence"
    # one leases call + 6 per server + per old server 2 probes x 2 + 1 metrics
    assert requests == 1 + 3 * 6 + 2 * (2 * 2 + 1)


def test_recorded_new_only_resources_are_found_by_diffing(recording, responses):
    evidence, _results, _n = run(recording, responses)
    old, new = evidence["servers"][0], evidence["servers"][2]
    assert new["local"] - old["local"]
    assert set(old["merged"] - old["local"]) == {g for g in new["local"] - old["local"] if g[0]}


def test_recorded_without_mvp_hooks_is_no_peer_ca_file(recording, responses):
    key = request_key(endpoint(recording, "cp-2"), "/readyz?verbose")
    responses[key][0]["body"] = "\n".join(
        line
        for line in responses[key][0]["body"].splitlines()
        if "mixed-version-proxy" not in line and "peer-discovery" not in line and "local-discovery" not in line
    )
    _evidence, results, _n = run(recording, responses)
    assert ("cp-2", "no_peer_ca_file") in failing(results)


def test_recorded_steady_mode_is_refused(recording, responses):
    _evidence, results, _n = run(recording, responses, mode="steady")
    assert (None, "mode_mismatch") in failing(results)


def test_recorded_hooks_and_counter_labels_of_each_version(recording, responses):
    """What the real servers answered: the peer discovery hook's name and the rerouted counter's labels."""
    evidence, _results, _n = run(recording, responses)
    for s in evidence["servers"]:
        alpha = s["version"].startswith("v1.35.")
        peer_hooks = {h for h, state in s["hooks"].items() if h.startswith("peer-discovery") and state == "ok"}
        if s["name"] != "cp-3":  # the old servers proxy; their hooks prove it
            assert peer_hooks == ({"peer-discovery-cache-sync"} if alpha else {"peer-discovery-workers"}), s["hooks"]
        rerouted = s["metrics"].get("rerouted", [])
        if rerouted:
            assert {r["by_gvr"] for r in rerouted} == {not alpha}, rerouted


def test_recorded_old_server_whose_counter_stays_is_not_counted(recording, responses):
    """The rerouted counter not rising after a 200 is proxy_not_counted, with code-only labels (1.35) too."""
    key = request_key(endpoint(recording, "cp-1"), "/metrics")
    first = responses[key][0]
    responses[key] = [first, copy.deepcopy(first)]  # the same counter before and after the probes
    _evidence, results, _n = run(recording, responses)
    assert ("cp-1", "proxy_not_counted") in failing(results)


def test_recorded_metrics_that_cannot_be_read_are_not_blamed_on_the_proxy(recording, responses):
    """A /metrics download that times out after the probes: the count is unknown, not zero (metrics_unavailable,
    which the next round can fix), where it used to be proxy_not_counted."""
    key = request_key(endpoint(recording, "cp-1"), "/metrics")
    first = responses[key][0]
    responses[key] = [first, {"status": None, "body": "", "error": "Read timed out. (read timeout=15.0)"}]
    _evidence, results, _n = run(recording, responses)
    assert ("cp-1", "metrics_unavailable") in failing(results)
    assert ("cp-1", "proxy_not_counted") not in failing(results)


def lease_addresses(recording):
    leases = next(v for k, v in recording["responses"].items() if "/leases?" in k)[0]
    items = json.loads(leases["body"])["items"]
    return {
        item["metadata"]["labels"]["kubernetes.io/hostname"]: item["metadata"]["annotations"][
            _mvp_collect.PEER_ADDRESS_ANNOTATION
        ]
        for item in items
    }


def node_dials(recording, errors=None):
    """What apiserver_peer_dial_info on each node returns; ``errors``: {(node, peer host name): text}."""
    addresses = lease_addresses(recording)
    return [
        {
            "node": node,
            "dials": [{"address": a, "error": (errors or {}).get((node, peer))} for peer, a in addresses.items()],
        }
        for node in sorted(addresses)
    ]


def run_with_dials(recording, responses, dials, mode="mixed"):
    # A peer CA is set: without the nodes' dials the controller would dial (a real socket) and the test would fail.
    collector = Collector(ReplayClient(responses), peer_ca_file="/nonexistent/ca.crt", probe_limit=2, peer_dials=dials)
    evidence = collector.collect(recording["endpoints"], mode)
    return evidence, evaluate(evidence, mode)


def test_the_nodes_dials_judge_peer_tls_and_name_the_node(recording, responses):
    evidence, results = run_with_dials(recording, responses, node_dials(recording))
    assert failing(results) == set()
    assert evidence["peer_tls"]["cp-3"]["from"] == ["cp-1", "cp-2", "cp-3"]
    passed = {r["server"]: r["detail"] for r in results if r["check"] == "peer_tls"}
    assert passed["cp-3"].endswith("verified as kubernetes.default.svc from cp-1, cp-2, cp-3")

    _evidence, results = run_with_dials(
        recording, copy.deepcopy(recording["responses"]), node_dials(recording, {("cp-1", "cp-3"): "timed out"})
    )
    assert ("cp-3", "peer_unreachable") in failing(results)
    detail = next(r["detail"] for r in results if r["check"] == "peer_tls" and not r["passed"])
    assert "from cp-1: timed out" in detail


def test_a_server_only_the_controller_cannot_reach_is_judged_by_the_nodes(recording, responses):
    cp3 = endpoint(recording, "cp-3")
    for key in [k for k in responses if k.startswith(cp3)]:
        del responses[key]  # the controller's requests to cp-3 fail; the nodes reach it
    evidence, results = run_with_dials(recording, responses, node_dials(recording))
    assert evidence["peer_tls"]["cp-3"]["error"] is None
    found = failing(results)
    assert ("cp-3", "endpoint_unreachable_here") in found
    assert not any(cause in ("crashed_peer", "peer_unreachable") for _s, cause in found), found
