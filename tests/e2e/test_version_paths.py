"""Another upgrade path on the lab: a cluster at K8S_VERSION (e.g. 1.35.4) upgraded to the lab's pinned older
version (1.36.5), one story in order. `make test-paths` runs it (tier paths, its own lab).

On 1.35 the Mixed Version Proxy is alpha: the upgrade's first change turns on the gate together with
--peer-ca-file on every 1.35 kube-apiserver (one without the other stops it from starting), then each control
plane is upgraded behind the MVP gate with 1.35 servers as proxy sources (their rerouted counter has only a code
label). The explicit gate stays in kubeadm-config afterwards: still valid on 1.36 and 1.37.
"""

from __future__ import annotations

import json
import os

import pytest
import yaml
from conftest import CONTROL_PLANES, OLD, WORKERS

pytestmark = pytest.mark.version_path

FROM = os.environ.get("K8S_VERSION", "")
TARGET = OLD
PEER_CA = "/etc/kubernetes/pki/ca.crt"
MANIFEST = "/etc/kubernetes/manifests/kube-apiserver.yaml"
GATE = "UnknownVersionInteroperabilityProxy=true"
done: dict[str, bool] = {}


def after(step: str) -> None:
    if not done.get(step):
        pytest.fail(f"needs step '{step}' to have passed first (the cluster is not in the state this step starts from)")


def _minor(version: str) -> int:
    return int(version.split(".")[1])


def test_the_lab_runs_the_path_start(lab):
    if not FROM or _minor(FROM) >= _minor(TARGET):
        pytest.fail(
            f"K8S_VERSION={FROM!r}: the paths tier needs a start version a minor below {TARGET} (make test-paths)"
        )
    nodes = lab.nodes()
    assert sorted(nodes) == sorted(CONTROL_PLANES + WORKERS), sorted(nodes)
    versions = {n: v["status"]["nodeInfo"]["kubeletVersion"] for n, v in nodes.items()}
    assert set(versions.values()) == {f"v{FROM}"}, versions
    lab.kubectl("create", "configmap", "before-path-upgrade", "--from-literal=created=before")
    done["lab"] = True


def test_check_mode_plans_the_path_and_writes_no_credential(lab, tmp_path):
    after("lab")
    before = lab.snapshot_state()
    credentials = tmp_path / "credentials"
    run = lab.playbook(
        "upgrade",
        "--check",
        "-e",
        f"skewsafe_kubernetes_version={TARGET}",
        "-e",
        f"skewsafe_credentials_dir={credentials}",
        "-e",
        "skewsafe_keep_credentials=true",
    )
    print(f"\n[path {FROM} -> {TARGET}: check mode] rc={run.returncode} in {run.seconds:.0f}s")
    assert run.returncode == 0, run.tail()
    assert f"{FROM} -> {TARGET}" in run.output, run.tail()
    assert not credentials.exists() or not any(credentials.iterdir()), list(credentials.iterdir())
    assert lab.snapshot_state() == before
    done["check"] = True


def test_upgrade_enables_the_alpha_proxy_and_each_control_plane_passes_the_gate(lab):
    after("check")
    run = lab.playbook("upgrade", "-e", f"skewsafe_kubernetes_version={TARGET}")
    print(f"\n[path {FROM} -> {TARGET}: upgrade] rc={run.returncode} in {run.seconds:.0f}s")
    assert run.returncode == 0, run.tail()

    nodes = lab.nodes()
    for name, node in nodes.items():
        assert node["status"]["nodeInfo"]["kubeletVersion"] == f"v{TARGET}", name
        assert not node["spec"].get("unschedulable"), f"{name} left cordoned"
    for name in CONTROL_PLANES:
        manifest = lab.node_exec(name, "cat", MANIFEST)
        assert f"kube-apiserver:v{TARGET}" in manifest, name
        assert f"--peer-ca-file={PEER_CA}" in manifest, name
    config = yaml.safe_load(
        lab.json("-n", "kube-system", "get", "configmap", "kubeadm-config")["data"]["ClusterConfiguration"]
    )
    assert config["kubernetesVersion"] == f"v{TARGET}", config["kubernetesVersion"]
    extra = {a["name"]: a["value"] for a in config["apiServer"].get("extraArgs") or []}
    assert extra.get("peer-ca-file") == PEER_CA, extra
    # what enable_mvp set on 1.35 (the gate is alpha there) stays: still a valid gate on the target
    assert GATE in extra.get("feature-gates", ""), extra
    assert lab.json("get", "configmap", "before-path-upgrade")["data"] == {"created": "before"}

    reports = sorted((lab.artifacts / "reports").glob("upgrade-*.json"))
    assert reports, f"no report in {lab.artifacts / 'reports'}"
    report = json.loads(reports[-1].read_text())
    rows = {r["node"]: r for r in report["nodes"]}
    first = CONTROL_PLANES[0]
    # After the first control plane the others still run FROM: they are the proxy sources the gate proves.
    assert rows[first]["action"] == "upgraded" and rows[first]["mvp"]["mode"] == "mixed", rows[first]
    probes = rows[first]["mvp"]["probes"]
    assert probes and all(p["status"] == 200 and p["status_local"] == 404 for p in probes), probes
    assert all(rows[n]["action"] == "upgraded" for n in CONTROL_PLANES + WORKERS), rows
    done["upgraded"] = True


def test_a_rerun_at_the_target_changes_nothing(lab):
    after("upgraded")
    before = lab.snapshot_state()
    run = lab.playbook("upgrade", "-e", f"skewsafe_kubernetes_version={TARGET}")
    print(f"\n[path {FROM} -> {TARGET}: rerun] rc={run.returncode} in {run.seconds:.0f}s")
    assert run.returncode == 0, run.tail()
    assert lab.snapshot_state() == before
