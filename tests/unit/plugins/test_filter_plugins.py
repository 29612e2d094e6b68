from __future__ import annotations

import base64

import pytest
import yaml
from ansible.errors import AnsibleFilterError

from ansible_collections.skewsafe.kubeadm.plugins.filter import manifest, resume, upgrade


def test_filters_are_registered_and_wrap_errors():
    filters = upgrade.FilterModule().filters()
    assert set(filters) == {
        "kube_minor",
        "preflight_assessment",
        "upgrade_report",
        "upgrade_report_markdown",
        "apiserver_endpoint",
        "package_repo_url",
        "package_version",
        "mvp_feature_gates",
        "mvp_enable_step",
        "stacked_etcd_servers",
        "upgrade_path_hops",
    }
    assert filters["kube_minor"]("v1.37.2") == 37
    with pytest.raises(AnsibleFilterError, match="each hop must be the next minor"):
        filters["upgrade_path_hops"](["1.36.5", "1.38.0"], ["v1.35.4"])
    with pytest.raises(AnsibleFilterError, match="not a Kubernetes version"):
        filters["kube_minor"]("latest")
    first = {"configured": False, "single": False, "first": True, "version": "v1.36.5", "upgrade_to": "1.37.2"}
    assert filters["mvp_enable_step"](first)["action"] == "apply_renders"
    with pytest.raises(AnsibleFilterError, match="mvp_enable_step"):
        filters["mvp_enable_step"](dict(first, version="latest"))


def test_apiserver_endpoint():
    endpoint = upgrade.apiserver_endpoint
    assert endpoint({"inventory_hostname": "cp-1", "ansible_host": "10.0.0.1"}) == {
        "name": "cp-1",
        "url": "https://10.0.0.1:6443",
    }
    assert endpoint(
        {"inventory_hostname": "cp-1", "skewsafe_apiserver_address": "fd00::1", "skewsafe_apiserver_port": 8443}
    ) == {
        "name": "cp-1",
        "url": "https://[fd00::1]:8443",
    }


def test_apiserver_endpoint_carries_the_identity_the_cluster_knows():
    """An FQDN inventory name reached through NAT: the node name and host name come from the facts."""
    host = {
        "inventory_hostname": "cp-1.prod.example.com",
        "ansible_host": "203.0.113.7",
        "ansible_facts": {"nodename": "cp-1"},
    }
    assert upgrade.apiserver_endpoint(host) == {
        "name": "cp-1.prod.example.com",
        "url": "https://203.0.113.7:6443",
        "node_name": "cp-1",
        "hostname": "cp-1",
    }
    host.update(skewsafe_node_name="cp-1.node", skewsafe_apiserver_advertise_address="10.0.0.1:6443")
    assert upgrade.apiserver_endpoint(host) == {
        "name": "cp-1.prod.example.com",
        "url": "https://203.0.113.7:6443",
        "node_name": "cp-1.node",
        "hostname": "cp-1",
        "advertise_address": "10.0.0.1:6443",
    }


def test_static_pod_reads_slurp_results_text_and_documents():
    assert set(manifest.FilterModule().filters()) == {
        "static_pod",
        "manifest_drift",
        "kubelet_config_drift",
        "etcd_render_config",
        "etcd_manifest_drift",
        "static_pod_stops",
    }
    static_pod = manifest.FilterModule().filters()["static_pod"]
    text = "spec:\n  containers:\n  - image: registry.k8s.io/kube-apiserver:v1.35.4\n    command: [kube-apiserver, --peer-ca-file=/p]\n"
    expected = {
        "image": "registry.k8s.io/kube-apiserver:v1.35.4",
        "version": "v1.35.4",
        "command": ["kube-apiserver", "--peer-ca-file=/p"],
        "flags": {"peer-ca-file": "/p"},
    }
    slurped = {"content": base64.b64encode(text.encode()).decode(), "encoding": "base64", "source": "/m.yaml"}
    assert static_pod(slurped) == expected
    assert static_pod(text) == expected
    assert static_pod(yaml.safe_load(text)) == expected


