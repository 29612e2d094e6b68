"""Measure which component feature gates each pinned Kubernetes version refuses, from the real binaries.

    python hack/feature_gates.py            rewrite plugins/plugin_utils/_component_gates_table.py
    python hack/feature_gates.py --check    exit 1 when the committed table differs from the binaries

Candidates are every gate any pinned version knows: the names its kube-apiserver, kube-controller-manager
and kube-scheduler list in --help (alpha and beta only) and the featuregate.Feature constants in its Go
sources (GA and deprecated ones included; both `featuregate.Feature = "X"` and `featuregate.Feature("X")`).
Each candidate is passed to each component of each version as
`--feature-gates=<gate>=true` and `=false` with `--version` (flags are parsed and validated, nothing
starts): "unrecognized feature gate" means the version no longer knows it (the component would not start),
"locked to" means only the locked value is accepted. The table keeps only gates some older version accepted.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import pprint
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "harness"))

from skewsafe_harness.pins import cache_dir, pins  # noqa: E402

COMPONENTS = ("kube-apiserver", "kube-controller-manager", "kube-scheduler")
TABLE = REPO / "plugins" / "plugin_utils" / "_component_gates_table.py"
HELP_GATE = re.compile(r"(?:kube:)?([A-Z][A-Za-z0-9]+)=true\|false \((?:ALPHA|BETA)")
# both declaration forms: `Name featuregate.Feature = "Name"` and `Name = featuregate.Feature("Name")`
SOURCE_GATE = re.compile(r'featuregate\.Feature(?:\s*=\s*|\(\s*)"([A-Z][A-Za-z0-9]+)"')
LOCKED = re.compile(r"locked to (true|false)")


def gomodcache() -> Path:
    return Path(subprocess.run(["go", "env", "GOMODCACHE"], capture_output=True, text=True, check=True).stdout.strip())


def binary(version: str, component: str) -> Path:
    path = cache_dir() / "k8s" / f"v{version}" / "bin" / component
    if not path.is_file():
        sys.exit(f"{path} missing: run hack/build-upstream.sh {version}")
    return path


def candidates(versions: list[str]) -> set[str]:
    names: set[str] = set()
    modcache = gomodcache()
    for version in versions:
        for component in COMPONENTS:
            out = subprocess.run(
                [binary(version, component), "--help"], capture_output=True, text=True, check=False
            ).stdout
            names |= set(HELP_GATE.findall(out))
        minor_patch = version.split(".", 1)[1]
        roots = [modcache / f"k8s.io/kubernetes@v{version}/pkg/features"]
        roots += sorted(modcache.glob(f"k8s.io/*@v0.{minor_patch}"))
        for root in roots:
            for go_file in root.rglob("*.go") if root.is_dir() else ():
                if not go_file.name.endswith("_test.go"):
                    names |= set(SOURCE_GATE.findall(go_file.read_text(errors="replace")))
    return names


def probe(version: str, component: str, gate: str, value: str) -> tuple[str, bool]:
    """('ok' | 'unknown' | 'locked:<value>', whether the component warned that the gate is GA or deprecated)."""
    result = subprocess.run(
        [binary(version, component), f"--feature-gates={gate}={value}", "--version"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    err = result.stderr
    warned = "setting GA feature gate" in err or "setting deprecated feature gate" in err
    if result.returncode == 0:
        return "ok", warned
    if "unrecognized feature gate" in err:
        return "unknown", False
    locked = LOCKED.search(err)
    if locked and gate in err:
        return f"locked:{locked.group(1)}", warned
    return "ok", warned  # known, refused for another reason (e.g. a dependency on a gate that is off)


def measure(versions: list[str]) -> dict:
    names = sorted(candidates(versions))
    # =true for every gate; =false only where =true warned (GA or deprecated: the gates that can be locked),
    # since alpha and beta gates take both values. About half the runs of probing both everywhere.
    jobs = [(v, c, g, "true") for v in versions for c in COMPONENTS for g in names]
    with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
        first = dict(zip(jobs, pool.map(lambda j: probe(*j), jobs)))
        again = [(v, c, g, "false") for (v, c, g, _t), (_s, warned) in first.items() if warned]
        second = dict(zip(again, pool.map(lambda j: probe(*j), again)))
    results = {job: status for job, (status, _w) in {**first, **second}.items()}
    for v, c, g, _t in jobs:
        results.setdefault((v, c, g, "false"), "ok")
    removed: dict[str, dict[int, list[str]]] = {}
    locked: dict[str, dict[int, dict[str, bool]]] = {}
    for component in COMPONENTS:
        for i, version in enumerate(versions[1:], start=1):
            minor = int(version.split(".")[1])
            older = versions[:i]
            for gate in names:
                known_before = any(results[(o, component, gate, "true")] != "unknown" for o in older)
                now_true = results[(version, component, gate, "true")]
                now_false = results[(version, component, gate, "false")]
                if known_before and now_true == "unknown":
                    removed.setdefault(component, {}).setdefault(minor, []).append(gate)
                for now in (now_true, now_false):
                    if now.startswith("locked:"):
                        locked.setdefault(component, {}).setdefault(minor, {})[gate] = now == "locked:true"
    return {"versions": versions, "removed": removed, "locked": locked}


def render(table: dict) -> str:
    return (
        "# Copyright (c) skewsafe.kubeadm contributors\n"
        "# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)\n"
        "# SPDX-License-Identifier: GPL-3.0-or-later\n"
        "#\n"
        "# PRIVATE to the skewsafe.kubeadm collection.\n"
        '"""GENERATED by hack/feature_gates.py from the real binaries of the pinned versions; do not edit.\n\n'
        "REMOVED: component -> minor -> gates that minor refuses (it would not start) although an older pinned\n"
        "minor accepted them. LOCKED: component -> minor -> gate -> the only value that minor accepts.\n"
        '"""\n\n'
        f"MEASURED_VERSIONS = {tuple(table['versions'])!r}\n\n"
        f"REMOVED = {pprint.pformat(table['removed'], width=110, sort_dicts=True)}\n\n"
        f"LOCKED = {pprint.pformat(table['locked'], width=110, sort_dicts=True)}\n"
    )


def formatted(text: str) -> str:
    """The table as `ruff format` writes it (the repository's style), so --check compares like with like."""
    ruff = Path(sys.executable).parent / "ruff"
    return subprocess.run(
        [str(ruff), "format", "--stdin-filename", str(TABLE), "-"],
        input=text,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare with the committed table instead of writing it")
    args = parser.parse_args()
    versions = pins()["K8S_HARNESS_VERSIONS"].split()
    text = formatted(render(measure(versions)))
    if args.check:
        if TABLE.read_text() != text:
            print(f"{TABLE} differs from what the binaries of {' '.join(versions)} say: run hack/feature_gates.py")
            return 1
        print(f"{TABLE}: matches the binaries of {' '.join(versions)}")
        return 0
    TABLE.write_text(text)
    print(f"wrote {TABLE}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
