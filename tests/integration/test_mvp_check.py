"""mvp_check and apiserver_peers_info against real kube-apiservers: healthy, and each failure cause.

Every failure is produced by changing real flags or certificates of one server (through the
cluster_config module and kubeadm, or openssl for a certificate kubeadm would not issue) and
must yield its exact diagnosis. The healthy server set is restored after each case.

Every test runs for each harness pair of hack/versions.env (conftest.PAIRS), except the ones marked
with only_pairs: what does not depend on the versions (credentials, check mode, cost) runs for the
lab's pair, what only an alpha old version has (1.35: the gate and the flag must come together) for
the alpha pairs.
"""

from __future__ import annotations

import json
import subprocess
import time

import pytest
import yaml
from conftest import ALPHA_PAIRS, LAB_PAIR, PAIRS, local_gvrs, only_pairs, peer_ca_hook, wait_for

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _version
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._discovery import listable
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._kubeadm_config import (
    MVP_FLAG_WITHOUT_GATE_ERROR,
    KubeadmConfig,
    build_updates,
)
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.run import check_until_proved
from skewsafe_harness.pins import HarnessError, apiserver_args

GATE = _version.MVP_GATE


@pytest.fixture(scope="module")
def cluster(harness_factory, ansible_module, pair):
    return harness_factory(pair.servers(), config_hook=peer_ca_hook(ansible_module))


def endpoints(harness):
    return [{"name": s.name, "url": s.url} for s in harness.servers.values()]


def check_params(harness):
    """mvp_check's options for this harness (what check_until_proved takes with the plugin's defaults)."""
    return {
        "kubeconfig": str(harness.kubeconfig),
        "endpoints": endpoints(harness),
        "mode": "auto",
        "wait_timeout": 60,
        "wait_sleep": 2,
        "success_threshold": 2,
        "probe_limit": 2,
        "request_timeout": 5.0,
    }


def check(ansible_module, harness, **kwargs):
    args = {
        "kubeconfig": str(harness.kubeconfig),
        "endpoints": endpoints(harness),
        "wait_timeout": 60,
        "wait_sleep": 2,
        "success_threshold": 2,
    }
    args.update(kwargs)
    started = time.monotonic()
    result = ansible_module("skewsafe.kubeadm.mvp_check", args)
    result["wall"] = time.monotonic() - started
    return result


def causes(result):
    return {(r["server"], r["cause"]) for r in result.get("failed_checks", [])}


def edit_args(ansible_module, args=None, gates=None, raw=False):
    """A config hook that changes the node's apiServer extraArgs through the cluster_config module.

    ``raw``: with the collection's ClusterConfiguration editor directly, for settings the module refuses.
    """

    def hook(server, path):
        if raw:
            config = KubeadmConfig(path.read_text())
            config.apply(build_updates({"api_server_extra_args": args, "feature_gates": gates}))
            path.write_text(config.render())
            return
        params = {"source": "file", "path": str(path)}
        if args:
            params["api_server_extra_args"] = args
        if gates:
            params["feature_gates"] = gates
        result = ansible_module("skewsafe.kubeadm.cluster_config", params)
        assert not result.get("failed"), result

    return hook


def hooks_in_order(*hooks):
    def hook(server, path):
        for each in hooks:
            each(server, path)

    return hook


