"""The documentation stays true: the generated reference is current, every example parses, and every
skewsafe_* variable a README example names is a documented option."""

from __future__ import annotations

import difflib
import importlib.util
import re
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
GENERATOR = ROOT / "hack" / "playbook_reference.py"
REFERENCE = ROOT / "docs" / "playbooks.md"
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
YAML = {"yaml", "yml"}
SHELL = {"sh", "bash"}
# Any indentation: a fence inside a list item is indented by the item's width.
OPENING = re.compile(r"^(?P<indent> *)(?P<fence>`{3,}|~{3,})[ \t]*(?P<info>[^`]*)$")
# A user-facing variable: not part of a longer name such as the playbooks' internal __skewsafe_*.
VARIABLE = re.compile(r"(?<!\w)skewsafe_[a-z0-9_]+")


def fenced_blocks(path):
    """Every fenced code block of a Markdown file: (language, line of the opening fence, text, closed)."""
    lines = path.read_text(encoding="utf-8").splitlines()
    blocks, i = [], 0
    while i < len(lines):
        opening = OPENING.match(lines[i])
        if not opening:
            i += 1
            continue
        fence, indent = opening["fence"], len(opening["indent"])
        closing = re.compile(rf"^ *{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        language = (opening["info"].split() or [""])[0].lower()
        start, body = i + 1, []
        i += 1
        while i < len(lines) and not closing.match(lines[i]):
            line = lines[i]
            body.append(line[min(indent, len(line) - len(line.lstrip(" "))) :])
            i += 1
        blocks.append((language, start, "\n".join(body) + "\n", i < len(lines)))
        i += 1
    return blocks


def blocks_of(languages, paths=DOCS):
    return [
        pytest.param(path, line, text, id=f"{path.relative_to(ROOT)}:{line}")
        for path in paths
        for language, line, text, _closed in fenced_blocks(path)
        if language in languages
    ]


def load_generator():
    spec = importlib.util.spec_from_file_location("playbook_reference", GENERATOR)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_playbook_reference_is_current():
    if not GENERATOR.exists() and (ROOT / "MANIFEST.json").exists():
        pytest.skip("an installed collection: hack/ is not shipped")
    expected = load_generator().render(ROOT)
    current = REFERENCE.read_text(encoding="utf-8") if REFERENCE.exists() else ""
    if current != expected:
        diff = difflib.unified_diff(
            current.splitlines(), expected.splitlines(), "docs/playbooks.md", "generated", lineterm="", n=1
        )
        shown = "\n".join(list(diff)[:40])
        pytest.fail(f"docs/playbooks.md is stale; run `python hack/playbook_reference.py`\n{shown}")


def test_fences_are_closed():
    unclosed = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in DOCS
        for _language, line, _text, closed in fenced_blocks(path)
        if not closed
    ]
    assert not unclosed, f"code fences never closed at {', '.join(unclosed)}"


@pytest.mark.parametrize(("path", "line", "text"), blocks_of(YAML))
def test_yaml_example_parses(path, line, text):
    where = f"{path.relative_to(ROOT)}:{line}"
    try:
        list(yaml.safe_load_all(text))
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        at = f" (line {line + 1 + mark.line})" if mark is not None else ""
        pytest.fail(f"the yaml block at {where} does not parse{at}: {exc}")


@pytest.mark.parametrize(("path", "line", "text"), blocks_of(SHELL))
def test_shell_example_parses(path, line, text):
    result = subprocess.run(["bash", "-n"], input=text, capture_output=True, text=True, check=False)
    where = f"{path.relative_to(ROOT)}:{line}"
    # bash counts lines from the block's first line; name the file's line instead
    error = re.sub(r"\bline (\d+)", lambda m: f"line {line + int(m.group(1))}", result.stderr.strip())
    assert result.returncode == 0, f"the shell block at {where} is not valid bash: {error}"


def documented_options():
    meta = yaml.safe_load((ROOT / "playbooks" / "upgrade.meta.yml").read_text(encoding="utf-8"))
    names = set(meta["argument_specs"]["main"]["options"])
    for spec_path in (ROOT / "roles").glob("*/meta/argument_specs.yml"):
        for entry in (yaml.safe_load(spec_path.read_text(encoding="utf-8"))["argument_specs"] or {}).values():
            names |= set((entry or {}).get("options") or {})
    return names


def test_readme_examples_name_only_documented_variables():
    options = documented_options()
    unknown = []
    for language, line, text, _closed in fenced_blocks(ROOT / "README.md"):
        if language not in YAML:
            continue
        for offset, content in enumerate(text.splitlines(), start=1):
            unknown += [f"{name} (README.md:{line + offset})" for name in VARIABLE.findall(content)]
    unknown = [entry for entry in unknown if entry.split()[0] not in options]
    assert not unknown, (
        "README.md's yaml examples name variables that are neither in playbooks/upgrade.meta.yml nor in a role's "
        f"meta/argument_specs.yml: {', '.join(unknown)}"
    )
