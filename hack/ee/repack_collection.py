"""Pack an installed collection (e.g. kubernetes.core from the `ansible` package) as an artifact.

    python hack/ee/repack_collection.py INSTALLED_DIR OUT_DIR    prints the tarball's path

Galaxy is not reachable here, and ansible-galaxy installs a tarball only when its FILES.json
matches its files. The `ansible` package ships a collection without some of the files its
FILES.json lists (.github, tests), so FILES.json is written again for the files that are there and
MANIFEST.json points at the new one. Nothing else changes.
"""

import hashlib
import io
import json
import sys
import tarfile
from pathlib import Path


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def repack(src: Path, out_dir: Path) -> Path:
    manifest = json.loads((src / "MANIFEST.json").read_text())
    info = manifest["collection_info"]
    paths = sorted(
        p
        for p in src.rglob("*")
        if "__pycache__" not in p.parts and p.name not in ("MANIFEST.json", "FILES.json") and not p.is_symlink()
    )
    entries = [{"name": ".", "ftype": "dir", "chksum_type": None, "chksum_sha256": None, "format": 1}]
    for p in paths:
        rel = p.relative_to(src).as_posix()
        if p.is_dir():
            entries.append({"name": rel, "ftype": "dir", "chksum_type": None, "chksum_sha256": None, "format": 1})
        else:
            digest = _sha256(p.read_bytes())
            entries.append(
                {"name": rel, "ftype": "file", "chksum_type": "sha256", "chksum_sha256": digest, "format": 1}
            )
    files_json = json.dumps({"files": entries, "format": 1}, indent=4).encode()
    manifest["file_manifest_file"] = {
        "name": "FILES.json",
        "ftype": "file",
        "chksum_type": "sha256",
        "chksum_sha256": _sha256(files_json),
        "format": 1,
    }
    out = out_dir / f"{info['namespace']}-{info['name']}-{info['version']}.tar.gz"
    with tarfile.open(out, "w:gz") as tar:
        for name, data in (("MANIFEST.json", json.dumps(manifest, indent=4).encode()), ("FILES.json", files_json)):
            member = tarfile.TarInfo(name)
            member.size, member.mode = len(data), 0o644
            tar.addfile(member, io.BytesIO(data))
        for p in paths:
            tar.add(p, arcname=p.relative_to(src).as_posix(), recursive=False)
    return out


if __name__ == "__main__":
    if len(sys.argv) != 3:
        raise SystemExit(__doc__)
    print(repack(Path(sys.argv[1]), Path(sys.argv[2])))
