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

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _version
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._discovery import (
    ACCEPT_V2,
    ACCEPT_V2_NOPEER,
    parse_aggregated,
)
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._metrics import parse_samples
from skewsafe_harness import Harness
from skewsafe_harness.hooks import pinned_args_hook
from skewsafe_harness.pins import HarnessError, harness_pairs, harness_trio, new_version, old_version


class Pair(tuple):
    """(old, new): one harness pair of hack/versions.env (K8S_HARNESS_VERSIONS)."""

    old = property(lambda self: self[0])
    new = property(lambda self: self[1])

    @property
    def alpha(self) -> bool:
        """MVP is off by default on the old version (1.35: alpha), so it needs the gate with the flag."""
        return not _version.mvp_default_on(self.old)

    def servers(self, olds: int = 2, news: int = 1) -> list[tuple[str, str]]:
        versions = [self.old] * olds + [self.new] * news
        return [(f"cp-{i}", version) for i, version in enumerate(versions, 1)]


# Every adjacent pair of pinned harness versions; the lab's pair (K8S_OLD_VERSION, K8S_NEW_VERSION) among them.
PAIRS = [Pair(p) for p in harness_pairs()]
LAB_PAIR = Pair((old_version(), new_version()))
ALPHA_PAIRS = [p for p in PAIRS if p.alpha]


def pair_id(pair) -> str:
    return f"{pair[0]}-{pair[1]}"


def pytest_collection_modifyitems(config, items):
    """SKEWSAFE_HARNESS_PAIR=<old>-<new> (hack/test.sh runs one pytest per pair side by side): keep only that
    pair's tests, and the tests without a pair in the first pair's run (the lab pair's has more tests of its own, and
    the pairs run side by side, so the tier ends sooner). SKEWSAFE_HARNESS_TRIO=1:
    keep only the tests of the harness trio (three versions at once, fixture ``trio``); a pair's run leaves them out.
    Deselected, never skipped."""
    selected = os.environ.get("SKEWSAFE_HARNESS_PAIR")
    trio_only = os.environ.get("SKEWSAFE_HARNESS_TRIO") == "1"
    if selected and trio_only:
        raise pytest.UsageError("set SKEWSAFE_HARNESS_PAIR or SKEWSAFE_HARNESS_TRIO=1, not both")
    if selected or trio_only:
        _select_pair(config, items, selected, trio_only)
    _select_scope(config, items)


def _select_pair(config, items, selected, trio_only):
    if selected and selected not in {pair_id(p) for p in PAIRS}:
        raise pytest.UsageError(f"SKEWSAFE_HARNESS_PAIR={selected} is none of {[pair_id(p) for p in PAIRS]}")
    keep, drop = [], []
    for item in items:
        if "trio" in item.fixturenames:
            mine = trio_only
        elif trio_only:
            mine = False
        else:
            callspec = getattr(item, "callspec", None)
            pair = callspec.params.get("pair") if callspec else None
            mine = pair_id(pair) == selected if pair else selected == pair_id(PAIRS[0])
        (keep if mine else drop).append(item)
    items[:] = keep
    config.hook.pytest_deselected(items=drop)


def _in_make_test(item) -> bool:
    """``make test`` (CI budget, 2 cores): every pinned pair runs the version-sensitive proofs (marker every_pair);
    the rest (the diagnosis of each fault, whose causes read the same on every version) runs with the lab's pair
    only; the trio and tests marked lab_tier (benchmarks, the harness's own CLI) run in ``make test-lab`` alone."""
    if item.get_closest_marker("lab_tier") or "trio" in item.fixturenames:
        return False
    callspec = getattr(item, "callspec", None)
    pair = callspec.params.get("pair") if callspec else None
    return pair is None or item.get_closest_marker("every_pair") is not None or Pair(pair) == LAB_PAIR


def _select_scope(config, items):
    """SKEWSAFE_HARNESS_SCOPE=make-test keeps what ``make test`` runs, =test-lab exactly the rest (tier
    harness-extra); unset, everything. Deselected, never skipped."""
    scope = os.environ.get("SKEWSAFE_HARNESS_SCOPE", "")
    if scope not in ("", "make-test", "test-lab"):
        raise pytest.UsageError(f"SKEWSAFE_HARNESS_SCOPE={scope} is none of make-test, test-lab")
    if not scope:
        return
    keep, drop = [], []
    for item in items:
        (keep if _in_make_test(item) == (scope == "make-test") else drop).append(item)
    items[:] = keep
    config.hook.pytest_deselected(items=drop)


