"""Pure MVP checks: hand-made evidence for each failure signature."""

from __future__ import annotations

import copy

import pytest

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.evaluate import (
    CAUSES,
    MVP_HOOKS,
    classify_endpoint_error,
    classify_tls_error,
    evaluate,
    missing_mvp_hooks,
    roles,
    summarize,
)
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.run import resolve_mode

OLD_ONLY = {("", "v1", "pods"), ("apps", "v1", "deployments")}
NEW_ONLY = ("storagemigration.k8s.io", "v1", "storageversionmigrations")
# /readyz?verbose post-start hooks of a proxying 1.36.5 / 1.37.2 server (and of a 1.35.4 one: HOOKS_OK_135)
HOOKS_OK = {**dict.fromkeys(MVP_HOOKS, "ok"), "peer-discovery-workers": "ok"}
HOOKS_OK_135 = {**dict.fromkeys(MVP_HOOKS, "ok"), "peer-discovery-cache-sync": "ok"}


def server(name, version, host, merged_extra=(), hooks=None, **extra):
    local = set(OLD_ONLY) | ({NEW_ONLY} if version.startswith("v1.37") else set())
    return {
        "name": name,
        "endpoint": f"https://10.0.0.{host}:6443",
        "hostname": name,
        "error": None,
        "version": version,
        "ready": True,
        "hooks": dict(HOOKS_OK if hooks is None else hooks),
        "metrics": {"rerouted": [], "proxy_errors": {}, "sync_errors": {}},
        "local": local,
        "merged": local | set(merged_extra),
        **extra,
    }


def lease(name, host, age=3.0, address=True):
    return {
        "name": f"apiserver-{name}",
        "hostname": name,
        "holder": f"apiserver-{name}_x",
        "renew_age": age,
        "peer_address": f"10.0.0.{host}:6443" if address else None,
    }


def probe(name, status=200, status_local=404, before=0.0, after=1.0, body=""):
    return {
        "server": name,
        "gvr": NEW_ONLY,
        "path": "/x",
        "status": status,
        "status_local": status_local,
        "rerouted_before": before,
        "rerouted_after": after,
        "body": body,
    }


@pytest.fixture
def healthy():
    servers = [
        server("cp-1", "v1.36.5", 1, merged_extra=[NEW_ONLY]),
        server("cp-2", "v1.36.5", 2, merged_extra=[NEW_ONLY]),
        server("cp-3", "v1.37.2", 3),
    ]
    return {
        "servers": servers,
        "leases": [lease("cp-1", 1), lease("cp-2", 2), lease("cp-3", 3)],
        "peer_tls": {s["name"]: {"address": s["endpoint"][8:], "error": None} for s in servers},
        "requestheader": {},
        "probes": [probe("cp-1"), probe("cp-2")],
    }


def failing(results):
    return {(r["server"], r["cause"]) for r in results if not r["passed"]}


def test_healthy_mixed_passes(healthy):
    results = evaluate(healthy, "mixed", baseline={"cp-1": 0, "cp-2": 0, "cp-3": 0})
    assert failing(results) == set()
    assert {r["check"] for r in results} == {
        "versions",
        "identity_leases",
        "readiness",
        "peer_tls",
        "discovery_merge",
        "proxy_probe",
        "proxy_errors",
    }
    assert summarize(results).startswith("MVP proved")


def test_roles_split_by_version(healthy):
    assert roles(healthy["servers"]) == (["cp-1", "cp-2"], ["cp-3"])
    same = [server("a", "v1.36.5", 1), server("b", "v1.36.5", 2)]
    assert roles(same) == (["a", "b"], [])


def test_no_peer_ca_file_on_old_server(healthy):
    healthy["servers"][1]["hooks"] = {}
    healthy["servers"][1]["merged"] = set(healthy["servers"][1]["local"])
    healthy["probes"][1] = probe("cp-2", status=404, after=0)
    found = failing(evaluate(healthy, "mixed"))
    assert ("cp-2", "no_peer_ca_file") in found
    assert all(server == "cp-2" for server, _c in found)


