from __future__ import annotations

import difflib
from pathlib import Path

import pytest
import yaml

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._kubeadm_config import (
    KubeadmConfig,
    KubeadmConfigError,
    build_updates,
)

FIXTURES = Path(__file__).parent / "fixtures"
# Recorded from the real kubeadm binaries; see fixtures/README.md for the commands.
REAL_FILES = sorted(FIXTURES.glob("kubeadm-*-init-defaults.yaml.txt"))
REAL_CONFIGMAPS = sorted(FIXTURES.glob("kubeadm-config-configmap-*.yaml.txt"))

V1BETA3 = """\
apiVersion: kubeadm.k8s.io/v1beta3
kind: ClusterConfiguration
kubernetesVersion: v1.35.4
apiServer:
  extraArgs:
    authorization-mode: Node,RBAC
"""


def updates(api_server=None, gates=None, cm=None):
    return build_updates(
        {"api_server_extra_args": api_server, "feature_gates": gates, "controller_manager_extra_args": cm}
    )


def changed_lines(before, after):
    return [
        line
        for line in difflib.unified_diff(before.splitlines(), after.splitlines(), lineterm="", n=0)
        if line[:1] in "+-" and not line.startswith(("+++", "---"))
    ]


def test_real_fixtures_are_present():
    # Fidelity tests below are only as good as these recordings.
    assert REAL_FILES, "missing fixtures/kubeadm-*-init-defaults.yaml.txt (see fixtures/README.md)"
    assert REAL_CONFIGMAPS, "missing fixtures/kubeadm-config-configmap-*.yaml.txt (see fixtures/README.md)"


@pytest.mark.parametrize("path", REAL_FILES + REAL_CONFIGMAPS, ids=lambda p: p.name)
def test_real_kubeadm_output_round_trips_unchanged(path):
    text = path.read_text()
    config = KubeadmConfig(text)
    assert config.apply(updates()) == []
    assert config.render() == text


@pytest.mark.parametrize("path", REAL_FILES, ids=lambda p: p.name)
def test_real_multi_document_file_changes_only_the_added_lines(path):
    text = path.read_text()
    config = KubeadmConfig(text)
    assert config.api_version == "kubeadm.k8s.io/v1beta4"
    changed = config.apply(
        updates({"peer-ca-file": "/etc/kubernetes/pki/ca.crt"}, {"UnknownVersionInteroperabilityProxy": True})
    )
    assert changed == ["apiServer.peer-ca-file", "apiServer.feature-gates"]
    new_text = config.render()
    assert changed_lines(text, new_text) == [
        "-apiServer: {}",
        "+apiServer:",
        "+  extraArgs:",
        "+  - name: peer-ca-file",
        "+    value: /etc/kubernetes/pki/ca.crt",
        "+  - name: feature-gates",
        "+    value: UnknownVersionInteroperabilityProxy=true",
    ]
    old_docs = text.split("---\n")
    new_docs = new_text.split("---\n")
    assert len(old_docs) == len(new_docs) > 1
    for old, new in zip(old_docs, new_docs):
        if "kind: ClusterConfiguration" not in old:
            assert old == new  # every other document keeps its bytes


@pytest.mark.parametrize("path", REAL_CONFIGMAPS, ids=lambda p: p.name)
def test_real_configmap_keeps_existing_args_and_order(path):
    text = path.read_text()
    config = KubeadmConfig(text)
    before = [e["name"] for e in config.cluster["apiServer"].get("extraArgs", [])]
    config.apply(updates({"peer-ca-file": "/etc/kubernetes/pki/ca.crt"}))
    after = [e["name"] for e in config.cluster["apiServer"]["extraArgs"]]
    assert after == [*before, "peer-ca-file"]
    # and back again
    config2 = KubeadmConfig(config.render())
    assert config2.apply(updates({"peer-ca-file": None})) == ["apiServer.peer-ca-file"]
    assert config2.render() == text


def test_v1beta3_map_form_is_edited_in_place():
    config = KubeadmConfig(V1BETA3)
    assert config.apply(updates({"peer-ca-file": "/p"}, {"UnknownVersionInteroperabilityProxy": True})) == [
        "apiServer.peer-ca-file",
        "apiServer.feature-gates",
    ]
    config.check_writable(None)  # v1.35 may still write v1beta3
    assert yaml.safe_load(config.render())["apiServer"]["extraArgs"] == {
        "authorization-mode": "Node,RBAC",
        "peer-ca-file": "/p",
        "feature-gates": "UnknownVersionInteroperabilityProxy=true",
    }


def test_v1beta3_write_refused_for_kubeadm_136_and_later():
    config = KubeadmConfig(V1BETA3)
    with pytest.raises(KubeadmConfigError, match="kubeadm config migrate"):
        config.check_writable(36)
    unknown = KubeadmConfig(V1BETA3.replace("kubernetesVersion: v1.35.4\n", ""))
    with pytest.raises(KubeadmConfigError, match="set kubeadm_version"):
        unknown.check_writable(None)


def test_v1beta4_is_always_writable():
    KubeadmConfig("apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n").check_writable(37)


@pytest.mark.parametrize(
    "text, message",
    [
        ("apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\napiServer: [\n", "malformed YAML"),
        ("apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\n", "no ClusterConfiguration"),
        ("apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\n", "unknown ClusterConfiguration apiVersion"),
        ("apiVersion: kubeadm.k8s.io/v1\nkind: ClusterConfiguration\n", "unknown ClusterConfiguration apiVersion"),
        ("", "empty"),
        (
            "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n---\n"
            "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n",
            "more than one",
        ),
    ],
)
def test_bad_documents_are_rejected(text, message):
    with pytest.raises(KubeadmConfigError, match=message):
        KubeadmConfig(text)


def test_removing_last_arg_drops_extra_args_key():
    text = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\napiServer:\n  extraArgs:\n  - name: a\n    value: b\n"
    config = KubeadmConfig(text)
    assert config.apply(updates({"a": None})) == ["apiServer.a"]
    assert config.cluster["apiServer"] == {}


def test_controller_manager_args_are_supported():
    config = KubeadmConfig("apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n")
    assert config.apply(updates(cm={"bind-address": "0.0.0.0"})) == ["controllerManager.bind-address"]
    assert config.cluster["controllerManager"]["extraArgs"] == [{"name": "bind-address", "value": "0.0.0.0"}]


def test_comments_and_separator_before_cluster_document_are_kept():
    text = (
        "apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\n"
        "---\n# the cluster-wide part\napiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\n"
    )
    config = KubeadmConfig(text)
    config.apply(updates({"a": "b"}))
    assert config.render().startswith(
        "apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\n---\n# the cluster-wide part\napiVersion:"
    )