@pytest.fixture
def broken(cluster, ansible_module):
    """Break a server for one test; restore it (and let peers resync) afterwards."""
    touched = []

    def apply(name, args=None, gates=None, raw=False, hostname=None, **restart):
        server = cluster.servers[name]
        touched.append((name, args, gates, server.hostname))
        if hostname is not None:
            server.hostname = hostname  # its UTS namespace's host name at the next start
        cluster.restart(name, edit_args(ansible_module, args, gates, raw), **restart)

    yield apply
    for name, args, gates, hostname in touched:
        cluster.servers[name].hostname = hostname
        undo_args = {k: None for k in args or {}}
        undo_args.pop("peer-ca-file", None)
        if args and "peer-ca-file" in args:
            pki = yaml.safe_load(cluster.config_path(name).read_text().split("---\n")[1])["certificatesDir"]
            undo_args["peer-ca-file"] = f"{pki}/ca.crt"
        server = cluster.servers[name]
        # the gates as the healthy cluster has them: the MVP gate stays on where it is not on by default (1.35)
        healthy = _version.mvp_feature_gates(server.version)
        undo_gates = {k: healthy.get(k) for k in gates or {}}
        undo = edit_args(ansible_module, undo_args, undo_gates)
        base = cluster.config_hook
        # Undo first, then the cluster's own hook: run the other way round, the broken state plus the cluster's
        # hook can be a state cluster_config refuses (peer-ca-file back while the gate is still off).
        cluster.config_hook = None
        try:
            restore = hooks_in_order(undo, base)
            if server.process is None or server.process.poll() is not None:
                cluster.render(name, restore)
            cluster.restart(name, restore)
        finally:
            cluster.config_hook = base
    if touched:
        # in-process (no ansible-playbook start-up): only waits for the healthy cluster again
        params = {**check_params(cluster), "wait_timeout": 60}
        result = check_until_proved(params)
        if not result["passed"]:
            # What the reference (mvp.md 2.3) and the diagnosis say to do after fixing a peer: a source drops a
            # peer's sync after 20 failed retries, and its back-off can outlast the wait, so it resumes only when
            # restarted, unchanged. The broken servers were just restarted; the others are the sources.
            restored = {name for name, *_rest in touched}
            for name in sorted(set(cluster.servers) - restored):
                cluster.restart(name, render=False)
            result = check_until_proved(params)
        assert result["passed"], result["msg"]


@pytest.mark.every_pair
def test_healthy_mixed_control_plane_passes(cluster, ansible_module):
    result = check(ansible_module, cluster, mode="mixed")
    assert result["passed"], result["msg"]
    assert result["changed"] is False
    assert result["mode"] == "mixed" and result["outcome"] == "proxied", result["msg"]
    probes = result["evidence"]["probes"]
    assert {p["server"] for p in probes} == {"cp-1", "cp-2"}
    assert all(p["status"] == 200 and p["status_local"] == 404 for p in probes)
    assert {r["check"] for r in result["checks"]} >= {
        "versions",
        "identity_leases",
        "readiness",
        "peer_tls",
        "discovery_merge",
        "proxy_probe",
        "proxy_errors",
    }
    print(
        f"\nmvp_check healthy 3 servers: {result['elapsed']:.2f}s in-plugin, {result['attempts']} rounds, "
        f"{result['requests']} requests"
    )


# Pairs whose newer version gets pinned kube-apiserver args (a beta API only it serves): without them the pair serves
# the same resources (docs/served-resources.md).
PAIRS_WITH_PINNED_ARGS = [p for p in PAIRS if apiserver_args(p.new)]


@pytest.mark.every_pair
@only_pairs(PAIRS_WITH_PINNED_ARGS, "kube-apiserver args pinned for its newer version")
def test_with_the_defaults_a_pair_that_serves_the_same_resources_has_nothing_to_proxy(
    harness_factory, ansible_module, pair
):
    """Mixed, configured, and nothing only the newer server serves: the gate passes on the configuration and says
    there was nothing to proxy, never 'MVP proved' over zero probes."""
    harness = harness_factory(pair.servers(), config_hook=peer_ca_hook(ansible_module), pinned_args=False)
    olds = set().union(*(local_gvrs(harness, n) for n in ("cp-1", "cp-2")))
    new = local_gvrs(harness, "cp-3")
    assert not listable(set(new) - olds, new), f"v{pair.new} serves something v{pair.old} does not: pin no args"
    result = check(ansible_module, harness, mode="mixed")
    assert result["passed"] and result["outcome"] == "nothing_to_proxy", result["msg"]
    assert result["msg"].startswith(
        f"no resource differs between v{pair.old} and v{pair.new}; configuration proved (hooks, peer TLS, discovery "
        "merge); nothing to proxy"
    ), result["msg"]
    assert result["evidence"]["probes"] == []
    assert result["evidence"]["probe_plan"] == {
        "cp-1": {"peer_only": [], "probed": []},
        "cp-2": {"peer_only": [], "probed": []},
    }
    harness.down()


