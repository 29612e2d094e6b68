"""By-hand use of the harness (make harness-up / make harness-down).

    python -m skewsafe_harness up [--servers cp-1=1.36.5,cp-2=1.36.5,cp-3=1.37.2] [--peer-ca-file]
    python -m skewsafe_harness down
    python -m skewsafe_harness record-configmap [--version 1.37.2]
    python -m skewsafe_harness record-mvp [--servers cp-1=1.35.4,cp-2=1.35.4,cp-3=1.36.5]

Run from tests/harness with the collection importable (PYTHONPATH containing a
directory with ansible_collections/skewsafe/kubeadm), as the Makefile does.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import yaml

from .cluster import Harness, down_from_state
from .hooks import peer_ca_hook
from .pins import HarnessError, cache_dir, new_version, old_version


def default_servers() -> str:
    old, new = old_version(), new_version()
    return f"cp-1={old},cp-2={old},cp-3={new}"


def parse_servers(text: str) -> list[tuple[str, str]]:
    servers = []
    for item in text.split(","):
        name, _sep, version = item.partition("=")
        if not name or not version:
            raise HarnessError(f"--servers item {item!r} is not NAME=VERSION")
        servers.append((name.strip(), version.strip()))
    return servers


def operator_settings_hook(server, path: Path) -> None:
    """Settings a real cluster often carries, so the recording exercises lists kubeadm serialises."""
    docs = path.read_text().split("---\n")
    cluster = yaml.safe_load(docs[1])
    cluster["apiServer"] = {
        "certSANs": ["api.example.internal", "10.0.0.10"],
        "extraArgs": [
            {"name": "audit-log-maxage", "value": "30"},
            {"name": "profiling", "value": "false"},
            {"name": "feature-gates", "value": "APIServerIdentity=true"},
        ],
    }
    cluster["controllerManager"] = {"extraArgs": [{"name": "bind-address", "value": "0.0.0.0"}]}
    docs[1] = yaml.safe_dump(cluster, sort_keys=False)
    path.write_text("---\n".join(docs))


class RecordingClient:
    """Wraps the collection's ApiServerClient and keeps every answer, in order, per request."""

    def __init__(self, client):
        self.client = client
        self.requests = 0
        self.log = {}

    def get(self, base_url, path, headers=None, timeout=None):
        resp = self.client.get(base_url, path, headers, timeout=timeout)
        self.requests += 1
        key = request_key(base_url, path, headers)
        body = resp.text()
        from ansible_collections.skewsafe.kubeadm.plugins.module_utils._metrics import MVP_METRICS

        if path == "/metrics":  # keep only the series the collector reads (the rest is ~1 MB)
            body = "\n".join(line for line in body.splitlines() if line.startswith(MVP_METRICS))
        self.log.setdefault(key, []).append({"status": resp.status, "body": body, "error": resp.error})
        return resp


def request_key(base_url, path, headers=None):
    extra = ";".join(f"{k}={v}" for k, v in sorted((headers or {}).items()))
    return f"{base_url}{path} [{extra}]"


def record_mvp(work: Path, servers: list[tuple[str, str]]) -> dict:
    """Every answer the MVP collector got from a healthy mixed control plane, for unit tests to replay."""
    import time

    from ansible_collections.skewsafe.kubeadm.plugins.module_utils._apiserver_http import ApiServerClient, Credentials
    from ansible_collections.skewsafe.kubeadm.plugins.module_utils._discovery import ACCEPT_V2, ACCEPT_V2_NOPEER
    from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.collect import Collector

    with Harness(work, servers, config_hook=peer_ca_hook) as harness:
        first = harness.first.name
        deadline = time.monotonic() + 60  # let the old servers sync their peers first
        while time.monotonic() < deadline:
            merged = harness.request(first, "/apis", {"Accept": ACCEPT_V2}).body
            if merged != harness.request(first, "/apis", {"Accept": ACCEPT_V2_NOPEER}).body:
                break
            time.sleep(1)
        creds = Credentials(
            ca_file=str(harness.ca_file),
            cert_file=str(harness.work / "client" / "super-admin.crt"),
            key_file=str(harness.work / "client" / "super-admin.key"),
        )
        recorder = RecordingClient(ApiServerClient(creds))
        endpoints = [{"url": s.url, "name": s.name} for s in harness.servers.values()]
        Collector(recorder, peer_ca_file=None, probe_limit=2).collect(endpoints, "mixed")
        return {"recorded_at": time.time(), "endpoints": endpoints, "responses": recorder.log}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m skewsafe_harness")
    parser.add_argument("--work", type=Path, default=cache_dir() / "harness" / "manual")
    sub = parser.add_subparsers(dest="command", required=True)
    up = sub.add_parser("up", help="start etcd and the API servers, print endpoints and a kubeconfig")
    up.add_argument("--servers", default=None, help="NAME=VERSION,... (default: two old, one new)")
    up.add_argument("--peer-ca-file", action="store_true", help="turn MVP on (--peer-ca-file) on every server")
    sub.add_parser("down", help="stop everything 'up' started")
    rec = sub.add_parser("record-configmap", help="print kubeadm-config's ClusterConfiguration as kubeadm writes it")
    rec.add_argument("--version", default=None)
    rec_mvp = sub.add_parser("record-mvp", help="print raw responses of a healthy mixed control plane (JSON)")
    rec_mvp.add_argument("--servers", default=None, help="NAME=VERSION,... (default: two old, one new)")
    args = parser.parse_args(argv)

    try:
        if args.command == "down":
            found = down_from_state(args.work)
            print("harness stopped" if found else f"no harness running in {args.work}")
            return 0
        if args.command == "record-configmap":
            version = args.version or new_version()
            with tempfile.TemporaryDirectory(prefix="skewsafe-record-") as tmp:
                with Harness(Path(tmp), [("cp-1", version)], config_hook=operator_settings_hook) as harness:
                    print(harness.upload_kubeadm_config(), end="")
            return 0
        if args.command == "record-mvp":
            with tempfile.TemporaryDirectory(prefix="skewsafe-record-") as tmp:
                servers = parse_servers(args.servers or default_servers())
                print(json.dumps(record_mvp(Path(tmp), servers), indent=1, sort_keys=True))
            return 0
        if (args.work / "state.json").exists():
            raise HarnessError(f"a harness is already running in {args.work}; run 'make harness-down' first")
        harness = Harness(
            args.work,
            parse_servers(args.servers or default_servers()),
            die_with_parent=False,
            config_hook=peer_ca_hook if args.peer_ca_file else None,
        )
        harness.up()
        print(f"harness up in {harness.up_seconds:.1f}s (work dir {args.work})")
        for server in harness.servers.values():
            print(f"  {server.name:8} v{server.version:8} {server.url}  pid {server.process.pid}")
        print(f"kubeconfig: {harness.kubeconfig}")
        print(f"try: kubectl --kubeconfig {harness.kubeconfig} get leases -n kube-system")
        print("stop with: make harness-down")
        return 0
    except HarnessError as exc:
        print(f"harness: {exc}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
