"""etcd plus several real kube-apiservers, configured by the real kubeadm.

Layout of a harness work directory::

    shared-pki/            cluster CAs and service-account keys (kubeadm init phase certs)
    nodes/<name>/
        kubeadm.yaml       InitConfiguration + ClusterConfiguration for that node
        pki/               shared CAs copied in, per-node leaf certificates from kubeadm
        etc/               bind-mounted as /etc/kubernetes while kubeadm runs (manifests/)
        kube-apiserver.log
    etcd-data/ etcd.log
    kubeconfig/super-admin.conf, client/  (credentials for tests)
    state.json             what is running, for `down` from another process

What differs from a kubeadm node, and why (nothing else is changed):
  * the binary path replaces the image's command name;
  * ``--bind-address=<node address>`` is added to kube-apiserver: all harness servers
    share one network namespace, where real nodes would each have their own;
  * etcd runs from the first node's kubeadm manifest with its data dir in the work dir.
"""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import shutil
import signal
import ssl
import subprocess
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import yaml

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._apiserver_http import (
    ApiServerClient,
    Credentials,
    Response,
)

from . import kubeadm
from .namespaces import Network, preexec
from .pins import HarnessError, etcd_bin, k8s_bin

SHARED_PKI_FILES = (
    "ca.crt",
    "ca.key",
    "front-proxy-ca.crt",
    "front-proxy-ca.key",
    "sa.key",
    "sa.pub",
    "etcd/ca.crt",
    "etcd/ca.key",
)
# A loaded CI machine (two cores, the static tiers beside) started a kube-apiserver in over two minutes: given up
# at 120 s, each exited on its APF bootstrap wait (which allows 5 minutes) and every test of the pair failed.
READY_TIMEOUT = 300.0
# What an up writes into its work directory; every up removes it first (a work directory is reused by
# make harness-up): certificates, kubeadm configs and manifests, etcd's data (leases of earlier servers).
GENERATED = ("shared-pki", "shared-pki.yaml", "etc-shared", "nodes", "etcd-data", "kubeconfig", "client")


@dataclass
class Server:
    name: str
    version: str
    host_number: int
    hostname: str = ""
    address: str = ""
    process: subprocess.Popen | None = field(default=None, repr=False)
    pid: int | None = None

    @property
    def url(self) -> str:
        return f"https://{self.address}:6443"


def base_config(server: Server, pki_dir: Path, work: Path) -> str:
    """The kubeadm config a node of this cluster is rendered from."""
    init = {
        "apiVersion": "kubeadm.k8s.io/v1beta4",
        "kind": "InitConfiguration",
        "localAPIEndpoint": {"advertiseAddress": server.address, "bindPort": 6443},
        # criSocket is given so kubeadm does not look for a container runtime.
        "nodeRegistration": {"name": server.name, "criSocket": "unix:///var/run/containerd/containerd.sock"},
    }
    cluster = {
        "apiVersion": "kubeadm.k8s.io/v1beta4",
        "kind": "ClusterConfiguration",
        "kubernetesVersion": f"v{server.version}",
        "clusterName": "skewsafe-harness",
        "certificatesDir": str(pki_dir),
        "etcd": {"local": {"dataDir": str(work / "etcd-data")}},
        "networking": {"serviceSubnet": "10.96.0.0/12", "dnsDomain": "cluster.local"},
    }
    return yaml.safe_dump(init, sort_keys=False) + "---\n" + yaml.safe_dump(cluster, sort_keys=False)


