"""Drift between a node's live etcd manifest and what kubeadm's upgrade would write in its place.

The fixtures are real, from the lab's sslab-cp2 at v1.36.5 (joined second, so its file lists two members and
says "existing"): its etcd and kube-apiserver manifests, kubeadm-config's ClusterConfiguration, and the stdout of
`kubeadm init phase etcd local --dry-run` run on that node with the configuration `render_config` built from them
(through the preflight's command: a scratch directory on stdin, removed after).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._etcd_drift import (
    EtcdDriftError,
    drift,
    render_config,
)

FIXTURES = Path(__file__).parent / "fixtures"
LIVE = FIXTURES / "live-etcd-v1.36.5"
DRYRUN = (FIXTURES / "kubeadm-v1.36.5-init-phase-etcd-local-dry-run.txt").read_text()
ETCD = (LIVE / "etcd.yaml").read_text()
APISERVER = (LIVE / "kube-apiserver.yaml").read_text()
CLUSTER = (LIVE / "cluster-configuration.yaml").read_text()


def test_the_configuration_names_the_node_and_its_advertise_address_beside_kubeadm_config():
    init, cluster = yaml.safe_load_all(render_config(CLUSTER, APISERVER, "sslab-cp2"))
    assert init == {
        "apiVersion": "kubeadm.k8s.io/v1beta4",
        "kind": "InitConfiguration",
        "localAPIEndpoint": {"advertiseAddress": "10.214.1.12"},
        "nodeRegistration": {"name": "sslab-cp2"},
    }
    assert cluster == yaml.safe_load(CLUSTER)


def test_an_ipv6_advertise_address_loses_its_brackets_and_port():
    apiserver = APISERVER.replace("10.214.1.12:6443", "'[fd00:214::12]:6443'")
    init, _cluster = yaml.safe_load_all(render_config(CLUSTER, apiserver, "sslab-cp2"))
    assert init["localAPIEndpoint"] == {"advertiseAddress": "fd00:214::12"}


@pytest.mark.parametrize(
    ("cluster", "apiserver", "node", "says"),
    [
        (CLUSTER, APISERVER.replace("advertise-address.endpoint", "other"), "n", "no kubeadm.kubernetes.io/kube-api"),
        (CLUSTER.replace("kind: ClusterConfiguration", "kind: Other"), APISERVER, "n", "no kind ClusterConfiguration"),
        ("[", APISERVER, "n", "ClusterConfiguration: not YAML"),
        (CLUSTER, APISERVER, "", "no node name"),
    ],
)
def test_a_configuration_that_cannot_be_built_says_why(cluster, apiserver, node, says):
    with pytest.raises(EtcdDriftError, match=says):
        render_config(cluster, apiserver, node)


def test_the_lab_member_as_kubeadm_wrote_it_loses_nothing_and_its_bootstrap_flags_are_named_apart():
    found = drift(DRYRUN, ETCD)
    assert found["compared"] == ["etcd"]
    assert (found["lost"], found["altered"], found["components"]["etcd"]["added"]) == ([], [], [])
    assert found["bootstrap_only"] == [
        "flag --initial-cluster: sslab-cp2=https://10.214.1.12:2380,sslab-cp1=https://10.214.1.11:2380"
        " -> sslab-cp2=https://10.214.1.12:2380",
        "flag --initial-cluster-state: existing -> (none)",
    ]


def test_an_operators_flag_value_volume_and_variable_in_the_file_alone_are_lost_or_altered():
    live = yaml.safe_load(ETCD)
    container = live["spec"]["containers"][0]
    container["command"] = [
        "--snapshot-count=5000" if arg == "--snapshot-count=10000" else arg for arg in container["command"]
    ] + ["--quota-backend-bytes=8589934592"]
    container["env"] = [{"name": "GOMAXPROCS", "value": "2"}]
    live["spec"]["volumes"].append({"name": "backup", "hostPath": {"path": "/srv/etcd-backup"}})
    found = drift(DRYRUN, yaml.safe_dump(live))
    assert found["lost"] == [
        "etcd: flag --quota-backend-bytes=8589934592",
        "etcd: volume backup",
        "etcd: env GOMAXPROCS",
    ]
    assert found["altered"] == ["etcd: flag --snapshot-count: 5000 -> 10000"]


def test_a_member_on_another_etcd_than_the_installed_kubeadm_renders_is_not_compared():
    found = drift(DRYRUN, ETCD.replace("etcd:3.6.8-0", "etcd:3.6.6-0") + "")
    assert (found["compared"], found["lost"], found["altered"]) == ([], [], [])
    assert found["skipped"].startswith("etcd runs 3.6.6-0, the installed kubeadm renders 3.6.8-0")


def test_a_dry_run_without_an_etcd_manifest_is_an_error():
    with pytest.raises(EtcdDriftError, match="printed no etcd manifest"):
        drift("[etcd] nothing\n", ETCD)
