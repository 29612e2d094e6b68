"""mvp_check micro-benchmark on the harness: 3, 5, 7 API servers, without and with 500 CRDs.

    python -m bench.micro --sizes 3,5,7 --crds 500 --out bench/out/micro

Each size is N-1 old servers + 1 new, MVP on (the harness's peer-ca-file hook). Once the control
plane has passed once (peers synced), one check round (success_threshold=1, as in
tests/integration test_cost_of_one_check) is timed:
  * in process, ``--rounds`` times: wall time, HTTP requests the collector made, CPU time of
    this process (the collector's threads included);
  * through ansible-playbook (the controller cost an operator pays: Ansible start-up, the action
    plugin), ``--ansible-runs`` times: process wall time, the plugin's own ``elapsed``, CPU of
    the ansible-playbook process tree.
Then the CRDs are created and the same is measured again once every server serves them.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.run import check_until_proved
from skewsafe_harness import Harness
from skewsafe_harness.hooks import peer_ca_hook
from skewsafe_harness.pins import new_version, old_version

from . import crds


def params_for(harness: Harness) -> dict:
    endpoints = [{"name": s.name, "url": s.url} for s in harness.servers.values()]
    return {
        "kubeconfig": str(harness.kubeconfig),
        "endpoints": endpoints,
        "mode": "mixed",
        "wait_timeout": 120,
        "wait_sleep": 2,
        "success_threshold": 1,
        "probe_limit": 2,
        "request_timeout": 5.0,
    }


def wait_passing(params: dict, timeout: float = 180) -> float:
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        if check_until_proved(params)["passed"]:
            return time.monotonic() - started
        time.sleep(2)
    raise RuntimeError(f"mvp_check did not pass within {timeout:.0f} s")


def in_process(params: dict, rounds: int) -> dict:
    samples = []
    for _ in range(rounds):
        wall, cpu = time.monotonic(), time.process_time()
        result = check_until_proved(params)
        samples.append(
            {
                "wall": round(time.monotonic() - wall, 3),
                "cpu": round(time.process_time() - cpu, 3),
                "requests": result["requests"],
                "passed": result["passed"],
            }
        )
    return _summary(samples, ("wall", "cpu", "requests"))


def through_ansible(params: dict, runs: int, tmp: Path) -> dict:
    """ansible-playbook on localhost with one mvp_check task; CPU from the children's rusage."""
    out = tmp / "result.json"
    play = [
        {
            "hosts": "localhost",
            "connection": "local",
            "gather_facts": False,
            "tasks": [
                {"name": "mvp_check", "skewsafe.kubeadm.mvp_check": params, "register": "r", "ignore_errors": True},
                {
                    "name": "save",
                    "ansible.builtin.copy": {"content": "{{ r | to_json }}", "dest": str(out), "mode": "0600"},
                },
            ],
        }
    ]
    (tmp / "play.yml").write_text(yaml.safe_dump(play))
    cmd = [
        "ansible-playbook",
        "-i",
        "localhost,",
        str(tmp / "play.yml"),
        "-e",
        f"ansible_python_interpreter={sys.executable}",
    ]
    samples = []
    for _ in range(runs):
        before, wall = resource.getrusage(resource.RUSAGE_CHILDREN), time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall, after = time.monotonic() - wall, resource.getrusage(resource.RUSAGE_CHILDREN)
        if proc.returncode != 0 or not out.exists():
            raise RuntimeError(f"ansible-playbook failed:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
        result = json.loads(out.read_text())
        cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
        samples.append(
            {
                "wall": round(wall, 3),
                "task_elapsed": result.get("elapsed"),
                "cpu": round(cpu, 3),
                "requests": result.get("requests"),
                "passed": result.get("passed"),
            }
        )
        out.unlink()
    return _summary(samples, ("wall", "task_elapsed", "cpu", "requests"))


def _summary(samples: list, keys: tuple) -> dict:
    out = {"samples": samples, "all_passed": all(s["passed"] for s in samples)}
    for key in keys:
        values = [s[key] for s in samples if s[key] is not None]
        out[f"{key}_median"] = round(statistics.median(values), 3) if values else None
        out[f"{key}_best"] = min(values) if values else None
    return out


def measure_size(size: int, crd_count: int, args, tmp: Path) -> list:
    old, new = old_version(), new_version()
    servers = [(f"cp-{i}", old if i < size else new) for i in range(1, size + 1)]
    rows = []
    with Harness(tmp / f"harness-{size}", servers, config_hook=peer_ca_hook) as harness:
        params = params_for(harness)
        setup = {"harness_up_s": round(harness.up_seconds, 1), "first_pass_s": round(wait_passing(params), 1)}
        for crd_n in (0, crd_count) if crd_count else (0,):
            if crd_n:
                setup = {
                    "crd_create_s": round(crds.create(harness, crd_n), 1),
                    "crd_served_s": round(crds.wait_served(harness, crd_n), 1),
                }
                setup["first_pass_s"] = round(wait_passing(params), 1)
            row = {
                "servers": size,
                "old": size - 1,
                "new": 1,
                "crds": crd_n,
                "setup": setup,
                "load_avg": os.getloadavg()[0],
                "in_process": in_process(params, args.rounds),
            }
            if args.ansible_runs:
                row["ansible"] = through_ansible(params, args.ansible_runs, tmp)
            print(f"micro: {size} servers, {crd_n} CRDs: {_line(row)}", file=sys.stderr, flush=True)
            rows.append(row)
    return rows


def _line(row: dict) -> str:
    ip, an = row["in_process"], row.get("ansible") or {}
    text = f"in-process median {ip['wall_median']} s (best {ip['wall_best']}), cpu {ip['cpu_median']} s, {ip['requests_median']} requests"
    if an:
        text += (
            f"; ansible-playbook {an['wall_median']} s (task {an['task_elapsed_median']} s, cpu {an['cpu_median']} s)"
        )
    return text


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.micro", description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", default="3,5,7")
    parser.add_argument("--crds", type=int, default=500, help="0 to skip the CRD measurement")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--ansible-runs", type=int, default=3)
    parser.add_argument("--out", type=Path, required=True, help="prefix: <out>.json and <out>.md")
    args = parser.parse_args(argv)
    from .micro_report import goals, markdown

    started = time.time()
    rows = []
    with tempfile.TemporaryDirectory(prefix="skewsafe-bench-micro-") as tmp:
        for size in (int(s) for s in args.sizes.split(",")):
            rows += measure_size(size, args.crds, args, Path(tmp))
    result = {
        "started": started,
        "finished": time.time(),
        "old": old_version(),
        "new": new_version(),
        "cpus": os.cpu_count(),
        "rounds": args.rounds,
        "ansible_runs": args.ansible_runs,
        "results": rows,
    }
    result["goals"] = goals(rows)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    Path(f"{args.out}.json").write_text(json.dumps(result, indent=1) + "\n")
    Path(f"{args.out}.md").write_text(markdown(result))
    print(f"micro: wrote {args.out}.json and .md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
