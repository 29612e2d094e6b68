"""Run the collection's playbooks from the tool venv, as a user would (shared by the playbook tests)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path


def ansible_playbook(tmp_path: Path, *args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    """The tool venv's ansible-playbook (the Python running the tests), run from tmp_path, with env added."""
    cmd = [str(Path(sys.executable).parent / "ansible-playbook"), *args]
    env = dict(
        os.environ, ANSIBLE_NOCOLOR="1", ANSIBLE_TIMEOUT="2", ANSIBLE_LOCAL_TEMP=str(tmp_path / "tmp"), **(env or {})
    )
    env["PWD"] = str(tmp_path)
    # a guard against a hang, not a speed test: a 10 s run took over 120 s in the newer-core container at a low cpu
    # weight beside e2e and the harness (rehearsal, 2026-12-07)
    return subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=600, check=False)
