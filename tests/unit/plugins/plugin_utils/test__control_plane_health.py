"""Rules of control_plane_health: when is a control-plane node whole again."""

from __future__ import annotations

import pytest
from conftest import NEW, OLD, manifest, pod_for, whole_node

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _control_plane_health as health

READY = {"url": "https://10.0.0.12:6443", "status": 200, "msg": None}
ETCD_OK = {
    "mode": "stacked",
    "error": None,
    "members": [{"endpoint": f"https://10.0.0.1{i}:2379", "healthy": True, "error": None} for i in (1, 2, 3)],
}


def test_a_whole_node_has_no_problems():
    manifests, pods = whole_node()
    assert health.evaluate(manifests, pods, READY, ETCD_OK, expected_version=NEW) == []


def test_a_manifest_kubeadm_left_at_the_old_version_is_named():
    manifests, pods = whole_node()
    manifests["kube-scheduler"] = manifest("kube-scheduler", OLD)
    pods[3] = pod_for("kube-scheduler", manifests["kube-scheduler"])
    assert health.evaluate(manifests, pods, READY, ETCD_OK, expected_version=NEW) == [
        f"kube-scheduler: manifest has {OLD}, expected {NEW}"
    ]


def test_the_mirror_pod_of_the_previous_manifest_does_not_count():
    # A re-render that changed only a flag: the old Pod is still Ready with the same image.
    manifests, pods = whole_node()
    manifests["kube-apiserver"] = manifest("kube-apiserver", NEW, extra=["--peer-ca-file=/pki/ca.crt"])
    problems = health.evaluate(manifests, pods, READY, ETCD_OK)
    assert problems == ["kube-apiserver: the kubelet has not started the current manifest yet"]


@pytest.mark.parametrize(
    ("kwargs", "expected"),
    [
        ({"ready": False}, "etcd: not Ready"),
        ({"running": False}, "etcd: container not running"),
        ({"running_tag": "3.5.0-0"}, "etcd: runs 3.5.0-0, manifest has 3.6.8-0"),
    ],
)
def test_container_state_of_a_static_pod(kwargs, expected):
    manifests, pods = whole_node()
    pods[0] = pod_for("etcd", manifests["etcd"], **kwargs)
    assert health.evaluate(manifests, pods, READY, ETCD_OK) == [expected]


def test_missing_pod_readyz_and_external_etcd_without_manifest():
    manifests, pods = whole_node()
    manifests["etcd"] = None  # external etcd: no static Pod on the node, and none expected
    pods = [p for p in pods if p["metadata"]["labels"]["component"] not in ("etcd", "kube-controller-manager")]
    problems = health.evaluate(
        manifests, pods, {"url": READY["url"], "status": 500, "msg": "Status code was 500"}, {"mode": "skipped"}
    )
    assert problems == [
        "kube-controller-manager: no Pod in the API for its manifest",
        "kube-apiserver /readyz at https://10.0.0.12:6443: Status code was 500",
    ]


def test_etcd_member_unhealthy_and_quorum():
    one = {**ETCD_OK, "members": [dict(m) for m in ETCD_OK["members"]]}
    one["members"][1].update(healthy=False, error="context deadline exceeded")
    assert health.etcd_problems(one) == ["etcd member https://10.0.0.12:2379: context deadline exceeded"]
    one["members"][2].update(healthy=False, error=None)
    assert health.etcd_problems(one)[-1] == "etcd: only 1 of 3 members healthy (no quorum)"
    assert health.etcd_problems({"mode": "stacked", "error": "no running etcd container on this node"}) == [
        "etcd: no running etcd container on this node"
    ]
    assert health.etcd_problems({"mode": "stacked", "members": [], "error": None}) == ["etcd: no member answered"]


def test_etcdctl_output_and_manifest_helpers():
    out = (
        '[{"endpoint":"https://10.0.0.11:2379","health":true,"took":"9ms"},'
        '{"endpoint":"https://10.0.0.12:2379","health":false,"took":"5s","error":"context deadline exceeded"}]'
    )
    assert health.parse_etcdctl_health(out) == [
        {"endpoint": "https://10.0.0.11:2379", "healthy": True, "error": None},
        {"endpoint": "https://10.0.0.12:2379", "healthy": False, "error": "context deadline exceeded"},
    ]
    assert health.parse_etcdctl_health("Error: no") is None
    doc = manifest("kube-apiserver", NEW)
    assert health.apiserver_address(doc) == "https://10.0.0.12:6443"
    assert health.etcd_client_settings(doc)["servers"] == ["https://127.0.0.1:2379"]
    assert health.image_tag("registry.k8s.io/etcd:3.6.8-0@sha256:abc") == "3.6.8-0"
    assert health.image_tag("localhost:5000/pause") is None


def test_external_etcd_health_is_read_from_the_body_etcd_sends_as_text():
    # what ansible.builtin.uri returned from etcd 3.6.8's /health on the external-etcd lab (no json key)
    got = {"status": 200, "msg": "OK (29 bytes)", "content": '{"health":"true","reason":""}'}
    assert health.etcd_health_member("https://10.214.1.31:2379", got) == {
        "endpoint": "https://10.214.1.31:2379",
        "healthy": True,
        "error": None,
    }
    sick = {"status": 503, "msg": "Status code was 503", "content": '{"health":"false","reason":"NOSPACE"}'}
    assert health.etcd_health_member("https://e:2379", sick)["error"] == "NOSPACE"
    refused = {"status": -1, "msg": "Connection refused"}
    assert health.etcd_health_member("https://e:2379", refused) == {
        "endpoint": "https://e:2379",
        "healthy": False,
        "error": "Connection refused",
    }
