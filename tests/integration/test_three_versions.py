"""Three kube-apiserver versions at once, on real servers: every server below the highest version proxies.

An interrupted patch upgrade followed by a minor upgrade leaves, for a while, three versions: here
K8S_PATCH_FROM_VERSION (1.36.4), K8S_OLD_VERSION (1.36.5) and K8S_NEW_VERSION (1.37.2), MVP on. Both older
servers lack what only the newest serves, so both must proxy and mvp_check must probe both; the middle one
is neither the lowest nor the highest version, and a gate that took only the lowest as proxy source would
pass it unchecked ("ready (not a proxy source)") even without --peer-ca-file.

Tier harness-extra (make test-lab), not make test: the older patch needs its own build
(hack/build-upstream.sh K8S_PATCH_FROM_VERSION); without it the harness fails naming the missing binary.
"""

from __future__ import annotations

import pytest
from conftest import local_gvrs, peer_ca_hook, wait_for
from test_mvp_check import causes, check, edit_args

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._discovery import format_gvr, gvr_path, listable
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.collect import PEER_PROXIED_HEADER


@pytest.fixture(scope="module")
def cluster(trio_harness_factory, ansible_module, trio):
    patch, old, new = trio
    servers = [("cp-1", patch), ("cp-2", old), ("cp-3", new)]
    return trio_harness_factory(servers, config_hook=peer_ca_hook(ansible_module))


@pytest.fixture(scope="module")
def newest_only(cluster):
    """Listable resources only the newest server serves (nopeer discovery diff), not hard-coded."""
    newest = local_gvrs(cluster, "cp-3")
    older = set(local_gvrs(cluster, "cp-1")) | set(local_gvrs(cluster, "cp-2"))
    found = listable(set(newest) - older, newest)
    assert found, "the newest server serves nothing the older ones do not: no proxying to prove"
    return found


def direct(cluster, name, gvr, local=False):
    headers = {PEER_PROXIED_HEADER: "true"} if local else None
    return cluster.request(name, gvr_path(gvr) + "?limit=1", headers=headers).status


def test_both_older_servers_proxy_on_their_own(cluster, newest_only, trio):
    """Independent of the gate: each older server answers 200 through the peer and 404 on its own."""
    gvr = newest_only[0]

    def proxied_by_both():
        return all(direct(cluster, name, gvr) == 200 for name in ("cp-1", "cp-2"))

    wait_for(proxied_by_both, 90, f"cp-1 and cp-2 to proxy {format_gvr(gvr)} (peer discovery sync)", interval=2)
    for name in ("cp-1", "cp-2"):
        assert direct(cluster, name, gvr, local=True) == 404, name
    assert direct(cluster, "cp-3", gvr, local=True) == 200  # the newest serves it itself
    print(f"\n{trio}: {format_gvr(gvr)} 200 through the peer on cp-1 and cp-2, 404 with {PEER_PROXIED_HEADER}")


def test_the_gate_probes_every_server_below_the_highest_version(cluster, ansible_module, trio):
    result = check(ansible_module, cluster, mode="auto", wait_timeout=120)
    assert result["passed"], result["msg"]
    assert result["mode"] == "mixed"
    versions = {s["name"]: s["version"] for s in result["evidence"]["servers"]}
    assert versions == {"cp-1": f"v{trio[0]}", "cp-2": f"v{trio[1]}", "cp-3": f"v{trio[2]}"}
    probes = result["evidence"]["probes"]
    assert {p["server"] for p in probes} == {"cp-1", "cp-2"}, probes
    for p in probes:
        assert p["status"] == 200 and p["status_local"] == 404, p
        assert p["rerouted_after"] > p["rerouted_before"], p
    passed = {(r["check"], r["server"]) for r in result["checks"] if r["passed"]}
    for name in ("cp-1", "cp-2"):
        assert ("proxy_probe", name) in passed and ("discovery_merge", name) in passed, name
    readiness = {r["server"]: r["detail"] for r in result["checks"] if r["check"] == "readiness"}
    assert readiness["cp-1"] == readiness["cp-2"] == "ready, MVP hooks ok", readiness


def test_the_middle_server_without_peer_ca_file_fails_the_gate(cluster, ansible_module, newest_only):
    """1.36.5 restarted without --peer-ca-file: named with the missing flag, never 'not a proxy source'."""
    cluster.restart("cp-2", edit_args(ansible_module, {"peer-ca-file": None}))
    try:
        command = " ".join(cluster.apiserver_command("cp-2"))
        assert "--peer-ca-file" not in command
        assert direct(cluster, "cp-2", newest_only[0]) == 404  # it really does not proxy now
        result = check(ansible_module, cluster, mode="auto", wait_timeout=60)
        assert not result["passed"]
        assert {cause for server, cause in causes(result) if server == "cp-2"} == {"no_peer_ca_file"}, result["msg"]
        assert "cp-2: kube-apiserver runs without --peer-ca-file" in result["msg"], result["msg"]
        details = [r["detail"] for r in result["checks"] if r["server"] == "cp-2"]
        assert not any("not a proxy source" in d for d in details), details
        assert not any(server == "cp-1" for server, _c in causes(result)), result["msg"]  # 1.36.4 still proxies
    finally:
        pki = cluster.node_dir("cp-2") / "pki"
        cluster.restart("cp-2", edit_args(ansible_module, {"peer-ca-file": f"{pki}/ca.crt"}))
