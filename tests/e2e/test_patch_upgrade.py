"""A patch upgrade on the lab: a cluster at K8S_VERSION (1.36.4) upgraded to the lab's pinned older version of the
same minor (1.36.5), one story in order. `make test-paths` runs it after the chained path (tier paths, its own lab).

Patch releases of one minor serve the same resources, so there is nothing to proxy: the gate after each control
plane must run in steady mode (every server a proxy source, no probe) and pass, and the upgrade must still turn
MVP on first (--peer-ca-file) so that the next minor upgrade is covered.

A setting only one worker's /var/lib/kubelet/config.yaml has (maxPods) stops preflight, named; carried by a
kubeletconfiguration patch in the patches directory, the upgrade keeps it (kubeadm upgrade node rewrites the file).
"""

from __future__ import annotations

import json
import os

import pytest
from conftest import CONTROL_PLANES, OLD, WORKERS

pytestmark = pytest.mark.patch_upgrade

FROM = os.environ.get("K8S_VERSION", "")
TARGET = OLD
PEER_CA = "/etc/kubernetes/pki/ca.crt"
MANIFEST = "/etc/kubernetes/manifests/kube-apiserver.yaml"
KUBELET_CONFIG = "/var/lib/kubelet/config.yaml"
PATCHES = "/etc/kubernetes/skewsafe-e2e-patches"
NODE_LOCAL = "maxPods: 150"  # only WORKERS[0] has it: what an operator tunes on one node
done: dict[str, bool] = {}


def after(step: str) -> None:
    if not done.get(step):
        pytest.fail(f"needs step '{step}' to have passed first (the cluster is not in the state this step starts from)")


def _triple(version: str) -> tuple[int, ...]:
    return tuple(int(x) for x in version.lstrip("v").split("."))


def test_the_lab_runs_an_older_patch_release(lab):
    if not FROM or _triple(FROM)[:2] != _triple(TARGET)[:2] or _triple(FROM) >= _triple(TARGET):
        pytest.fail(f"K8S_VERSION={FROM!r}: a patch upgrade needs an older patch release of {TARGET} (make test-paths)")
    versions = {n: v["status"]["nodeInfo"]["kubeletVersion"] for n, v in lab.nodes().items()}
    assert set(versions) == set(CONTROL_PLANES + WORKERS) and set(versions.values()) == {f"v{FROM}"}, versions
    done["lab"] = True


def test_preflight_names_a_kubelet_setting_only_one_node_has(lab):
    after("lab")
    lab.node_exec(WORKERS[0], "sh", "-c", f"echo '{NODE_LOCAL}' >>{KUBELET_CONFIG}")
    run = lab.playbook("preflight", "-e", f"skewsafe_kubernetes_version={TARGET}")
    print(
        f"\n[patch {FROM} -> {TARGET}: preflight with {NODE_LOCAL} on {WORKERS[0]} only] rc={run.returncode} in"
        f" {run.seconds:.0f}s"
    )
    assert run.returncode != 0, run.tail()
    named = f"node {{}}: kubeadm upgrade node rewrites {KUBELET_CONFIG} from the ConfigMap kube-system/kubelet-config"
    found = [line for line in run.output.splitlines() if named.format(WORKERS[0]) in line]
    assert found and "which would drop or change: maxPods: 150" in found[0], run.tail()
    # every other node's file is what kubeadm wrote: nothing named there
    assert not [n for n in CONTROL_PLANES + WORKERS[1:] if named.format(n) in run.output], run.tail()
    # The operator carries it in a kubeletconfiguration patch on that node (the others get the empty directory).
    for name in CONTROL_PLANES + WORKERS:
        lab.node_exec(name, "mkdir", "-p", PATCHES)
    lab.node_exec(WORKERS[0], "sh", "-c", f"echo '{NODE_LOCAL}' >{PATCHES}/kubeletconfiguration+merge.yaml")
    done["kubelet_setting"] = True


def test_patch_upgrade_gates_in_steady_mode(lab):
    after("kubelet_setting")
    run = lab.playbook(
        "upgrade", "-e", f"skewsafe_kubernetes_version={TARGET}", "-e", f"skewsafe_kubeadm_patches_dir={PATCHES}"
    )
    print(f"\n[patch {FROM} -> {TARGET}: upgrade] rc={run.returncode} in {run.seconds:.0f}s")
    assert run.returncode == 0, run.tail()
    nodes = lab.nodes()
    for name, node in nodes.items():
        assert node["status"]["nodeInfo"]["kubeletVersion"] == f"v{TARGET}", name
        assert not node["spec"].get("unschedulable"), f"{name} left cordoned"
    for name in CONTROL_PLANES:
        manifest = lab.node_exec(name, "cat", MANIFEST)
        assert f"kube-apiserver:v{TARGET}" in manifest and f"--peer-ca-file={PEER_CA}" in manifest, name
    # kubeadm upgrade node rewrote the worker's file: the patch carried its setting through
    assert NODE_LOCAL in lab.node_exec(WORKERS[0], "cat", KUBELET_CONFIG).splitlines(), (
        f"{WORKERS[0]} lost {NODE_LOCAL}"
    )
    reports = sorted((lab.artifacts / "reports").glob("upgrade-*.json"))
    assert reports, f"no report in {lab.artifacts / 'reports'}"
    rows = {r["node"]: r for r in json.loads(reports[-1].read_text())["nodes"]}
    for name in CONTROL_PLANES:
        assert rows[name]["action"] == "upgraded", rows[name]
        gate = rows[name].get("mvp") or {}
        assert gate.get("mode") == "steady" and not gate.get("probes"), (name, gate)
