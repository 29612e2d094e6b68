"""The first-peer 404 window, measured on the harness: how long old kube-apiservers keep answering 404
for a resource only a freshly started newer peer serves, after that peer already serves it.

    python -m bench.first_peer --starts 30 --out ~/.cache/skewsafe/bench/first-peer

(or ``make bench-first-peer``). cp-1 and cp-2 run the older pinned version, cp-3 the newer one, all
configured by the real kubeadm with MVP on (``--peer-ca-file``, the harness's peer-ca hook). Then cp-3
is stopped (SIGTERM: it deletes its identity lease, as the kubelet's stop of the old static Pod does in
``kubeadm upgrade apply``) and started again ``--starts`` times, each time in a CPU-limited cgroup
(``--cpu-quotas``, % of one CPU, cycled in a shuffled order) so that its start-up time varies. Per
start, every ``--interval`` s, each server is asked directly for a new-only resource (LIST ?limit=1),
cp-3 for /readyz, cp-1 for cp-3's identity lease; the figures are the time from cp-3's first 200 (and
from its first /readyz 200) to each old server's first proxied 200. The old servers' own log lines
("Error syncing discovery for peer lease") give their retry times.

Two round-robin TCP balancers over the three servers are polled too (a new connection per request):
``readyz`` adds cp-3 the moment its /readyz answers 200 (a balancer health-checking /readyz, at best),
``gate`` only once every old server answers the new-only resource with 200 (what the collection's gate
proves). A 404 through a balancer after its first 200 is a false 404.

Output in --out: starts.jsonl (one record per start), first-peer.json (meta, starts, summary),
first-peer.md, logs/ (the three kube-apiserver logs).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from datetime import datetime, timezone
from pathlib import Path

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._discovery import format_gvr, gvr_path
from skewsafe_harness import Harness
from skewsafe_harness.hooks import peer_ca_hook
from skewsafe_harness.pins import new_version, old_version

from . import first_peer_stats as fps
from .discover import local_discovery, new_only
from .harness_run import version_hook
from .targets import Target, auth_headers, load_credentials, pool
from .tcplb import TcpBalancer

CGROUP_ROOT = Path("/sys/fs/cgroup/cpu")
OLD = ("cp-1", "cp-2")
NEW = "cp-3"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases"
BALANCER_LABELS = {
    "readyz": "adds cp-3 at its first /readyz 200",
    "gate": "adds cp-3 once every old server proxies (the gate)",
}


class Poller(threading.Thread):
    """GET one path on one endpoint every ``interval`` s; keeps ``(t_sent, t_received, status)``."""

    def __init__(self, target: Target, creds, path: str, interval: float, close: bool = False):
        super().__init__(daemon=True)
        self.target, self.path, self.interval = target, path, interval
        self.pool = pool(target, creds, 1, timeout=2.0)
        self.headers = auth_headers(creds)
        if close:  # a new TCP connection per request, so that a balancer picks the next backend each time
            self.headers["Connection"] = "close"
        self.polls: list = []
        self.first_200: float | None = None  # when the first 200 arrived
        self.stopped = threading.Event()

    def run(self) -> None:
        while not self.stopped.is_set():
            sent = time.time()
            try:
                status = self.pool.request("GET", self.path, headers=self.headers, preload_content=True).status
            except Exception:  # any transport error counts as "no answer"
                status = None
            received = time.time()
            self.polls.append((sent, received, status))
            if status == 200 and self.first_200 is None:
                self.first_200 = received
            self.stopped.wait(max(0.0, sent + self.interval - time.time()))

    def stop(self) -> None:
        self.stopped.set()
        self.join(5)
        self.pool.close()


class CpuLimit:
    """A cgroup v1 cpu group whose CFS quota is set per start; the new server joins it before exec."""

    def __init__(self):
        self.path = CGROUP_ROOT / f"skewsafe-first-peer-{os.getpid()}"
        self.path.mkdir()
        (self.path / "cpu.cfs_period_us").write_text("100000")

    def set(self, quota) -> None:
        """``quota``: % of one CPU, or "none"."""
        value = "-1" if quota == "none" else str(int(float(quota) * 1000))
        (self.path / "cpu.cfs_quota_us").write_text(value)

    def join(self) -> None:  # runs in the child, before exec
        (self.path / "cgroup.procs").write_text(str(os.getpid()))

    def remove(self) -> None:
        for _ in range(50):
            try:
                self.path.rmdir()
                return
            except OSError:
                time.sleep(0.2)


def cpu_seconds(pid: int) -> float | None:
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


class Run:
    def __init__(self, args, harness: Harness):
        self.args, self.h = args, harness
        self.creds = load_credentials(str(harness.kubeconfig))
        self.targets = {s.name: Target(s.name, s.url) for s in harness.servers.values()}
        self.limit = CpuLimit()
        self.balancers = {}
        if args.balancers:
            for name in BALANCER_LABELS:
                self.balancers[name] = TcpBalancer([(harness.servers[n].address, 6443) for n in OLD]).start()
        self.new_address = (harness.servers[NEW].address, 6443)

    def close(self) -> None:
        for lb in self.balancers.values():
            lb.close()

    # ---------------------------------------------------------------- setup
    def direct(self, name: str, path: str, headers: dict | None = None) -> int | None:
        resp = self.h.request(name, path, headers=headers, timeout=5)
        return resp.status

    def choose_gvr(self) -> tuple:
        client = self.h.client()
        gvrs = new_only(
            local_discovery(client, self.h.servers[NEW].url), local_discovery(client, self.h.servers["cp-1"].url)
        )
        if not gvrs:
            raise RuntimeError("the new server serves nothing the old one does not: nothing to measure")
        chosen = self.args.gvr or gvrs[0]
        if chosen not in gvrs:
            raise RuntimeError(f"{chosen} is not new-only; new-only: {gvrs}")
        return fps.parse_gvr(chosen), gvrs

    def lease_name(self) -> str:
        leases = self.h.request(
            "cp-1", LEASES + "?labelSelector=apiserver.kubernetes.io/identity%3Dkube-apiserver"
        ).json()
        for lease in leases["items"]:
            if (lease["metadata"].get("labels") or {}).get("kubernetes.io/hostname") == self.h.servers[NEW].hostname:
                return lease["metadata"]["name"]
        raise RuntimeError(f"no identity lease of {NEW}")

    def wait_for(self, predicate, timeout: float, step: float = 0.2) -> float | None:
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            try:
                if predicate():
                    return round(time.monotonic() - started, 3)
            except OSError:
                pass
            time.sleep(step)
        return None

    # ---------------------------------------------------------------- one start
    def stop_new(self) -> dict:
        for lb in self.balancers.values():
            if self.new_address in lb.backends:
                lb.backends.remove(self.new_address)
        process = self.h.servers[NEW].process
        started = time.monotonic()
        self.h.stop_server(NEW)
        stop = {"seconds": round(time.monotonic() - started, 3), "returncode": process.returncode if process else None}
        lease_path = f"{LEASES}/{self.lease}"
        stop["lease_gone_s"] = self.wait_for(lambda: self.direct("cp-1", lease_path) == 404, 90)
        stop["old_404_s"] = self.wait_for(lambda: all(self.direct(n, self.path) == 404 for n in OLD), 90)
        return stop

    def logged_failures(self, name: str, offset: int, since: float) -> list:
        with open(self.h.node_dir(name) / "kube-apiserver.log", "rb") as handle:
            handle.seek(offset)
            text = handle.read().decode(errors="replace")
        return fps.sync_failures(text, self.lease, since, time.time() + 1, datetime.now().year)["failures"]

    def upgrade_stop(self) -> dict:
        """--upgrade: run cp-3 at the old version first, as the node ran before ``kubeadm upgrade apply``.

        cp-3 is re-rendered by the old version's kubeadm and started; once every old server's retries for
        it are over (the attempt after its last logged failure has run), it is stopped with SIGTERM and
        rendered by the new version's kubeadm, as kubeadm upgrade does, ready to be started.
        """
        server, old = self.h.servers[NEW], self.h.servers["cp-1"].version
        new = server.version
        self.stop_new()
        offsets = {n: (self.h.node_dir(n) / "kube-apiserver.log").stat().st_size for n in OLD}
        since = time.time()
        server.version = old
        self.h.render(NEW, version_hook(new, old))
        self.h.start_server(NEW)
        ready = time.time()
        deadline = ready + 300
        while time.time() < deadline:
            failures = {n: self.logged_failures(n, offsets[n], since) for n in OLD}
            retries_over = all(
                not f or (f[-1] < ready and time.time() > fps.next_attempt(f) + 1) for f in failures.values()
            )
            if retries_over:
                break
            time.sleep(0.5)
        stop = self.stop_new()
        stop["old_version_ran_s"] = round(time.time() - ready, 1)
        server.version = new
        rendered = time.monotonic()
        self.h.render(NEW, version_hook(old, new))
        stop["render_s"] = round(time.monotonic() - rendered, 1)
        return stop

    def one(self, index: int, quota) -> dict:
        args = self.args
        record = {"index": index, "cpu_quota": quota, "stop": self.upgrade_stop() if args.upgrade else self.stop_new()}
        time.sleep(args.settle)
        self.limit.set(quota)
        offsets = {n: (self.h.node_dir(n) / "kube-apiserver.log").stat().st_size for n in OLD}
        pollers = {
            "new": Poller(self.targets[NEW], self.creds, self.path, args.interval),
            "readyz": Poller(self.targets[NEW], self.creds, "/readyz", args.interval),
            "lease": Poller(self.targets["cp-1"], self.creds, f"{LEASES}/{self.lease}", args.interval),
        }
        for name in OLD:
            pollers[name] = Poller(self.targets[name], self.creds, self.path, args.interval)
        for name, lb in self.balancers.items():
            target = Target(f"lb-{name}", lb.url, direct=False, server_name="kubernetes")
            pollers[f"lb-{name}"] = Poller(target, self.creds, self.path, args.lb_interval, close=True)
        for poller in pollers.values():
            poller.start()
        record["load"] = list(os.getloadavg())
        record["spawned"] = time.time()
        self.h.start_server(NEW, pre_exec=self.limit.join, wait=False)
        pid = self.h.servers[NEW].pid
        admitted, ready, done_at, error = {}, None, None, None
        while True:
            now = time.time()
            if self.h.servers[NEW].process.poll() is not None:
                error = f"{NEW} exited with {self.h.servers[NEW].process.returncode}"
                break
            if ready is None and pollers["readyz"].first_200 is not None:
                ready = pollers["readyz"].first_200
                record["cpu_s_to_ready"] = cpu_seconds(pid)
                if "readyz" in self.balancers:
                    self.balancers["readyz"].backends.append(self.new_address)
                    admitted["readyz"] = time.time()
            synced = all(pollers[n].first_200 is not None for n in OLD)
            if synced and "gate" in self.balancers and "gate" not in admitted:
                self.balancers["gate"].backends.append(self.new_address)
                admitted["gate"] = time.time()
            if ready is not None and synced and pollers["new"].first_200 is not None and done_at is None:
                done_at = now + args.linger
            if done_at is not None and now >= done_at:
                break
            if ready is None and now - record["spawned"] > args.ready_timeout:
                error = f"{NEW} not ready after {args.ready_timeout:.0f} s"
                break
            if ready is not None and done_at is None:
                lease = pollers["lease"].first_200
                lead = ready - (lease if lease is not None else record["spawned"])
                if now - ready > max(args.sync_timeout, 2.5 * lead + 30):
                    error = "an old server did not proxy in time"
                    break
            time.sleep(0.01)
        for poller in pollers.values():
            poller.stop()
        record["end"] = time.time()
        record["error"] = error
        record["cpu_s"] = cpu_seconds(pid)
        polls = {name: p.polls for name, p in pollers.items()}
        for key, name in (("new_200", "new"), ("ready", "readyz"), ("lease", "lease")):
            first = fps.first_status(polls[name])
            record[key] = first["t"] if first else None
            record[f"{key}_lo"] = first["lo"] if first else None
        record["old_200"], record["old_200_lo"], record["old_after_200"] = {}, {}, {}
        for name in OLD:
            first = fps.first_status(polls[name])
            record["old_200"][name] = first["t"] if first else None
            record["old_200_lo"][name] = first["lo"] if first else None
            record["old_after_200"][name] = fps.after_first_200(polls[name])
        record["balancers"] = {}
        for name in self.balancers:
            view = fps.after_first_200(polls[f"lb-{name}"])
            view["admitted"] = admitted.get(name)
            record["balancers"][name] = view
        year = datetime.now().year
        record["logs"] = {}
        for name in OLD:
            with open(self.h.node_dir(name) / "kube-apiserver.log", "rb") as handle:
                handle.seek(offsets[name])
                text = handle.read().decode(errors="replace")
            record["logs"][name] = fps.sync_failures(text, self.lease, record["spawned"] - 1, record["end"], year)
        record["runs"] = {name: fps.runs(p) for name, p in polls.items()}
        record["derived"] = fps.derive(record, list(OLD))
        return record

    # ---------------------------------------------------------------- all starts
    def run(self) -> dict:
        args = self.args
        gvr, new_only_gvrs = self.choose_gvr()
        self.path = gvr_path(gvr) + "?limit=1"
        self.lease = self.lease_name()
        initial = self.wait_for(lambda: all(self.direct(n, self.path) == 200 for n in OLD), 300, step=0.5)
        if initial is None:
            raise RuntimeError("the old servers never proxied the new-only resource after the harness came up")
        # An old server cannot serve it itself: with the header that marks a proxied request it must say 404.
        own = {n: self.direct(n, self.path, {"x-kubernetes-peer-proxied": "true"}) for n in OLD}
        quotas = list(args.cpu_quotas)
        rng = random.Random(args.seed)
        schedule = []
        while len(schedule) < args.starts:
            rnd = quotas[:]
            rng.shuffle(rnd)
            schedule += rnd
        schedule = schedule[: args.starts]
        starts = []
        out = args.out / "starts.jsonl"
        out.unlink(missing_ok=True)
        for index, quota in enumerate(schedule):
            record = self.one(index, quota)
            starts.append(record)
            with out.open("a") as handle:
                handle.write(json.dumps(record) + "\n")
            d = record["derived"]
            print(
                f"first_peer: start {index + 1}/{len(schedule)} quota {quota}: start-up {d['startup_s']} s, "
                f"gap from new 200 {d['gap_from_new_200']}, from ready {d['gap_from_ready']}, "
                f"failed attempts {d['failed_attempts']}, load {record['load'][0]:.1f}"
                + (f", ERROR {record['error']}" if record["error"] else ""),
                file=sys.stderr,
                flush=True,
            )
        return {
            "gvr": format_gvr(gvr),
            "new_only": new_only_gvrs,
            "lease": self.lease,
            "initial_sync_s": initial,
            "old_with_peer_proxied_header": own,
            "starts": starts,
        }


def render(result: dict, out: Path) -> None:
    (out / "first-peer.json").write_text(json.dumps(result, indent=1) + "\n")
    (out / "first-peer.md").write_text(fps.markdown(result))


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.first_peer", description=__doc__.split("\n\n")[0])
    parser.add_argument("--starts", type=int, default=30)
    parser.add_argument(
        "--cpu-quotas",
        type=lambda s: [q.strip() for q in s.split(",")],
        default=["none", "20", "10", "5", "3"],
        help="CPU quotas of the new server, %% of one CPU or 'none', cycled in a shuffled order",
    )
    parser.add_argument("--interval", type=float, default=0.05, help="seconds between polls of each server")
    parser.add_argument("--lb-interval", type=float, default=0.1, help="seconds between polls of each balancer")
    parser.add_argument("--no-balancers", dest="balancers", action="store_false")
    parser.add_argument("--gvr", help="the new-only resource as group/version/resource (default: the first found)")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds between the old servers' 404 and a start")
    parser.add_argument("--linger", type=float, default=1.0, help="seconds to keep polling once every server answers")
    parser.add_argument("--ready-timeout", type=float, default=900)
    parser.add_argument("--sync-timeout", type=float, default=60)
    parser.add_argument(
        "--upgrade",
        action="store_true",
        help="before each start run cp-3 at the old version and re-render it with the new kubeadm (slower)",
    )
    parser.add_argument("--seed", type=int, default=17)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument(
        "--report", action="store_true", help="only render first-peer.md again from --out's first-peer.json"
    )
    args = parser.parse_args(argv)
    if args.report:
        result = json.loads((args.out / "first-peer.json").read_text())
        for record in result["starts"]:
            record["derived"] = fps.derive(record, result["meta"]["old_servers"])
        result["summary"] = fps.summarize(result["starts"], result["meta"]["old_servers"])
        render(result, args.out)
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    old, new = old_version(), new_version()
    wall = time.monotonic()
    meta = {
        "started_utc": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python -m bench.first_peer " + shlex.join(argv if argv is not None else sys.argv[1:]),
        "cpus": os.cpu_count(),
        "uptime_before": uptime(),
        "old": old,
        "new": new,
        "old_servers": list(OLD),
        "new_server": NEW,
        "cpu_quotas": args.cpu_quotas,
        "interval": args.interval,
        "lb_interval": args.lb_interval,
        "upgrade": args.upgrade,
        "balancer_labels": BALANCER_LABELS if args.balancers else {},
    }
    servers = [("cp-1", old), ("cp-2", old), (NEW, new)]
    with tempfile.TemporaryDirectory(prefix="skewsafe-first-peer-") as tmp:
        harness = Harness(Path(tmp), servers, config_hook=peer_ca_hook)
        run = None
        try:
            harness.up()
            meta["harness_up_s"] = round(harness.up_seconds, 1)
            run = Run(args, harness)
            data = run.run()
        finally:
            if run is not None:
                run.close()
            logs = args.out / "logs"
            logs.mkdir(exist_ok=True)
            for name in harness.servers:
                log = harness.node_dir(name) / "kube-apiserver.log"
                if log.exists():
                    shutil.copy2(log, logs / f"{name}.log")
            harness.down()
            if run is not None:
                run.limit.remove()
    meta["uptime_after"] = uptime()
    meta["wall_s"] = round(time.monotonic() - wall, 1)
    meta.update({k: v for k, v in data.items() if k != "starts"})
    result = {"meta": meta, "starts": data["starts"], "summary": fps.summarize(data["starts"], list(OLD))}
    render(result, args.out)
    print(f"first_peer: {args.out / 'first-peer.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
