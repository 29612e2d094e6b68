"""One full lab upgrade under load: fresh lab, load generator, skewsafe.kubeadm.upgrade, cool-down.

    python -m bench.lab_upgrade --mvp on  --out bench/out/lab/mvp-on
    python -m bench.lab_upgrade --mvp off --out bench/out/lab/mvp-off   # needs skewsafe_mvp_enable
    python -m bench.lab_upgrade --mvp on --out /tmp/x --dry-run         # print the plan, touch nothing
    python -m bench.lab_upgrade --mvp on --order node_by_node --out bench/out/lab/mvp-on-kubeadm-order

--order is the control-plane order (skewsafe_control_plane_order); by default the collection's own
(components_first) with MVP on, kubeadm's (node_by_node) with MVP off, so that run stays stock kubeadm.

Writes into --out: requests.jsonl (+ .meta.json) from bench.loadgen, events.jsonl from the
bench_events callback (per-task timing, node transitions), ansible.log, lab-up.log and
meta.json. bench.analyse turns two such directories into the report. The lab is recreated
(lab/down.sh, lab/up.sh) so both runs start from identical clusters.
"""

from __future__ import annotations

import argparse
import configparser
import json
import os
import shlex
import subprocess
import sys
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
MVP_OFF_VAR = "skewsafe_mvp_enable"  # proposed: false skips mvp_enable and every mvp_check gate
# --tell-balancer: the lab's haproxy hooks of control_plane_upgrade (README, Load balancer)
BALANCER_HOOKS = {
    "skewsafe_balancer_take_out_tasks": str(REPO / "lab" / "files" / "balancer-take-out.yml"),
    "skewsafe_balancer_put_back_tasks": str(REPO / "lab" / "files" / "balancer-put-back.yml"),
}


def default_lab_dir() -> Path:
    return Path(os.environ.get("SKEWSAFE_CACHE") or Path.home() / ".cache" / "skewsafe") / "lab" / "run"


def pins() -> dict:
    values = {}
    for line in (REPO / "hack" / "versions.env").read_text().splitlines():
        key, sep, value = line.strip().partition("=")
        if sep and not key.startswith("#"):
            values[key] = value
    return values


def control_planes(inventory: Path) -> list:
    """[(name, address)] of the kube_control_plane group of lab/inventory.sh's INI inventory."""
    parser = configparser.ConfigParser(allow_no_value=True, delimiters=(" ",), strict=False)
    parser.optionxform = str  # keep host names as written
    parser.read_string(inventory.read_text())
    hosts = []
    for name, rest in parser.items("kube_control_plane"):
        address = dict(kv.split("=", 1) for kv in shlex.split(rest or "") if "=" in kv).get("ansible_host", name)
        hosts.append((name, address))
    return hosts


def lb_url(kubeconfig: Path) -> str:
    return yaml.safe_load(kubeconfig.read_text())["clusters"][0]["cluster"]["server"]


def supports_mvp_off() -> bool:
    return MVP_OFF_VAR in (REPO / "playbooks" / "upgrade.meta.yml").read_text()


def loadgen_cmd(args, run: Path, kubeconfig: Path, inventory: Path, new_only: Path) -> list:
    cmd = [
        sys.executable,
        "-m",
        "bench.loadgen",
        "--kubeconfig",
        str(kubeconfig),
        "--lb",
        f"lb={lb_url(kubeconfig)}",
        "--new-only-file",
        str(new_only),
        "--rate",
        str(args.rate),
        "--duration",
        str(args.max_seconds),
        "--out",
        str(args.out / "requests.jsonl"),
    ]
    return cmd + [f"--server={name}=https://{addr}:6443" for name, addr in control_planes(inventory)]


def playbook_cmd(args, inventory: Path, new: str) -> list:
    cmd = [
        "ansible-playbook",
        "-i",
        str(inventory),
        args.playbook,
        "-e",
        f"skewsafe_kubernetes_version={new}",
        "-e",
        f"skewsafe_artifacts_dir={args.out / 'artifacts'}",
    ]
    cmd += ["-e", f"skewsafe_control_plane_order={control_plane_order(args)}"]
    if getattr(args, "tell_balancer", False):
        cmd += ["-e", json.dumps(BALANCER_HOOKS)]
    for extra in args.extra_vars or []:
        cmd += ["-e", extra]
    return cmd + (["-e", f"{MVP_OFF_VAR}=false"] if args.mvp == "off" else [])


def control_plane_order(args) -> str:
    """--order, else the collection's order with MVP on and kubeadm's documented one with MVP off (stock kubeadm)."""
    return getattr(args, "order", None) or ("components_first" if args.mvp == "on" else "node_by_node")


def playbook_env(args) -> dict:
    env = dict(os.environ, SKEWSAFE_BENCH_EVENTS=str(args.out / "events.jsonl"))
    env["ANSIBLE_CALLBACK_PLUGINS"] = ":".join(
        filter(None, [str(REPO / "bench" / "callback_plugins"), env.get("ANSIBLE_CALLBACK_PLUGINS")])
    )
    env["ANSIBLE_CALLBACKS_ENABLED"] = "bench_events,ansible.posix.profile_tasks"
    return env


def sh(cmd: list, log: Path, dry: bool, env=None) -> tuple:
    """Run with output to a log; (rc, seconds)."""
    print(f"lab_upgrade: $ {shlex.join(cmd)}  > {log}", file=sys.stderr, flush=True)
    if dry:
        return 0, 0.0
    started = time.monotonic()
    with log.open("a") as handle:
        rc = subprocess.run(cmd, stdout=handle, stderr=subprocess.STDOUT, env=env, check=False, cwd=REPO).returncode
    return rc, round(time.monotonic() - started, 1)


