# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""An etcd snapshot through etcd's own HTTP gateway, with the standard library only.

etcd serves every gRPC call as JSON on its client URLs too (the gRPC gateway, on by default):
``POST /v3/maintenance/snapshot`` streams one JSON object per line, each with a base64 ``blob`` of the
database. The server sends the SHA-256 of the database as the last blob (etcd
server/etcdserver/api/v3rpc/maintenance.go, ``Snapshot``), exactly as ``etcdctl snapshot save`` writes it;
``etcdutl snapshot restore`` checks that trailer. So a node that has only the client certificate
kube-apiserver uses (external etcd: no etcd container, no etcdctl) can take and verify a snapshot.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import ssl
import urllib.error

from ansible.module_utils.urls import Request

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._errors import SkewsafeError

SNAPSHOT_PATH = "/v3/maintenance/snapshot"
STATUS_PATH = "/v3/maintenance/status"
# Room left on the snapshot's file system besides the snapshot itself (etcd's dbSize is an upper bound of it).
SPACE_MARGIN = 64 << 20
HASH_SIZE = hashlib.sha256().digest_size
# bbolt's meta page: a 16-byte page header, then the meta magic (little-endian 0xED0CDAED).
BOLT_MAGIC = (0xED0CDAED).to_bytes(4, "little")
BOLT_MAGIC_OFFSET = 16
READ_CHUNK = 1 << 20


class SnapshotError(SkewsafeError):
    """A snapshot that could not be taken or did not verify."""


def tls_context(ca_file: str, cert_file: str | None, key_file: str | None) -> ssl.SSLContext:
    """Verified TLS (always): the etcd CA and, when given, the client certificate kube-apiserver uses."""
    ctx = ssl.create_default_context(cafile=ca_file)
    if cert_file:
        ctx.load_cert_chain(cert_file, key_file)
    return ctx


def read_stream(lines, write) -> dict:
    """Decode the gateway's stream: ``write(bytes)`` every blob, return what the stream said of itself.

    ``lines``: the response, one JSON object per line. Raises SnapshotError on an error object or a
    stream that ended before ``remaining_bytes`` reached 0.
    """
    info = {"chunks": 0, "bytes": 0, "version": None, "revision": None, "complete": False}
    for raw in lines:
        raw = raw.strip()
        if not raw:
            continue
        try:
            message = json.loads(raw)
        except ValueError as exc:
            raise SnapshotError(f"the snapshot stream is not JSON at chunk {info['chunks'] + 1}: {exc}") from exc
        if message.get("error"):
            err = message["error"]
            raise SnapshotError(f"etcd refused the snapshot: {err.get('message') or err}")
        result = message.get("result") or {}
        blob = base64.b64decode(result.get("blob") or "")
        write(blob)
        info["chunks"] += 1
        info["bytes"] += len(blob)
        info["version"] = result.get("version") or info["version"]
        revision = (result.get("header") or {}).get("revision")
        info["revision"] = int(revision) if revision is not None else info["revision"]
        # proto3 JSON leaves a zero out; the gateway may spell the field either way
        remaining = result.get("remaining_bytes", result.get("remainingBytes")) or 0
        if int(remaining) == 0 and info["chunks"] > 1:
            info["complete"] = True
    if not info["complete"]:
        raise SnapshotError(f"the snapshot stream ended early ({info['bytes']} bytes in {info['chunks']} chunks)")
    return info


def verify_file(path: str) -> dict:
    """Check a saved snapshot: the SHA-256 trailer etcd appended, and bbolt's magic in the meta page.

    Returns {size, db_size, sha256 (of the whole file)}; raises SnapshotError when either check fails.
    """
    size = os.path.getsize(path)
    if size <= HASH_SIZE + BOLT_MAGIC_OFFSET + len(BOLT_MAGIC):
        raise SnapshotError(f"{path}: {size} bytes is too small for an etcd snapshot")
    db_hash, whole = hashlib.sha256(), hashlib.sha256()
    db_size = size - HASH_SIZE
    with open(path, "rb") as f:
        head = f.read(BOLT_MAGIC_OFFSET + len(BOLT_MAGIC))
        whole.update(head)
        db_hash.update(head)
        done = len(head)
        while done < db_size:
            chunk = f.read(min(READ_CHUNK, db_size - done))
            if not chunk:
                break
            db_hash.update(chunk)
            whole.update(chunk)
            done += len(chunk)
        trailer = f.read(HASH_SIZE)
        whole.update(trailer)
    if head[BOLT_MAGIC_OFFSET:] != BOLT_MAGIC:
        raise SnapshotError(f"{path}: not a bbolt database (no meta magic)")
    if db_hash.digest() != trailer:
        raise SnapshotError(f"{path}: the SHA-256 etcd sent does not match the data (a corrupt or cut stream)")
    return {"size": size, "db_size": db_size, "sha256": whole.hexdigest()}


