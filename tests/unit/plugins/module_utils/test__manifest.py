from __future__ import annotations

import base64

import pytest

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _manifest

MANIFEST = """\
apiVersion: v1
kind: Pod
metadata:
  name: kube-apiserver
spec:
  containers:
  - command:
    - kube-apiserver
    - --advertise-address=10.0.0.1
    - --peer-ca-file=/etc/kubernetes/pki/ca.crt
    - --v=2
    - --v=4
    image: registry.k8s.io/kube-apiserver:v1.36.5
    name: kube-apiserver
"""


def test_summary_of_a_manifest():
    summary = _manifest.summary(_manifest.load(MANIFEST))
    assert summary == {
        "image": "registry.k8s.io/kube-apiserver:v1.36.5",
        "version": "v1.36.5",
        "command": [
            "kube-apiserver",
            "--advertise-address=10.0.0.1",
            "--peer-ca-file=/etc/kubernetes/pki/ca.crt",
            "--v=2",
            "--v=4",
        ],
        "flags": {"advertise-address": "10.0.0.1", "peer-ca-file": "/etc/kubernetes/pki/ca.crt", "v": "4"},
    }


def test_decode_reads_what_slurp_returns():
    assert _manifest.decode(base64.b64encode(MANIFEST.encode()).decode()) == _manifest.load(MANIFEST)


@pytest.mark.parametrize("content", ["%%% not base64", base64.b64encode(b"a: [b").decode()])
def test_decode_refuses_what_is_no_manifest(content):
    with pytest.raises(_manifest.ManifestError):
        _manifest.decode(content)


@pytest.mark.parametrize(
    "image, tag",
    [
        ("registry.k8s.io/kube-apiserver:v1.37.2", "v1.37.2"),
        ("registry.k8s.io/etcd:3.6.8-0@sha256:abc", "3.6.8-0"),
        ("localhost:5000/kube-apiserver:v1.36.5", "v1.36.5"),
        ("localhost:5000/pause", None),
        (None, None),
    ],
)
def test_image_tag(image, tag):
    assert _manifest.image_tag(image) == tag


def test_container_and_summary_of_documents_without_one():
    assert _manifest.container(None) == {}
    assert _manifest.container({"spec": {"containers": []}}) == {}
    assert _manifest.summary({}) == {"image": None, "version": None, "command": [], "flags": {}}
