"""MVP behaviour of the real kube-apiservers, with kubeadm-rendered flags.

Control plane, for every harness pair of hack/versions.env (1.35.4/1.36.5 and 1.36.5/1.37.2 today):
cp-1 and cp-2 at the older version, cp-3 at the newer one, one etcd. `peer-ca-file` (and, where
MVP is not on by default, the UnknownVersionInteroperabilityProxy gate: 1.35, alpha) is added to
each node's ClusterConfiguration with the collection's cluster_config module (source=file) and
kubeadm renders the manifests from it, exactly the path an operator takes (minus the ConfigMap,
tested separately below).

The resources only the newer version serves are found by diffing each server's nopeer
aggregated discovery, never hard-coded.
"""

from __future__ import annotations

import pytest
from conftest import discovery, local_gvrs, metrics, peer_ca_hook, wait_for

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _version
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._discovery import (
    format_gvr,
    group_versions,
    gvr_path,
    listable,
)
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._metrics import parse_samples, total
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.evaluate import MVP_HOOKS, PEER_DISCOVERY_HOOKS

# the proof itself, on the real servers of each pinned pair: make test runs it with every pair
pytestmark = pytest.mark.every_pair

OLD_SERVERS = ["cp-1", "cp-2"]
PROXIED = {"x-kubernetes-peer-proxied": "true"}


def new_only(harness):
    """GVRs the new server serves and the old ones do not (core group included)."""
    new = local_gvrs(harness, "cp-3")
    olds = [local_gvrs(harness, name) for name in OLD_SERVERS]
    diff = set(new) - set().union(*olds)
    return diff, new


@pytest.fixture(scope="module")
def with_mvp(harness_factory, ansible_module, pair):
    return harness_factory(pair.servers(), config_hook=peer_ca_hook(ansible_module))


@pytest.fixture(scope="module")
def probe(with_mvp, pair):
    """A listable new-only GVR; fails loudly when the pinned versions serve identical resources."""
    diff, info = new_only(with_mvp)
    candidates = listable(diff, info)
    assert candidates, (
        f"v{pair.new} serves no listable resource that v{pair.old} lacks; pick other pins or create the difference "
        "with --runtime-config (see the issue text)"
    )
    return candidates[0], diff


def rerouted(harness, name, gvr, code="200"):
    """apiserver_rerouted_request_total for a GVR; where MVP is alpha (1.35) it has only ``code``: all of it."""
    if not _version.mvp_default_on(harness.servers[name].version):
        return total(metrics(harness, name), "apiserver_rerouted_request_total", code=code)
    group, version, resource = gvr
    return total(
        metrics(harness, name),
        "apiserver_rerouted_request_total",
        code=code,
        group=group,
        version=version,
        resource=resource,
    )


def test_servers_run_the_pinned_versions(with_mvp, pair):
    for name, version in pair.servers():
        assert with_mvp.request(name, "/version").json()["gitVersion"] == f"v{version}"
    for name in ("cp-1", "cp-3"):
        command = " ".join(with_mvp.apiserver_command(name))
        assert "--peer-ca-file=" in command
        gate = f"{_version.MVP_GATE}=true"
        assert (gate in command) == (not _version.mvp_default_on(with_mvp.servers[name].version)), command


@pytest.mark.parametrize("old", OLD_SERVERS)
def test_old_server_proxies_new_only_resource(with_mvp, probe, old, pair):
    gvr, _diff = probe
    path = gvr_path(gvr) + "?limit=1"
    before = rerouted(with_mvp, old, gvr)
    # The old server learns its peers asynchronously after start; allow the first sync.
    wait_for(lambda: with_mvp.request(old, path).status == 200, 90, f"{format_gvr(gvr)} via {old} to answer 200")
    resp = with_mvp.request(old, path)
    assert resp.status == 200, resp.body[:300]
    assert resp.json()["kind"].endswith("List")
    # Negative control: the same request marked as already proxied is served locally: 404.
    local = with_mvp.request(old, path, headers=PROXIED)
    assert local.status == 404, (local.status, local.body[:300])
    assert rerouted(with_mvp, old, gvr) > before
    # Which labels the counter has: only `code` where MVP is alpha (1.35), group/version/resource from 1.36.
    labels = {
        frozenset(lab)
        for name, lab, _v in parse_samples(with_mvp.request(old, "/metrics").body.decode())
        if name == "apiserver_rerouted_request_total"
    }
    expected = {"code"} if pair.alpha else {"code", "group", "version", "resource"}
    assert labels == {frozenset(expected)}, labels


