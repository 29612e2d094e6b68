"""The execution-environment tooling (hack/ee): the definition rewrite and the collection repack."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "hack" / "ee" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


definition = _load("definition")
repack_collection = _load("repack_collection")


def _documented() -> dict:
    return yaml.safe_load((ROOT / "docs" / "awx" / "execution-environment.yml").read_text())


def test_rewrite_keeps_the_documented_collections_and_runner_and_swaps_only_the_base(tmp_path):
    tarballs = [tmp_path / "skewsafe-kubeadm-0.1.0.tar.gz", tmp_path / "kubernetes-core-6.2.0.tar.gz"]
    out = definition.rewrite(_documented(), "base:1", "2.21.5", tarballs, tmp_path / "offline")
    deps = out["dependencies"]
    assert out["images"] == {"base_image": {"name": "base:1"}}
    assert deps["ansible_core"] == {"package_pip": "ansible-core==2.21.5"}
    assert deps["ansible_runner"] == _documented()["dependencies"]["ansible_runner"]
    assert deps["galaxy"]["collections"] == [
        {"name": "collections/skewsafe-kubeadm-0.1.0.tar.gz", "type": "file"},
        {"name": "collections/kubernetes-core-6.2.0.tar.gz", "type": "file"},
    ]
    assert out["build_arg_defaults"]["ANSIBLE_GALAXY_CLI_COLLECTION_OPTS"] == "--offline"
    assert out["options"]["package_manager_path"] == "/usr/bin/apt-get"
    # the offline pip config is removed again from the final image
    assert out["additional_build_steps"]["append_final"][-1] == "RUN rm -rf /etc/pip.conf /offline"


def test_rewrite_refuses_a_documented_collection_without_its_tarball(tmp_path):
    with pytest.raises(SystemExit, match=r"kubernetes\.core"):
        definition.rewrite(_documented(), "b", "2.21.5", [tmp_path / "skewsafe-kubeadm-0.1.0.tar.gz"], tmp_path)


def test_repack_gives_a_tarball_ansible_galaxy_installs(tmp_path):
    src = tmp_path / "installed" / "example" / "thing"
    (src / "plugins" / "modules").mkdir(parents=True)
    (src / "plugins" / "modules" / "x.py").write_text("# a module\n")
    (src / "plugins" / "modules" / "__pycache__").mkdir()
    (src / "plugins" / "modules" / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"\0")
    manifest = {
        "collection_info": {"namespace": "example", "name": "thing", "version": "1.2.3", "dependencies": {}},
        "file_manifest_file": {
            "name": "FILES.json",
            "ftype": "file",
            "chksum_type": "sha256",
            "chksum_sha256": "0" * 64,
            "format": 1,
        },
        "format": 1,
    }
    (src / "MANIFEST.json").write_text(json.dumps(manifest))
    # what the `ansible` package ships: FILES.json lists files that are not there
    (src / "FILES.json").write_text(json.dumps({"files": [{"name": ".github", "ftype": "dir"}], "format": 1}))
    out = repack_collection.repack(src, tmp_path)
    assert out.name == "example-thing-1.2.3.tar.gz"
    with tarfile.open(out) as tar:
        names = tar.getnames()
    assert "MANIFEST.json" in names and "plugins/modules/x.py" in names
    assert not [n for n in names if "__pycache__" in n]
    dest = tmp_path / "dest"
    env = {"ANSIBLE_COLLECTIONS_PATH": str(dest), "PATH": str(Path(sys.executable).parent), "HOME": str(tmp_path)}
    result = subprocess.run(
        [
            str(Path(sys.executable).parent / "ansible-galaxy"),
            "collection",
            "install",
            "--offline",
            "-p",
            str(dest),
            str(out),
        ],
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert (
        dest / "ansible_collections" / "example" / "thing" / "plugins" / "modules" / "x.py"
    ).read_text() == "# a module\n"
