"""Client errors through a /readyz-checking haproxy while kube-apiservers restart, per shutdown setting.

    python -m bench.graceful_restart --rounds 2 --out ~/.cache/skewsafe/bench/graceful

(or ``make bench-graceful``). For each variant (``--variant NAME=flag=value,flag=value``; default: kubeadm's
settings and the candidates below) a harness of three real kube-apiservers at the newer pinned version is
rendered by the real kubeadm with MVP on and the variant's flags in ``apiServer.extraArgs``. Two haproxy 2.6
instances (Debian's, as in the lab) balance over the three, configured as lab/lb.sh does (TCP, round robin,
``GET /readyz`` over TLS every 1 s, down after 2 failures, ``retries 3`` + ``option redispatch``); one with the
lab's ``on-marked-down shutdown-sessions``, one without. Each gets open-loop LIST load (keep-alive connections,
no client retries: every failure is recorded) and a few watch streams. Every server is then restarted in turn
``--rounds`` times as the kubelet restarts a static Pod: SIGTERM, SIGKILL after the Pod's termination grace
period (``--grace``, 30 s: kubeadm's manifests set none), start again, wait for /readyz and ``--settle`` s.

Output in --out: ``graceful.json`` (per variant and balancer: outcomes, errors by text, stop and start times),
``graceful.md``, ``requests-<variant>-<lb>.jsonl``.
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from datetime import datetime, timezone
from pathlib import Path

import urllib3

from skewsafe_harness import Harness
from skewsafe_harness.hooks import peer_ca_hook
from skewsafe_harness.pins import new_version

from .loadgen import LoadGenerator, Probe, Recorder
from .stats import outcome
from .targets import Target, auth_headers, load_credentials, pool

REPO = Path(__file__).resolve().parent.parent
HAPROXY_CFG = REPO / "lab" / "files" / "haproxy-cfg.sh"
SERVERS = ("cp-1", "cp-2", "cp-3")
DEFAULT_VARIANTS = [
    "kubeadm=",
    "delay=shutdown-delay-duration=5s",
    "delay-retry=shutdown-delay-duration=5s,shutdown-send-retry-after=true",
    "watch=shutdown-watch-termination-grace-period=5s",
    "delay-watch=shutdown-delay-duration=5s,shutdown-watch-termination-grace-period=5s",
    "delay-retry-watch=shutdown-delay-duration=5s,shutdown-send-retry-after=true,"
    "shutdown-watch-termination-grace-period=5s",
]
BALANCERS = {"lab": [], "keep-sessions": ["--keep-sessions"]}
SHUTTING_DOWN = "The apiserver is shutting down"


def parse_variant(text: str) -> tuple[str, dict]:
    name, sep, rest = text.partition("=")
    if not sep or not name:
        raise argparse.ArgumentTypeError(f"variant {text!r} is not NAME=flag=value,...")
    flags = {}
    for item in filter(None, rest.split(",")):
        flag, eq, value = item.partition("=")
        if not eq:
            raise argparse.ArgumentTypeError(f"variant {name}: {item!r} is not flag=value")
        flags[flag.lstrip("-")] = value
    return name, flags


def flags_hook(flags: dict):
    """MVP on (peer_ca_hook) plus the variant's kube-apiserver flags, written by the collection's own editor."""
    from ansible_collections.skewsafe.kubeadm.plugins.module_utils._kubeadm_config import KubeadmConfig, build_updates

    def hook(server, path: Path) -> None:
        peer_ca_hook(server, path)
        if flags:
            config = KubeadmConfig(path.read_text())
            if config.apply(build_updates({"api_server_extra_args": flags})):
                path.write_text(config.render())

    return hook


class Haproxy:
    """Debian's haproxy on a loopback port with lab/lb.sh's configuration (lab/files/haproxy-cfg.sh)."""

    def __init__(self, work: Path, name: str, options: list, backends: list):
        self.port = free_port()
        self.stats = free_port()
        cfg = work / f"haproxy-{name}.cfg"
        cfg.write_text(
            subprocess.run(
                [
                    "bash",
                    str(HAPROXY_CFG),
                    "--bind",
                    f"127.0.0.1:{self.port}",
                    "--stats",
                    f"127.0.0.1:{self.stats}",
                    *options,
                    *backends,
                ],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
        )
        self.log = (work / f"haproxy-{name}.log").open("w")
        self.process = subprocess.Popen(["haproxy", "-db", "-f", str(cfg)], stdout=self.log, stderr=subprocess.STDOUT)
        self.url = f"https://127.0.0.1:{self.port}"

    def up_backends(self) -> int:
        try:
            body = urllib3.request("GET", f"http://127.0.0.1:{self.stats}/stats;csv", timeout=2).data.decode()
        except Exception:
            return 0
        return sum(1 for line in body.splitlines() if line.startswith("kube-apiservers,cp") and ",UP," in line)

    def close(self) -> None:
        self.process.terminate()
        self.process.wait(10)
        self.log.close()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


class Watchers:
    """``count`` watch streams on configmaps through one balancer, each opened again when it ends."""

    def __init__(self, target: Target, creds, count: int):
        self.pool = pool(target, creds, count, timeout=None)
        self.headers = auth_headers(creds)
        self.stop = threading.Event()
        self.opened = 0
        self.failed: Counter = Counter()
        self.threads = [threading.Thread(target=self.run, daemon=True) for _ in range(count)]

    def start(self) -> Watchers:
        for thread in self.threads:
            thread.start()
        return self

    def run(self) -> None:
        while not self.stop.is_set():
            try:
                resp = self.pool.urlopen(
                    "GET",
                    "/api/v1/configmaps?watch=1&timeoutSeconds=300&allowWatchBookmarks=true",
                    headers=self.headers,
                    preload_content=False,
                    timeout=urllib3.Timeout(connect=5, read=None),
                )
                self.opened += 1
                for _ in resp.stream(1024):
                    if self.stop.is_set():
                        break
                resp.release_conn()
            except Exception as exc:  # a watch cut by a restart is opened again, as informers do
                self.failed[type(exc).__name__] += 1
                self.stop.wait(0.5)

    def close(self) -> None:
        self.stop.set()
        self.pool.close()


def stop_like_kubelet(harness: Harness, name: str, grace: float) -> dict:
    """SIGTERM, then SIGKILL once the termination grace period is over, as the kubelet stops a static Pod."""
    server = harness.servers[name]
    process = server.process
    started = time.time()
    process.send_signal(signal.SIGTERM)
    killed = False
    try:
        process.wait(grace)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        killed = True
    server.process = None
    return {"server": name, "sigterm": started, "exit_s": round(time.time() - started, 2), "killed": killed}


def run_variant(args, name: str, flags: dict, work: Path) -> dict:
    version = new_version()
    harness = Harness(work / name, [(s, version) for s in SERVERS], config_hook=flags_hook(flags))
    balancers: dict = {}
    loads: dict = {}
    watchers: dict = {}
    restarts = []
    try:
        harness.up()
        backends = [f"{harness.servers[s].address}:6443" for s in SERVERS]
        for lb_name, options in BALANCERS.items():
            balancers[lb_name] = Haproxy(work / name, lb_name, options, backends)
        deadline = time.monotonic() + 30
        while any(lb.up_backends() < len(SERVERS) for lb in balancers.values()):
            if time.monotonic() > deadline:
                raise RuntimeError("haproxy did not see every kube-apiserver UP in 30 s")
            time.sleep(0.5)
        creds = load_credentials(str(harness.kubeconfig))
        probes = [Probe("core", "v1/namespaces"), Probe("core", "v1/configmaps")]
        threads = []
        for lb_name, lb in balancers.items():
            target = Target(f"lb-{lb_name}", lb.url, direct=False, server_name="kubernetes")
            recorder = Recorder(args.out / f"requests-{name}-{lb_name}.jsonl")
            gen = LoadGenerator([target], creds, probes, recorder, args.rate, 1e9, args.workers, 5.0, 1.0)
            loads[lb_name] = (gen, recorder)
            watchers[lb_name] = Watchers(target, creds, args.watches).start()
            threads.append(threading.Thread(target=gen.run, daemon=True))
        load_started = time.time()
        for thread in threads:
            thread.start()
        time.sleep(args.settle)
        for rnd in range(args.rounds):
            for server in SERVERS:
                stop = stop_like_kubelet(harness, server, args.grace)
                started = time.monotonic()
                harness.start_server(server)
                stop["ready_s"] = round(time.monotonic() - started, 2)
                stop["round"] = rnd
                restarts.append(stop)
                print(
                    f"graceful: {name} round {rnd + 1} {server}: exit {stop['exit_s']} s"
                    f"{' (killed)' if stop['killed'] else ''}, ready {stop['ready_s']} s",
                    file=sys.stderr,
                    flush=True,
                )
                time.sleep(args.settle)
        for gen, _recorder in loads.values():
            gen.stop.set()
        for thread in threads:
            thread.join(60)
        load_ended = time.time()
    finally:
        for w in watchers.values():
            w.close()
        for _gen, recorder in loads.values():
            recorder.close()
        for lb in balancers.values():
            lb.close()
        harness.down()
    result = {"flags": flags, "restarts": restarts, "load": [load_started, load_ended], "balancers": {}}
    for lb_name in balancers:
        records = [json.loads(line) for line in (args.out / f"requests-{name}-{lb_name}.jsonl").open()]
        result["balancers"][lb_name] = summarize(records, watchers[lb_name])
    return result


def summarize(records: list, watchers: Watchers) -> dict:
    counts = Counter(outcome(r) for r in records)
    errors = [r for r in records if outcome(r) in ("http_error", "transport_error")]
    retry_after = [r for r in errors if r.get("status") == 429 and SHUTTING_DOWN in (r.get("error") or "")]
    texts = Counter(f"{r.get('status') or '-'} {(r.get('error') or '')[:90]}" for r in errors)
    return {
        "requests": len(records),
        "outcomes": dict(counts),
        "errors": len(errors),
        "retry_after_429": len(retry_after),
        "errors_without_retry_after": len(errors) - len(retry_after),
        "errors_by_text": texts.most_common(8),
        "watches_opened": watchers.opened,
        "watch_failures": dict(watchers.failed),
    }


def markdown(result: dict) -> str:
    meta = result["meta"]
    lines = [
        "# Graceful kube-apiserver restarts through haproxy",
        "",
        f"{meta['started_utc']}, `{meta['command']}`, kube-apiserver v{meta['version']}, {meta['cpus']} CPUs, "
        f"{meta['rounds']} rounds x 3 servers = {3 * meta['rounds']} restarts per variant, LIST load "
        f"{meta['rate']:g}/s per balancer ({meta['workers']} keep-alive connections, no client retries), "
        f"{meta['watches']} watch streams per balancer, SIGKILL after {meta['grace']:g} s. Wall {meta['wall_s']} s.",
        "",
        "`lab`: lab/lb.sh's haproxy (`on-marked-down shutdown-sessions`); `keep-sessions`: the same without it.",
        "An error is any answer but 2xx, or no answer; `429 RA` counts the 429 + Retry-After answers a draining",
        "server gives with `--shutdown-send-retry-after` (client-go waits and retries them; this load does not).",
        "",
        "| variant | flags | SIGTERM to exit, s (max) | killed | errors lab (429 RA) | errors keep-sessions (429 RA) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for name, v in result["variants"].items():
        exits = [r["exit_s"] for r in v["restarts"]]
        killed = sum(r["killed"] for r in v["restarts"])
        flags = " ".join(f"--{k}={val}" for k, val in v["flags"].items()) or "(kubeadm's defaults)"
        cells = []
        for lb_name in BALANCERS:
            b = v["balancers"][lb_name]
            cells.append(f"{b['errors']} ({b['retry_after_429']}) of {b['requests']}")
        median = sorted(exits)[len(exits) // 2] if exits else "-"
        lines.append(
            f"| {name} | {flags} | {median} ({max(exits) if exits else '-'}) | {killed} | {' | '.join(cells)} |"
        )
    lines.append("")
    for name, v in result["variants"].items():
        for lb_name in BALANCERS:
            b = v["balancers"][lb_name]
            if b["errors_by_text"]:
                lines.append(
                    f"- {name}, {lb_name}: " + "; ".join(f"{n} x `{t.strip()}`" for t, n in b["errors_by_text"])
                )
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.graceful_restart", description=__doc__.split("\n\n")[0])
    parser.add_argument("--variant", action="append", type=parse_variant, help="NAME=flag=value,... (repeatable)")
    parser.add_argument("--rounds", type=int, default=2, help="restarts of every server per variant")
    parser.add_argument("--rate", type=float, default=20.0, help="LIST requests per second per balancer")
    parser.add_argument("--workers", type=int, default=4, help="keep-alive connections per balancer")
    parser.add_argument("--watches", type=int, default=4, help="watch streams per balancer")
    parser.add_argument("--grace", type=float, default=30.0, help="seconds from SIGTERM to SIGKILL")
    parser.add_argument("--settle", type=float, default=5.0, help="seconds after a server is ready again")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    variants = args.variant or [parse_variant(v) for v in DEFAULT_VARIANTS]
    args.out.mkdir(parents=True, exist_ok=True)
    wall = time.monotonic()
    meta = {
        "started_utc": datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": "python -m bench.graceful_restart " + shlex.join(argv if argv is not None else sys.argv[1:]),
        "cpus": os.cpu_count(),
        "version": new_version(),
        **{k: getattr(args, k) for k in ("rounds", "rate", "workers", "watches", "grace", "settle")},
    }
    result = {"meta": meta, "variants": {}}
    with tempfile.TemporaryDirectory(prefix="skewsafe-graceful-") as tmp:
        for name, flags in variants:
            result["variants"][name] = run_variant(args, name, flags, Path(tmp))
            (args.out / "graceful.json").write_text(json.dumps(result, indent=1) + "\n")
    meta["wall_s"] = round(time.monotonic() - wall, 1)
    (args.out / "graceful.json").write_text(json.dumps(result, indent=1) + "\n")
    (args.out / "graceful.md").write_text(markdown(result))
    print(f"graceful: {args.out / 'graceful.md'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
