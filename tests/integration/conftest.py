"""Integration fixtures: real harnesses and a runner for the collection's modules via ansible-playbook."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import yaml

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._discovery import (
    ACCEPT_V2,
    ACCEPT_V2_NOPEER,
    parse_aggregated,
)
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._metrics import parse_samples
from skewsafe_harness import Harness
from skewsafe_harness.pins import new_version, old_version

OLD, NEW = old_version(), new_version()


def _require_tools():
    missing = [tool for tool in ("ansible-playbook", "ip", "unshare") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"integration tests need {', '.join(missing)} on PATH (run them through 'make test')")
    if not os.environ.get("ANSIBLE_COLLECTIONS_PATH"):
        pytest.fail("ANSIBLE_COLLECTIONS_PATH must point at a tree with ansible_collections/skewsafe/kubeadm")


class AnsibleRunner:
    """Runs one task of the collection through ansible-playbook and returns its registered result."""

    def __init__(self, tmp: Path):
        self.tmp = tmp
        self.count = 0

    def __call__(
        self, module: str, args: dict, check: bool = False, diff: bool = False, env: dict | None = None
    ) -> dict:
        self.count += 1
        out = self.tmp / f"result-{self.count}.json"
        playbook = self.tmp / f"play-{self.count}.yml"
        playbook.write_text(
            yaml.safe_dump(
                [
                    {
                        "name": "Run one module",
                        "hosts": "localhost",
                        "connection": "local",
                        "gather_facts": False,
                        "tasks": [
                            {"name": "Module under test", module: args, "register": "result", "ignore_errors": True},
                            {
                                "name": "Save the result",
                                "ansible.builtin.copy": {
                                    "content": "{{ result | to_json }}",
                                    "dest": str(out),
                                    "mode": "0600",
                                },
                                "check_mode": False,
                                "diff": False,
                            },
                        ],
                    }
                ]
            )
        )
        cmd = [
            "ansible-playbook",
            "-i",
            "localhost,",
            str(playbook),
            "-e",
            f"ansible_python_interpreter={sys.executable}",
        ]
        cmd += ["--check"] if check else []
        cmd += ["--diff"] if diff else []
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env={**os.environ, **(env or {})})
        if not out.exists():
            pytest.fail(f"ansible-playbook did not run the module:\n{proc.stdout}\n{proc.stderr}")
        return json.loads(out.read_text())


@pytest.fixture(scope="session")
def ansible_module():
    _require_tools()
    with tempfile.TemporaryDirectory(prefix="skewsafe-ansible-") as tmp:
        yield AnsibleRunner(Path(tmp))


def peer_ca_hook(ansible_module):
    """Add --peer-ca-file to a node's kubeadm config with the cluster_config module, like an operator would."""

    def hook(server, path: Path) -> None:
        pki = yaml.safe_load(path.read_text().split("---\n")[1])["certificatesDir"]
        result = ansible_module(
            "skewsafe.kubeadm.cluster_config",
            {"source": "file", "path": str(path), "api_server_extra_args": {"peer-ca-file": f"{pki}/ca.crt"}},
        )
        assert not result.get("failed"), result

    return hook


@pytest.fixture(scope="module")
def harness_factory(tmp_path_factory):
    """Start harnesses that are always torn down, and check nothing leaked."""
    started = []

    def start(servers, config_hook=None) -> Harness:
        harness = Harness(tmp_path_factory.mktemp("harness"), servers, die_with_parent=True, config_hook=config_hook)
        started.append(harness)
        return harness.up()

    yield start
    for harness in started:
        harness.down()
        assert harness.network is None or not harness.network.exists(), "network namespace leaked"
        for server in harness.servers.values():
            assert server.process is None


def local_gvrs(harness: Harness, name: str) -> dict:
    return discovery(harness, name, nopeer=True)


def discovery(harness: Harness, name: str, nopeer: bool) -> dict:
    accept = ACCEPT_V2_NOPEER if nopeer else ACCEPT_V2
    gvrs = {}
    for path in ("/api", "/apis"):
        resp = harness.request(name, path, headers={"Accept": accept})
        assert resp.status == 200, (name, path, resp.status, resp.body[:300])
        gvrs.update(parse_aggregated(resp.json()))
    return gvrs


def metrics(harness: Harness, name: str):
    resp = harness.request(name, "/metrics")
    assert resp.status == 200
    return parse_samples(resp.body.decode())


def wait_for(predicate, timeout: float, what: str, interval: float = 1.0):
    deadline = time.monotonic() + timeout
    last = None
    while time.monotonic() < deadline:
        last = predicate()
        if last:
            return last
        time.sleep(interval)
    pytest.fail(f"timed out after {timeout:.0f}s waiting for {what} (last: {last!r})")