@pytest.mark.every_pair
def test_endpoints_are_discovered_from_identity_leases(cluster, ansible_module):
    result = check(ansible_module, cluster, endpoints=None, success_threshold=1)
    assert result["passed"], result["msg"]
    assert sorted(result["endpoints"]) == sorted(s.url for s in cluster.servers.values())


@only_pairs([LAB_PAIR], "the lab's versions")
def test_check_mode_runs_the_check(cluster, ansible_module, pair):
    args = {"kubeconfig": str(cluster.kubeconfig), "endpoints": endpoints(cluster), "success_threshold": 1}
    result = ansible_module("skewsafe.kubeadm.mvp_check", args, check=True)
    assert result["passed"] and result["attempts"] == 1


@pytest.mark.every_pair
def test_steady_mode_is_refused_while_mixed(cluster, ansible_module):
    result = check(ansible_module, cluster, mode="steady", wait_timeout=10)
    assert not result["passed"]
    assert (None, "mode_mismatch") in causes(result)
    assert result["attempts"] == 2  # fail_fast: a permanent cause seen twice


@pytest.fixture(scope="module")
def service_account_token(cluster):
    """A ServiceAccount bound to cluster-admin and a token for it from the TokenRequest API."""
    from kubernetes import client, config

    api = config.new_client_from_config(str(cluster.kubeconfig))
    core, rbac = client.CoreV1Api(api), client.RbacAuthorizationV1Api(api)
    name = "skewsafe-gate"
    core.create_namespaced_service_account("kube-system", {"metadata": {"name": name}})
    rbac.create_cluster_role_binding(
        {
            "metadata": {"name": name},
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "cluster-admin"},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": "kube-system"}],
        }
    )
    token = core.create_namespaced_service_account_token(name, "kube-system", {"spec": {"expirationSeconds": 3600}})
    return token.status.token


def _token_kubeconfig(cluster, tmp_path, user):
    admin = yaml.safe_load(cluster.kubeconfig.read_text())
    admin["users"] = [{"name": "sa", "user": user}]
    admin["contexts"] = [{"name": "sa", "context": {"cluster": admin["clusters"][0]["name"], "user": "sa"}}]
    admin["current-context"] = "sa"
    path = tmp_path / "sa.conf"
    path.write_text(yaml.safe_dump(admin))
    return str(path)


@only_pairs([LAB_PAIR], "the lab's versions")
@pytest.mark.parametrize("kind", ["token", "tokenFile", "exec"])
def test_service_account_credentials(cluster, ansible_module, service_account_token, tmp_path, kind, pair):
    if kind == "token":
        user = {"token": service_account_token}
    elif kind == "tokenFile":
        (tmp_path / "token").write_text(service_account_token)
        user = {"tokenFile": str(tmp_path / "token")}
    else:
        plugin = tmp_path / "credential-plugin"
        credential = {
            "apiVersion": "client.authentication.k8s.io/v1",
            "kind": "ExecCredential",
            "status": {"token": service_account_token},
        }
        plugin.write_text(f"#!/bin/sh\nprintf '%s' '{json.dumps(credential)}'\n")
        plugin.chmod(0o755)
        user = {
            "exec": {
                "apiVersion": "client.authentication.k8s.io/v1",
                "command": str(plugin),
                "interactiveMode": "Never",
            }
        }
    result = check(ansible_module, cluster, kubeconfig=_token_kubeconfig(cluster, tmp_path, user), success_threshold=1)
    assert result["passed"], result["msg"]
    assert result["mode"] == "mixed"
    info = ansible_module(
        "skewsafe.kubeadm.apiserver_peers_info",
        {"kubeconfig": _token_kubeconfig(cluster, tmp_path, user), "endpoints": endpoints(cluster)},
    )
    assert not info.get("failed"), info


@only_pairs([LAB_PAIR], "the lab's versions")
def test_credential_from_k8s_auth_variables_as_awx_sets_them(cluster, ansible_module, service_account_token, pair):
    env = {
        "K8S_AUTH_HOST": cluster.first.url,
        "K8S_AUTH_API_KEY": service_account_token,
        "K8S_AUTH_SSL_CA_CERT": str(cluster.ca_file),
    }
    args = {"endpoints": endpoints(cluster), "wait_timeout": 60, "wait_sleep": 2, "success_threshold": 1}
    result = ansible_module("skewsafe.kubeadm.mvp_check", args, env=env)
    assert result["passed"], result["msg"]


