"""End-to-end: the collection's playbooks against a real kubeadm HA cluster in containers (lab/)."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tests" / "harness"))

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _manifest  # noqa: E402
from skewsafe_harness.pins import cache_dir, etcd_bin, k8s_bin, new_version, old_version  # noqa: E402

LAB_RUN = cache_dir() / "lab" / "run"
OLD, NEW = old_version(), new_version()
CONTROL_PLANES = ["sslab-cp1", "sslab-cp2", "sslab-cp3"]
WORKERS = ["sslab-w1", "sslab-w2"]
RECAP = re.compile(r"^(\S+)\s*:\s*ok=(\d+)\s+changed=(\d+)\s+unreachable=(\d+)\s+failed=(\d+)", re.M)


def gate_proved(output: str, node: str) -> tuple[str, set[str], int, int] | None:
    """What the MVP gate printed after `node`'s control-plane components (control_plane_upgrade's "Gate | say what
    was proved" task): mode, the old servers it probed, probes proxied (200 through a peer, 404 locally), probes."""
    found = re.search(
        rf"\(([a-z]+) mode\) after {re.escape(node)}(?:; old servers proxying: ([^(]*) \((\d+) of (\d+) probes)?",
        output,
    )
    if not found:
        return None
    servers = {s.strip() for s in (found[2] or "").split(",") if s.strip()}
    return found[1], servers, int(found[3] or 0), int(found[4] or 0)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def restored_keys(snapshot: str, data_dir: Path, prefix: str = "/registry/") -> list[str]:
    """Restore an etcd snapshot with the real etcdutl (it checks the SHA-256 trailer), start etcd on it on
    loopback and list the keys under `prefix`."""
    subprocess.run(
        [str(etcd_bin(NEW, "etcdutl")), "snapshot", "restore", snapshot, "--data-dir", str(data_dir)],
        capture_output=True,
        text=True,
        check=True,
    )
    client, peer = _free_port(), _free_port()
    etcd = subprocess.Popen(
        [
            str(etcd_bin(NEW)),
            f"--data-dir={data_dir}",
            f"--listen-client-urls=http://127.0.0.1:{client}",
            f"--advertise-client-urls=http://127.0.0.1:{client}",
            f"--listen-peer-urls=http://127.0.0.1:{peer}",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while True:
            got = subprocess.run(
                [
                    str(etcd_bin(NEW, "etcdctl")),
                    f"--endpoints=127.0.0.1:{client}",
                    "get",
                    prefix,
                    "--prefix",
                    "--keys-only",
                ],
                capture_output=True,
                text=True,
                check=False,
            )
            if got.returncode == 0 or time.monotonic() > deadline:
                break
            time.sleep(0.5)
        assert got.returncode == 0, got.stderr
        return [k for k in got.stdout.splitlines() if k]
    finally:
        etcd.terminate()
        etcd.wait(30)


class PlaybookRun:
    def __init__(self, returncode: int, output: str, killed: bool, seconds: float, log: Path):
        self.returncode, self.output, self.killed, self.seconds, self.log = returncode, output, killed, seconds, log

    def recap(self) -> dict[str, dict[str, int]]:
        return {
            m[1]: {"ok": int(m[2]), "changed": int(m[3]), "unreachable": int(m[4]), "failed": int(m[5])}
            for m in RECAP.finditer(self.output)
        }

    def tail(self, lines: int = 80) -> str:
        return f"(full log: {self.log})\n" + "\n".join(self.output.splitlines()[-lines:])


class Lab:
    """The running lab: kubectl through the LB, commands inside node containers, playbook runs."""

    def __init__(self):
        self.inventory = LAB_RUN / "inventory.ini"
        self.kubeconfig = LAB_RUN / "admin.conf"
        self.artifacts = LAB_RUN / "artifacts"
        self.logs = LAB_RUN / "e2e-logs"
        self.logs.mkdir(parents=True, exist_ok=True)
        self.runs = 0

    def kubectl(self, *args, check=True):
        result = subprocess.run(
            [str(k8s_bin(NEW, "kubectl")), "--kubeconfig", str(self.kubeconfig), *args],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        if check and result.returncode != 0:
            pytest.fail(f"kubectl {' '.join(args)}: {result.stderr}")
        return result

    def json(self, *args):
        return json.loads(self.kubectl(*args, "-o", "json").stdout)

    def node_exec(self, node: str, *command: str, check=True) -> str:
        result = subprocess.run(
            ["docker", "-H", f"unix://{LAB_RUN / 'docker.sock'}", "exec", node, *command],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        if check and result.returncode != 0:
            pytest.fail(f"{node}: {' '.join(command)}: {result.stderr}")
        return result.stdout

    def manifest_digest(self, node: str) -> str:
        return hashlib.sha256(
            self.node_exec(node, "cat", "/etc/kubernetes/manifests/kube-apiserver.yaml").encode()
        ).hexdigest()

    def kubelet_version(self, node: str) -> str:
        return self.node_exec(node, "kubelet", "--version").split()[-1]

    def apiserver_image_tag(self, node: str) -> str:
        manifest = self.node_exec(node, "cat", "/etc/kubernetes/manifests/kube-apiserver.yaml")
        return _manifest.summary(_manifest.load(manifest))["version"]

    def apiserver_runs_with(self, node: str, flag: str, present: bool = True):
        """A predicate for wait_for: the kube-apiserver Pod of `node` has (or lacks) `flag`, has started, is Ready."""

        def check():
            pod = self.kubectl("-n", "kube-system", "get", "pod", f"kube-apiserver-{node}", "-o", "json", check=False)
            if pod.returncode != 0:
                return False
            pod = json.loads(pod.stdout)
            command = _manifest.container(pod)["command"]
            ready = [c["status"] for c in pod.get("status", {}).get("conditions", []) if c["type"] == "Ready"]
            statuses = pod.get("status", {}).get("containerStatuses", [])
            return (flag in command) == present and ready == ["True"] and bool(statuses and statuses[0].get("started"))

        return check

    def nodes(self) -> dict[str, dict]:
        return {n["metadata"]["name"]: n for n in self.json("get", "nodes")["items"]}

    def snapshot_state(self) -> dict[str, tuple]:
        """What a run that must change nothing is compared with: per node manifest, kubelet, cordon."""
        nodes = self.nodes()
        state = {}
        for name in CONTROL_PLANES + WORKERS:
            digest = self.manifest_digest(name) if name in CONTROL_PLANES else None
            state[name] = (digest, self.kubelet_version(name), bool(nodes[name]["spec"].get("unschedulable")))
        return state

    def playbook(
        self, name: str, *extra: str, kill_when=None, kill_state=None, poll: float = 1.0, timeout: float = 3600
    ) -> PlaybookRun:
        """ansible-playbook skewsafe.kubeadm.<name>, killed with SIGKILL (what an AWX cancel does) when
        kill_when(line) is true for an output line, or when kill_state() (polled every `poll` s) is true."""
        self.runs += 1
        # a collection playbook by name, or a playbook file of the test's own (a path)
        log = self.logs / f"{self.runs:02d}-{Path(name).stem}.log"
        cmd = [
            "ansible-playbook",
            "-i",
            str(self.inventory),
            name if name.endswith(".yml") else f"skewsafe.kubeadm.{name}",
            "-e",
            f"skewsafe_artifacts_dir={self.artifacts}",
            *extra,
        ]
        env = dict(os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_FORCE_COLOR="0", PYTHONUNBUFFERED="1")
        started, lines, killed, stop = time.monotonic(), [], [False], threading.Event()
        with (
            open(log, "w") as out,
            subprocess.Popen(
                cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env, start_new_session=True
            ) as proc,
        ):

            def watch_state():
                while not stop.wait(poll):
                    if kill_state():
                        killed[0] = True
                        os.killpg(proc.pid, signal.SIGKILL)
                        # a child that left the process group (an ssh master) must not keep the pipe open
                        if not stop.wait(10):
                            proc.stdout.close()
                        return

            watcher = threading.Thread(target=watch_state, daemon=True) if kill_state is not None else None
            if watcher:
                watcher.start()
            try:
                for line in proc.stdout:
                    lines.append(line)
                    out.write(line)
                    out.flush()
                    if kill_when is not None and kill_when(line):
                        os.killpg(proc.pid, signal.SIGKILL)
                        killed[0] = True
                        break
                    if time.monotonic() - started > timeout:
                        os.killpg(proc.pid, signal.SIGKILL)
                        pytest.fail(f"{name} did not finish in {timeout}s; log {log}")
            except (OSError, ValueError):
                if not killed[0]:
                    raise
            proc.wait()
            stop.set()
            if watcher:
                watcher.join()
        return PlaybookRun(proc.returncode, "".join(lines), killed[0], time.monotonic() - started, log)

    def addon_images(self) -> dict[str, str]:
        """The images kubeadm's add-ons run: CoreDNS Deployment and kube-proxy DaemonSet."""
        coredns = self.json("-n", "kube-system", "get", "deployment", "coredns")
        proxy = self.json("-n", "kube-system", "get", "daemonset", "kube-proxy")
        return {
            "coredns": coredns["spec"]["template"]["spec"]["containers"][0]["image"],
            "kube-proxy": proxy["spec"]["template"]["spec"]["containers"][0]["image"],
        }

    def assert_addons_at(self, version: str, tmp_path: Path) -> None:
        """CoreDNS and kube-proxy run what kubeadm of `version` deploys (its own image list), every Pod of
        both is Ready on that image, and a Pod resolves a cluster name through CoreDNS."""
        wanted = subprocess.run(
            [str(k8s_bin(version, "kubeadm")), "config", "images", "list", f"--kubernetes-version=v{version}"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()
        images = self.addon_images()
        for addon, image in images.items():
            assert image in wanted, f"{addon} runs {image}; kubeadm v{version} deploys {wanted}"
        self.kubectl("-n", "kube-system", "rollout", "status", "deployment/coredns", "--timeout=300s")
        self.kubectl("-n", "kube-system", "rollout", "status", "daemonset/kube-proxy", "--timeout=300s")
        # any image every node has: kube-proxy's carries Debian's libc (getent); no registry in the lab
        name = f"dns-check-{int(time.time())}"
        pod = {
            "apiVersion": "v1",
            "kind": "Pod",
            "metadata": {"name": name, "namespace": "default"},
            "spec": {
                "restartPolicy": "Never",
                "containers": [
                    {
                        "name": "getent",
                        "image": images["kube-proxy"],
                        "imagePullPolicy": "Never",
                        "command": ["getent", "hosts", "kubernetes.default.svc.cluster.local"],
                    }
                ],
            },
        }
        manifest = tmp_path / f"{name}.json"
        manifest.write_text(json.dumps(pod))
        self.kubectl("apply", "-f", str(manifest))
        self.wait_for(
            lambda: self.json("get", "pod", name)["status"].get("phase") in ("Succeeded", "Failed"),
            180,
            f"pod {name} to finish",
        )
        phase = self.json("get", "pod", name)["status"]["phase"]
        logs = self.kubectl("logs", name).stdout
        service_ip = self.json("get", "service", "kubernetes")["spec"]["clusterIP"]
        assert phase == "Succeeded" and service_ip in logs, f"DNS from a Pod: {phase}, {logs!r}"
        self.kubectl("delete", "pod", name, "--wait=false")

    def wait_for(self, predicate, timeout: float, what: str, interval: float = 3):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if predicate():
                return
            time.sleep(interval)
        pytest.fail(f"timed out after {timeout}s waiting for {what}")


class ReadyWatcher:
    """Samples the ready replicas of a Deployment every 2 s from start() to stop()."""

    def __init__(self, lab, deployment="steady"):
        self.lab, self.deployment, self.samples, self.stop_event = lab, deployment, [], threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)

    def start(self) -> ReadyWatcher:
        self.thread.start()
        return self

    def _run(self):
        while not self.stop_event.is_set():
            result = self.lab.kubectl(
                "get", "deployment", self.deployment, "-o", "jsonpath={.status.readyReplicas}", check=False
            )
            # While an API server behind the LB restarts a request can fail; that says nothing about the pods.
            self.samples.append(int(result.stdout or 0) if result.returncode == 0 else None)
            self.stop_event.wait(2)

    def stop(self) -> list[int]:
        self.stop_event.set()
        self.thread.join()
        return [s for s in self.samples if s is not None]


def _require_tools():
    missing = [t for t in ("ansible-playbook", "ansible-runner", "docker", "debootstrap") if shutil.which(t) is None]
    if missing:
        pytest.fail(f"end-to-end tests need {', '.join(missing)} on PATH (run them through 'make test')")
    for version in (OLD, NEW):
        k8s_bin(version, "kubectl")
    etcd_bin(NEW, "etcdutl")


@pytest.fixture(scope="session")
def lab():
    """A fresh lab at K8S_VERSION, else the older version (shape: LAB_TOPOLOGY); removed afterwards unless
    SKEWSAFE_KEEP_LAB=1.
    SKEWSAFE_LAB_BOOTED=1: hack/test.sh has just booted it (lab/down.sh, lab/up.sh) beside the static tiers."""
    _require_tools()
    shutil.rmtree(LAB_RUN / "artifacts", ignore_errors=True)
    booted = os.environ.get("SKEWSAFE_LAB_BOOTED") == "1"
    for script in () if booted else ("down.sh", "up.sh"):
        result = subprocess.run([str(REPO / "lab" / script)], capture_output=True, text=True, check=False)
        if result.returncode != 0:
            pytest.fail(f"lab/{script} failed:\n{result.stdout[-3000:]}\n{result.stderr[-3000:]}")
    lab = Lab()
    # every test starts from the version the lab was asked for (lab/up.sh: K8S_VERSION, else the older pin): a lab left
    # over at another one would make them all lie
    start = os.environ.get("K8S_VERSION") or OLD
    kubelets = {name: node["status"]["nodeInfo"]["kubeletVersion"] for name, node in lab.nodes().items()}
    if any(version != f"v{start}" for version in kubelets.values()):
        pytest.fail(f"lab/up.sh left a lab that is not at {start}: {kubelets}")
    yield lab
    if os.environ.get("SKEWSAFE_KEEP_LAB") != "1":
        subprocess.run([str(REPO / "lab" / "down.sh")], capture_output=True, check=False)


class RunnerJob:
    """One ansible-runner job (the engine AWX uses) and what it left in its private data dir."""

    def __init__(self, runner, data_dir: Path):
        self.runner, self.data_dir = runner, data_dir
        self.status = runner.status
        self.events = list(runner.events)

    def messages(self) -> list[str]:
        """Every debug message of the run (item results included), dicts as JSON."""
        out = []
        for event in self.events:
            res = event.get("event_data", {}).get("res") or {}
            msg = res.get("msg") if isinstance(res, dict) else None
            if msg is not None:
                out.append(msg if isinstance(msg, str) else json.dumps(msg))
        return out

    def event_files(self) -> list[Path]:
        return list(self.data_dir.glob("artifacts/*/job_events/*.json"))

    def stdout_tail(self, lines: int = 80) -> str:
        return "\n".join(self.runner.stdout.read().splitlines()[-lines:])


@pytest.fixture
def runner_job(lab, tmp_path):
    """Run a wrapper playbook (as an AWX project holds it: docs/awx.md) through ansible-runner."""
    import ansible_runner

    def run(playbook: str, extravars: dict | None = None, cmdline: str = "", envvars: dict | None = None) -> RunnerJob:
        data_dir = tmp_path / f"runner-{playbook.removesuffix('.yml')}"
        (data_dir / "project").mkdir(parents=True)
        (data_dir / "inventory").mkdir()
        shutil.copy(lab.inventory, data_dir / "inventory" / "hosts")
        name = playbook.removesuffix(".yml")
        (data_dir / "project" / playbook).write_text(
            f"---\n- name: {name} (AWX project wrapper)\n  ansible.builtin.import_playbook: skewsafe.kubeadm.{name}\n"
        )
        extravars = dict(extravars or {}, skewsafe_artifacts_dir=str(lab.artifacts))
        runner = ansible_runner.run(
            private_data_dir=str(data_dir),
            playbook=playbook,
            extravars=extravars,
            cmdline=cmdline or None,
            envvars=envvars,
            quiet=True,
            timeout=1800,
        )
        return RunnerJob(runner, data_dir)

    return run
