"""The load generator against a mixed harness, with a small rolling upgrade in the middle.

    python -m bench.harness_run --mvp on  --duration 60 --out bench/out/harness/mvp-on
    python -m bench.harness_run --mvp off --duration 60 --out bench/out/harness/mvp-off

cp-1, cp-2 at the old version and cp-3 at the new one, behind a TCP round-robin balancer (as
haproxy in the lab). At 25% of the run cp-2 is upgraded (stopped, re-rendered by the new
kubeadm, started), at 50% cp-1, then at least 30% of the time steady. With --mvp on every server gets
--peer-ca-file (the harness's own hook) and the load only starts once the old servers list
their peer's resources, as the collection's gate would wait.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._discovery import ACCEPT_V2, ACCEPT_V2_NOPEER
from skewsafe_harness import Harness
from skewsafe_harness.hooks import peer_ca_hook
from skewsafe_harness.pins import new_version, old_version

from .tcplb import TcpBalancer


class Marks:
    def __init__(self, path: Path):
        self.path, self.items = path, []

    def add(self, event: str, host: str | None = None) -> None:
        self.items.append({"t": round(time.time(), 3), "host": host, "event": event})
        self.path.write_text(json.dumps(self.items, indent=1) + "\n")
        print(f"harness_run: {event}", file=sys.stderr, flush=True)


def version_hook(old: str, new: str):
    """Make the node's kubeadm config name the new version, as kubeadm upgrade would."""

    def hook(_server, path: Path) -> None:
        path.write_text(path.read_text().replace(f"kubernetesVersion: v{old}", f"kubernetesVersion: v{new}"))

    return hook


def upgrade(harness: Harness, name: str, version: str, marks: Marks) -> None:
    server = harness.servers[name]
    old, server.version = server.version, version  # the harness renders with the server's version's kubeadm
    marks.add(f"{name} stopping", name)
    harness.restart(name, version_hook(old, version))
    marks.add(f"{name} v{version} ready", name)


def wait_peer_sync(harness: Harness, names: list, timeout: float = 120) -> bool:
    """Old servers with MVP list their peers' resources in merged discovery once synced."""
    deadline = time.monotonic() + timeout
    pending = set(names)
    while pending and time.monotonic() < deadline:
        for name in sorted(pending):
            merged = harness.request(name, "/apis", {"Accept": ACCEPT_V2}).body
            if merged != harness.request(name, "/apis", {"Accept": ACCEPT_V2_NOPEER}).body:
                pending.discard(name)
        time.sleep(1)
    return not pending


def run(args) -> int:
    old, new = old_version(), new_version()
    args.out.mkdir(parents=True, exist_ok=True)
    for stale in ("requests.jsonl", "transitions.json"):
        (args.out / stale).unlink(missing_ok=True)
    marks = Marks(args.out / "transitions.json")
    servers = [("cp-1", old), ("cp-2", old), ("cp-3", new)]
    hook = peer_ca_hook if args.mvp == "on" else None
    with tempfile.TemporaryDirectory(prefix="skewsafe-bench-") as tmp:
        with Harness(Path(tmp), servers, config_hook=hook) as harness:
            marks.add(f"harness up in {harness.up_seconds:.0f} s")
            if args.mvp == "on" and not wait_peer_sync(harness, ["cp-1", "cp-2"]):
                marks.add("old servers never listed their peer's resources (MVP not synced)")
            lb = TcpBalancer([(s.address, 6443) for s in harness.servers.values()]).start()
            # The load's own bound is generous: this script stops it once the steady tail is done,
            # however late a contended machine made the upgrade steps.
            cmd = [
                sys.executable,
                "-m",
                "bench.loadgen",
                "--kubeconfig",
                str(harness.kubeconfig),
                "--lb",
                f"lb={lb.url}@kubernetes",
                "--discover",
                "cp-3,cp-1",
                "--rate",
                str(args.rate),
                "--duration",
                str(args.duration * 4),
                "--out",
                str(args.out / "requests.jsonl"),
            ]
            cmd += [f"--server={s.name}={s.url}" for s in harness.servers.values()]
            started = time.monotonic()
            loadgen = subprocess.Popen(cmd)
            try:
                for name, share in (("cp-2", 0.25), ("cp-1", 0.5)) if args.upgrade_steps else ():
                    time.sleep(max(0.0, started + share * args.duration - time.monotonic()))
                    upgrade(harness, name, new, marks)
                tail = max(started + args.duration, time.monotonic() + 0.3 * args.duration)
                time.sleep(max(0.0, tail - time.monotonic()))
                loadgen.terminate()
                rc = loadgen.wait(timeout=60)
            finally:
                if loadgen.poll() is None:
                    loadgen.kill()
                lb.close()
    meta = {
        "label": f"harness 2x{old} + 1x{new}, MVP {args.mvp}",
        "mvp": args.mvp == "on",
        "old": old,
        "new": new,
        "rate": args.rate,
        "duration": args.duration,
        "upgrade_steps": args.upgrade_steps,
    }
    (args.out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    return rc


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.harness_run", description=__doc__.split("\n\n")[0])
    parser.add_argument("--mvp", choices=("on", "off"), required=True)
    parser.add_argument("--duration", type=float, default=60)
    parser.add_argument("--rate", type=float, default=40)
    parser.add_argument(
        "--no-upgrade-steps", dest="upgrade_steps", action="store_false", help="stay 2 old + 1 new for the whole run"
    )
    parser.add_argument("--out", type=Path, required=True)
    return run(parser.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())