def test_new_server_without_peer_ca_file_is_fine_in_mixed_but_not_steady(healthy):
    healthy["servers"][2]["hooks"] = {}
    assert failing(evaluate(healthy, "mixed")) == set()
    olds = copy.deepcopy(healthy)
    olds["servers"] = [server("cp-1", "v1.36.5", 1), server("cp-2", "v1.36.5", 2, hooks={})]
    olds["leases"] = olds["leases"][:2]
    olds["probes"] = []
    assert failing(evaluate(olds, "steady")) == {("cp-2", "no_peer_ca_file")}


def test_gate_off_on_destination_is_blamed_on_destination(healthy):
    healthy["leases"][2]["peer_address"] = None
    for s in healthy["servers"][:2]:
        s["merged"] = set(s["local"])
        s["metrics"]["sync_errors"] = {"hostport_resolution": 5.0}
    healthy["probes"] = [probe("cp-1", status=404, after=0), probe("cp-2", status=404, after=0)]
    found = failing(evaluate(healthy, "mixed"))
    assert found == {("cp-3", "gate_off")}


def test_gate_off_on_a_server_not_enabled_yet_passes_while_enabling_one_by_one():
    # 1.35, mvp_enable after the first control plane: its gate and --peer-ca-file are on, the others
    # still run kubeadm's defaults (gate off), and nothing proxies to them in this round.
    ev = {
        "servers": [
            server("cp-1", "v1.35.4", 1, hooks=HOOKS_OK_135),
            server("cp-2", "v1.35.4", 2, hooks={}),
            server("cp-3", "v1.35.4", 3, hooks={}),
        ],
        "leases": [lease("cp-1", 1), lease("cp-2", 2, address=False), lease("cp-3", 3, address=False)],
        "peer_tls": {},
        "requestheader": {},
        "probes": [],
    }
    assert failing(evaluate(ev, "steady", sources=["cp-1"])) == set()
    assert failing(evaluate(ev, "steady")) >= {("cp-2", "gate_off"), ("cp-3", "gate_off")}


def test_gate_off_on_the_new_server_fails_with_sources_given_in_mixed_mode(healthy):
    healthy["leases"][2]["peer_address"] = None
    assert ("cp-3", "gate_off") in failing(evaluate(healthy, "mixed", sources=["cp-1"]))


@pytest.mark.parametrize(
    "error, cause",
    [
        ("certificate verify failed: unable to get local issuer certificate", "peer_ca_mismatch"),
        (
            "certificate verify failed: Hostname mismatch, certificate is not valid for 'kubernetes.default.svc'.",
            "peer_san_missing",
        ),
        ("[Errno 113] No route to host", "peer_unreachable"),
        ("timed out", "peer_unreachable"),
    ],
)
def test_destination_tls_failures(healthy, error, cause):
    healthy["peer_tls"]["cp-3"]["error"] = error
    for s in healthy["servers"][:2]:
        s["merged"] = set(s["local"])
    healthy["probes"] = [probe("cp-1", status=404, after=0)]
    assert classify_tls_error(error) == cause
    found = failing(evaluate(healthy, "mixed"))
    assert ("cp-3", cause) in found
    assert {c for _s, c in found} == {cause}


def test_source_with_wrong_peer_ca_is_blamed_on_source(healthy):
    s = healthy["servers"][1]
    s["merged"] = set(s["local"])
    s["metrics"]["rerouted"] = [{"code": "503", "group": "", "version": "", "resource": "", "value": 12.0}]
    healthy["probes"][1] = probe("cp-2", status=404, after=0)
    found = failing(evaluate(healthy, "mixed"))
    assert found == {("cp-2", "peer_ca_mismatch")}


def test_proxy_client_rejected(healthy):
    for s in healthy["servers"][:2]:
        s["merged"] = set(s["local"])
        s["metrics"]["rerouted"] = [{"code": "401", "group": "", "version": "", "resource": "", "value": 3.0}]
    healthy["probes"] = [probe("cp-1", status=404, after=0)]
    assert {c for _s, c in failing(evaluate(healthy, "mixed"))} == {"proxy_client_rejected"}


def test_crashed_peer_still_listed(healthy):
    dead = healthy["servers"][2]
    for key in ("version", "ready", "hooks", "metrics", "local", "merged"):
        dead.pop(key)
    dead["error"] = "Connection refused"
    healthy["leases"][2]["renew_age"] = 60.0  # not renewed since the crash
    healthy["probes"] = [probe("cp-1", status=503, body="Error getting ip and port info of the remote server")]
    found = failing(evaluate(healthy, "mixed"))
    assert ("cp-3", "crashed_peer") in found
    assert ("cp-1", "crashed_peer") in found


