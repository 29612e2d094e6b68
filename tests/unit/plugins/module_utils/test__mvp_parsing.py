"""Parsers of the raw API server answers MVP evidence is made of."""

from __future__ import annotations

import datetime

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._discovery import (
    format_gvr,
    gvr_path,
    listable,
    parse_aggregated,
    proxy_candidates,
)
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._manifest import command_flags, read_mvp_flags
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._metrics import parse_samples, total
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.collect import (
    parse_leases,
    parse_readyz,
    rerouted_total,
    summarize_metrics,
)

DISCOVERY = {
    "kind": "APIGroupDiscoveryList",
    "apiVersion": "apidiscovery.k8s.io/v2",
    "items": [
        {
            "metadata": {"name": "apps"},
            "versions": [
                {
                    "version": "v1",
                    "resources": [
                        {
                            "resource": "deployments",
                            "scope": "Namespaced",
                            "verbs": ["get", "list"],
                            "subresources": [{"subresource": "scale"}],
                        },
                        {"resource": "controllerrevisions", "scope": "Namespaced", "verbs": ["get"]},
                    ],
                }
            ],
        },
        {
            "metadata": {"name": "storagemigration.k8s.io"},
            "versions": [
                {
                    "version": "v1",
                    "resources": [
                        {"resource": "storageversionmigrations", "scope": "Cluster", "verbs": ["list", "create"]},
                    ],
                }
            ],
        },
    ],
}

METRICS = """\
# HELP apiserver_rerouted_request_total [ALPHA] Total number of requests that were proxied
# TYPE apiserver_rerouted_request_total counter
apiserver_rerouted_request_total{code="200",group="",resource="",version=""} 8
apiserver_rerouted_request_total{code="200",group="storagemigration.k8s.io",resource="storageversionmigrations",version="v1"} 3
apiserver_rerouted_request_total{code="503",group="",resource="",version=""} 2
apiserver_peer_discovery_sync_errors_total{type="hostport_resolution"} 36
apiserver_peer_proxy_errors_total{group="x",resource="y",type="endpoint_resolution",version="v1"} 1
apiserver_request_total{code="200",verb="GET"} 1e+03
"""


def test_parse_aggregated_and_helpers():
    gvrs = parse_aggregated(DISCOVERY)
    assert set(gvrs) == {
        ("apps", "v1", "deployments"),
        ("apps", "v1", "controllerrevisions"),
        ("storagemigration.k8s.io", "v1", "storageversionmigrations"),
    }
    assert gvrs[("apps", "v1", "deployments")]["subresources"] == ["scale"]
    assert listable(set(gvrs), gvrs) == [
        ("apps", "v1", "deployments"),
        ("storagemigration.k8s.io", "v1", "storageversionmigrations"),
    ]
    assert gvr_path(("", "v1", "pods"), "default") == "/api/v1/namespaces/default/pods"
    assert gvr_path(("apps", "v1", "deployments")) == "/apis/apps/v1/deployments"
    assert format_gvr(("", "v1", "pods")) == "v1/pods"
    assert proxy_candidates({("a", "v1", "x")}, [{("a", "v1", "x"), ("b", "v1", "y")}]) == {("b", "v1", "y")}


def test_parse_aggregated_rejects_other_documents():
    import pytest

    from ansible_collections.skewsafe.kubeadm.plugins.module_utils._discovery import DiscoveryError

    with pytest.raises(DiscoveryError):
        parse_aggregated({"kind": "APIGroupList", "groups": []})


def test_metrics_parsing():
    samples = parse_samples(METRICS)
    assert total(samples, "apiserver_rerouted_request_total", code="200") == 11
    assert total(samples, "apiserver_request_total") == 1000
    summary = summarize_metrics(METRICS)
    assert summary["sync_errors"] == {"hostport_resolution": 36}
    assert summary["proxy_errors"] == {"endpoint_resolution": 1}
    gvr = ("storagemigration.k8s.io", "v1", "storageversionmigrations")
    assert rerouted_total(summary, gvr) == 3
    # 1.35 servers label only the code: every 200 counts
    old = summarize_metrics('apiserver_rerouted_request_total{code="200"} 5\n')
    assert rerouted_total(old, gvr) == 5


def test_parse_readyz_strips_poststarthook_prefix():
    text = "[+]ping ok\n[+]poststarthook/mixed-version-proxy-handler ok\n[-]poststarthook/peer-discovery-workers failed: x\n"
    assert parse_readyz(text) == {"ping": "ok", "mixed-version-proxy-handler": "ok", "peer-discovery-workers": "failed"}


def test_parse_leases():
    now = datetime.datetime(2026, 11, 29, 22, 0, 10, tzinfo=datetime.timezone.utc)
    doc = {
        "items": [
            {
                "metadata": {
                    "name": "apiserver-abc",
                    "labels": {"kubernetes.io/hostname": "cp-1"},
                    "annotations": {"kubernetes.io/peer-advertise-address": "10.0.0.1:6443"},
                },
                "spec": {"holderIdentity": "apiserver-abc_1", "renewTime": "2026-11-29T22:00:00.000000Z"},
            }
        ]
    }
    (lease,) = parse_leases(doc, now=now)
    assert lease == {
        "name": "apiserver-abc",
        "hostname": "cp-1",
        "holder": "apiserver-abc_1",
        "renew_age": 10.0,
        "peer_address": "10.0.0.1:6443",
    }


def test_manifest_flags(tmp_path):
    assert command_flags(["kube-apiserver", "--a=1", "--b", "--a=2"]) == {"a": "2", "b": ""}
    path = tmp_path / "kube-apiserver.yaml"
    path.write_text("spec:\n  containers:\n  - command:\n    - kube-apiserver\n    - --peer-ca-file=/p\n    - --v=2\n")
    assert read_mvp_flags(str(path)) == {"path": str(path), "present": True, "flags": {"peer-ca-file": "/p"}}
    assert read_mvp_flags(str(tmp_path / "none"))["present"] is False


def test_lease_ages_are_judged_on_the_api_servers_clock():
    """A controller whose clock runs a minute fast must not call a lease renewed 5 s ago stale."""
    import datetime

    from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.collect import server_time

    now = server_time({"Date": "Fri, 04 Dec 2026 12:00:05 GMT"})
    assert now == datetime.datetime(2026, 12, 4, 12, 0, 5, tzinfo=datetime.timezone.utc)
    doc = {"items": [{"metadata": {"name": "l"}, "spec": {"renewTime": "2026-12-04T12:00:00.000000Z"}}]}
    (lease,) = parse_leases(doc, now=now)
    assert lease["renew_age"] == 5.0
    # no Date header: the controller's clock, the only one there is
    assert abs((server_time({}) - datetime.datetime.now(datetime.timezone.utc)).total_seconds()) < 5
