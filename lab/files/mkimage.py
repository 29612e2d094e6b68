#!/usr/bin/env python3
"""Write a container image tarball without a registry or a daemon.

The output is an OCI image layout *and* a docker-archive at once (the format `docker save`
writes since Docker 25): oci-layout, index.json, blobs/sha256/*, manifest.json. So both
`ctr -n k8s.io images import` and `docker load` (20.10 too) accept it.

  mkimage.py --out img.tar --tag registry.k8s.io/pause:3.10.2 \
      [--layer rootfs.tar ...] [--file SRC:DEST[:MODE] ...] [--dir DEST[:MODE] ...] \
      [--entrypoint '["/pause"]'] [--cmd '[...]'] [--env K=V ...] [--user 65535:65535] \
      [--workdir /] [--stopsignal SIGRTMIN+3] [--label k=v ...]

--layer adds an existing uncompressed tar as a layer (in order); --file/--dir entries make one
more layer on top. Timestamps are fixed, so the same inputs give the same digests.
"""

import argparse
import hashlib
import io
import json
import os
import shutil
import tarfile
import tempfile

EPOCH = 0
CREATED = "1970-01-01T00:00:00Z"


def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest(), os.path.getsize(path)


def files_layer(path, files, dirs):
    """Create a layer tar with parent directories, root-owned, fixed mtime."""
    seen = set()
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:

        def add_dir(d, mode=0o755):
            d = d.strip("/")
            if not d or d in seen:
                return
            add_dir(os.path.dirname(d))
            seen.add(d)
            ti = tarfile.TarInfo(d)
            ti.type, ti.mode, ti.mtime = tarfile.DIRTYPE, mode, EPOCH
            tar.addfile(ti)

        for spec in dirs:
            dest, _, mode = spec.partition(":")
            add_dir(dest, int(mode, 8) if mode else 0o755)
        for spec in files:
            parts = spec.split(":")
            src, dest = parts[0], parts[1].strip("/")
            mode = int(parts[2], 8) if len(parts) > 2 else (0o755 if os.access(src, os.X_OK) else 0o644)
            add_dir(os.path.dirname(dest))
            ti = tarfile.TarInfo(dest)
            ti.size, ti.mode, ti.mtime = os.path.getsize(src), mode, EPOCH
            with open(src, "rb") as f:
                tar.addfile(ti, f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--tag", action="append", required=True)
    ap.add_argument("--layer", action="append", default=[])
    ap.add_argument("--file", action="append", default=[])
    ap.add_argument("--dir", action="append", default=[])
    ap.add_argument("--entrypoint")
    ap.add_argument("--cmd")
    ap.add_argument("--env", action="append", default=[])
    ap.add_argument("--user")
    ap.add_argument("--workdir")
    ap.add_argument("--stopsignal")
    ap.add_argument("--label", action="append", default=[])
    a = ap.parse_args()

    tmp = tempfile.mkdtemp(prefix="mkimage.", dir=os.path.dirname(os.path.abspath(a.out)))
    try:
        layers = list(a.layer)
        if a.file or a.dir:
            lp = os.path.join(tmp, "files-layer.tar")
            files_layer(lp, a.file, a.dir)
            layers.append(lp)
        ldesc = []
        for lp in layers:
            dig, size = sha256_file(lp)
            ldesc.append((lp, dig, size))

        cfg = {"Env": a.env or ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"]}
        if a.entrypoint:
            cfg["Entrypoint"] = json.loads(a.entrypoint)
        if a.cmd:
            cfg["Cmd"] = json.loads(a.cmd)
        if a.user:
            cfg["User"] = a.user
        if a.workdir:
            cfg["WorkingDir"] = a.workdir
        if a.stopsignal:
            cfg["StopSignal"] = a.stopsignal
        if a.label:
            cfg["Labels"] = dict(kv.split("=", 1) for kv in a.label)
        config = {
            "architecture": "amd64",
            "os": "linux",
            "created": CREATED,
            "config": cfg,
            "rootfs": {"type": "layers", "diff_ids": ["sha256:" + d for _, d, _ in ldesc]},
            "history": [{"created": CREATED, "created_by": "skewsafe lab mkimage.py"} for _ in ldesc],
        }
        cfg_b = json.dumps(config, sort_keys=True, separators=(",", ":")).encode()
        cfg_d = hashlib.sha256(cfg_b).hexdigest()
        manifest = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.manifest.v1+json",
            "config": {
                "mediaType": "application/vnd.oci.image.config.v1+json",
                "digest": "sha256:" + cfg_d,
                "size": len(cfg_b),
            },
            "layers": [
                {"mediaType": "application/vnd.oci.image.layer.v1.tar", "digest": "sha256:" + d, "size": s}
                for _, d, s in ldesc
            ],
        }
        man_b = json.dumps(manifest, sort_keys=True, separators=(",", ":")).encode()
        man_d = hashlib.sha256(man_b).hexdigest()
        index = {
            "schemaVersion": 2,
            "mediaType": "application/vnd.oci.image.index.v1+json",
            "manifests": [
                {
                    "mediaType": manifest["mediaType"],
                    "digest": "sha256:" + man_d,
                    "size": len(man_b),
                    "annotations": {
                        "io.containerd.image.name": t,
                        "org.opencontainers.image.ref.name": t.rsplit(":", 1)[1],
                    },
                }
                for t in a.tag
            ],
        }
        docker_manifest = [
            {"Config": "blobs/sha256/" + cfg_d, "RepoTags": a.tag, "Layers": ["blobs/sha256/" + d for _, d, _ in ldesc]}
        ]

        out_tmp = os.path.join(tmp, "out.tar")
        with tarfile.open(out_tmp, "w", format=tarfile.PAX_FORMAT) as tar:

            def add_bytes(name, data):
                ti = tarfile.TarInfo(name)
                ti.size, ti.mode, ti.mtime = len(data), 0o644, EPOCH
                tar.addfile(ti, io.BytesIO(data))

            for d in ("blobs", "blobs/sha256"):
                ti = tarfile.TarInfo(d)
                ti.type, ti.mode, ti.mtime = tarfile.DIRTYPE, 0o755, EPOCH
                tar.addfile(ti)
            add_bytes("oci-layout", b'{"imageLayoutVersion":"1.0.0"}')
            done = set()
            for lp, d, s in ldesc:
                if d in done:
                    continue
                done.add(d)
                ti = tarfile.TarInfo("blobs/sha256/" + d)
                ti.size, ti.mode, ti.mtime = s, 0o644, EPOCH
                with open(lp, "rb") as f:
                    tar.addfile(ti, f)
            add_bytes("blobs/sha256/" + cfg_d, cfg_b)
            add_bytes("blobs/sha256/" + man_d, man_b)
            add_bytes("index.json", json.dumps(index, sort_keys=True).encode())
            add_bytes("manifest.json", json.dumps(docker_manifest, sort_keys=True).encode())
        os.replace(out_tmp, a.out)
        print(f"{a.out}: {', '.join(a.tag)} manifest sha256:{man_d} config sha256:{cfg_d}")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
