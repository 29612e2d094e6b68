"""The collection's dependencies are declared once per place, with the same bounds everywhere."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
STDLIB_AND_ANSIBLE = {"__future__", "ansible", "ansible_collections"}
# import name -> distribution name in requirements.txt
DISTRIBUTION = {"yaml": "PyYAML", "kubernetes": "kubernetes", "urllib3": "urllib3", "cryptography": "cryptography"}


def third_party_imports():
    import sys

    names = set()
    for path in (ROOT / "plugins").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                names |= {a.name.split(".")[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return {n for n in names if n not in STDLIB_AND_ANSIBLE and n not in sys.stdlib_module_names}


def requirements():
    lines = (ROOT / "requirements.txt").read_text().splitlines()
    return {re.split(r"[<>=!~ ]", line, maxsplit=1)[0] for line in lines if line.strip() and not line.startswith("#")}


def test_requirements_list_exactly_what_the_plugins_import():
    imported = third_party_imports()
    assert imported <= set(DISTRIBUTION), f"an import without a requirements mapping: {imported - set(DISTRIBUTION)}"
    assert requirements() == {DISTRIBUTION[n] for n in imported}


def test_kubernetes_core_bound_agrees():
    galaxy = yaml.safe_load((ROOT / "galaxy.yml").read_text())["dependencies"]
    ee = yaml.safe_load((ROOT / "docs" / "awx" / "execution-environment.yml").read_text())
    ee_collections = {c["name"]: c.get("version") for c in ee["dependencies"]["galaxy"]["collections"]}
    assert ee_collections["kubernetes.core"] == galaxy["kubernetes.core"]
    assert set(ee_collections) == {"skewsafe.kubeadm", *galaxy}, "the EE installs collections nothing needs"
    runtime = yaml.safe_load((ROOT / "meta" / "runtime.yml").read_text())
    ee_core = ee["dependencies"]["ansible_core"]["package_pip"]
    assert ee_core.endswith(runtime["requires_ansible"]), (ee_core, runtime["requires_ansible"])