def test_merged_minus_nopeer_discovery_is_the_new_only_set(with_mvp, probe):
    _gvr, diff = probe
    # Core (/api) is never peer-merged; the comparison is over named groups.
    expected = {gvr for gvr in diff if gvr[0]}
    for old in OLD_SERVERS:
        merged = discovery(with_mvp, old, nopeer=False)
        nopeer = discovery(with_mvp, old, nopeer=True)
        assert set(merged) - set(nopeer) == expected, old
        assert group_versions(set(merged) - set(nopeer)) == group_versions(expected)
        assert set(nopeer) <= set(merged)


def test_new_server_sees_no_proxy_targets_when_nothing_was_removed(with_mvp):
    old = set(local_gvrs(with_mvp, "cp-1"))
    new_local = set(local_gvrs(with_mvp, "cp-3"))
    merged = set(discovery(with_mvp, "cp-3", nopeer=False))
    # Whatever the new server lacks (removed in the newer version) is what it would proxy back.
    assert merged - new_local == {gvr for gvr in old - new_local if gvr[0]}


@pytest.fixture(scope="module")
def stock(harness_factory, with_mvp, pair):
    # Started after the MVP harness's tests are collected; stock kubeadm flags, no peer-ca-file.
    return harness_factory(pair.servers())


def test_without_peer_ca_file_old_servers_answer_404(stock, probe):
    gvr, _diff = probe
    path = gvr_path(gvr) + "?limit=1"
    for old in OLD_SERVERS:
        assert "--peer-ca-file=" not in " ".join(stock.apiserver_command(old))
        resp = stock.request(old, path)
        assert resp.status == 404, (old, resp.status)
        assert rerouted(stock, old, gvr) == 0
    # the new server itself serves it
    assert stock.request("cp-3", path).status == 200


def test_without_peer_ca_file_merged_discovery_equals_nopeer(stock):
    for old in OLD_SERVERS:
        assert discovery(stock, old, nopeer=False) == discovery(stock, old, nopeer=True)


def test_readyz_lists_mvp_hooks_only_with_peer_ca_file(with_mvp, stock):
    for name in ("cp-1", "cp-3"):  # both versions
        on = with_mvp.request(name, "/readyz?verbose").body.decode()
        off = stock.request(name, "/readyz?verbose").body.decode()
        for hook in MVP_HOOKS:
            assert f"poststarthook/{hook} ok" in on, (name, on)
            assert f"poststarthook/{hook} " not in off, (name, off)
        # exactly one of the peer discovery hooks (1.35: peer-discovery-cache-sync, 1.36+: peer-discovery-workers)
        peer_hooks = [hook for hook in PEER_DISCOVERY_HOOKS if f"poststarthook/{hook} ok" in on]
        assert len(peer_hooks) == 1, (name, on)
        assert not any(f"poststarthook/{hook} " in off for hook in PEER_DISCOVERY_HOOKS), (name, off)
        print(f"\n{name} v{with_mvp.servers[name].version}: peer discovery hook {peer_hooks[0]}")
        # The endpoint reconciler runs whenever the gate is on: by default from 1.36, not on a stock 1.35.
        reconciler = "poststarthook/peer-endpoint-reconciler-controller ok" in off
        assert reconciler == bool(_version.mvp_default_on(with_mvp.servers[name].version)), (name, off)
