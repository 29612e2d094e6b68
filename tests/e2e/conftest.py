"""End-to-end: the collection's playbooks against a real kubeadm HA cluster in containers (lab/)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "harness"))

from skewsafe_harness.pins import cache_dir, new_version, old_version  # noqa: E402

LAB_RUN = cache_dir() / "lab" / "run"


class Lab:
    def __init__(self):
        self.inventory = LAB_RUN / "inventory.ini"
        self.kubeconfig = LAB_RUN / "admin.conf"

    def kubectl(self, *args, check=True):
        result = subprocess.run([str(cache_dir() / "k8s" / f"v{new_version()}" / "bin" / "kubectl"), "--kubeconfig",
                                 str(self.kubeconfig), *args], capture_output=True, text=True, check=False)  # fmt: skip
        if check and result.returncode != 0:
            pytest.fail(f"kubectl {' '.join(args)}: {result.stderr}")
        return result

    def json(self, *args):
        return json.loads(self.kubectl(*args, "-o", "json").stdout)

    def playbook(self, name, *extra, timeout=3600):
        cmd = ["ansible-playbook", "-i", str(self.inventory), f"skewsafe.kubeadm.{name}",
               "-e", f"skewsafe_artifacts_dir={LAB_RUN / 'artifacts'}", *extra]  # fmt: skip
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="session")
def lab():
    """A fresh lab at the older version; removed afterwards unless SKEWSAFE_KEEP_LAB=1."""
    for script in ("down.sh", "up.sh"):
        result = subprocess.run([str(REPO / "lab" / script)], capture_output=True, text=True, check=False)
        if result.returncode != 0:
            pytest.fail(f"lab/{script} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    yield Lab()
    if os.environ.get("SKEWSAFE_KEEP_LAB") != "1":
        subprocess.run([str(REPO / "lab" / "down.sh")], capture_output=True, check=False)


VERSIONS = (old_version(), new_version())
