"""Run the real kubeadm with a private /etc/kubernetes.

kubeadm always writes static Pod manifests to /etc/kubernetes/manifests. Each call
runs in its own mount namespace where a harness directory is bind-mounted on
/etc/kubernetes, so nothing of the host's /etc/kubernetes is read or written.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _manifest

from .pins import HarnessError, k8s_bin

ETC_KUBERNETES = Path("/etc/kubernetes")

_MOUNT_AND_RUN = 'mount --bind "$1" /etc/kubernetes && shift && exec "$@"'


def ensure_mountpoint() -> None:
    """Make sure /etc/kubernetes exists as a mount point.

    An empty directory is created when missing and never removed: several harnesses (test
    runs, make harness-up) may share the host, and removing it under another one breaks it.
    """
    ETC_KUBERNETES.mkdir(parents=True, exist_ok=True)


def run(version: str, args: list[str], etc_dir: Path, log: Path | None = None) -> str:
    """Run ``kubeadm <args>`` of ``version`` with ``etc_dir`` as /etc/kubernetes; return stdout."""
    etc_dir.mkdir(parents=True, exist_ok=True)
    ensure_mountpoint()
    cmd = [
        "unshare",
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        _MOUNT_AND_RUN,
        "sh",
        str(etc_dir),
        str(k8s_bin(version, "kubeadm")),
        *args,
    ]
    result = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if log is not None:
        with log.open("a") as handle:
            handle.write(f"$ kubeadm {' '.join(args)}\n{result.stdout}{result.stderr}\n")
    if result.returncode != 0:
        raise HarnessError(f"kubeadm {version} {' '.join(args)} failed:\n{result.stderr.strip() or result.stdout}")
    return result.stdout


def manifest_command(manifest: Path) -> list[str]:
    """The container command of a kubeadm static Pod manifest."""
    command = _manifest.summary(_manifest.load(manifest.read_text()))["command"]
    if not command:
        raise HarnessError(f"{manifest} has no container command")
    return command


def flag_value(command: list[str], flag: str) -> str | None:
    """The value of the last ``--flag=value`` of a command, None without one."""
    return _manifest.command_flags(command).get(flag)