@pytest.mark.every_pair
def test_peers_info_reports_evidence(cluster, ansible_module, pair):
    result = ansible_module(
        "skewsafe.kubeadm.apiserver_peers_info",
        {
            "kubeconfig": str(cluster.kubeconfig),
            "endpoints": endpoints(cluster),
            "manifest": str(cluster.node_dir("cp-1") / "etc" / "manifests" / "kube-apiserver.yaml"),
        },
    )
    assert not result.get("failed"), result
    assert result["mode"] == "mixed"
    assert result["manifest"]["flags"]["peer-ca-file"].endswith("/pki/ca.crt")
    by_name = {s["name"]: s for s in result["servers"]}
    assert by_name["cp-3"]["version"] == f"v{pair.new}"
    assert by_name["cp-1"]["discovery"]["peer_only"]  # what cp-1 serves only through cp-3
    assert len(result["leases"]) == 3


@pytest.mark.every_pair
def test_no_peer_ca_file(cluster, ansible_module, broken, pair):
    # Where MVP is alpha (1.35) the gate goes with the flag: cp-2 is then a stock 1.35 server.
    broken("cp-2", args={"peer-ca-file": None}, gates={GATE: None} if pair.alpha else None)
    result = check(ansible_module, cluster)
    assert not result["passed"]
    # exactly: a stock 1.35 server also lacks the gate, so peers cannot find its address either
    expected = {"no_peer_ca_file", "gate_off"} if pair.alpha else {"no_peer_ca_file"}
    assert {cause for server, cause in causes(result) if server == "cp-2"} == expected, result["msg"]
    assert "mvp_enable" in result["msg"]


@pytest.mark.every_pair
@only_pairs(ALPHA_PAIRS, "an alpha old version (1.35)")
def test_alpha_flag_without_gate(cluster, ansible_module, broken, pair):
    """1.35: --peer-ca-file without the gate stops kube-apiserver; cluster_config refuses to write it."""
    path = cluster.config_path("cp-2")
    before = path.read_text()
    refused = ansible_module(
        "skewsafe.kubeadm.cluster_config", {"source": "file", "path": str(path), "feature_gates": {GATE: None}}
    )
    assert refused.get("failed") and MVP_FLAG_WITHOUT_GATE_ERROR in refused["msg"], refused
    assert path.read_text() == before
    with pytest.raises(HarnessError) as exc:
        broken("cp-2", gates={GATE: None}, raw=True)
    assert "process exited" in str(exc.value)
    assert MVP_FLAG_WITHOUT_GATE_ERROR in str(exc.value), str(exc.value)
    print(f"\nv{pair.old} with --peer-ca-file, gate off: {exc.value}")


@pytest.mark.every_pair
@only_pairs(ALPHA_PAIRS, "an alpha old version (1.35)")
def test_alpha_gate_without_flag(cluster, ansible_module, broken, pair):
    """1.35: the gate without --peer-ca-file starts but never proxies; cluster_config refuses to write it."""
    path = cluster.config_path("cp-2")
    before = path.read_text()
    refused = ansible_module(
        "skewsafe.kubeadm.cluster_config",
        {"source": "file", "path": str(path), "api_server_extra_args": {"peer-ca-file": None}},
    )
    assert refused.get("failed") and "never proxy" in refused["msg"], refused
    assert path.read_text() == before
    broken("cp-2", args={"peer-ca-file": None}, raw=True)
    command = " ".join(cluster.apiserver_command("cp-2"))
    assert f"{GATE}=true" in command and "--peer-ca-file" not in command
    result = check(ansible_module, cluster)
    assert not result["passed"]
    found = causes(result)
    # the gate is on, so its identity lease carries the peer address: not gate_off, only the missing flag
    assert {cause for server, cause in found if server == "cp-2"} == {"no_peer_ca_file"}, result["msg"]


