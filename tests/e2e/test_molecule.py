"""The molecule scenarios (extensions/molecule) against the lab after an upgrade, as a role author runs them.

`make test-lab` runs them (marker `molecule`, in tier faults): pytest takes this file after test_faults.py,
whose last rerun leaves every node at the newer version with MVP on. They need a lab in that state and
say so when it is not.
"""

from __future__ import annotations

import os
import subprocess

import pytest
from conftest import NEW, REPO

pytestmark = pytest.mark.molecule


@pytest.mark.parametrize("scenario", ["mvp_enable", "preflight"])
def test_molecule_scenario(lab, scenario):
    versions = {name: node["status"]["nodeInfo"]["kubeletVersion"] for name, node in lab.nodes().items()}
    if set(versions.values()) != {f"v{NEW}"}:
        pytest.fail(f"the scenarios need a lab upgraded to v{NEW} (the fault story's end); the kubelets run {versions}")
    env = dict(os.environ, SKEWSAFE_LAB_INVENTORY=str(lab.inventory), SKEWSAFE_KUBERNETES_VERSION=NEW, NO_COLOR="1")
    result = subprocess.run(
        ["molecule", "test", "-s", scenario],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=1800,
    )
    output = result.stdout + result.stderr
    (lab.logs / f"molecule-{scenario}.log").write_text(output)
    assert result.returncode == 0, output[-6000:]
    for action in ("converge", "idempotence", "verify"):
        assert action in output, f"molecule did not run {action}"