@pytest.mark.parametrize("value", [{"content": "%%%"}, "a: [b", ["kube-apiserver"], "just text"])
def test_static_pod_refuses_what_is_no_manifest(value):
    with pytest.raises(AnsibleFilterError, match="static_pod"):
        manifest.static_pod(value)


def test_package_repo_url():
    url = upgrade.FilterModule().filters()["package_repo_url"]
    assert url("1.37.2", "deb") == "https://pkgs.k8s.io/core:/stable:/v1.37/deb/"
    assert url("v1.36.5", "rpm", None) == "https://pkgs.k8s.io/core:/stable:/v1.36/rpm/"
    assert url("1.37.2", "deb", "http://mirror.lan/k8s") == "http://mirror.lan/k8s/v1.37/deb/"
    with pytest.raises(AnsibleFilterError, match="kind"):
        url("1.37.2", "apk")
    with pytest.raises(AnsibleFilterError, match="not a Kubernetes version"):
        url("1.37", "deb")
    # upstream publishes pre-releases in a channel of its own; a mirror base is used as it is
    assert url("1.38.0-beta.0", "deb") == "https://pkgs.k8s.io/core:/prerelease:/v1.38/deb/"
    assert url("v1.38.0-rc.1", "rpm") == "https://pkgs.k8s.io/core:/prerelease:/v1.38/rpm/"
    assert url("1.38.0-rc.1", "deb", "http://mirror.lan/k8s") == "http://mirror.lan/k8s/v1.38/deb/"


def test_package_version():
    version = upgrade.FilterModule().filters()["package_version"]
    assert version("1.37.2") == "1.37.2"
    assert version("v1.37.2") == "1.37.2"
    assert version("1.38.0-beta.0") == "1.38.0~beta.0"
    assert version("v1.38.0-rc.12") == "1.38.0~rc.12"
    with pytest.raises(AnsibleFilterError, match="not a Kubernetes version"):
        version("1.38")


def test_mvp_feature_gates():
    gates = upgrade.FilterModule().filters()["mvp_feature_gates"]
    assert gates("v1.35.4") == {"UnknownVersionInteroperabilityProxy": True}
    assert gates("v1.36.5") == {}
    assert gates("1.37.2") == {}
    with pytest.raises(AnsibleFilterError, match="not a Kubernetes 1"):
        gates("latest")


def test_upgrade_left_to_do_is_registered_and_wraps_errors():
    left = resume.FilterModule().filters()["upgrade_left_to_do"]
    assert left({"target": "1.37.2", "role": "worker", "kubelet": "v1.36.5"})["next_step"] == "kubeadm upgrade node"
    with pytest.raises(AnsibleFilterError, match=r"upgrade_left_to_do: kubelet is v1\.38\.0, newer than the target"):
        left({"target": "1.37.2", "role": "worker", "kubelet": "v1.38.0"})


def test_manifest_drift_wraps_its_errors():
    with pytest.raises(AnsibleFilterError, match="manifest_drift: the kubeadm dry run printed no manifest"):
        manifest.manifest_drift("[upgrade] nothing", {"/etc/kubernetes/manifests/kube-apiserver.yaml": "kind: Pod"})


def test_the_kubelet_and_static_pod_filters_fail_as_filters():
    filters = manifest.FilterModule().filters()
    with pytest.raises(AnsibleFilterError, match="kubelet_config_drift: the kubeadm dry run printed no kubelet"):
        filters["kubelet_config_drift"]("[upgrade] nothing\n", "kind: KubeletConfiguration\n")
    with pytest.raises(AnsibleFilterError, match="static_pod_stops: the node read has no #skewsafe-containers"):
        filters["static_pod_stops"]('{"items": []}')
    with pytest.raises(AnsibleFilterError, match="etcd_manifest_drift: the kubeadm dry run printed no etcd manifest"):
        filters["etcd_manifest_drift"]("[etcd] nothing\n", "kind: Pod\n")
    with pytest.raises(AnsibleFilterError, match="etcd_render_config: no node name"):
        filters["etcd_render_config"]("apiVersion: v1beta4\nkind: ClusterConfiguration\n", "kind: Pod\n", "")