@pytest.mark.every_pair
def test_wrong_peer_ca(cluster, ansible_module, broken):
    ca = cluster.node_dir("cp-2") / "pki" / "front-proxy-ca.crt"
    broken("cp-2", args={"peer-ca-file": str(ca)})
    result = check(ansible_module, cluster)
    assert not result["passed"]
    assert ("cp-2", "peer_ca_mismatch") in causes(result), result["msg"]


def test_gate_off_on_destination(cluster, ansible_module, broken):
    # A 1.35-style destination: gate off (and so no peer-ca-file: kube-apiserver refuses to start with it).
    broken("cp-3", args={"peer-ca-file": None}, gates={"UnknownVersionInteroperabilityProxy": False})
    result = check(ansible_module, cluster)
    assert not result["passed"]
    assert ("cp-3", "gate_off") in causes(result), result["msg"]


def test_unreachable_advertise_address(cluster, ansible_module, broken):
    # --peer-advertise-ip/port do not change what peers dial in 1.36.5/1.37.2 (see README), so the
    # realistic fault is an --advertise-address peers cannot reach (a NATed or wrong interface address).
    nowhere = cluster.network.address(200)
    broken("cp-3", args={"advertise-address": nowhere})
    result = check(ansible_module, cluster, wait_timeout=30)
    assert not result["passed"]
    assert ("cp-3", "peer_unreachable") in causes(result), result["msg"]


@only_pairs([LAB_PAIR], "the lab's versions")
def test_unreachable_advertise_address_seen_from_the_nodes(cluster, ansible_module, broken, pair):
    # The same fault, judged from where peers dial (the roles pass the nodes' dials): the node is named.
    nowhere = cluster.network.address(200)
    broken("cp-3", args={"advertise-address": nowhere})
    dials = ansible_module(
        "skewsafe.kubeadm.apiserver_peer_dial_info",
        {"peers": [f"{nowhere}:6443"], "peer_ca_file": str(cluster.ca_file), "wait_timeout": 0, "timeout": 3},
        netns=cluster.network.netns,
    )
    assert dials["dials"][0]["error"], dials
    result = check(ansible_module, cluster, wait_timeout=30, peer_dials=[dials])
    assert not result["passed"]
    assert ("cp-3", "peer_unreachable") in causes(result), result["msg"]
    failed = [r["detail"] for r in result["failed_checks"] if r["check"] == "peer_tls"]
    assert any(f"from {dials['node']}: " in d for d in failed), failed


def test_proxy_client_certificate_rejected(cluster, ansible_module, broken):
    broken("cp-3", args={"requestheader-allowed-names": "not-front-proxy-client"})
    result = check(ansible_module, cluster, wait_timeout=30)
    assert not result["passed"]
    assert any(cause == "proxy_client_rejected" for _s, cause in causes(result)), result["msg"]


def test_serving_certificate_without_peer_san(cluster, ansible_module, broken):
    node = cluster.node_dir("cp-3") / "pki"
    addr = cluster.servers["cp-3"].address
    subprocess.run(
        [
            "openssl",
            "req",
            "-new",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            str(node / "apiserver.key"),
            "-subj",
            "/CN=kube-apiserver",
            "-out",
            str(node / "apiserver.csr"),
        ],
        check=True,
        capture_output=True,
    )
    ext = node / "san.ext"
    ext.write_text(f"subjectAltName=IP:{addr},DNS:cp-3\nextendedKeyUsage=serverAuth\n")
    subprocess.run(
        [
            "openssl",
            "x509",
            "-req",
            "-in",
            str(node / "apiserver.csr"),
            "-CA",
            str(node / "ca.crt"),
            "-CAkey",
            str(node / "ca.key"),
            "-CAcreateserial",
            "-days",
            "1",
            "-extfile",
            str(ext),
            "-out",
            str(node / "apiserver.crt"),
        ],
        check=True,
        capture_output=True,
    )
    # kubeadm would reissue a certificate without the SAN, so restart without rendering.
    broken("cp-3", render=False)
    result = check(ansible_module, cluster, wait_timeout=30)
    assert not result["passed"]
    assert ("cp-3", "peer_san_missing") in causes(result), result["msg"]
    for path in ("apiserver.crt", "apiserver.key"):
        (node / path).unlink()  # the fixture's restore lets kubeadm issue a proper one