class Harness:
    def __init__(self, work: Path, servers: list[tuple[str, str]], die_with_parent: bool = True, config_hook=None):
        """``servers``: (name, version[, hostname]); ``config_hook(server, path)`` may edit each node's kubeadm.yaml.

        The host name defaults to the name; giving one lets a test reproduce duplicated or over-long host names.
        """
        if len({spec[0] for spec in servers}) != len(servers):
            raise HarnessError("server names must be unique")
        self.work = Path(work)
        self.servers = {}
        for i, spec in enumerate(servers):
            name, version = spec[0], spec[1]
            hostname = spec[2] if len(spec) > 2 else name
            self.servers[name] = Server(name, version.lstrip("v"), i + 1, hostname)
        self.die_with_parent = die_with_parent
        self.config_hook = config_hook
        self.network: Network | None = None
        self.etcd: subprocess.Popen | None = None
        self._client: ApiServerClient | None = None

    # ------------------------------------------------------------------ paths
    def node_dir(self, name: str) -> Path:
        return self.work / "nodes" / name

    @property
    def kubeconfig(self) -> Path:
        return self.work / "kubeconfig" / "super-admin.conf"

    @property
    def ca_file(self) -> Path:
        return self.work / "shared-pki" / "ca.crt"

    @property
    def first(self) -> Server:
        return next(iter(self.servers.values()))

    @property
    def log(self) -> Path:
        return self.work / "harness.log"

    # ------------------------------------------------------------------ lifecycle
    def up(self) -> Harness:
        started = time.monotonic()
        self.work.mkdir(parents=True, exist_ok=True)
        if (self.work / "state.json").exists():
            raise HarnessError(f"a harness is running in {self.work} (state.json); stop it first")
        # Every up starts from the configuration it was asked for: nothing of an earlier up in this work
        # directory (make harness-up reuses one) may carry its flags, addresses or etcd data into this one.
        for name in GENERATED:
            path = self.work / name
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            elif path.exists() or path.is_symlink():
                path.unlink()
        try:
            self.network = Network.allocate(len(self.servers))
            for server in self.servers.values():
                server.address = self.network.address(server.host_number)
            self._save_state()
            self._shared_pki()
            for server in self.servers.values():
                self.render(server.name)
            self._start_etcd()
            self._credentials()
            for server in self.servers.values():
                self._start_apiserver(server)
            self._save_state()
            with ThreadPoolExecutor(len(self.servers)) as pool:
                list(pool.map(self.wait_ready, self.servers))
        except BaseException:
            self.down()
            raise
        self.up_seconds = time.monotonic() - started
        return self

    def down(self) -> None:
        for server in self.servers.values():
            self._stop(server.process)
            server.process = None
        self._stop(self.etcd)
        self.etcd = None
        if self.network is not None:
            self.network.delete()
        state = self.work / "state.json"
        if state.exists():
            state.unlink()

    def __enter__(self) -> Harness:
        return self.up()

    def __exit__(self, *exc) -> None:
        self.down()

    # ------------------------------------------------------------------ kubeadm
    def _shared_pki(self) -> None:
        shared = self.work / "shared-pki"
        cfg = self.work / "shared-pki.yaml"
        first = self.first
        cfg.write_text(base_config(first, shared, self.work))
        for phase in ("ca", "front-proxy-ca", "etcd-ca", "sa"):
            kubeadm.run(
                first.version,
                ["init", "phase", "certs", phase, "--config", str(cfg)],
                self.work / "etc-shared",
                self.log,
            )

    def config_path(self, name: str) -> Path:
        return self.node_dir(name) / "kubeadm.yaml"

    def render(self, name: str, config_hook=None) -> Path:
        """(Re)write the node's kubeadm config and let that node's kubeadm render its manifests."""
        server = self.servers[name]
        node = self.node_dir(name)
        pki = node / "pki"
        (pki / "etcd").mkdir(parents=True, exist_ok=True)
        for rel in SHARED_PKI_FILES:
            shutil.copy2(self.work / "shared-pki" / rel, pki / rel)
        cfg = self.config_path(name)
        if not cfg.exists():
            cfg.write_text(base_config(server, pki, self.work))
        for hook in (self.config_hook, config_hook):
            if hook is not None:
                hook(server, cfg)
        etc = node / "etc"
        kubeadm.run(server.version, ["init", "phase", "certs", "all", "--config", str(cfg)], etc, self.log)
        kubeadm.run(
            server.version, ["init", "phase", "control-plane", "apiserver", "--config", str(cfg)], etc, self.log
        )
        if server is self.first:
            kubeadm.run(server.version, ["init", "phase", "etcd", "local", "--config", str(cfg)], etc, self.log)
        return etc / "manifests" / "kube-apiserver.yaml"

    def apiserver_command(self, name: str) -> list[str]:
        server = self.servers[name]
        command = kubeadm.manifest_command(self.node_dir(name) / "etc" / "manifests" / "kube-apiserver.yaml")
        command[0] = str(k8s_bin(server.version, "kube-apiserver"))
        if kubeadm.flag_value(command, "bind-address") is None:
            command.append(f"--bind-address={server.address}")
        return command

    def _credentials(self) -> None:
        first = self.first
        kubeadm.run(
            first.version,
            [
                "init",
                "phase",
                "kubeconfig",
                "super-admin",
                "--config",
                str(self.config_path(first.name)),
                "--kubeconfig-dir",
                str(self.kubeconfig.parent),
            ],
            self.work / "etc-shared",
            self.log,
        )
        user = yaml.safe_load(self.kubeconfig.read_text())["users"][0]["user"]
        client = self.work / "client"
        client.mkdir(exist_ok=True)
        (client / "super-admin.crt").write_bytes(base64.b64decode(user["client-certificate-data"]))
        key = client / "super-admin.key"
        key.write_bytes(base64.b64decode(user["client-key-data"]))
        key.chmod(0o600)

    def upload_kubeadm_config(self, name: str | None = None) -> str:
        """Let kubeadm create kube-system/kubeadm-config from a node's config; return its ClusterConfiguration."""
        server = self.servers[name] if name else self.first
        kubeadm.run(
            server.version,
            [
                "init",
                "phase",
                "upload-config",
                "kubeadm",
                "--config",
                str(self.config_path(server.name)),
                "--kubeconfig",
                str(self.kubeconfig),
            ],
            self.work / "etc-shared",
            self.log,
        )
        cm = self.request(server.name, "/api/v1/namespaces/kube-system/configmaps/kubeadm-config").json()
        return cm["data"]["ClusterConfiguration"]

    def bootstrap_cluster_admins(self) -> Path:
        """What kubeadm init does for its admin user, on the first node: admin.conf (a certificate of the group
        kubeadm:cluster-admins) and super-admin.conf in its /etc/kubernetes, then a phase that needs the API
        (upload-config kubeadm) with the default kubeconfig, so that kubeadm itself creates the ClusterRoleBinding
        kubeadm:cluster-admins with super-admin.conf (cmd/kubeadm/app/phases/kubeconfig EnsureAdminClusterRoleBinding).
        Returns the first node's admin.conf."""
        first = self.first
        etc = self.node_dir(first.name) / "etc"
        cfg = str(self.config_path(first.name))
        for kind in ("admin", "super-admin"):
            kubeadm.run(first.version, ["init", "phase", "kubeconfig", kind, "--config", cfg], etc, self.log)
        kubeadm.run(first.version, ["init", "phase", "upload-config", "kubeadm", "--config", cfg], etc, self.log)
        return etc / "admin.conf"

    def publish_mirror_pods(self) -> list[str]:
        """Publish each server's kube-apiserver static Pod as the kubelet of its node would: a mirror Pod named
        ``<pod>-<node>`` in kube-system, bound to the node (``spec.nodeName``), with kubeadm's manifest unchanged
        (its advertise-address annotation included). The harness runs no kubelet, and the MVP gate reads these
        Pods to learn which address each Node's server advertises. Returns the Pod names."""
        names = []
        for name in self.servers:
            manifest = self.node_dir(name) / "etc" / "manifests" / "kube-apiserver.yaml"
            pod = yaml.safe_load(manifest.read_text())
            meta = pod["metadata"]
            meta["name"] = f"{meta['name']}-{name}"
            meta["namespace"] = "kube-system"
            digest = hashlib.sha256(manifest.read_bytes()).hexdigest()[:32]
            # the kubelet's mirror-Pod annotations (pkg/kubelet/types): a mirror Pod, from a file
            meta.setdefault("annotations", {}).update(
                {
                    "kubernetes.io/config.mirror": digest,
                    "kubernetes.io/config.hash": digest,
                    "kubernetes.io/config.source": "file",
                }
            )
            pod["spec"]["nodeName"] = name
            resp = self.request(self.first.name, "/api/v1/namespaces/kube-system/pods", method="POST", body=pod)
            if resp.status not in (201, 409):
                raise HarnessError(f"mirror Pod {meta['name']}: {resp.status} {resp.text()[:300]}")
            names.append(meta["name"])
        return names

    # ------------------------------------------------------------------ processes
    def _spawn(self, command: list[str], hostname: str, log: Path, pre_exec=None) -> subprocess.Popen:
        enter = preexec(self.network.netns, hostname, self.die_with_parent)
        if pre_exec is not None:

            def enter_then(first=enter) -> None:
                first()
                pre_exec()

            enter = enter_then
        handle = log.open("ab")
        try:
            return subprocess.Popen(
                command,
                stdout=handle,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                preexec_fn=enter,
            )
        finally:
            handle.close()

    def _start_etcd(self) -> None:
        command = kubeadm.manifest_command(self.node_dir(self.first.name) / "etc" / "manifests" / "etcd.yaml")
        command[0] = str(etcd_bin(self.first.version))
        self.etcd = self._spawn(command, self.first.name, self.work / "etcd.log")
        self._wait(self._etcd_healthy, 30, "etcd to become healthy", self.etcd, self.work / "etcd.log")

    def _etcd_healthy(self) -> bool:
        pki = self.node_dir(self.first.name) / "pki" / "etcd"
        ctx = ssl.create_default_context(cafile=str(pki / "ca.crt"))
        ctx.load_cert_chain(str(pki / "healthcheck-client.crt"), str(pki / "healthcheck-client.key"))
        try:
            conn = http.client.HTTPSConnection(self.first.address, 2379, context=ctx, timeout=2)
            conn.request("GET", "/health")
            return conn.getresponse().status == 200
        except OSError:
            return False

    def _start_apiserver(self, server: Server, pre_exec=None) -> None:
        log = self.node_dir(server.name) / "kube-apiserver.log"
        server.process = self._spawn(self.apiserver_command(server.name), server.hostname, log, pre_exec)
        server.pid = server.process.pid

    def start_server(self, name: str, pre_exec=None, wait: bool = True) -> None:
        """Start a stopped server again from its manifest as it is (no re-render).

        ``pre_exec()`` runs in the child after it entered its namespaces, before kube-apiserver is
        executed (the benchmark puts the process into a CPU-limited cgroup there).
        """
        self._start_apiserver(self.servers[name], pre_exec)
        self._save_state()
        if wait:
            self.wait_ready(name)

    def _stop(self, process: subprocess.Popen | None, timeout: float = 15) -> None:
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()

    def stop_server(self, name: str, graceful: bool = True) -> None:
        server = self.servers[name]
        if graceful:
            self._stop(server.process)
        elif server.process is not None:
            server.process.kill()
            server.process.wait()
        server.process = None

    def restart(self, name: str, config_hook=None, render: bool = True, wait: bool = True) -> None:
        """Stop a server, render it again from its (possibly edited) kubeadm config, start it, wait ready.

        ``render=False`` keeps the manifest and certificates as they are (for hand-made certificates).
        """
        self.stop_server(name)
        if render:
            self.render(name, config_hook)
        self._start_apiserver(self.servers[name])
        self._save_state()
        if wait:
            self.wait_ready(name)

    def wait_ready(self, name: str) -> None:
        server = self.servers[name]
        log = self.node_dir(name) / "kube-apiserver.log"
        self._wait(lambda: self._ready(server), READY_TIMEOUT, f"{name} /readyz", server.process, log)

    def _ready(self, server: Server) -> bool:
        try:
            return self.request(server.name, "/readyz", timeout=2).status == 200
        except OSError:
            return False

    @staticmethod
    def _wait(predicate, timeout: float, what: str, process: subprocess.Popen | None, log: Path) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process is not None and process.poll() is not None:
                tail = log.read_text(errors="replace").splitlines()[-25:]
                raise HarnessError(
                    f"process exited (code {process.returncode}) while waiting for {what}; {log}:\n" + "\n".join(tail)
                )
            if predicate():
                return
            time.sleep(0.5)
        raise HarnessError(f"timed out after {timeout:.0f}s waiting for {what}; see {log}")

    # ------------------------------------------------------------------ HTTP
    def client(self) -> ApiServerClient:
        """The collection's own API server client, with the super-admin certificate."""
        if self._client is None:
            client = self.work / "client"
            credentials = Credentials(
                ca_file=str(self.ca_file),
                cert_file=str(client / "super-admin.crt"),
                key_file=str(client / "super-admin.key"),
            )
            self._client = ApiServerClient(credentials, timeout=10)
        return self._client

    def request(
        self, name: str, path: str, headers: dict | None = None, method: str = "GET", body=None, timeout: float = 10
    ) -> Response:
        """A request straight to one API server (never through a load balancer), TLS verified.

        Transport errors raise ConnectionError (an OSError), as a plain socket would.
        """
        server = self.servers[name]
        resp = self.client().request(method, server.url, path, headers=headers, body=body, timeout=timeout)
        if resp.status is None:
            raise ConnectionError(f"{name} {method} {path}: {resp.error}")
        return resp

    # ------------------------------------------------------------------ state
    def _save_state(self) -> None:
        state = {
            "netns": self.network.netns if self.network else None,
            "network_index": self.network.index if self.network else None,
            "etcd_pid": self.etcd.pid if self.etcd else None,
            "servers": {
                s.name: {
                    "version": s.version,
                    "address": s.address,
                    "url": s.url,
                    "pid": s.process.pid if s.process else None,
                }
                for s in self.servers.values()
            },
            "kubeconfig": str(self.kubeconfig),
            "ca_file": str(self.ca_file),
        }
        (self.work / "state.json").write_text(json.dumps(state, indent=2))


def down_from_state(work: Path) -> bool:
    """Stop what a harness started by another process (make harness-down); True if anything was found."""
    state_file = Path(work) / "state.json"
    if not state_file.exists():
        return False
    state = json.loads(state_file.read_text())
    pids = [s["pid"] for s in state["servers"].values() if s.get("pid")] + [state.get("etcd_pid")]
    for pid in filter(None, pids):
        try:
            os.killpg(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
    deadline = time.monotonic() + 15
    for pid in filter(None, pids):
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.2)
        if _alive(pid):
            os.killpg(pid, signal.SIGKILL)
    # SIGKILL is asynchronous: return only once every process is gone (the next `up` reuses addresses)
    deadline = time.monotonic() + 30
    for pid in filter(None, pids):
        while time.monotonic() < deadline and _alive(pid):
            time.sleep(0.2)
        if _alive(pid):
            raise RuntimeError(f"harness process {pid} still runs 30 s after SIGKILL")
    if state.get("network_index") is not None:
        Network(state["network_index"]).delete()
    state_file.unlink()
    return True


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie child of this process counts as gone
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