def run(args) -> int:
    if args.mvp == "off" and not supports_mvp_off() and not args.dry_run:
        raise SystemExit(f"the collection has no {MVP_OFF_VAR} variable yet: an upgrade without MVP is not possible")
    versions = pins()
    old, new = versions["K8S_OLD_VERSION"], versions["K8S_NEW_VERSION"]
    args.out.mkdir(parents=True, exist_ok=True)
    lab, meta = (
        args.lab_dir,
        {
            "label": f"lab upgrade {old} -> {new}, MVP {args.mvp}, {control_plane_order(args)}"
            + (", MVP enabled before the run" if args.mvp_before else "")
            + (", balancer told" if args.tell_balancer else "")
            + "".join(f", {extra}" for extra in args.extra_vars or []),
            "mvp_enabled_before": args.mvp_before,
            "balancer_told": args.tell_balancer,
            "extra_vars": args.extra_vars or [],
            "mvp": args.mvp == "on",
            "control_plane_order": control_plane_order(args),
            "old": old,
            "new": new,
            "rate": args.rate,
        },
    )
    if args.recreate:
        meta["lab_down_rc"], _ = sh([str(REPO / "lab" / "down.sh")], args.out / "lab-up.log", args.dry_run)
        meta["lab_up_rc"], meta["lab_up_s"] = sh([str(REPO / "lab" / "up.sh")], args.out / "lab-up.log", args.dry_run)
        if meta["lab_up_rc"]:
            raise SystemExit(f"lab/up.sh failed; see {args.out / 'lab-up.log'}")
    inventory, kubeconfig = lab / "inventory.ini", lab / "admin.conf"
    if args.mvp_before:  # a cluster already running MVP: the upgrade measured next enables nothing
        enable = ["ansible-playbook", "-i", str(inventory), "skewsafe.kubeadm.mvp_enable"]
        enable += ["-e", f"skewsafe_artifacts_dir={args.out / 'artifacts'}"]
        for extra in args.extra_vars or []:
            enable += ["-e", extra]
        meta["mvp_before_rc"], meta["mvp_before_s"] = sh(enable, args.out / "mvp-before.log", args.dry_run)
        if meta["mvp_before_rc"]:
            raise SystemExit(f"enabling MVP before the run failed; see {args.out / 'mvp-before.log'}")
    new_only = args.new_only_file or args.out / "new-only.json"
    if not args.new_only_file:  # no new server exists before the upgrade: diff the pinned versions on a harness
        sh(
            [sys.executable, "-m", "bench.discover", "--harness", "--out", str(new_only)],
            args.out / "discover.log",
            args.dry_run,
        )
    cmd = loadgen_cmd(args, args.out, kubeconfig, inventory, new_only)
    print(f"lab_upgrade: $ {shlex.join(cmd)}", file=sys.stderr)
    rc = 0
    if not args.dry_run:
        (args.out / "requests.jsonl").unlink(missing_ok=True)
        loadgen = subprocess.Popen(cmd, cwd=REPO)
        try:
            time.sleep(args.warmup)  # steady state before anything changes
            meta["playbook_started"] = time.time()
            rc, meta["playbook_s"] = sh(
                playbook_cmd(args, inventory, new), args.out / "ansible.log", False, playbook_env(args)
            )
            meta["playbook_rc"], meta["playbook_finished"] = rc, time.time()
            time.sleep(args.cooldown)  # steady state at the new version
        finally:
            loadgen.terminate()
            loadgen.wait(timeout=60)
    else:
        sh(playbook_cmd(args, inventory, new), args.out / "ansible.log", True)
    (args.out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return rc


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.lab_upgrade", description=__doc__.split("\n\n")[0])
    parser.add_argument("--mvp", choices=("on", "off"), required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--rate", type=float, default=40.0)
    parser.add_argument("--warmup", type=float, default=60.0, help="seconds of load before the playbook")
    parser.add_argument("--cooldown", type=float, default=60.0, help="seconds of load after it")
    parser.add_argument("--max-seconds", type=float, default=3 * 3600, help="hard bound of the load generator")
    parser.add_argument("--new-only-file", type=Path, help="bench.discover output (default: made on a harness)")
    parser.add_argument(
        "--mvp-before",
        action="store_true",
        help="enable MVP (skewsafe.kubeadm.mvp_enable, not timed) before the measured upgrade: a cluster already running it",
    )
    parser.add_argument(
        "--tell-balancer",
        action="store_true",
        help="take each control plane out of the lab's haproxy before its restarts and put it back after "
        "(skewsafe_balancer_take_out_tasks/put_back_tasks with lab/files/balancer-*.yml)",
    )
    parser.add_argument("--no-recreate", dest="recreate", action="store_false", help="use the running lab as it is")
    parser.add_argument("--dry-run", action="store_true", help="print the commands, run nothing")
    # For testing the driver without the lab: another inventory.ini/admin.conf directory and playbook.
    parser.add_argument("--lab-dir", type=Path, default=default_lab_dir(), help="with inventory.ini and admin.conf")
    parser.add_argument("--playbook", default="skewsafe.kubeadm.upgrade")
    parser.add_argument(
        "--order",
        choices=("components_first", "node_by_node"),
        help="skewsafe_control_plane_order (default: components_first with MVP on, node_by_node with MVP off)",
    )
    parser.add_argument(
        "-e",
        "--extra-vars",
        action="append",
        help="more ansible-playbook -e settings, named in the run's label (e.g. mvp_enable_apiserver_shutdown_args={})",
    )
    args = parser.parse_args(argv)
    if args.mvp_before and args.mvp != "on":
        parser.error("--mvp-before needs --mvp on")
    args.out = args.out.resolve()
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