def test_a_server_that_renews_its_lease_but_does_not_answer_here_is_not_called_crashed(healthy):
    # A controller on another network: the server runs (fresh lease), only the path from here fails.
    far = healthy["servers"][2]
    for key in ("version", "ready", "hooks", "metrics", "local", "merged"):
        far.pop(key)
    far["error"], far["error_kind"] = "timed out", "unreachable_endpoint"
    results = evaluate(healthy, "mixed")
    assert ("cp-3", "endpoint_unreachable_here") in failing(results)
    assert ("cp-3", "crashed_peer") not in failing(results)
    assert "from where the check runs" in summarize(results)


def test_stale_lease_without_endpoint_is_a_crashed_peer(healthy):
    healthy["leases"].append(lease("cp-9", 9, age=600))
    assert ("cp-9", "crashed_peer") in failing(evaluate(healthy, "mixed"))


def test_missing_lease_names_the_63_byte_rule(healthy):
    del healthy["leases"][2]
    results = evaluate(healthy, "mixed")
    assert ("cp-3", "lease_missing") in failing(results)
    assert "63 bytes" in summarize(results)


def test_duplicate_host_names_share_one_lease(healthy):
    healthy["servers"][1]["hostname"] = "cp-1"
    healthy["leases"] = [lease("cp-1", 1), lease("cp-3", 3)]
    healthy["servers"][1]["endpoint"] = "https://10.0.0.1:6443"  # the shared lease advertises one address
    found = failing(evaluate(healthy, "mixed"))
    assert any(cause == "duplicate_hostname" for _s, cause in found)


def test_probe_outcomes(healthy):
    healthy["probes"] = [
        probe("cp-1", status_local=200),
        probe("cp-2", after=0.0),
    ]
    found = failing(evaluate(healthy, "mixed"))
    assert found == {("cp-1", "negative_control_failed"), ("cp-2", "proxy_not_counted")}


def test_version_skew_and_mode(healthy):
    healthy["servers"][2]["version"] = "v1.38.0"
    assert (None, "version_skew") in failing(evaluate(healthy, "mixed"))
    assert (None, "mode_mismatch") in failing(evaluate(healthy, "steady"))


def test_a_patch_release_mix_is_steady(healthy):
    # 1.37.1 and 1.37.2 serve the same resources: nothing to proxy, every server a source, no probes
    for s, version in zip(healthy["servers"], ("v1.37.1", "v1.37.1", "v1.37.2")):
        s["version"] = version
        s["local"] = set(OLD_ONLY) | {NEW_ONLY}
        s["merged"] = set(s["local"])
    healthy["probes"] = []
    assert failing(evaluate(healthy, "steady")) == set()
    assert resolve_mode("auto", healthy) == "steady"
    # different minors are never steady
    healthy["servers"][2]["version"] = "v1.38.0"
    assert (None, "mode_mismatch") in failing(evaluate(healthy, "steady"))
    assert resolve_mode("auto", healthy) == "mixed"


def test_errors_rising_against_baseline(healthy):
    healthy["servers"][0]["metrics"]["proxy_errors"] = {"proxy_transport": 2.0}
    assert failing(evaluate(healthy, "mixed", baseline={"cp-1": 0.0, "cp-2": 0.0, "cp-3": 0.0})) == {
        ("cp-1", "proxy_errors_rising")
    }
    assert failing(evaluate(healthy, "mixed", baseline={"cp-1": 2.0, "cp-2": 0.0, "cp-3": 0.0})) == set()


def test_every_cause_has_a_remedy():
    for key, (summary, remedy, _permanent) in CAUSES.items():
        assert summary and remedy, key


def test_summary_names_server_cause_and_remedy(healthy):
    healthy["servers"][1]["hooks"] = {}
    msg = summarize(evaluate(healthy, "mixed"))
    assert msg.startswith("MVP not proved: cp-2: kube-apiserver runs without --peer-ca-file")
    assert "mvp_enable" in msg


