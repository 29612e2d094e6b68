"""Drift between live control-plane manifests and kubeadm's own dry-run rendering.

The fixtures are real: the stdout of `kubeadm upgrade node phase control-plane --dry-run` (v1.36.5, the
lab's sslab-cp3, cluster objects it printed before the manifests trimmed) and the live manifests of that
node at that moment.
"""

from __future__ import annotations

import base64
from pathlib import Path

import pytest
import yaml

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._drift import (
    DriftError,
    drift,
    kubelet_config_drift,
    parse_dryrun,
)

FIXTURES = Path(__file__).parent / "fixtures"
DRYRUN = (FIXTURES / "kubeadm-v1.36.5-upgrade-node-phase-control-plane-dry-run.txt").read_text()
COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")


def slurped(texts):
    """What ansible.builtin.slurp with a loop registers."""
    return {
        "results": [
            {
                "item": name,
                "source": f"/etc/kubernetes/manifests/{name}.yaml",
                "content": base64.b64encode(text.encode()).decode(),
            }
            for name, text in texts.items()
        ]
    }


def live(**edits):
    texts = {name: (FIXTURES / "live-v1.36.5" / f"{name}.yaml").read_text() for name in COMPONENTS}
    for name, edit in edits.items():
        pod = yaml.safe_load(texts[name.replace("_", "-")])
        edit(pod)
        texts[name.replace("_", "-")] = yaml.safe_dump(pod)
    return slurped(texts)


def test_dry_run_output_holds_the_three_manifests():
    files = parse_dryrun(DRYRUN)
    assert sorted(files) == [f"/etc/kubernetes/manifests/{c}.yaml" for c in COMPONENTS]
    for text in files.values():
        assert yaml.safe_load(text)["kind"] == "Pod"


def test_manifests_as_kubeadm_wrote_them_have_no_drift():
    result = drift(DRYRUN, live())
    assert result["compared"] == list(COMPONENTS)
    assert result["lost"] == [] and result["altered"] == []


def test_a_hand_added_flag_volume_and_mount_would_be_lost():
    def encryption(pod):
        container = pod["spec"]["containers"][0]
        container["command"].append("--encryption-provider-config=/etc/kubernetes/enc/config.yaml")
        container["volumeMounts"].append({"name": "enc", "mountPath": "/etc/kubernetes/enc", "readOnly": True})
        pod["spec"]["volumes"].append({"name": "enc", "hostPath": {"path": "/etc/kubernetes/enc"}})

    result = drift(DRYRUN, live(kube_apiserver=encryption))
    assert result["lost"] == [
        "kube-apiserver: flag --encryption-provider-config=/etc/kubernetes/enc/config.yaml",
        "kube-apiserver: volume enc",
        "kube-apiserver: mount enc:/etc/kubernetes/enc",
    ]
    assert result["altered"] == []


def test_a_hand_changed_flag_is_named_with_both_values():
    def verbose(pod):
        command = pod["spec"]["containers"][0]["command"]
        index = next(i for i, arg in enumerate(command) if arg.startswith("--bind-address="))
        command[index] = "--bind-address=0.0.0.0"

    result = drift(DRYRUN, live(kube_scheduler=verbose))
    assert result["altered"] == ["kube-scheduler: flag --bind-address: 0.0.0.0 -> 127.0.0.1"]
    assert result["components"]["kube-apiserver"] == {"lost": [], "altered": [], "added": []}


def test_what_kubeadm_config_adds_is_not_drift():
    def without_flag(pod):
        command = pod["spec"]["containers"][0]["command"]
        command[:] = [arg for arg in command if not arg.startswith("--allow-privileged")]

    result = drift(DRYRUN, live(kube_apiserver=without_flag))
    assert result["lost"] == [] and result["altered"] == []
    assert result["components"]["kube-apiserver"]["added"] == ["flag --allow-privileged=true"]


ALL_MEMBERS = "https://127.0.0.1:2379,https://10.0.0.11:2379,https://10.0.0.12:2379,https://10.0.0.13:2379"


def test_etcd_servers_gaining_every_member_is_not_drift():
    # kubeadm-config got every stacked member (mvp_enable); this control plane still lists its local one only.
    rendered = DRYRUN.replace("--etcd-servers=https://127.0.0.1:2379", f"--etcd-servers={ALL_MEMBERS}")
    result = drift(rendered, live())
    assert result["lost"] == [] and result["altered"] == []
    assert result["components"]["kube-apiserver"]["added"] == [
        f"flag --etcd-servers: https://127.0.0.1:2379 -> {ALL_MEMBERS}"
    ]


def test_etcd_servers_losing_a_hand_added_server_is_drift():
    def other_servers(pod):
        command = pod["spec"]["containers"][0]["command"]
        index = next(i for i, arg in enumerate(command) if arg.startswith("--etcd-servers="))
        command[index] = "--etcd-servers=https://127.0.0.1:2379,https://etcd-proxy.example:2379"

    rendered = DRYRUN.replace("--etcd-servers=https://127.0.0.1:2379", f"--etcd-servers={ALL_MEMBERS}")
    result = drift(rendered, live(kube_apiserver=other_servers))
    assert result["altered"] == [
        f"kube-apiserver: flag --etcd-servers: https://127.0.0.1:2379,https://etcd-proxy.example:2379 -> {ALL_MEMBERS}"
    ]


