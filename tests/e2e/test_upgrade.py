"""Full upgrade of the lab (3 control planes, 2 workers) from the older to the newer pinned version."""

from __future__ import annotations

import json
import threading
import time

from conftest import VERSIONS

OLD, NEW = VERSIONS

WORKLOAD = """
apiVersion: apps/v1
kind: Deployment
metadata: {name: steady, namespace: default}
spec:
  replicas: 3
  selector: {matchLabels: {app: steady}}
  template:
    metadata: {labels: {app: steady}}
    spec:
      terminationGracePeriodSeconds: 1
      containers:
      - name: pause
        image: registry.k8s.io/pause:3.10.2
        imagePullPolicy: Never
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: steady, namespace: default}
spec:
  minAvailable: 2
  selector: {matchLabels: {app: steady}}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: before-upgrade, namespace: default}
data: {created: before}
"""


def ready_replicas(lab):
    result = lab.kubectl("get", "deployment", "steady", "-o", "jsonpath={.status.readyReplicas}", check=False)
    return int(result.stdout or 0) if result.returncode == 0 else None


def test_full_upgrade(lab, tmp_path):
    manifest = tmp_path / "workload.yaml"
    manifest.write_text(WORKLOAD)
    lab.kubectl("apply", "-f", str(manifest))
    lab.kubectl("rollout", "status", "deployment/steady", "--timeout=180s")

    samples, stop = [], threading.Event()

    def watch():
        while not stop.is_set():
            samples.append(ready_replicas(lab))
            time.sleep(2)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    started = time.monotonic()
    result = lab.playbook("upgrade", "-e", f"skewsafe_kubernetes_version={NEW}")
    stop.set()
    watcher.join()
    print(f"\nupgrade {OLD} -> {NEW}: {time.monotonic() - started:.0f}s, rc {result.returncode}")
    assert result.returncode == 0, result.stdout[-6000:] + result.stderr[-3000:]

    nodes = lab.json("get", "nodes")["items"]
    assert len(nodes) == 5
    for node in nodes:
        name = node["metadata"]["name"]
        assert node["status"]["nodeInfo"]["kubeletVersion"] == f"v{NEW}", name
        assert not node["spec"].get("unschedulable"), f"{name} left cordoned"
        ready = [c["status"] for c in node["status"]["conditions"] if c["type"] == "Ready"]
        assert ready == ["True"], name

    # The workload kept its PodDisruptionBudget (API errors while an API server restarts are skipped).
    seen = [s for s in samples if s is not None]
    assert seen and min(seen) >= 2, f"ready replicas fell below minAvailable: {samples}"
    assert lab.json("get", "configmap", "before-upgrade")["data"] == {"created": "before"}

    reports = sorted((lab.inventory.parent / "artifacts" / "reports").glob("upgrade-*.json"))
    report = json.loads(reports[-1].read_text())
    first = report["nodes"][0]
    assert first["action"] == "upgraded"
    assert first["mvp"]["mode"] == "mixed"
    assert first["mvp"]["probes"], "the gate after the first control plane probed nothing"
    assert all(p["status"] == 200 and p["status_local"] == 404 for p in first["mvp"]["probes"])
    assert report["etcd_backup"]["sha256"]