@pytest.fixture(scope="module", params=PAIRS, ids=pair_id)
def pair(request) -> Pair:
    """The harness pair a module's tests run with; a test may narrow it with
    ``@pytest.mark.parametrize("pair", [...], indirect=True)`` (only_pairs)."""
    if request.param is None:
        pytest.fail(f"no pinned harness pair fits this test: {request.node.callspec.id}")
    return Pair(request.param)


def only_pairs(pairs, needs: str):
    """Run a test for these pairs only; with none pinned it fails, saying what it ``needs``, never skips."""
    if not pairs:
        return pytest.mark.parametrize("pair", [None], indirect=True, ids=[f"no pair with {needs}"])
    return pytest.mark.parametrize("pair", pairs, indirect=True, ids=pair_id)


def _require_tools():
    missing = [tool for tool in ("ansible-playbook", "ip", "unshare", "iptables") if shutil.which(tool) is None]
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
        self,
        module: str,
        args: dict,
        check: bool = False,
        diff: bool = False,
        env: dict | None = None,
        netns: str | None = None,
    ) -> dict:
        """``netns``: run inside that network namespace (where the harness's API servers are: "on a node")."""
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
        cmd = ["ip", "netns", "exec", netns] if netns else []
        cmd += [
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
    """Turn MVP on in a node's kubeadm config with the cluster_config module, as mvp_enable does: --peer-ca-file,
    and the gate where MVP is not on by default (1.35, alpha: the mvp_feature_gates filter's rule)."""

    def hook(server, path: Path) -> None:
        pki = yaml.safe_load(path.read_text().split("---\n")[1])["certificatesDir"]
        params = {"source": "file", "path": str(path), "api_server_extra_args": {"peer-ca-file": f"{pki}/ca.crt"}}
        gates = _version.mvp_feature_gates(server.version)
        if gates:
            params["feature_gates"] = gates
        result = ansible_module("skewsafe.kubeadm.cluster_config", params)
        assert not result.get("failed"), result

    return hook


def _start_harnesses(tmp_path_factory):
    """A starter of harnesses that are always torn down, and the teardown that checks nothing leaked."""
    started = []

    def start(servers, config_hook=None, pinned_args=True) -> Harness:
        """``pinned_args``: give each server its minor's pinned kube-apiserver args first (pins.apiserver_args; the
        beta API only the newer version of a pair serves); False starts them with kubeadm's defaults only."""
        hooks = [h for h in (pinned_args_hook if pinned_args else None, config_hook) if h is not None]

        def hook(server, path):
            for each in hooks:
                each(server, path)

        harness = Harness(tmp_path_factory.mktemp("harness"), servers, die_with_parent=True, config_hook=hook)
        started.append(harness)
        return harness.up()

    def stop_all() -> None:
        for harness in started:
            harness.down()
            assert harness.network is None or not harness.network.exists(), "network namespace leaked"
            for server in harness.servers.values():
                assert server.process is None

    return start, stop_all


@pytest.fixture(scope="module")
def harness_factory(tmp_path_factory, pair):
    """Start harnesses that are always torn down (with their pair: never two pairs' harnesses at once), and
    check nothing leaked."""
    start, stop_all = _start_harnesses(tmp_path_factory)
    yield start
    stop_all()


@pytest.fixture(scope="module")
def trio() -> tuple[str, str, str]:
    """The harness trio (pins.harness_trio): an older patch of the lab's old minor, the old version, the new one.
    Its tests run only in tier harness-extra (SKEWSAFE_HARNESS_TRIO=1), which builds the older patch first."""
    try:
        return harness_trio()
    except HarnessError as exc:
        pytest.fail(str(exc))


@pytest.fixture(scope="module")
def trio_harness_factory(tmp_path_factory, trio):
    """harness_factory for the trio's tests."""
    start, stop_all = _start_harnesses(tmp_path_factory)
    yield start
    stop_all()


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
