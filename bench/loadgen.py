"""Concurrent load generator, bounded in rate and time, that records every request as a JSON line.

    python -m bench.loadgen --kubeconfig admin.conf --lb lb=https://10.214.1.10:6443 \\
        --server cp1=https://10.214.1.11:6443 --server cp2=... \\
        --new-only-file new-only.json --rate 40 --duration 600 --out requests.jsonl

Every target gets LIST ?limit=1 of each new-only GVR and of a few core resources, round robin,
at a fixed total rate (open loop: a request due while all workers are busy is recorded as not sent,
not queued, so a slow server cannot make the load pile up). API servers may restart under it:
connection errors are recorded and the load goes on. Direct servers' /version is polled, which
is how the analysis finds the mixed-version window without trusting anyone's say-so.
"""

from __future__ import annotations

import argparse
import json
import queue
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._discovery import gvr_path

from . import discover
from .stats import outcome
from .targets import Target, auth_headers, load_credentials, parse_target, pool

DEFAULT_CORE = ("v1/namespaces", "v1/configmaps")


@dataclass(frozen=True)
class Probe:
    kind: str  # "new-only" or "core"
    gvr: str  # "group/version/resource", or "version/resource" for the core group

    @property
    def path(self) -> str:
        parts = self.gvr.split("/")
        gvr = tuple(parts) if len(parts) == 3 else ("", *parts)
        return gvr_path(gvr) + "?limit=1"


def detail(body: bytes) -> str:
    """The API Status message of an error answer, else its start."""
    try:
        return str(json.loads(body).get("message", ""))[:200]
    except (ValueError, AttributeError):
        return body[:200].decode("utf-8", "replace")


class Recorder:
    """JSON lines, one per request, written as they complete (a crash keeps what was measured)."""

    def __init__(self, path: Path):
        self.handle = path.open("a", buffering=1)
        self.lock = threading.Lock()
        self.counts: dict = {}

    def write(self, record: dict) -> None:
        key = (record["target"], record["kind"], outcome(record))
        with self.lock:
            self.handle.write(json.dumps(record, separators=(",", ":")) + "\n")
            self.counts[key] = self.counts.get(key, 0) + 1

    def close(self) -> None:
        self.handle.close()


def error_text(exc: Exception) -> str:
    """'NewConnectionError: [Errno 111] Connection refused' rather than urllib3's long repr."""
    reason = str(getattr(exc, "reason", None) or exc)
    return f"{type(exc).__name__}: {reason.split('): ', 1)[-1]}"[:200]


class LoadGenerator:
    def __init__(
        self,
        targets: list[Target],
        creds,
        probes: list[Probe],
        recorder: Recorder,
        rate: float,
        duration: float,
        workers: int,
        timeout: float,
        version_interval: float,
    ):
        self.targets, self.probes, self.recorder = targets, probes, recorder
        self.rate, self.duration, self.workers, self.version_interval = rate, duration, workers, version_interval
        self.pools = {t.name: pool(t, creds, workers, timeout) for t in targets}
        self.headers = auth_headers(creds)
        # Workers and a queue per target: a server that hangs while it starts must not starve the others.
        self.jobs = {t.name: queue.Queue(maxsize=workers) for t in targets}
        self.stop = threading.Event()
        self.skipped: dict = {}
        self.sent = 0

    def request(self, target: Target, path: str) -> tuple:
        """(status, body, error, latency); never raises, whatever the server or network does."""
        started = time.monotonic()
        try:
            resp = self.pools[target.name].urlopen("GET", path, headers=self.headers, preload_content=True)
            return resp.status, resp.data, None, time.monotonic() - started
        except Exception as exc:  # refused, reset, TLS, timeout: all are outcomes to record
            return None, b"", error_text(exc), time.monotonic() - started

    def work(self, name: str) -> None:
        while True:
            job = self.jobs[name].get()
            if job is None:
                return
            target, probe, due = job
            wall, lag = time.time(), time.monotonic() - due  # lag: how late the worker picked it up
            status, body, error, latency = self.request(target, probe.path)
            record = {
                "t": round(wall, 4),
                "target": target.name,
                "kind": probe.kind,
                "gvr": probe.gvr,
                "status": status,
                "latency": round(latency, 5),
                "lag": round(lag, 4),
                "error": error or (detail(body) if status and status >= 300 else None),
            }
            self.recorder.write(record)

    def poll_version(self, target: Target) -> None:
        """From the start (the first poll tells whether the run begins mixed) until stopped."""
        while True:
            wall = time.time()
            status, body, error, latency = self.request(target, "/version")
            version = None
            if status == 200:
                try:
                    version = json.loads(body).get("gitVersion")
                except ValueError:
                    error = "unparsable /version"
            self.recorder.write(
                {
                    "t": round(wall, 4),
                    "target": target.name,
                    "kind": "version",
                    "gvr": None,
                    "status": status,
                    "latency": round(latency, 5),
                    "version": version,
                    "error": error,
                }
            )
            if self.stop.wait(self.version_interval):
                return

    def run(self) -> dict:
        threads = [
            threading.Thread(target=self.work, args=(t.name,), daemon=True)
            for t in self.targets
            for _ in range(self.workers)
        ]
        threads += [
            threading.Thread(target=self.poll_version, args=(t,), daemon=True) for t in self.targets if t.direct
        ]
        for thread in threads:
            thread.start()
        combos = [(t, p) for p in self.probes for t in self.targets]
        started = time.monotonic()
        while not self.stop.is_set():
            due = started + self.sent / self.rate
            if due - started >= self.duration or self.stop.wait(max(0.0, due - time.monotonic())):
                break
            target, probe = combos[self.sent % len(combos)]
            try:
                self.jobs[target.name].put_nowait((target, probe, due))
            except queue.Full:  # open loop: never queue up; recorded so the gap shows on the timeline
                self.skipped[target.name] = self.skipped.get(target.name, 0) + 1
                self.recorder.write(
                    {
                        "t": round(time.time(), 4),
                        "target": target.name,
                        "kind": probe.kind,
                        "gvr": probe.gvr,
                        "status": None,
                        "latency": None,
                        "skipped": True,
                    }
                )
            self.sent += 1
        self.stop.set()
        for jobs in self.jobs.values():
            for _ in range(self.workers):
                jobs.put(None)
        for thread in threads:
            thread.join(timeout=30)
        return {"scheduled": self.sent, "skipped": self.skipped, "seconds": round(time.monotonic() - started, 2)}


