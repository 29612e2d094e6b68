"""Rewrite the documented EE definition for the base image and offline collections made here.

    python hack/ee/definition.py --base IMAGE --ansible-core VERSION --collections DIR DEFINITION

Prints the definition ansible-builder builds in hack/ee/run.sh. Everything else in the documented
file (ansible-runner, the collections it names, the dependency introspection) is kept, so the
test builds what operators build. What changes, and why:

- images.base_image: a Debian image made here (no registry is reachable).
- dependencies.python_interpreter.python_path: the base's venv, since Debian disables ensurepip for
  the system Python and ansible-builder's pip_install step runs it.
- options.package_manager_path: apt-get (the documented base uses dnf); PKGMGR_PRESERVE_CACHE=always
  because ansible-builder's clean step runs `$PKGMGR clean all`, which apt-get rejects.
- dependencies.ansible_core: pinned to one version, so that the image is reproducible.
- galaxy collections: the tarballs in DIR, installed with --offline (Galaxy is not reachable); each
  documented collection must have its tarball.
- pip: builds have no network here, so OFFLINE (pip.conf + wheels/) is copied in and pip.conf points
  every stage's pip at the wheels; both are removed again in the final stage.
"""

import argparse
import sys
from pathlib import Path

import yaml


def rewrite(definition: dict, base: str, ansible_core: str, tarballs: list[Path], offline: Path) -> dict:
    out = dict(definition)
    out["images"] = {"base_image": {"name": base}}
    deps = dict(out.get("dependencies") or {})
    deps["python_interpreter"] = {"python_path": "/opt/venv/bin/python3"}
    deps["ansible_core"] = {"package_pip": f"ansible-core=={ansible_core}"}
    wanted = [c["name"] for c in (deps.get("galaxy") or {}).get("collections", [])]
    files = {}
    for name in wanted:
        prefix = name.replace(".", "-") + "-"
        found = [t for t in tarballs if t.name.startswith(prefix)]
        if len(found) != 1:
            raise SystemExit(
                f"definition.py: need exactly one tarball for {name} in the collections dir, found {found}"
            )
        files[name] = found[0]
    deps["galaxy"] = {"collections": [{"name": f"collections/{files[n].name}", "type": "file"} for n in wanted]}
    out["dependencies"] = deps
    out["additional_build_files"] = [{"src": str(t), "dest": "collections"} for t in files.values()] + [
        {"src": str(offline), "dest": "offline"},
    ]
    steps = dict(out.get("additional_build_steps") or {})
    steps["prepend_base"] = [
        "COPY _build/offline/ /offline/",
        "RUN cp /offline/pip.conf /etc/pip.conf",
        *steps.get("prepend_base", []),
    ]
    steps["append_final"] = [*steps.get("append_final", []), "RUN rm -rf /etc/pip.conf /offline"]
    out["additional_build_steps"] = steps
    args = dict(out.get("build_arg_defaults") or {})
    args["ANSIBLE_GALAXY_CLI_COLLECTION_OPTS"] = "--offline"
    args["PKGMGR_PRESERVE_CACHE"] = "always"
    out["build_arg_defaults"] = args
    options = dict(out.get("options") or {})
    options["package_manager_path"] = "/usr/bin/apt-get"
    out["options"] = options
    return out


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--base", required=True)
    parser.add_argument("--ansible-core", required=True)
    parser.add_argument("--collections", required=True, type=Path)
    parser.add_argument("--offline", required=True, type=Path, help="directory with pip.conf and wheels/")
    parser.add_argument("definition", type=Path)
    a = parser.parse_args(argv)
    definition = yaml.safe_load(a.definition.read_text())
    if definition.get("version") != 3:
        raise SystemExit(f"definition.py: {a.definition} is not an ansible-builder version 3 definition")
    tarballs = sorted(a.collections.glob("*.tar.gz"))
    yaml.safe_dump(rewrite(definition, a.base, a.ansible_core, tarballs, a.offline), sys.stdout, sort_keys=False)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
