"""Linux namespaces for the harness: one private network namespace, one UTS namespace per process.

kubeadm refuses loopback advertise addresses (ChooseAPIServerBindAddress replaces
them with a host interface address), so the harness gives each API server its own
address in a network namespace it creates itself, reachable from the host through
one veth pair. Each process also gets its own UTS namespace and host name, because
identity-lease names derive from the host name.
"""

from __future__ import annotations

import ctypes
import fcntl
import os
import signal
import subprocess
from pathlib import Path

from .pins import HarnessError

CLONE_NEWUTS = 0x04000000
CLONE_NEWNET = 0x40000000
PR_SET_PDEATHSIG = 1
NETNS_DIR = Path("/run/netns")
OWNERS_DIR = Path("/run/skewsafe-harness")  # <netns>.owner: pid of the harness that made it
NETNS_PREFIX = "skewsafe-h"
SUBNET_PREFIX = "10.77"

_libc = ctypes.CDLL("libc.so.6", use_errno=True)


def _check(rc: int, what: str) -> None:
    if rc != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def preexec(netns: str | None, hostname: str | None, die_with_parent: bool):
    """A Popen preexec_fn entering the harness network namespace and a new UTS namespace."""

    def enter() -> None:
        if die_with_parent:
            _check(_libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0), "prctl(PDEATHSIG)")
        if netns:
            fd = os.open(NETNS_DIR / netns, os.O_RDONLY)
            try:
                _check(_libc.setns(fd, CLONE_NEWNET), f"setns({netns})")
            finally:
                os.close(fd)
        if hostname:
            _check(_libc.unshare(CLONE_NEWUTS), "unshare(UTS)")
            name = hostname.encode()
            _check(_libc.sethostname(name, len(name)), "sethostname")

    return enter


def _ip(*args: str) -> None:
    result = subprocess.run(["ip", *args], capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise HarnessError(f"'ip {' '.join(args)}' failed: {result.stderr.strip()}")


class Network:
    """A network namespace with addresses SUBNET_PREFIX.<index>.<1..n>, host side .254."""

    def __init__(self, index: int):
        self.index = index
        self.netns = f"{NETNS_PREFIX}{index}"
        self.host_if = f"skh{index}"
        self.gateway = f"{SUBNET_PREFIX}.{index}.254"

    def address(self, host_number: int) -> str:
        return f"{SUBNET_PREFIX}.{self.index}.{host_number}"

    @classmethod
    def allocate(cls, hosts: int) -> Network:
        """Pick a free index and create the namespace, under a lock shared by concurrent harnesses."""
        OWNERS_DIR.mkdir(parents=True, exist_ok=True)
        with open(OWNERS_DIR / "allocate.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            used = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True, check=True).stdout
            for index in range(1, 250):
                net = cls(index)
                if net.exists() and net.abandoned():
                    net.delete()  # left behind by a harness that was killed
                    used = subprocess.run(["ip", "-o", "addr"], capture_output=True, text=True, check=True).stdout
                if net.exists() or f" {SUBNET_PREFIX}.{index}." in used:
                    continue
                try:
                    _ip("link", "show", net.host_if)
                except HarnessError:
                    net.create(hosts)
                    return net
        raise HarnessError(f"no free harness network {SUBNET_PREFIX}.1-249.0/24")

    @property
    def owner_file(self) -> Path:
        return OWNERS_DIR / f"{self.netns}.owner"

    def abandoned(self) -> bool:
        """Nothing runs in it and the harness process that created it is gone."""
        if self.pids():
            return False
        try:
            owner = int(self.owner_file.read_text())
        except (OSError, ValueError):
            return True
        try:
            os.kill(owner, 0)
        except ProcessLookupError:
            return True
        except PermissionError:
            return False
        return False

    def create(self, hosts: int) -> None:
        _ip("netns", "add", self.netns)
        try:
            _ip("link", "add", self.host_if, "type", "veth", "peer", "name", "eth0", "netns", self.netns)
            _ip("addr", "add", f"{self.gateway}/24", "dev", self.host_if)
            _ip("link", "set", self.host_if, "up")
            _ip("-n", self.netns, "link", "set", "lo", "up")
            for host in range(1, hosts + 1):
                _ip("-n", self.netns, "addr", "add", f"{self.address(host)}/24", "dev", "eth0")
            _ip("-n", self.netns, "link", "set", "eth0", "up")
            self.owner_file.write_text(str(os.getpid()))
        except HarnessError:
            self.delete()
            raise

    def delete(self) -> None:
        # Deleting the namespace destroys its veth end, and with it the host end.
        subprocess.run(["ip", "netns", "del", self.netns], capture_output=True, check=False)
        subprocess.run(["ip", "link", "del", self.host_if], capture_output=True, check=False)
        self.owner_file.unlink(missing_ok=True)

    def pids(self) -> list[str]:
        result = subprocess.run(["ip", "netns", "pids", self.netns], capture_output=True, text=True, check=False)
        return result.stdout.split()

    def exists(self) -> bool:
        return (NETNS_DIR / self.netns).exists()