def build_probes(args, targets: dict[str, Target], creds_path: str) -> list[Probe]:
    gvrs = list(args.new_only or [])
    if args.new_only_file:
        gvrs += json.loads(Path(args.new_only_file).read_text())["new_only"]
    if args.discover:
        new, _sep, old = args.discover.partition(",")
        gvrs += discover.from_servers(creds_path, targets[new].url, targets[old].url)
    gvrs = sorted(set(gvrs))
    if not gvrs:
        raise SystemExit("no new-only GVR: give --new-only, --new-only-file or --discover NEW,OLD")
    step = max(1, len(gvrs) // args.max_new_only)  # spread over groups rather than the first few
    chosen = gvrs[::step][: args.max_new_only]
    return [Probe("new-only", g) for g in chosen] + [Probe("core", g) for g in args.core or DEFAULT_CORE]


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.loadgen", description=__doc__.split("\n\n")[0])
    parser.add_argument("--kubeconfig", required=True, help="credentials (and CA) for every target")
    parser.add_argument("--lb", action="append", default=[], help="NAME=URL[@TLS_NAME] behind a load balancer")
    parser.add_argument("--server", action="append", default=[], help="NAME=URL[@TLS_NAME] of one API server")
    parser.add_argument("--new-only", action="append", help="a new-only GVR as group/version/resource")
    parser.add_argument("--new-only-file", help="JSON with a 'new_only' list (python -m bench.discover)")
    parser.add_argument("--discover", metavar="NEW,OLD", help="diff the local discovery of these two targets")
    parser.add_argument("--max-new-only", type=int, default=4)
    parser.add_argument("--core", action="append", help=f"core GVRs to list (default {', '.join(DEFAULT_CORE)})")
    parser.add_argument("--rate", type=float, default=40.0, help="requests per second, all targets together")
    parser.add_argument("--duration", type=float, default=60.0, help="seconds (SIGTERM/SIGINT stop earlier)")
    parser.add_argument("--workers", type=int, default=4, help="concurrent requests per target")
    parser.add_argument("--timeout", type=float, default=5.0, help="per request, seconds")
    parser.add_argument("--version-interval", type=float, default=1.0, help="seconds between /version polls")
    parser.add_argument("--out", type=Path, required=True, help="JSON lines; <out>.meta.json gets the settings")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    targets = [parse_target(t, False) for t in args.lb] + [parse_target(t, True) for t in args.server]
    if not targets:
        raise SystemExit("give at least one --lb or --server")
    creds = load_credentials(args.kubeconfig)
    probes = build_probes(args, {t.name: t for t in targets}, args.kubeconfig)
    recorder = Recorder(args.out)
    gen = LoadGenerator(
        targets, creds, probes, recorder, args.rate, args.duration, args.workers, args.timeout, args.version_interval
    )
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: gen.stop.set())
    meta = {
        "targets": [vars(t) for t in targets],
        "probes": [vars(p) for p in probes],
        "rate": args.rate,
        "duration": args.duration,
        "workers": args.workers,
        "timeout": args.timeout,
        "started": time.time(),
    }
    print(
        f"loadgen: {len(targets)} targets x {len(probes)} probes at {args.rate:g}/s for <= {args.duration:g}s "
        f"({', '.join(p.gvr for p in probes)})",
        file=sys.stderr,
        flush=True,
    )
    result = gen.run()
    recorder.close()
    meta.update(result, finished=time.time())
    args.out.with_name(args.out.name + ".meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"loadgen: {result}", file=sys.stderr)
    for (target, kind, what), count in sorted(recorder.counts.items()):
        print(f"  {target:10} {kind:9} {what:16} {count}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