@pytest.mark.every_pair
def test_crashed_peer_still_listed(cluster, ansible_module, broken):
    broken("cp-3", args={})  # registers cp-3 for restore
    cluster.stop_server("cp-3", graceful=False)
    # The endpoint lease expires after 15 s; the identity lease stays for up to an hour. Until it is 45 s
    # old it could be a server this controller cannot reach (endpoint_unreachable_here), so wait past that.
    # No fail_fast: the other causes seen meanwhile (1.35 sources count failed peer calls as rejected proxy
    # certificates) must not end the check before the lease is old enough to tell a crash.
    result = check(ansible_module, cluster, wait_timeout=75, wait_sleep=5, fail_fast=False)
    assert not result["passed"]
    found = causes(result)
    assert ("cp-3", "endpoint_refused") in found  # nothing listens there: named, not "does not answer"
    assert any(cause == "crashed_peer" for _s, cause in found), result["msg"]


def test_a_server_the_controller_cannot_reach_is_not_called_crashed(cluster, ansible_module):
    # A controller on another network: a host route makes cp-3 unreachable from here only; its peers
    # (one network namespace) still reach it and it keeps renewing its identity lease.
    route = ["ip", "route", "add", "unreachable", f"{cluster.servers['cp-3'].address}/32"]
    subprocess.run(route, check=True, capture_output=True)
    try:
        result = check(ansible_module, cluster, wait_timeout=10, wait_sleep=2)
    finally:
        subprocess.run(["ip", "route", "del", *route[3:]], check=True, capture_output=True)
    assert not result["passed"]
    found = causes(result)
    assert ("cp-3", "endpoint_unreachable_here") in found, result["msg"]
    assert not any(cause == "crashed_peer" for _s, cause in found), result["msg"]
    # The old servers still proxy to it: only this controller's path fails, and nothing else is blamed.
    assert {server for server, _c in found} == {"cp-3"}, result["msg"]


def test_host_name_too_long(cluster, ansible_module, broken):
    # 64 bytes: not a valid label value, so no identity lease (cp-3 restarted with it; its old lease went
    # with its graceful shutdown)
    broken("cp-3", hostname="cp-" + "x" * 61)
    result = check(ansible_module, cluster, wait_timeout=20)
    assert not result["passed"]
    assert ("cp-3", "lease_missing") in causes(result), result["msg"]
    assert "63" in result["msg"]


def test_duplicate_host_names(cluster, ansible_module, broken):
    broken("cp-2", hostname="cp-1")  # cp-2 now names its identity lease after cp-1's host name
    result = check(ansible_module, cluster, wait_timeout=30)
    assert not result["passed"]
    found = {cause for _s, cause in causes(result)}
    assert found & {"duplicate_hostname", "lease_missing"}, result["msg"]


@pytest.mark.lab_tier
@only_pairs([LAB_PAIR], "the lab's versions")
@pytest.mark.parametrize("count", [3, 5])
def test_cost_of_one_check(harness_factory, ansible_module, count, record_property, pair):
    """One round (success_threshold=1) against a healthy mixed control plane: time and HTTP requests."""
    olds = (count + 1) // 2
    servers = pair.servers(olds, count - olds)
    harness = harness_factory(servers, config_hook=peer_ca_hook(ansible_module))
    params = {
        "kubeconfig": str(harness.kubeconfig),
        "endpoints": endpoints(harness),
        "mode": "mixed",
        "wait_timeout": 120,
        "wait_sleep": 2,
        "success_threshold": 1,
        "probe_limit": 2,
        "request_timeout": 5.0,
    }
    wait_for(lambda: check_until_proved(params)["passed"], 90, "the control plane to pass once (peer sync)")
    timings = []
    for _round in range(3):
        started = time.monotonic()
        result = check_until_proved(params)
        timings.append(time.monotonic() - started)
        assert result["passed"], result["msg"]
        assert result["attempts"] == 1
    wall = min(timings)
    record_property("check_seconds", wall)
    print(
        f"\nmvp_check one round, {count} servers ({olds} old): best of 3 {wall:.2f}s "
        f"(all: {', '.join(f'{t:.2f}' for t in timings)}), {result['requests']} HTTP requests"
    )
    assert wall < 10, "one round should take seconds, not tens of seconds"
