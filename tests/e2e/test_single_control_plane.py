"""The one-control-plane shape (LAB_TOPOLOGY=single: sslab-cp1 and sslab-w1), one story in order.

A flag added by hand to the kube-apiserver manifest stops mvp_enable before anything changes (drift: the
next re-render would drop it); the same flag from a kubeadm patches directory survives the upgrade.

`make test-lab` runs it (tier `shapes`, its own lab). With a single control plane there is no peer to
proxy to: enabling MVP records --peer-ca-file in kubeadm-config for the control planes that join later
but restarts nothing; the upgrade renders it on the way (kubeadm upgrade apply reads kubeadm-config) and
its gate runs in steady mode.
"""

from __future__ import annotations

import json

import pytest
import yaml
from conftest import NEW, OLD

pytestmark = pytest.mark.single_control_plane

CP, WORKER = "sslab-cp1", "sslab-w1"
PEER_CA = "/etc/kubernetes/pki/ca.crt"
MANIFEST = "/etc/kubernetes/manifests/kube-apiserver.yaml"
done: dict[str, bool] = {}


def after(step: str) -> None:
    if not done.get(step):
        pytest.fail(f"needs step '{step}' to have passed first (the cluster is not in the state this step starts from)")


def test_the_lab_has_one_control_plane(lab):
    nodes = lab.nodes()
    assert sorted(nodes) == [CP, WORKER], sorted(nodes)
    assert all(n["status"]["nodeInfo"]["kubeletVersion"] == f"v{OLD}" for n in nodes.values())
    done["lab"] = True


PATCHES = "/etc/kubernetes/skewsafe-e2e-patches"
HAND_FLAG = "--profiling=false"
# kubeadm --patches: a JSON patch for the kube-apiserver static Pod (file name <target>+json.json)
PATCH = '[{"op": "add", "path": "/spec/containers/0/command/-", "value": "--profiling=false"}]'


def test_a_hand_edited_manifest_stops_mvp_enable_before_anything_changes(lab):
    after("lab")
    lab.node_exec(CP, "cp", MANIFEST, "/root/kube-apiserver.yaml.e2e")
    lab.node_exec(CP, "sed", "-i", f"s#- --secure-port=6443#- --secure-port=6443\\n    - {HAND_FLAG}#", MANIFEST)
    lab.wait_for(lab.apiserver_runs_with(CP, HAND_FLAG), 240, "kube-apiserver with the hand-added flag")
    config_rv = lab.json("-n", "kube-system", "get", "configmap", "kubeadm-config")["metadata"]["resourceVersion"]
    edited = lab.manifest_digest(CP)

    run = lab.playbook("mvp_enable")
    print(f"\n[single: drift stop] rc={run.returncode} in {run.seconds:.0f}s")
    assert run.returncode != 0, run.tail()
    assert f"kube-apiserver: flag {HAND_FLAG}" in run.output and "Nothing was changed" in run.output, run.tail()
    assert lab.manifest_digest(CP) == edited
    after_rv = lab.json("-n", "kube-system", "get", "configmap", "kubeadm-config")["metadata"]["resourceVersion"]
    assert after_rv == config_rv, "kubeadm-config was written although the run stopped"

    # The same flag through a kubeadm patches directory is no drift (kubeadm renders it).
    lab.node_exec(CP, "mkdir", "-p", PATCHES)
    lab.node_exec(CP, "sh", "-c", f"printf '%s' '{PATCH}' > {PATCHES}/kube-apiserver+json.json")
    done["patches"] = True


def test_mvp_enable_records_the_flag_and_restarts_nothing(lab):
    after("patches")
    before = lab.manifest_digest(CP)
    run = lab.playbook("mvp_enable", "-e", f"skewsafe_kubeadm_patches_dir={PATCHES}")
    print(f"\n[single: mvp_enable] rc={run.returncode} in {run.seconds:.0f}s")
    assert run.returncode == 0, run.tail()
    assert "is the only control plane" in run.output, run.tail()
    assert lab.manifest_digest(CP) == before, "the only kube-apiserver was re-rendered (restarted)"
    config = lab.json("-n", "kube-system", "get", "configmap", "kubeadm-config")["data"]["ClusterConfiguration"]
    extra = yaml.safe_load(config)["apiServer"].get("extraArgs") or []
    assert {"name": "peer-ca-file", "value": PEER_CA} in extra, extra
    assert {"name": "shutdown-delay-duration", "value": "5s"} in extra, extra
    rerun = lab.playbook("mvp_enable", "-e", f"skewsafe_kubeadm_patches_dir={PATCHES}")
    assert rerun.returncode == 0 and rerun.recap()[CP]["changed"] == 0, rerun.tail()
    done["mvp"] = True


def test_upgrade_renders_the_flag_and_passes_its_gate_in_steady_mode(lab):
    after("mvp")
    run = lab.playbook(
        "upgrade", "-e", f"skewsafe_kubernetes_version={NEW}", "-e", f"skewsafe_kubeadm_patches_dir={PATCHES}"
    )
    print(f"\n[single: upgrade] rc={run.returncode} in {run.seconds:.0f}s")
    assert run.returncode == 0, run.tail()
    nodes = lab.nodes()
    assert {n: v["status"]["nodeInfo"]["kubeletVersion"] for n, v in nodes.items()} == {
        CP: f"v{NEW}",
        WORKER: f"v{NEW}",
    }
    assert not any(v["spec"].get("unschedulable") for v in nodes.values())
    manifest = lab.node_exec(CP, "cat", MANIFEST)
    assert f"--peer-ca-file={PEER_CA}" in manifest and f"kube-apiserver:v{NEW}" in manifest
    assert f"- {HAND_FLAG}" in manifest, "the flag from the patches directory did not survive the upgrade"
    reports = sorted((lab.artifacts / "reports").glob("upgrade-*.json"))
    assert reports, "no report"
    report = json.loads(reports[-1].read_text())
    row = next(r for r in report["nodes"] if r["node"] == CP)
    assert row["action"] == "upgraded" and (row.get("mvp") or {}).get("mode") == "steady", row
    done["upgrade"] = True


def test_addons_run_what_kubeadm_chose_and_dns_resolves(lab, tmp_path):
    after("upgrade")
    lab.assert_addons_at(NEW, tmp_path)
