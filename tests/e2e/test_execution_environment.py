"""The collection's jobs inside the execution environment, run by ansible-navigator as its users do.

The image is built by hack/ee/run.sh (ansible-builder, from docs/awx/execution-environment.yml,
cached by its inputs); the jobs use docs/awx/ansible-navigator.yml with only the image, the pull
policy and the lab's mounts set on the command line. Tier faults (make test-lab) runs it on its
fresh lab before test_faults.py, so the lab is still at the older version; nothing here changes it.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from pathlib import Path

import pytest
from conftest import NEW, OLD, RECAP, REPO

pytestmark = pytest.mark.navigator

EE_RUN = REPO / "hack" / "ee" / "run.sh"
SETTINGS = REPO / "docs" / "awx" / "ansible-navigator.yml"


def _navigator(args: list[str], log: Path, timeout: float = 1800) -> tuple[int, str, float]:
    """ansible-navigator ARGS inside the EE image (its tag comes from hack/ee/run.sh as $EE_IMAGE)."""
    if shutil.which("ansible-navigator") is None:
        pytest.fail("ansible-navigator is not on PATH (run the end-to-end tests through 'make test')")
    cmd = [
        str(EE_RUN),
        "exec",
        "--",
        "bash",
        "-c",
        'exec ansible-navigator "$@" --eei "$EE_IMAGE" --pp never --ce docker',
        "navigator",
        *args,
    ]
    env = dict(os.environ, ANSIBLE_NAVIGATOR_CONFIG=str(SETTINGS))
    started = time.monotonic()
    result = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=timeout, check=False)
    output = result.stdout + result.stderr
    log.write_text(output)
    return result.returncode, output, time.monotonic() - started


def _job(lab, tmp_path: Path, playbook: str, *extra: str) -> tuple[int, str, float]:
    """A wrapper playbook (as an AWX project or a navigator user keeps it) run in the EE."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    name = playbook.removesuffix(".yml")
    (project / playbook).write_text(
        f"---\n- name: {name} (project wrapper)\n  ansible.builtin.import_playbook: skewsafe.kubeadm.{name}\n"
    )
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir(exist_ok=True)
    key = re.search(r"^ansible_ssh_private_key_file=(\S+)$", lab.inventory.read_text(), re.M)
    assert key, f"no ssh key in {lab.inventory}"
    key_dir = Path(key[1]).parent
    # Container options on the command line replace the settings file's, so --network=host again; the
    # lab key is root's (0600), so the job runs as root in the EE; the key is mounted where the
    # inventory says, the artifacts directory where the job writes.
    args = [
        "run",
        str(project / playbook),
        "-i",
        str(lab.inventory),
        "--co=--network=host",
        "--co=--user=0",
        "--eev",
        f"{key_dir}:{key_dir}",
        "--eev",
        f"{artifacts}:{artifacts}",
        "-e",
        f"skewsafe_artifacts_dir={artifacts}",
        *extra,
    ]
    return _navigator(args, lab.logs / f"navigator-{name}{'-check' if '--check' in extra else ''}.log")


def _recap_failures(output: str) -> dict[str, tuple[int, int]]:
    recap = {m[0]: (int(m[3]), int(m[4])) for m in RECAP.findall(output)}
    assert recap, f"no play recap in the navigator output:\n{output[-3000:]}"
    return {host: counts for host, counts in recap.items() if counts != (0, 0)}


def test_navigator_doc_reads_the_module_from_the_image(lab, tmp_path):
    rc, output, _seconds = _navigator(
        ["doc", "skewsafe.kubeadm.cluster_config", "--mode", "stdout"], tmp_path / "doc.log"
    )
    assert rc == 0, output[-3000:]
    # the collection as installed in the image by ansible-builder, not the checkout
    assert (
        "/usr/share/ansible/collections/ansible_collections/skewsafe/kubeadm/plugins/modules/cluster_config.py"
        in output
    )
    assert "resourceVersion" in output


def test_navigator_preflight_in_the_execution_environment(lab, tmp_path):
    rc, output, seconds = _job(lab, tmp_path, "preflight.yml", "-e", f"skewsafe_kubernetes_version={NEW}")
    assert rc == 0, output[-4000:]
    assert not _recap_failures(output), output[-4000:]
    # MVP is still off on the fresh lab: reported, not a problem (the upgrade turns it on first)
    assert "MVP does not work yet" in output and "The upgrade playbook turns it on" in output, output[-4000:]
    print(f"navigator preflight: {seconds:.0f}s")


def test_navigator_upgrade_check_mode_changes_nothing(lab, tmp_path):
    before = lab.snapshot_state()
    config_rv = lab.json("-n", "kube-system", "get", "configmap", "kubeadm-config")["metadata"]["resourceVersion"]
    rc, output, seconds = _job(lab, tmp_path, "upgrade.yml", "-e", f"skewsafe_kubernetes_version={NEW}", "--check")
    assert rc == 0, output[-4000:]
    assert not _recap_failures(output), output[-4000:]
    for node in ("sslab-cp1", "sslab-w1"):
        assert f"{node} " in output and f"{OLD} -> {NEW}" in output, output[-4000:]
    assert lab.snapshot_state() == before
    after_rv = lab.json("-n", "kube-system", "get", "configmap", "kubeadm-config")["metadata"]["resourceVersion"]
    assert after_rv == config_rv, "check mode wrote kubeadm-config"
    print(f"navigator upgrade --check: {seconds:.0f}s")
