"""Run the collection's real playbooks and roles through ansible-playbook in seconds, with no cluster: the modules
that touch a node or the API are replaced by stubs that answer from recorded states and record what they were asked.

The overlay is a collections tree of its own: skewsafe.kubeadm is the checkout (symlinked piece by piece) with the
stubbed modules swapped in, and kubernetes.core is a stub collection. Each fake host runs its modules through its own
interpreter wrapper, which names the host to the stubs (SKEWSAFE_STUB_HOST); every host connects locally.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from playbook_runner import ansible_playbook

ROOT = Path(__file__).resolve().parents[3]

# One stub for every module: its answer is answers[host][module] (or answers["*"][module]), a dict or a list of dicts
# taken in turn; a list answer's items may match on the module's arguments ({"when": {...}, "answer": {...}}).
STUB = r"""#!/usr/bin/python
import json, os, time
from ansible.module_utils.basic import AnsibleModule, _load_params

NAME = "{name}"


def main():
    params = _load_params()
    spec = {{k: {{"type": "raw"}} for k in params if not k.startswith("_ansible")}}
    module = AnsibleModule(argument_spec=spec, supports_check_mode=True)
    args = {{k: v for k, v in module.params.items() if not k.startswith("_ansible")}}
    stub_dir = os.environ["SKEWSAFE_STUB_DIR"]
    host = os.environ.get("SKEWSAFE_STUB_HOST", "localhost")
    with open(os.path.join(stub_dir, "answers.json")) as f:
        answers = json.load(f)
    answer = (answers.get(host) or {{}}).get(NAME, (answers.get("*") or {{}}).get(NAME))
    if isinstance(answer, list):
        answer = next((a["answer"] for a in answer if all(args.get(k) == v for k, v in a["when"].items())), None)
    with open(os.path.join(stub_dir, "calls.jsonl"), "a") as f:
        f.write(json.dumps({{"host": host, "module": NAME, "args": args, "check_mode": module.check_mode,
                             "at": time.time()}}) + "\n")
    if answer is None:
        module.fail_json(msg=f"stub {{NAME}}: no recorded answer for {{host}} and {{args}}")
    module.exit_json(**answer)


if __name__ == "__main__":
    main()
"""


class StubLab:
    """A fake inventory of ``control_planes`` and ``workers`` and the answers their stubbed modules give."""

    def __init__(self, tmp_path: Path, control_planes=("cp1", "cp2", "cp3"), workers=("w1", "w2")):
        self.tmp = tmp_path
        self.dir = tmp_path / "stubs"
        self.dir.mkdir()
        self.answers: dict = {"*": {}}
        self.collections = tmp_path / "collections"
        self.hosts = {"kube_control_plane": list(control_planes), "kube_workers": list(workers)}

    def overlay(self, stubbed: dict[str, list[str]]) -> None:
        """``stubbed``: {"skewsafe.kubeadm": [module names], "kubernetes.core": [...]}."""
        ours = self.collections / "ansible_collections" / "skewsafe" / "kubeadm"
        ours.mkdir(parents=True)
        for entry in ROOT.iterdir():
            if entry.name not in ("plugins", ".git") and not entry.name.startswith("."):
                (ours / entry.name).symlink_to(entry)
        (ours / "plugins").mkdir()
        for entry in (ROOT / "plugins").iterdir():
            if entry.name not in ("modules", "action"):
                (ours / "plugins" / entry.name).symlink_to(entry)
        # an action plugin runs instead of its module: a stubbed module goes without its action
        actions = ours / "plugins" / "action"
        actions.mkdir()
        for entry in (ROOT / "plugins" / "action").iterdir():
            if entry.stem not in stubbed.get("skewsafe.kubeadm", []):
                (actions / entry.name).symlink_to(entry)
        modules = ours / "plugins" / "modules"
        modules.mkdir()
        for entry in (ROOT / "plugins" / "modules").iterdir():
            if entry.stem not in stubbed.get("skewsafe.kubeadm", []):
                (modules / entry.name).symlink_to(entry)
        for name in stubbed.get("skewsafe.kubeadm", []):
            (modules / f"{name}.py").write_text(STUB.format(name=name))
        for fqcn, names in stubbed.items():
            if fqcn == "skewsafe.kubeadm":
                continue
            ns, coll = fqcn.split(".")
            target = self.collections / "ansible_collections" / ns / coll
            (target / "plugins" / "modules").mkdir(parents=True)
            (target / "galaxy.yml").write_text(f"namespace: {ns}\nname: {coll}\nversion: 99.0.0\n")
            (target / "meta").mkdir()
            (target / "meta" / "runtime.yml").write_text("requires_ansible: '>=2.15'\n")
            for name in names:
                (target / "plugins" / "modules" / f"{name}.py").write_text(STUB.format(name=name))

    def inventory(self, **host_vars) -> Path:
        wrappers = self.tmp / "py"
        wrappers.mkdir(exist_ok=True)
        lines = []
        for group, hosts in self.hosts.items():
            lines.append(f"[{group}]")
            for host in hosts:
                wrapper = wrappers / host
                wrapper.write_text(f'#!/bin/sh\nSKEWSAFE_STUB_HOST={host} exec {sys.executable} "$@"\n')
                wrapper.chmod(0o755)
                extra = " ".join(f"{k}={v}" for k, v in host_vars.get(host, {}).items())
                lines.append(f"{host} ansible_connection=local ansible_python_interpreter={wrapper} {extra}".rstrip())
        path = self.tmp / "inventory.ini"
        path.write_text("\n".join(lines) + "\n")
        return path

    def kubeconfig(self) -> Path:
        path = self.tmp / "stub.kubeconfig"
        path.write_text(
            json.dumps(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [
                        {
                            "name": "c",
                            "cluster": {"server": "https://192.0.2.10:6443", "certificate-authority-data": "c3R1Yg=="},
                        }
                    ],
                    "users": [{"name": "u", "user": {"token": "stub"}}],
                    "contexts": [{"name": "c", "context": {"cluster": "c", "user": "u"}}],
                    "current-context": "c",
                }
            )
        )
        path.chmod(0o600)
        return path

    def run(self, playbook: str, *args: str, extra: dict | None = None, host_vars: dict | None = None):
        (self.dir / "answers.json").write_text(json.dumps(self.answers))
        extra = {
            "skewsafe_kubeconfig": str(self.kubeconfig()),
            "skewsafe_artifacts_dir": str(self.tmp / "artifacts"),
            **(extra or {}),
        }
        env = {
            "ANSIBLE_COLLECTIONS_PATH": str(self.collections),
            "SKEWSAFE_STUB_DIR": str(self.dir),
            "ANSIBLE_PYTHON_INTERPRETER": sys.executable,
            "ANSIBLE_LOCALHOST_WARNING": "false",
        }
        inventory = self.inventory(**(host_vars or {}))
        return ansible_playbook(self.tmp, "-i", str(inventory), playbook, "-e", json.dumps(extra), *args, env=env)

    def calls(self, module: str | None = None) -> list[dict]:
        path = self.dir / "calls.jsonl"
        rows = [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []
        return [r for r in rows if module is None or r["module"] == module]