def test_wrong_peer_ca_in_steady_state_shows_as_rising_discovery_503s(healthy):
    # Seen on the lab: all at one version, nothing to merge, but the server's peer discovery calls fail.
    steady = copy.deepcopy(healthy)
    for s in steady["servers"]:
        s["version"], s["local"] = "v1.36.5", set(OLD_ONLY)
        s["merged"] = set(OLD_ONLY)
    steady["probes"] = []
    steady["servers"][2]["metrics"]["rerouted"] = [
        {"code": "503", "group": "", "version": "", "resource": "", "value": 136.0}
    ]
    baseline = {"cp-1": 0.0, "cp-2": 0.0, "cp-3": 120.0}
    assert failing(evaluate(steady, "steady", baseline=baseline)) == {("cp-3", "peer_ca_mismatch")}
    # A destination that fails TLS from here is blamed instead of the server that sees the errors.
    steady["peer_tls"]["cp-1"]["error"] = "certificate verify failed: unable to get local issuer certificate"
    found = failing(evaluate(steady, "steady", baseline=baseline))
    assert ("cp-1", classify_tls_error(steady["peer_tls"]["cp-1"]["error"])) in found


def test_every_server_below_the_highest_version_is_a_proxy_source():
    from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.evaluate import proxy_sources, roles

    servers = [
        {"name": "cp-1", "version": "v1.36.4"},
        {"name": "cp-2", "version": "v1.36.5"},
        {"name": "cp-3", "version": "v1.37.2"},
    ]
    assert roles(servers) == (["cp-1", "cp-2"], ["cp-3"])
    assert proxy_sources(servers, "mixed") == ["cp-1", "cp-2"]


# ---------------------------------------------------------------- 1.35 (alpha) sources
def test_missing_mvp_hooks_accepts_either_peer_discovery_hook():
    assert missing_mvp_hooks(HOOKS_OK) == []
    assert missing_mvp_hooks(HOOKS_OK_135) == []
    assert missing_mvp_hooks(dict.fromkeys(MVP_HOOKS, "ok")) == ["peer-discovery-workers or peer-discovery-cache-sync"]
    assert missing_mvp_hooks({"peer-discovery-cache-sync": "ok"}) == list(MVP_HOOKS)
    assert missing_mvp_hooks({**HOOKS_OK_135, "peer-discovery-cache-sync": "failed"}) != []
    assert missing_mvp_hooks(None) != []


def test_proxying_135_sources_are_not_blamed_for_their_hook_names():
    """1.35.4 names its peer discovery hook peer-discovery-cache-sync: a healthy 1.35/1.36 mix passes readiness."""
    servers = [
        server("cp-1", "v1.35.4", 1, hooks=HOOKS_OK_135),
        server("cp-2", "v1.35.4", 2, hooks=HOOKS_OK_135),
        server("cp-3", "v1.36.5", 3),
    ]
    results = evaluate({"servers": servers, "leases": []}, "mixed", checks=("readiness",))
    assert all(r["passed"] for r in results), results
    servers[1]["hooks"] = dict.fromkeys(MVP_HOOKS, "ok")  # peer discovery hook absent
    failed = [
        r for r in evaluate({"servers": servers, "leases": []}, "mixed", checks=("readiness",)) if not r["passed"]
    ]
    assert [(r["server"], r["cause"]) for r in failed] == [("cp-2", "no_peer_ca_file")]


def test_fqdn_inventory_through_nat_matches_leases_by_what_the_cluster_says(healthy):
    """Inventory names are FQDN aliases and the controller reaches the servers at NAT addresses: the old rule
    (URL address, then inventory name) matched nothing and blamed the host names."""
    for number, s in enumerate(healthy["servers"], start=1):
        s["name"] = f"cp-{number}.prod.example.com"
        s["endpoint"] = f"https://203.0.113.{number}:6443"
        s["hostname"] = s["name"]
    healthy["peer_tls"] = {
        s["name"]: {"address": f"10.0.0.{n}:6443", "error": None} for n, s in enumerate(healthy["servers"], 1)
    }
    healthy["probes"] = [probe("cp-1.prod.example.com"), probe("cp-2.prod.example.com")]
    assert {c for _s, c in failing(evaluate(healthy, "mixed"))} >= {"lease_missing"}

    # the advertise address the kube-apiserver Pod of each Node gives (Collector.advertised_by_node)
    for number, s in enumerate(healthy["servers"], start=1):
        s["advertise_address"] = f"10.0.0.{number}:6443"
    assert failing(evaluate(healthy, "mixed")) == set()

    # or the OS host name from the facts, which the identity lease carries
    for number, s in enumerate(healthy["servers"], start=1):
        del s["advertise_address"]
        s["hostname"] = f"cp-{number}"
    assert failing(evaluate(healthy, "mixed")) == set()


