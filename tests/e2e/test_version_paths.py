"""Other upgrade paths on the lab: a cluster at K8S_VERSION (1.35.4) upgraded through every pinned minor after it
in one run of the upgrade_path playbook (1.35.4 -> 1.36.5 -> 1.37.2), one story in order. `make test-paths` runs
it (tier paths, its own lab).

Hop 1 is the upgrade playbook to 1.36.5 on a 1.35 cluster, where the Mixed Version Proxy is alpha: its first
change turns on the gate together with --peer-ca-file in kubeadm-config and on every 1.35 kube-apiserver but the
first control plane's (one without the other stops it from starting; the first gets both from kubeadm upgrade apply
at 1.36), then each control plane's components are upgraded behind the MVP gate with 1.35 servers as proxy sources
(their rerouted counter has only a code label), then the control-plane kubelets. Hop 2 is the pinned 1.36.5 -> 1.37.2 upgrade. The explicit gate
stays in kubeadm-config: still valid on 1.36 and 1.37.
"""

from __future__ import annotations

import json
import os

import pytest
import yaml
from conftest import CONTROL_PLANES, NEW, OLD, WORKERS

pytestmark = pytest.mark.version_path

FROM = os.environ.get("K8S_VERSION", "")
HOPS = [OLD, NEW]
TARGET = HOPS[-1]
PATH_VAR = json.dumps({"skewsafe_upgrade_path": HOPS})
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


def test_check_mode_plans_the_next_hop_and_changes_nothing(lab):
    after("lab")
    before = lab.snapshot_state()
    run = lab.playbook("upgrade_path", "--check", "-e", PATH_VAR)
    print(f"\n[path {FROM} -> {TARGET}: check mode] rc={run.returncode} in {run.seconds:.0f}s")
    assert run.returncode == 0, run.tail()
    # only the next hop is planned in check mode (the later ones start from its result)
    assert f"{FROM} -> {HOPS[0]}" in run.output and f"hops left {', '.join(HOPS)}" in run.output, run.tail()
    assert lab.snapshot_state() == before
    done["check"] = True


def test_the_path_enables_the_alpha_proxy_and_every_hop_passes_the_gate(lab):
    after("check")
    run = lab.playbook("upgrade_path", "-e", PATH_VAR)
    print(f"\n[path {FROM} -> {' -> '.join(HOPS)}: upgrade_path] rc={run.returncode} in {run.seconds:.0f}s")
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
    # what mvp_enable set on 1.35 (the gate is alpha there) stays: still a valid gate on every hop
    assert GATE in extra.get("feature-gates", ""), extra
    assert lab.json("get", "configmap", "before-path-upgrade")["data"] == {"created": "before"}

    # one report per hop, oldest first; in each, the first control plane's gate proved proxying from every
    # server still at the hop's start version (1.35 sources in hop 1)
    reports = [json.loads(p.read_text()) for p in sorted((lab.artifacts / "reports").glob("upgrade-*.json"))]
    assert [r["target"] for r in reports[-2:]] == HOPS, [r.get("target") for r in reports]
    first = CONTROL_PLANES[0]
    for report in reports[-2:]:
        rows = {r["node"]: r for r in report["nodes"]}
        assert all(rows[n]["action"] == "upgraded" for n in CONTROL_PLANES + WORKERS), rows
        assert rows[first]["mvp"]["mode"] == "mixed", rows[first]
        probes = rows[first]["mvp"]["probes"]
        assert probes and all(p["status"] == 200 and p["status_local"] == 404 for p in probes), probes
        assert {p["server"] for p in probes} == set(CONTROL_PLANES[1:]), probes
        # components first: every control plane's components before the first control-plane kubelet
        steps = [(s["node"], s["step"]) for s in report["order"]]
        last_components = max(i for i, s in enumerate(steps) if s[1] == "control-plane components")
        assert last_components < min(i for i, s in enumerate(steps) if s[1] == "control-plane kubelet"), steps
        print(f"[path hop to {report['target']}] {report.get('started')} -> {report.get('finished')}")
    done["upgraded"] = True


def test_a_rerun_of_the_path_changes_nothing(lab):
    after("upgraded")
    before = lab.snapshot_state()
    run = lab.playbook("upgrade_path", "-e", PATH_VAR)
    print(f"\n[path rerun] rc={run.returncode} in {run.seconds:.0f}s")
    assert run.returncode == 0, run.tail()
    assert "hops left none" in run.output, run.tail()
    assert lab.snapshot_state() == before
