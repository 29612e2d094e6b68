"""The external-etcd shape (LAB_TOPOLOGY=external-etcd: sslab-cp1, sslab-cp2, sslab-w1, and etcd in a container
of its own, kubeadm's etcd.external), one story in order.

`make test-lab` runs it (tier `shapes`, its own lab). It proves what differs from the stacked lab: no etcd static
Pod anywhere, so the snapshot comes through the etcd servers and the client certificate kube-apiserver uses (etcd's
JSON gateway) and is verified and restorable; the health gate checks etcd at those servers; and with two control
planes `mvp_enable` re-renders each kube-apiserver, so a flag from a kubeadm patches directory must survive that
re-render and both `kubeadm upgrade apply` and `kubeadm upgrade node`.
"""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import NEW, OLD, restored_keys

pytestmark = pytest.mark.external_etcd

CPS, WORKER = ["sslab-cp1", "sslab-cp2"], "sslab-w1"
PEER_CA = "/etc/kubernetes/pki/ca.crt"
MANIFEST = "/etc/kubernetes/manifests/kube-apiserver.yaml"
PATCHES = "/etc/kubernetes/skewsafe-e2e-patches"
PATCHED_FLAG = "--profiling=false"
PATCH = '[{"op": "add", "path": "/spec/containers/0/command/-", "value": "--profiling=false"}]'
done: dict[str, bool] = {}


def after(step: str) -> None:
    if not done.get(step):
        pytest.fail(f"needs step '{step}' to have passed first (the cluster is not in the state this step starts from)")


def cluster_configuration(lab) -> dict:
    config = lab.json("-n", "kube-system", "get", "configmap", "kubeadm-config")["data"]["ClusterConfiguration"]
    return yaml.safe_load(config)


def test_etcd_runs_outside_the_control_planes(lab):
    nodes = lab.nodes()
    assert sorted(nodes) == sorted([*CPS, WORKER]), sorted(nodes)
    assert all(n["status"]["nodeInfo"]["kubeletVersion"] == f"v{OLD}" for n in nodes.values())
    external = cluster_configuration(lab)["etcd"].get("external") or {}
    assert external.get("endpoints"), cluster_configuration(lab)["etcd"]
    for cp in CPS:
        assert "etcd.yaml" not in lab.node_exec(cp, "ls", "/etc/kubernetes/manifests")
    pods = lab.json("-n", "kube-system", "get", "pods", "-l", "component=etcd")["items"]
    assert pods == [], [p["metadata"]["name"] for p in pods]
    # kubeadm's patches directory on every control plane: a flag only the patch carries
    for cp in CPS:
        lab.node_exec(cp, "mkdir", "-p", PATCHES)
        lab.node_exec(cp, "sh", "-c", f"printf '%s' '{PATCH}' > {PATCHES}/kube-apiserver+json.json")
    done["lab"] = True


def test_mvp_enable_re_renders_each_control_plane_with_the_patches(lab):
    after("lab")
    run = lab.playbook("mvp_enable", "-e", f"skewsafe_kubeadm_patches_dir={PATCHES}")
    print(f"\n[external etcd: mvp_enable] rc={run.returncode} in {run.seconds:.0f}s")
    assert run.returncode == 0, run.tail()
    for cp in CPS:
        manifest = lab.node_exec(cp, "cat", MANIFEST)
        assert f"--peer-ca-file={PEER_CA}" in manifest, cp
        assert f"- {PATCHED_FLAG}" in manifest, f"{cp}: the re-render dropped the flag of the patches directory"
        lab.wait_for(lab.apiserver_runs_with(cp, f"--peer-ca-file={PEER_CA}"), 240, f"kube-apiserver on {cp}")
    done["mvp"] = True


def test_upgrade_snapshots_external_etcd_and_keeps_the_patches(lab, tmp_path):
    after("mvp")
    lab.kubectl("create", "configmap", "before-upgrade", "--from-literal=created=before")
    run = lab.playbook(
        "upgrade", "-e", f"skewsafe_kubernetes_version={NEW}", "-e", f"skewsafe_kubeadm_patches_dir={PATCHES}"
    )
    print(f"\n[external etcd: upgrade] rc={run.returncode} in {run.seconds:.0f}s")
    assert run.returncode == 0, run.tail()
    nodes = lab.nodes()
    assert {n: v["status"]["nodeInfo"]["kubeletVersion"] for n, v in nodes.items()} == dict.fromkeys(
        [*CPS, WORKER], f"v{NEW}"
    )
    assert not any(v["spec"].get("unschedulable") for v in nodes.values())
    for cp in CPS:
        manifest = lab.node_exec(cp, "cat", MANIFEST)
        assert f"kube-apiserver:v{NEW}" in manifest and f"--peer-ca-file={PEER_CA}" in manifest, cp
        assert f"- {PATCHED_FLAG}" in manifest, f"{cp}: the flag from the patches directory did not survive"
    assert cluster_configuration(lab)["etcd"].get("external"), "kubeadm-config lost etcd.external"
    reports = sorted((lab.artifacts / "reports").glob("upgrade-*.json"))
    assert reports, "no report"
    report = json.loads(reports[-1].read_text())
    rows = {r["node"]: r for r in report["nodes"]}
    assert rows[CPS[0]]["mvp"]["mode"] == "mixed", rows[CPS[0]]
    probes = rows[CPS[0]]["mvp"]["probes"]
    assert probes and all(p["status"] == 200 and p["status_local"] == 404 for p in probes), probes
    backup = report["etcd_backup"]
    assert not backup.get("skipped") and backup["node_path"].startswith("/var/lib/skewsafe/etcd-snapshots/"), backup
    assert backup["status"]["verified_by"].startswith("SHA-256"), backup
    done["upgrade"] = True


def test_the_external_snapshot_restores(lab, tmp_path):
    """etcdutl checks the SHA-256 trailer on restore; the restored etcd holds what was there before the upgrade."""
    after("upgrade")
    backup = json.loads(sorted((lab.artifacts / "reports").glob("upgrade-*.json"))[-1].read_text())["etcd_backup"]
    keys = restored_keys(backup["path"], tmp_path / "restored")
    assert "/registry/configmaps/default/before-upgrade" in keys, "the ConfigMap made before the upgrade is missing"


def test_addons_run_what_kubeadm_chose_and_dns_resolves(lab, tmp_path):
    after("upgrade")
    lab.assert_addons_at(NEW, tmp_path)
