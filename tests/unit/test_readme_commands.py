"""The README's inventory, its group_vars example and its ansible-playbook commands, run as written: each command
gets past its input checks to the hosts (which refuse the connection here: the addresses are replaced by a closed
port on loopback, so nothing leaves the machine)."""

from __future__ import annotations

import re
import shlex
import shutil
from pathlib import Path

import pytest
import yaml
from playbook_runner import ansible_playbook
from test_docs import ROOT, fenced_blocks

README = ROOT / "README.md"


def _blocks(language):
    return [(line, text) for lang, line, text, _closed in fenced_blocks(README) if lang == language]


def _inventory():
    inventories = [text for _line, text in _blocks("ini") if "[kube_control_plane]" in text]
    assert inventories, "README.md has no ini inventory with a kube_control_plane group"
    # every host at a closed port on loopback: unreachable at once, and no traffic leaves the machine
    return re.sub(r"ansible_host=\S+", "ansible_host=127.0.0.1 ansible_port=9", inventories[0])


def _group_vars():
    found = [text for _line, text in _blocks("yaml") if text.startswith("# group_vars/all.yml")]
    assert found, "README.md has no group_vars/all.yml example"
    return found[0]


def _commands():
    commands = []
    for line, text in _blocks("sh"):
        for offset, command in enumerate(text.splitlines(), start=1):
            if command.startswith("ansible-playbook -i inventory.ini"):
                commands.append(pytest.param(command, id=f"README.md:{line + offset}"))
    return commands


@pytest.mark.parametrize("command", _commands())
def test_a_readme_command_with_the_readme_inventory_and_group_vars_passes_its_input_checks(tmp_path, command):
    assert shutil.which("ssh"), "no ssh client on this controller: the README's commands reach the nodes over ssh"
    (tmp_path / "inventory.ini").write_text(_inventory())
    (tmp_path / "group_vars").mkdir()
    (tmp_path / "group_vars" / "all.yml").write_text(_group_vars())
    assert yaml.safe_load(_group_vars()), "the group_vars example is empty"
    argv = [*shlex.split(command)[1:], "-e", f"skewsafe_artifacts_dir={tmp_path / 'artifacts'}"]
    run = ansible_playbook(tmp_path, *argv)
    out = run.stdout + run.stderr
    assert "Invalid input" not in out and "nothing was contacted" not in out, out
    # past the first play: the hosts were tried (and refused the connection)
    assert "UNREACHABLE" in out, out
    assert Path(tmp_path / "inventory.ini").exists()
