# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection.
"""A short-lived cluster-admin client certificate minted by kubeadm (``kubeadm kubeconfig user``), kept in a
private directory on the controller: the helpers of the admin_credential action.

kubeadm signs the certificate with the cluster CA on the node (``<certificatesDir>/ca.key``) and prints a
kubeconfig to stdout; nothing is written on the node and nothing is recorded in the cluster. Its server
address comes from the ClusterConfiguration it reads (``controlPlaneEndpoint``, else the local advertise
address); the config built here gives the server of the node's admin.conf, so the minted kubeconfig reaches
the cluster where admin.conf does. Without ``--config`` kubeadm would default ``kubernetesVersion`` to
``stable-1`` and look it up on the internet (cmd/kubeadm/app/cmd/kubeconfig.go, LoadOrDefaultInitConfiguration).

On the controller the certificate and key are files of their own (0600, in a 0700 directory) that the kubeconfig
names: Python's ssl module loads a client certificate only from a file (SSLContext.load_cert_chain), and the
kubernetes client writes inline ``client-*-data`` to temporary files of its own in every process that loads
such a kubeconfig (kube_config.FileOrData.as_file, removed at exit, not after a kill).
"""

from __future__ import annotations

import base64
import datetime
import glob
import os
import re
import subprocess
import sys
from urllib.parse import urlsplit

import yaml

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._errors import PluginError

# kubeadm init binds this group to cluster-admin (ClusterRoleBinding kubeadm:cluster-admins, kubeadm >= 1.29:
# cmd/kubeadm/app/phases/kubeconfig EnsureAdminClusterRoleBinding); admin.conf's certificate carries it too.
CLUSTER_ADMINS_GROUP = "kubeadm:cluster-admins"
DEFAULT_CLIENT_NAME = "skewsafe.kubeadm"
DEFAULT_CERTIFICATES_DIR = "/etc/kubernetes/pki"
_DURATION = re.compile(r"^(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$")


class CredentialError(PluginError, ValueError):
    pass


def parse_duration(text):
    """Seconds of a duration such as ``4h``, ``90m``, ``1h30m``, ``45s`` (Go's units h, m, s); > 0 or CredentialError."""
    match = _DURATION.match(str(text).strip()) if text is not None else None
    if not match or not any(match.groups()):
        raise CredentialError(f"{text!r} is not a duration such as 4h, 90m or 1h30m")
    hours, minutes, seconds = (int(g or 0) for g in match.groups())
    total = hours * 3600 + minutes * 60 + seconds
    if total <= 0:
        raise CredentialError(f"the duration {text!r} must be longer than 0s")
    return total


def current_cluster(kubeconfig):
    """``(cluster name, server URL)`` of a kubeconfig's current context (its first cluster without one)."""
    if not isinstance(kubeconfig, dict):
        raise CredentialError("not a kubeconfig")
    clusters = {c.get("name"): (c.get("cluster") or {}) for c in kubeconfig.get("clusters") or [] if c}
    contexts = {c.get("name"): (c.get("context") or {}) for c in kubeconfig.get("contexts") or [] if c}
    name = (contexts.get(kubeconfig.get("current-context")) or {}).get("cluster")
    if name not in clusters:
        name = next(iter(clusters), None)
    server = (clusters.get(name) or {}).get("server")
    if not name or not server:
        raise CredentialError("the kubeconfig names no cluster with a server")
    return name, server


def control_plane_endpoint(server):
    """``host:port`` of an ``https://`` server URL (``[v6]:port`` for IPv6), as kubeadm's controlPlaneEndpoint."""
    parts = urlsplit(str(server))
    if parts.scheme != "https" or not parts.hostname:
        raise CredentialError(f"the server {server!r} is not an https:// URL")
    host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
    return f"{host}:{parts.port or 443}"


def certificates_dir(flags):
    """kubeadm's certificatesDir from kube-apiserver's flags: where ``--client-ca-file`` (kubeadm: ca.crt) is."""
    client_ca = (flags or {}).get("client-ca-file")
    return os.path.dirname(client_ca) if client_ca else DEFAULT_CERTIFICATES_DIR


def user_config(kubernetes_version, endpoint, cluster_name, certs_dir):
    """The ClusterConfiguration ``kubeadm kubeconfig user --config`` reads (v1beta4, kubeadm 1.31 and later)."""
    return yaml.safe_dump(
        {
            "apiVersion": "kubeadm.k8s.io/v1beta4",
            "kind": "ClusterConfiguration",
            "kubernetesVersion": kubernetes_version,
            "controlPlaneEndpoint": endpoint,
            "clusterName": cluster_name,
            "certificatesDir": certs_dir,
        },
        sort_keys=False,
    )


def kubeadm_args(kubeadm, client_name, groups, validity_seconds):
    """argv of ``kubeadm kubeconfig user``, the config read from stdin (nothing written on the node)."""
    argv = [kubeadm, "kubeconfig", "user", f"--client-name={client_name}"]
    argv += [f"--org={group}" for group in groups]
    return [*argv, f"--validity-period={int(validity_seconds)}s", "--config=/dev/stdin"]