def save(endpoint: str, dest: str, context: ssl.SSLContext, timeout: float, opener=None) -> dict:
    """Stream a snapshot from one endpoint into ``dest`` (via ``dest.part``), verify it, then rename.

    Nothing is left at ``dest`` unless it verified; the partial file is removed on any failure.
    """
    url = endpoint.rstrip("/") + SNAPSHOT_PATH
    part = dest + ".part"
    # ansible-core's Request with our own context (the CA and client certificate kubeadm-config names);
    # no proxy: etcd members are dialled directly, as etcdctl does.
    open_url = opener or Request(use_proxy=False, context=context, timeout=timeout).open
    try:
        fd = os.open(part, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            with open_url("POST", url, data=b"{}", headers={"Content-Type": "application/json"}) as response:
                info = read_stream(response, out.write)
            out.flush()
            os.fsync(out.fileno())
        checked = verify_file(part)
        os.replace(part, dest)
    except (OSError, urllib.error.URLError, ssl.SSLError, SnapshotError) as exc:
        try:
            os.unlink(part)
        except FileNotFoundError:
            pass
        if isinstance(exc, SnapshotError):
            raise
        raise SnapshotError(f"{endpoint}: {getattr(exc, 'reason', None) or exc}") from exc
    return dict(info, **checked, endpoint=endpoint, path=dest)


def db_size(endpoint: str, context: ssl.SSLContext, timeout: float, opener=None) -> int:
    """The member's database size in bytes (``dbSize`` of the gateway's maintenance status): what a snapshot of it
    takes at most."""
    open_url = opener or Request(use_proxy=False, context=context, timeout=timeout).open
    url = endpoint.rstrip("/") + STATUS_PATH
    try:
        with open_url("POST", url, data=b"{}", headers={"Content-Type": "application/json"}) as response:
            status = json.loads(response.read())
    except (OSError, urllib.error.URLError, ssl.SSLError, ValueError) as exc:
        raise SnapshotError(f"{endpoint}: status: {getattr(exc, 'reason', None) or exc}") from exc
    return int(status.get("dbSize") or status.get("db_size") or 0)


def check_space(dest: str, need: int, statvfs=os.statvfs) -> dict:
    """Free bytes where ``dest`` is written against ``need`` plus a margin; raises SnapshotError when short."""
    st = statvfs(os.path.dirname(os.path.abspath(dest)) or ".")
    free = st.f_bavail * st.f_frsize
    if free < need + SPACE_MARGIN:
        raise SnapshotError(
            f"{os.path.dirname(dest)} has {free >> 20} MiB free; the snapshot needs up to {need >> 20} MiB (etcd's"
            f" database size) and {SPACE_MARGIN >> 20} MiB to spare: free space there or set another directory"
        )
    return {"free": free, "need": need}


def save_from_any(endpoints, dest, context, timeout, opener=None, statvfs=os.statvfs) -> dict:
    """Try each endpoint in turn (one member down must not stop the backup); all errors when none works.

    Before each, the member's database size is compared with the free space where the snapshot goes."""
    errors = []
    for endpoint in endpoints:
        try:
            space = check_space(dest, db_size(endpoint, context, timeout, opener), statvfs)
            result = dict(save(endpoint, dest, context, timeout, opener), space=space)
        except SnapshotError as exc:
            errors.append(str(exc))
            continue
        result["errors"] = errors
        return result
    raise SnapshotError("no etcd endpoint gave a snapshot: " + "; ".join(errors or ["no endpoints"]))
