"""Run bench.lab_upgrade end to end against a harness instead of the lab (everything but lab/up.sh).

    python -m bench.driver_selftest --out bench/out/driver-selftest

A mixed harness (MVP on) plays the lab: an inventory of its servers (local connection) and its
kubeconfig stand in for lab/run/inventory.ini and admin.conf, and a stand-in playbook with the
real roles' task names (kubeadm and kubelet steps are sleeps; the gate is the real mvp_check
against the harness) replaces skewsafe.kubeadm.upgrade. Then bench.analyse reads the result.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import yaml

from skewsafe_harness import Harness
from skewsafe_harness.hooks import peer_ca_hook
from skewsafe_harness.pins import new_version, old_version


def stand_in_playbook(harness: Harness) -> list:
    endpoints = [{"name": s.name, "url": s.url} for s in harness.servers.values()]
    gate = {"kubeconfig": str(harness.kubeconfig), "endpoints": endpoints, "mode": "mixed", "wait_timeout": 60}
    return [
        {
            # The default order: every control plane's components behind the gate, then the control-plane kubelets.
            "name": "Stand-in upgrade | Control-plane components",
            "hosts": "kube_control_plane",
            "serial": 1,
            "gather_facts": False,
            "tasks": [
                {"name": "Packages | Install kubeadm", "ansible.builtin.command": "sleep 1"},
                {
                    "name": "Control plane | Run kubeadm upgrade node on {{ inventory_hostname }}",
                    "ansible.builtin.command": "sleep 3",
                },
                {
                    "name": "Control plane | Gate | prove the Mixed Version Proxy ({{ inventory_hostname }})",
                    "skewsafe.kubeadm.mvp_check": gate,
                    "run_once": True,
                },
            ],
        },
        {
            "name": "Stand-in upgrade | Control-plane kubelets",
            "hosts": "kube_control_plane",
            "serial": 1,
            "gather_facts": False,
            "tasks": [{"name": "Node upgrade | Restart kubelet", "ansible.builtin.command": "sleep 1"}],
        },
    ]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.driver_selftest", description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    servers = [("cp-1", old_version()), ("cp-2", old_version()), ("cp-3", new_version())]
    shutil.rmtree(args.out, ignore_errors=True)
    with (
        tempfile.TemporaryDirectory(prefix="skewsafe-bench-selftest-") as tmp,
        Harness(Path(tmp) / "harness", servers, config_hook=peer_ca_hook) as harness,
    ):
        lab = Path(tmp) / "lab"
        lab.mkdir()
        hosts = "\n".join(f"{s.name} ansible_host={s.address}" for s in harness.servers.values())
        (lab / "inventory.ini").write_text(
            f"[kube_control_plane]\n{hosts}\n\n[all:vars]\nansible_connection=local\n"
            f"ansible_python_interpreter={sys.executable}\n"
        )
        shutil.copy(harness.kubeconfig, lab / "admin.conf")
        (lab / "play.yml").write_text(yaml.safe_dump(stand_in_playbook(harness), sort_keys=False))
        driver = [
            sys.executable,
            "-m",
            "bench.lab_upgrade",
            "--mvp",
            "on",
            "--no-recreate",
            "--lab-dir",
            str(lab),
            "--playbook",
            str(lab / "play.yml"),
            "--warmup",
            "5",
            "--cooldown",
            "5",
            "--rate",
            "20",
            "--out",
            str(args.out),
        ]
        rc = subprocess.run(driver, check=False).returncode
    print(
        f"driver_selftest: lab_upgrade exited {rc}; analyse with: python -m bench.analyse {args.out} --out {args.out}/report"
    )
    return rc


if __name__ == "__main__":
    sys.exit(main())
