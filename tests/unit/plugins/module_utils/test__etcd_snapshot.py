from __future__ import annotations

import base64
import hashlib
import io
import json
import os

import pytest

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _etcd_snapshot as snap


def fake_db(size: int = 5000) -> bytes:
    """Bytes shaped like a bbolt file: a page header, the meta magic, then filler."""
    return bytes(16) + snap.BOLT_MAGIC + bytes(range(256)) * (size // 256)


def stream_lines(db: bytes, chunk: int = 1024, trailer: bytes | None = None, version="3.6.0") -> list[bytes]:
    """What etcd's gateway sends: the data in chunks, then its SHA-256 as the last blob."""
    lines, sent = [], 0
    while sent < len(db):
        blob = db[sent : sent + chunk]
        sent += len(blob)
        result = {"header": {"revision": "42"}, "blob": base64.b64encode(blob).decode(), "version": version}
        if len(db) - sent:
            result["remaining_bytes"] = str(len(db) - sent)  # proto3 JSON leaves 0 out
        lines.append(json.dumps({"result": result}).encode() + b"\n")
    digest = hashlib.sha256(db).digest() if trailer is None else trailer
    lines.append(json.dumps({"result": {"blob": base64.b64encode(digest).decode(), "version": version}}).encode())
    return lines


class Response(io.BytesIO):
    def __init__(self, lines):
        super().__init__(b"".join(lines))


def opener_for(lines):
    return lambda method, url, data=None, headers=None: Response(lines)


def test_saves_and_verifies_what_etcd_streams(tmp_path):
    db = fake_db()
    dest = str(tmp_path / "snap.db")
    got = snap.save("https://etcd:2379", dest, None, 5, opener=opener_for(stream_lines(db)))
    data = open(dest, "rb").read()
    assert data == db + hashlib.sha256(db).digest()
    assert got["sha256"] == hashlib.sha256(data).hexdigest() and got["size"] == len(data)
    assert got["revision"] == 42 and got["version"] == "3.6.0" and got["endpoint"] == "https://etcd:2379"
    assert oct(os.stat(dest).st_mode & 0o777) == "0o600"
    assert not os.path.exists(dest + ".part")


def test_a_wrong_trailer_leaves_no_file(tmp_path):
    dest = str(tmp_path / "snap.db")
    with pytest.raises(snap.SnapshotError, match="does not match"):
        snap.save("https://etcd:2379", dest, None, 5, opener=opener_for(stream_lines(fake_db(), trailer=bytes(32))))
    assert not os.listdir(tmp_path)


def test_a_cut_stream_is_refused(tmp_path):
    lines = stream_lines(fake_db())[:2]  # two data chunks, more announced
    with pytest.raises(snap.SnapshotError, match="ended early"):
        snap.save("https://etcd:2379", str(tmp_path / "snap.db"), None, 5, opener=opener_for(lines))
    assert not os.listdir(tmp_path)


def test_not_a_bolt_database_is_refused(tmp_path):
    db = b"x" * 4000
    with pytest.raises(snap.SnapshotError, match="not a bbolt"):
        snap.save("https://etcd:2379", str(tmp_path / "snap.db"), None, 5, opener=opener_for(stream_lines(db)))


def test_an_error_object_names_what_etcd_said():
    lines = [json.dumps({"error": {"code": 7, "message": "permission denied"}}).encode()]
    with pytest.raises(snap.SnapshotError, match="permission denied"):
        snap.read_stream(lines, lambda b: None)


def test_the_next_endpoint_is_tried_and_the_failure_kept(tmp_path):
    good = stream_lines(fake_db())

    def opener(method, url, data=None, headers=None):
        if "bad" in url:
            raise OSError("connection refused")
        if url.endswith("/status"):
            return Response([json.dumps({"dbSize": "20480"}).encode()])
        assert (method, url, data) == ("POST", "https://good:2379/v3/maintenance/snapshot", b"{}")
        return Response(good)

    got = snap.save_from_any(["https://bad:2379", "https://good:2379"], str(tmp_path / "s.db"), None, 5, opener)
    assert got["endpoint"] == "https://good:2379" and got["space"]["need"] == 20480
    assert got["errors"] == ["https://bad:2379: status: connection refused"]


def test_no_endpoint_working_says_each_error(tmp_path):
    def opener(method, url, data=None, headers=None):
        raise OSError("no route to host")

    with pytest.raises(snap.SnapshotError, match="no etcd endpoint gave a snapshot: https://a:2379: status: no route"):
        snap.save_from_any(["https://a:2379"], str(tmp_path / "s.db"), None, 5, opener)


class Fs:
    def __init__(self, free):
        self.f_bavail, self.f_frsize = free // 4096, 4096


def test_too_little_room_for_the_snapshot_is_refused_before_anything_is_written(tmp_path):
    def opener(method, url, data=None, headers=None):
        assert url.endswith("/v3/maintenance/status"), "the snapshot was requested although it had no room"
        return Response([json.dumps({"dbSize": str(512 << 20)}).encode()])

    with pytest.raises(snap.SnapshotError, match=r"has 100 MiB free; the snapshot needs up to 512 MiB"):
        snap.save_from_any(
            ["https://a:2379"], str(tmp_path / "s.db"), None, 5, opener, statvfs=lambda _path: Fs(100 << 20)
        )
    assert list(tmp_path.iterdir()) == []