@pytest.mark.parametrize(
    ("status", "error", "cause"),
    [
        (401, None, "endpoint_unauthorized"),
        (403, None, "endpoint_forbidden"),
        (503, None, "unreachable_endpoint"),
        (
            None,
            "<HTTPSConnection>: Failed to establish a new connection: [Errno 111] Connection refused",
            "endpoint_refused",
        ),
        (None, "Failed to resolve 'cp-1.invalid' ([Errno -2] Name or service not known)", "endpoint_unresolvable"),
        (None, "Connection to 10.0.0.1 timed out. (connect timeout=5.0)", "endpoint_timeout"),
        (None, "Read timed out. (read timeout=5.0)", "endpoint_timeout"),
        (
            None,
            "[SSL: CERTIFICATE_VERIFY_FAILED] certificate verify failed: unable to get local issuer certificate",
            "endpoint_tls",
        ),
        (None, "something else", "unreachable_endpoint"),
    ],
)
def test_endpoint_failures_are_told_apart(status, error, cause):
    assert classify_endpoint_error(status, error) == cause


def test_unreachable_server_is_reported_with_its_kind(healthy):
    healthy["servers"][2].update(error="/version answered 401", error_kind="endpoint_unauthorized")
    assert ("cp-3", "endpoint_unauthorized") in failing(evaluate(healthy, "mixed"))


# ---------------------------------------------------------------- three versions at once
@pytest.fixture
def trio(healthy):
    """1.36.4, 1.36.5 and 1.37.2 at once (a patch upgrade interrupted by the minor one): both older servers proxy."""
    healthy["servers"][0]["version"] = "v1.36.4"
    return healthy


def test_three_versions_every_older_server_is_a_source_and_probed(trio):
    assert resolve_mode("auto", trio) == "mixed"
    results = evaluate(trio, "mixed", baseline={"cp-1": 0, "cp-2": 0, "cp-3": 0})
    assert failing(results) == set()
    probed = {r["server"] for r in results if r["check"] == "proxy_probe" and r["passed"]}
    assert probed == {"cp-1", "cp-2"}
    merged = {r["server"] for r in results if r["check"] == "discovery_merge"}
    assert merged == {"cp-1", "cp-2"}


def test_three_versions_middle_server_without_peer_ca_file_is_named(trio):
    # the 1.36.5 server is neither the lowest nor the highest version: it must still proxy
    trio["servers"][1]["hooks"] = {}
    trio["servers"][1]["merged"] = set(trio["servers"][1]["local"])
    trio["probes"][1] = probe("cp-2", status=404, after=0)
    results = evaluate(trio, "mixed")
    assert failing(results) == {("cp-2", "no_peer_ca_file")}
    readiness = {r["server"]: r for r in results if r["check"] == "readiness"}
    assert not readiness["cp-2"]["passed"] and "absent" in readiness["cp-2"]["detail"]
    assert not any("not a proxy source" in r["detail"] for r in results if r["server"] == "cp-2")
    assert summarize(results).startswith("MVP not proved: cp-2: kube-apiserver runs without --peer-ca-file")


class _ProbeClient:
    """Answers the probe requests of Collector.probes: 200 through a peer, 404 with the peer-proxied header."""

    def __init__(self):
        self.calls = []

    def get(self, base_url, path, headers=None, timeout=None):
        from types import SimpleNamespace

        self.calls.append((base_url, path, dict(headers or {})))
        if path == "/metrics":
            group, version, resource = NEW_ONLY
            labels = f'code="200",group="{group}",version="{version}",resource="{resource}"'
            text = "apiserver_rerouted_request_total{" + labels + "} 1\n"
            return SimpleNamespace(ok=True, status=200, error=None, text=lambda: text)
        local = (headers or {}).get("x-kubernetes-peer-proxied") == "true"
        status = 404 if local else 200
        return SimpleNamespace(ok=status == 200, status=status, error=None, text=lambda: "")


