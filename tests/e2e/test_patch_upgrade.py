"""A patch upgrade on the lab: a cluster at K8S_VERSION (1.36.4) upgraded to the lab's pinned older version of the
same minor (1.36.5), one story in order. `make test-paths` runs it after the chained path (tier paths, its own lab).

Patch releases of one minor serve the same resources, so there is nothing to proxy: the gate after each control
plane must run in steady mode (every server a proxy source, no probe) and pass, and the upgrade must still turn
MVP on first (--peer-ca-file) so that the next minor upgrade is covered.
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


def test_patch_upgrade_gates_in_steady_mode(lab):
    after("lab")
    run = lab.playbook("upgrade", "-e", f"skewsafe_kubernetes_version={TARGET}")
    print(f"\n[patch {FROM} -> {TARGET}: upgrade] rc={run.returncode} in {run.seconds:.0f}s")
    assert run.returncode == 0, run.tail()
    nodes = lab.nodes()
    for name, node in nodes.items():
        assert node["status"]["nodeInfo"]["kubeletVersion"] == f"v{TARGET}", name
        assert not node["spec"].get("unschedulable"), f"{name} left cordoned"
    for name in CONTROL_PLANES:
        manifest = lab.node_exec(name, "cat", MANIFEST)
        assert f"kube-apiserver:v{TARGET}" in manifest and f"--peer-ca-file={PEER_CA}" in manifest, name
    reports = sorted((lab.artifacts / "reports").glob("upgrade-*.json"))
    assert reports, f"no report in {lab.artifacts / 'reports'}"
    rows = {r["node"]: r for r in json.loads(reports[-1].read_text())["nodes"]}
    for name in CONTROL_PLANES:
        assert rows[name]["action"] == "upgraded", rows[name]
        gate = rows[name].get("mvp") or {}
        assert gate.get("mode") == "steady" and not gate.get("probes"), (name, gate)
