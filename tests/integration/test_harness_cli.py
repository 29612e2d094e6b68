"""`make harness-up` state: every `up` starts exactly the configuration it was asked for.

The CLI (python -m skewsafe_harness, what hack/harness.sh runs) is started twice in one work
directory, first with --peer-ca-file, then without. Proof comes from an independent prober (Python's
ssl and http.client, and /proc/<pid>/cmdline; neither the harness's nor the collection's client): the
old server proxies a new-only resource after the first `up` and answers 404 for it after the second,
where its command line has no --peer-ca-file and its /readyz lists no proxy hook. A work directory
that carried the first `up`'s kubeadm configuration into the second failed this (the "MVP off"
harness proxied).
"""

from __future__ import annotations

import http.client
import json
import ssl
import subprocess
import sys
import time
from pathlib import Path

import pytest
from conftest import LAB_PAIR

from skewsafe_harness.cluster import _alive

HARNESS_DIR = Path(__file__).resolve().parents[1] / "harness"
NOPEER = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList;profile=nopeer"


def cli(work: Path, *args: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-m", "skewsafe_harness", "--work", str(work), *args],
        cwd=HARNESS_DIR,
        capture_output=True,
        text=True,
        check=False,
        timeout=600,
    )
    assert proc.returncode == 0, f"harness {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


class Prober:
    """HTTPS straight to one server with the harness's super-admin client certificate, stdlib only."""

    def __init__(self, work: Path):
        self.state = json.loads((work / "state.json").read_text())
        self.ctx = ssl.create_default_context(cafile=self.state["ca_file"])
        self.ctx.load_cert_chain(str(work / "client" / "super-admin.crt"), str(work / "client" / "super-admin.key"))

    def get(self, name: str, path: str, headers: dict | None = None) -> tuple[int, bytes]:
        address = self.state["servers"][name]["address"]
        conn = http.client.HTTPSConnection(address, 6443, context=self.ctx, timeout=10)
        try:
            conn.request("GET", path, headers=headers or {})
            resp = conn.getresponse()
            return resp.status, resp.read()
        finally:
            conn.close()

    def cmdline(self, name: str) -> list[str]:
        raw = Path(f"/proc/{self.state['servers'][name]['pid']}/cmdline").read_bytes()
        return raw.decode().split("\0")

    def local_resources(self, name: str) -> set[str]:
        status, body = self.get(name, "/apis", {"Accept": NOPEER})
        assert status == 200, body[:300]
        out = set()
        for group in json.loads(body)["items"]:
            for version in group["versions"]:
                for res in version["resources"]:
                    if "list" in res.get("verbs", []) and res.get("scope") == "Cluster":
                        out.add(f"/apis/{group['metadata']['name']}/{version['version']}/{res['resource']}")
        return out


def wait_status(prober, name, path, want, timeout) -> float:
    """Seconds until ``name`` answered ``want`` for ``path``."""
    started = time.monotonic()
    status = None
    while time.monotonic() < started + timeout:
        status, _body = prober.get(name, path)
        if status == want:
            return time.monotonic() - started
        time.sleep(1)
    pytest.fail(f"{name} GET {path}: {status} after {timeout}s, wanted {want}")


@pytest.mark.lab_tier
def test_up_without_peer_ca_file_after_an_up_with_it(tmp_path):
    work = tmp_path / "manual"
    servers = f"cp-1={LAB_PAIR.old},cp-2={LAB_PAIR.new}"
    try:
        cli(work, "up", "--servers", servers, "--peer-ca-file")
        on = Prober(work)
        assert any(a.startswith("--peer-ca-file=") for a in on.cmdline("cp-1"))
        new_only = sorted(on.local_resources("cp-2") - on.local_resources("cp-1"))
        assert new_only, f"v{LAB_PAIR.new} serves no cluster-scoped listable resource v{LAB_PAIR.old} lacks"
        path = new_only[0] + "?limit=1"
        synced = wait_status(on, "cp-1", path, 200, 90)  # proxied to cp-2
        cli(work, "down")

        cli(work, "up", "--servers", servers)
        off = Prober(work)
        assert off.get("cp-2", path)[0] == 200  # the new server serves it itself
        # the old one does not proxy it, for longer than its peer sync took after the first up
        deadline = time.monotonic() + max(10.0, 2 * synced + 5)
        while time.monotonic() < deadline:
            status, body = off.get("cp-1", path)
            assert status == 404, f"the MVP-off harness answered {status} for {path} (proxied): {body[:200]!r}"
            time.sleep(1)
        assert not any(a.startswith("--peer-ca-file") for a in off.cmdline("cp-1")), off.cmdline("cp-1")
        _status, readyz = off.get("cp-1", "/readyz?verbose")
        assert b"mixed-version-proxy-handler" not in readyz
    finally:
        if (work / "state.json").exists():
            cli(work, "down")
    assert not any(_alive(s["pid"]) for s in off.state["servers"].values())