def test_three_versions_the_collector_probes_both_older_servers(trio):
    from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.collect import Collector

    info = {NEW_ONLY: {"verbs": ["list"], "scope": "Cluster", "subresources": []}}
    for s in trio["servers"]:
        s["local_info"] = {g: {"verbs": ["list"], "scope": "Namespaced", "subresources": []} for g in s["local"]}
        s["local_info"].update(info if NEW_ONLY in s["local"] else {})
    client = _ProbeClient()
    probes = Collector(client).probes(trio["servers"])
    assert {p["server"] for p in probes} == {"cp-1", "cp-2"}
    assert all(p["gvr"] == NEW_ONLY and p["status"] == 200 and p["status_local"] == 404 for p in probes)
    assert all(p["rerouted_after"] > p["rerouted_before"] for p in probes)
    assert not any(base == trio["servers"][2]["endpoint"] for base, _p, _h in client.calls)


# ------------------------------------------------ a gate with nothing to probe says so


def _servers():
    return [
        {"name": "cp-1", "version": "v1.37.2"},
        {"name": "cp-2", "version": "v1.37.2"},
        {"name": "cp-3", "version": "v1.38.0-beta.0"},
    ]


def test_a_source_with_nothing_to_ask_for_gets_an_unprobed_result_not_a_proof():
    from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp import evaluate as _mvp

    plan = {
        "cp-1": {"peer_only": [], "probed": []},
        "cp-2": {"peer_only": ["authorization.k8s.io/v1alpha1/authorizationconditionsreviews"], "probed": []},
    }
    results = _mvp.check_proxy_probe(_servers(), [], [], {}, plan)
    assert [(r["server"], r["passed"], r["unprobed"]) for r in results] == [("cp-1", True, True), ("cp-2", True, True)]
    assert results[0]["detail"] == "nothing to proxy: it serves every resource its peers serve"
    assert results[1]["detail"].startswith("1 resource(s) only its peers serve (authorization.k8s.io/v1alpha1/")
    assert results[1]["detail"].endswith("none listable: proxying not probed")
    assert _mvp.outcome(results, "mixed") == "not_probed"
    assert _mvp.outcome(results[:1], "mixed") == "nothing_to_proxy"


def test_the_outcome_of_a_round():
    from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp import evaluate as _mvp

    proved = _mvp.result("proxy_probe", "cp-1", True, "200 via a peer")
    nothing = {**_mvp.result("proxy_probe", "cp-2", True, "nothing"), "unprobed": True, "peer_only": []}
    failed = _mvp.result("peer_tls", "cp-3", False, "x", "peer_ca_mismatch")
    assert _mvp.outcome([proved, nothing], "mixed") == "proxied"
    assert _mvp.outcome([nothing], "mixed") == "nothing_to_proxy"
    assert _mvp.outcome([_mvp.result("readiness", "cp-1", True, "ok")], "mixed") == "not_probed"
    assert _mvp.outcome([proved], "mixed", checks=("versions",)) == "not_probed"
    assert _mvp.outcome([proved], "steady") == "steady"
    assert _mvp.outcome([proved, failed], "mixed") == "failed"


def test_the_message_of_a_gate_with_nothing_to_proxy_names_both_versions_and_never_says_proved():
    from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp import evaluate as _mvp

    message = _mvp.outcome_message("nothing_to_proxy", _servers(), 2)
    assert message == (
        "no resource differs between v1.37.2 and v1.38.0-beta.0; configuration proved (hooks, peer TLS, discovery "
        "merge); nothing to proxy (2 consecutive round(s))"
    )
    assert "MVP proved" not in _mvp.outcome_message("not_probed", _servers(), 1)
    assert _mvp.outcome_message("proxied", _servers(), 2) == "MVP proved in 2 consecutive round(s) (mixed mode)"


def test_every_cause_says_whether_waiting_can_fix_it_in_the_one_table():
    from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.evaluate import PERMANENT_CAUSES

    assert all(isinstance(cause.permanent, bool) for cause in CAUSES.values())
    assert set(PERMANENT_CAUSES) == {key for key, cause in CAUSES.items() if cause.permanent}
    # what the operator must fix stops the gate early; what a restart or a peer sync ends is waited out
    assert CAUSES["no_peer_ca_file"].permanent and CAUSES["version_skew"].permanent
    assert not CAUSES["metrics_unavailable"].permanent and not CAUSES["endpoint_timeout"].permanent