def test_a_dry_run_without_manifests_or_a_component_it_skipped_is_an_error():
    with pytest.raises(DriftError, match="printed no manifest"):
        drift("[upgrade] nothing\n", live())
    texts = slurped({"etcd": "kind: Pod\nspec:\n  containers:\n  - image: registry.k8s.io/etcd:v1.36.5\n"})
    with pytest.raises(DriftError, match="renders no etcd"):
        drift(DRYRUN, texts)


def test_nothing_is_compared_while_kubeadm_config_is_at_another_version():
    """A rerun after `kubeadm upgrade apply` (kubeadm-config at the target) on a node still at the old version."""
    ahead = DRYRUN.replace('to version "v1.36.5"', 'to version "v1.37.2"')
    result = drift(ahead, live())
    assert result["compared"] == [] and result["lost"] == [] and result["altered"] == []
    assert result["skipped"] == "kubeadm-config is at v1.37.2, the manifests at v1.36.5 (an upgrade in progress)"


# `kubeadm upgrade node phase kubelet-config --dry-run` (v1.36.5) on the lab's sslab-w1, and that worker's preflight
# read at the same moment (its config.yaml, kubeadm-flags.env, /etc/default/kubelet and instance-config.yaml).
KUBELET_DRYRUN = (FIXTURES / "kubeadm-v1.36.5-upgrade-node-phase-kubelet-config-dry-run.txt").read_text()
NODE_READ = (FIXTURES / "kubelet-node-read-v1.36.5.txt").read_text()
MARK = "#skewsafe-file "


def node_read(edit=None):
    """The worker's read, its config.yaml edited by ``edit``."""
    parts = NODE_READ.split(f"{MARK}/var/lib/kubelet/config.yaml\n", 1)[1]
    config, rest = parts.split(MARK, 1)
    if edit:
        document = yaml.safe_load(config)
        edit(document)
        config = yaml.safe_dump(document)
    return f"{MARK}/var/lib/kubelet/config.yaml\n{config}\n{MARK}{rest}"


def test_a_kubelet_configuration_as_kubeadm_wrote_it_has_no_drift():
    result = kubelet_config_drift(KUBELET_DRYRUN, NODE_READ)
    assert result == {"compared": ["/var/lib/kubelet/config.yaml"], "lost": [], "altered": [], "added": []}


def test_the_nodes_instance_configuration_is_applied_as_kubeadm_does():
    """The dry run reads instance-config.yaml from its scratch directory and falls back to the default socket; the
    real step applies the node's own file. Without it the socket would look altered."""
    config = NODE_READ.split(f"{MARK}/var/lib/kubelet/config.yaml\n", 1)[1].split(MARK, 1)[0]
    result = kubelet_config_drift(KUBELET_DRYRUN, config)
    assert result["altered"] == [
        "containerRuntimeEndpoint: 'unix:///run/containerd/containerd.sock' -> 'unix:///var/run/containerd/containerd.sock'"
    ]


def test_a_node_local_kubelet_setting_would_be_lost_or_changed():
    def tune(document):
        document["maxPods"] = 150
        document.setdefault("kubeReserved", {})["memory"] = "1Gi"
        document["cgroupDriver"] = "cgroupfs"

    result = kubelet_config_drift(KUBELET_DRYRUN, node_read(tune))
    assert result["lost"] == ["kubeReserved.memory: '1Gi'", "maxPods: 150"]
    assert result["altered"] == ["cgroupDriver: 'cgroupfs' -> 'systemd'"]


def test_null_and_empty_kubelet_settings_are_not_lost():
    def empty(document):
        document.update(podCIDR=None, allowedUnsafeSysctls=[], systemReserved={}, providerID="")

    assert kubelet_config_drift(KUBELET_DRYRUN, node_read(empty))["lost"] == []


def test_a_node_read_without_the_kubelet_configuration_is_an_error():
    with pytest.raises(DriftError, match=r"no readable /var/lib/kubelet/config\.yaml"):
        kubelet_config_drift(KUBELET_DRYRUN, f"{MARK}/etc/default/kubelet\nKUBELET_EXTRA_ARGS=\n")


def test_a_dry_run_without_the_kubelet_configuration_is_an_error():
    with pytest.raises(DriftError, match="printed no kubelet configuration"):
        kubelet_config_drift(DRYRUN, NODE_READ)


def test_nothing_is_compared_while_the_node_is_behind_kubeadm_config():
    """A rerun after kubeadm upgrade apply: kubelet-config was re-uploaded with the target's defaults."""
    ahead = KUBELET_DRYRUN.replace("kubernetesVersion: v1.36.5", "kubernetesVersion: v1.37.2")
    result = kubelet_config_drift(ahead, node_read(lambda document: document.update(maxPods=150)))
    assert result["compared"] == [] and result["lost"] == [] and result["altered"] == []
    assert result["skipped"].startswith("kubeadm-config is at v1.37.2, this node's kubelet at v1.36.5")