def split_kubeconfig(text, cert_path, key_path):
    """Move the client certificate and key of kubeadm's kubeconfig out into files.

    Returns ``(kubeconfig text, certificate PEM, key PEM, server)``; the kubeconfig names the files
    (``client-certificate``, ``client-key``). The kubernetes Python client writes inline ``*-data`` to
    temporary files of its own (kube_config.FileOrData.as_file) in every process that loads it; with paths it
    reads the files where they are.
    """
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise CredentialError(f"kubeadm printed no kubeconfig: {exc}") from None
    users = (doc or {}).get("users") if isinstance(doc, dict) else None
    if not users or len(users) != 1:
        raise CredentialError("kubeadm printed no kubeconfig with one user")
    user = users[0].get("user") or {}
    try:
        cert = base64.b64decode(user.pop("client-certificate-data"), validate=True)
        key = base64.b64decode(user.pop("client-key-data"), validate=True)
    except (KeyError, ValueError):
        raise CredentialError("kubeadm's kubeconfig has no client certificate and key data") from None
    if b"BEGIN CERTIFICATE" not in cert or b"PRIVATE KEY" not in key:
        raise CredentialError("kubeadm's kubeconfig holds no PEM certificate and key")
    user["client-certificate"] = str(cert_path)
    user["client-key"] = str(key_path)
    _name, server = current_cluster(doc)
    return yaml.safe_dump(doc, sort_keys=False), cert, key, server


# ---------------------------------------------------------------- files on the controller
SUFFIXES = (".conf", ".crt", ".key")


def run_paths(dest, name, run_id):
    """The kubeconfig, certificate and key of one run (``<name>-<run id>``): a run never reuses another's files."""
    stem = os.path.join(dest, f"{name}-{run_id}")
    return {"kubeconfig": stem + ".conf", "client_certificate": stem + ".crt", "client_key": stem + ".key"}


def ensure_private_dir(dest):
    """Create ``dest`` 0700 (parents too); an existing one must be this user's, and is made 0700."""
    os.makedirs(dest, mode=0o700, exist_ok=True)
    st = os.stat(dest)
    if st.st_uid != os.getuid():
        raise CredentialError(
            f"{dest} belongs to uid {st.st_uid}, not to this user: choose another credentials directory"
        )
    if st.st_mode & 0o077:
        os.chmod(dest, 0o700)


def write_private(path, data):
    """Write ``data`` to ``path`` 0600, atomically (a file beside it, then renamed): no other copy anywhere."""
    tmp = f"{path}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data if isinstance(data, bytes) else data.encode())
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def remove(paths):
    """Remove the files that exist; the names of those removed."""
    removed = []
    for path in paths:
        try:
            os.unlink(path)
            removed.append(path)
        except FileNotFoundError:
            continue
    return removed


def certificate_facts(pem):
    """``{"not_after": aware UTC datetime, "subject": {"CN": ..., "O": [...]}}`` of a PEM certificate.

    cryptography is a dependency of ansible-core, so it is there wherever this action runs."""
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    cert = x509.load_pem_x509_certificate(pem if isinstance(pem, bytes) else pem.encode())
    not_after = getattr(cert, "not_valid_after_utc", None)
    if not_after is None:  # cryptography < 42
        not_after = cert.not_valid_after.replace(tzinfo=datetime.timezone.utc)
    subject = {
        "CN": ", ".join(a.value for a in cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)),
        "O": [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)],
    }
    return {"not_after": not_after, "subject": subject}


def reusable(paths, client_name, groups, min_seconds_left, now):
    """The facts of this run's certificate when it can be used again (same identity, ``min_seconds_left`` to go)."""
    if not all(os.path.isfile(p) for p in paths.values()):
        return None
    try:
        with open(paths["client_certificate"], "rb") as handle:
            facts = certificate_facts(handle.read())
    except (OSError, ValueError):
        return None
    same = facts["subject"]["CN"] == client_name and sorted(facts["subject"]["O"]) == sorted(groups)
    if not same or (facts["not_after"] - now).total_seconds() < min_seconds_left:
        return None
    return facts


def prune_expired(dest, now):
    """Remove the credentials of earlier runs whose certificate has expired (kept ones run out on their own)."""
    removed = []
    for cert_path in glob.glob(os.path.join(dest, "*.crt")):
        stem = cert_path[: -len(".crt")]
        try:
            with open(cert_path, "rb") as handle:
                expired = certificate_facts(handle.read())["not_after"] <= now
        except (OSError, ValueError):
            continue
        if expired and os.path.exists(stem + ".key"):
            removed += remove(stem + suffix for suffix in SUFFIXES)
    return removed


def renew_margin(validity_seconds):
    """Seconds left below which a run mints again: half the validity, at most an hour."""
    return min(3600, validity_seconds // 2)


# ---------------------------------------------------------------- removal when the run ends
# Runs detached from the run: waits until the process ``pid`` (with its start time, against PID reuse) is gone,
# then removes the files. So a run that fails, is interrupted or killed leaves no credential behind.
_REMOVER = r"""
import os, sys, time
pid, start, paths = int(sys.argv[1]), sys.argv[2], sys.argv[3:]
def alive():
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open("/proc/%d/stat" % pid) as handle:
            fields = handle.read().rsplit(")", 1)[1].split()
    except OSError:
        return not os.path.isdir("/proc/self")
    return fields[0] != "Z" and (not start or fields[19] == start)
while alive():
    time.sleep(1)
for path in paths:
    try:
        os.unlink(path)
    except OSError:
        pass
"""


def process_start(pid):
    """The start time of a process (/proc/<pid>/stat field 22) or "" where there is no /proc."""
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().rsplit(")", 1)[1].split()[19]
    except (OSError, IndexError):
        return ""


def process_alive(pid, start):
    """Whether process ``pid`` still runs and is the one that started at ``start`` (process_start), not a new
    process that reuses its number."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return process_start(pid) == start


def remove_when_gone(pid, paths):
    """Start a detached process that removes ``paths`` once process ``pid`` has ended; its pid."""
    if pid <= 1:
        raise CredentialError(f"cannot watch process {pid}")
    proc = subprocess.Popen(
        [sys.executable, "-c", _REMOVER, str(pid), process_start(pid), *paths],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    return proc.pid
