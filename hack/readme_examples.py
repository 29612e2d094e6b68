"""Write the README's Ansible examples as playbooks, for ansible-lint (tier ansible-lint) and the unit tests.

python hack/readme_examples.py DIR    a playbook per yaml block that is a play or a task list; a task list is
                                      wrapped in a play on localhost. Variable files (mappings) are left out.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
OPENING = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")


def yaml_blocks(path=ROOT / "README.md"):
    """(line of the opening fence, text) of each yaml fenced block."""
    lines, out, i = path.read_text(encoding="utf-8").splitlines(), [], 0
    while i < len(lines):
        opening = OPENING.match(lines[i])
        i += 1
        if not opening:
            continue
        fence, start, body = opening["fence"], i, []
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][len(opening["indent"]) :])
            i += 1
        i += 1
        if (opening["info"].split() or [""])[0].lower() in ("yaml", "yml"):
            out.append((start, "\n".join(body) + "\n"))
    return out


def as_playbook(text):
    """The block as a playbook text, or None when it is not a play or a task list."""
    data = yaml.safe_load(text)
    if not isinstance(data, list) or not data or not all(isinstance(item, dict) for item in data):
        return None
    if all("hosts" in item or "import_playbook" in item for item in data):
        return "---\n" + text
    tasks = "".join(f"    {line}\n" if line.strip() else "\n" for line in text.splitlines())
    return f"---\n- name: README example\n  hosts: localhost\n  gather_facts: false\n  tasks:\n{tasks}"


def main(argv):
    dest = Path(argv[1])
    dest.mkdir(parents=True, exist_ok=True)
    written = 0
    for line, text in yaml_blocks():
        playbook = as_playbook(text)
        if playbook is not None:
            (dest / f"readme-line-{line}.yml").write_text(playbook, encoding="utf-8")
            written += 1
    print(f"{written} README examples written to {dest}")
    return 0 if written else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
