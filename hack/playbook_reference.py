"""Write docs/playbooks.md, the playbook and role reference, from the argument specs.

python hack/playbook_reference.py           write docs/playbooks.md
python hack/playbook_reference.py --check   exit 1 if docs/playbooks.md differs from what it would write

Sources: playbooks/upgrade.meta.yml (the playbooks' variables), the plays of playbooks/*.yml and
roles/*/meta/argument_specs.yml (each role's entry points and options). Pure Python 3 and PyYAML;
the same sources always give the same bytes.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
OUTPUT = Path("docs") / "playbooks.md"
COLLECTION = "skewsafe.kubeadm"

# Ansible documentation markup -> Markdown. O(a=b), RV(x), M(ns.coll.mod) all become code.
_CODE_MARKUP = re.compile(r"\b(?:C|V|O|RV|E|M|P)\(([^()]*)\)")
_LINK_MARKUP = re.compile(r"\bL\(([^(),]*),\s*([^()]*)\)")
_URL_MARKUP = re.compile(r"\bU\(([^()]*)\)")
_ITALIC_MARKUP = re.compile(r"\bI\(([^()]*)\)")
_BOLD_MARKUP = re.compile(r"\bB\(([^()]*)\)")
_JINJA = re.compile(r"\{\{.*?\}\}")


def markup(text: str) -> str:
    """One line of Markdown from an Ansible description (string or list of paragraphs)."""
    if isinstance(text, list):
        text = " ".join(str(part) for part in text)
    text = " ".join(str(text).split())
    text = _LINK_MARKUP.sub(lambda m: f"[{m.group(1)}]({m.group(2).strip()})", text)
    text = _URL_MARKUP.sub(lambda m: f"<{m.group(1)}>", text)
    text = _ITALIC_MARKUP.sub(lambda m: f"*{m.group(1)}*", text)
    text = _BOLD_MARKUP.sub(lambda m: f"**{m.group(1)}**", text)
    return _CODE_MARKUP.sub(lambda m: code(m.group(1)), text)


def code(text: str) -> str:
    fence = "``" if "`" in text else "`"
    return f"{fence}{text}{fence}"


def cell(text: str) -> str:
    """Text safe inside a Markdown table cell."""
    return text.replace("|", "\\|")


def type_of(spec: dict) -> str:
    kind = spec.get("type", "str")
    if kind == "list" and spec.get("elements"):
        return f"list of {spec['elements']}"
    return kind


def default_of(spec: dict) -> str:
    if "default" not in spec:
        return ""
    value = spec["default"]
    if isinstance(value, bool):
        return code("true" if value else "false")
    if isinstance(value, str):
        return code(value) if value else code('""')
    if value is None:
        return code("null")
    return code(json.dumps(value, sort_keys=True))


def description_of(spec: dict) -> str:
    text = markup(spec.get("description", ""))
    extras = []
    if spec.get("choices"):
        extras.append("Choices: " + ", ".join(code(str(c)) for c in spec["choices"]) + ".")
    if spec.get("aliases"):
        extras.append("Aliases: " + ", ".join(code(str(a)) for a in spec["aliases"]) + ".")
    return " ".join([text, *extras]).strip()


def options_table(options: dict) -> list[str]:
    lines = ["| name | type | default | required | description |", "|---|---|---|---|---|"]
    for name, spec in options.items():
        spec = spec or {}
        row = [
            code(name),
            type_of(spec),
            default_of(spec),
            "yes" if spec.get("required") else "no",
            description_of(spec),
        ]
        lines.append("| " + " | ".join(cell(part) for part in row) + " |")
    return lines


def load(path: Path):
    return yaml.safe_load(path.read_text(encoding="utf-8"))


def play_title(play: dict) -> str:
    """A play's name without its "Prefix | " part, with Jinja expressions as code."""
    name = str(play.get("name", "")).split(" | ", 1)[-1]
    return _JINJA.sub(lambda m: code(m.group(0)), " ".join(name.split()))


def play_roles(play: dict) -> list[str]:
    """The roles a play runs, from ``roles:`` and from its own include_role/import_role tasks, each with the task
    files (entry points) it runs when that is not only ``main`` (```x`: `components`, `main```)."""
    entries: dict[str, list[str]] = {}
    for role in play.get("roles") or []:
        entries.setdefault(role if isinstance(role, str) else role.get("role") or role.get("name"), []).append("main")
    for section in ("pre_tasks", "tasks", "post_tasks"):
        for task in play.get(section) or []:
            for action in (
                "ansible.builtin.include_role",
                "include_role",
                "ansible.builtin.import_role",
                "import_role",
            ):
                if isinstance(task.get(action), dict):
                    args = task[action]
                    entry = Path(str(args.get("tasks_from") or "main")).stem
                    entries.setdefault(args.get("name"), []).append(entry)
    roles = []
    for role, points in entries.items():
        points = list(dict.fromkeys(points))
        roles.append(code(role) if points == ["main"] else f"{code(role)}: {', '.join(map(code, points))}")
    return roles


def playbook_section(root: Path) -> list[str]:
    lines = [
        "## Playbooks",
        "",
        f"Run them as `{COLLECTION}.<name>` (`ansible-playbook -i inventory.ini {COLLECTION}.upgrade ...`).",
        "Each list shows the plays in the order they run, with their tags: `--tags preflight` runs only",
        "preflight, `--skip-tags etcd_backup` everything but the snapshot. Plays and tasks tagged `always`",
        "(the input validation, the shared settings) run with any selection.",
    ]
    for path in sorted((root / "playbooks").glob("*.yml")):
        if path.name.endswith(".meta.yml"):
            continue
        plays = load(path) or []
        lines += ["", f"### `{COLLECTION}.{path.stem}`", "", f"File: `playbooks/{path.name}`.", ""]
        for number, play in enumerate(plays, start=1):
            entry = f"{number}. {play_title(play)}"
            imported = play.get("ansible.builtin.import_playbook") or play.get("import_playbook")
            if imported and "/" in imported:  # a shared play (playbooks/plays/), not a playbook of its own
                shared = load(path.parent / imported) or []
                entry += f" (`playbooks/{imported}`: " + "; ".join(play_title(p) for p in shared) + ")"
            elif imported:
                entry += f": runs `{COLLECTION}.{Path(imported).stem}`"
            roles = play_roles(play)
            if roles:
                entry += " (role " + ", ".join(roles) + ")"
            tags = play.get("tags") or []
            if tags:
                entry += "; tags " + ", ".join(code(t) for t in ([tags] if isinstance(tags, str) else tags))
            lines.append(entry)
    return lines


def validating_playbooks(root: Path) -> list[str]:
    """The playbooks whose tasks validate the input against upgrade.meta.yml."""
    names = []
    checks = (root / "playbooks" / "plays" / "inputs.yml").read_text(encoding="utf-8")
    if not ("validate_argument_spec" in checks and "upgrade.meta.yml" in checks):
        return names
    for path in sorted((root / "playbooks").glob("*.yml")):
        if "plays/inputs.yml" in path.read_text(encoding="utf-8"):
            names.append(code(f"{COLLECTION}.{path.stem}"))
    return names


def variables_section(root: Path) -> list[str]:
    meta = load(root / "playbooks" / "upgrade.meta.yml")
    main = meta["argument_specs"]["main"]
    lines = [
        "## Playbook variables",
        "",
        markup(meta.get("description", "")),
        "Set them as extra variables (`-e`), in the inventory or in an AWX survey.",
    ]
    checking = validating_playbooks(root)
    if checking:
        names = checking[0] if len(checking) == 1 else ", ".join(checking[:-1]) + " and " + checking[-1]
        lines.append(f"{names} check them against this list before any host is contacted.")
    lines.append("")
    lines += options_table(main.get("options") or {})
    if main.get("examples"):
        lines += ["", "Example:", "", "```sh", *str(main["examples"]).strip().splitlines(), "```"]
    return lines


def roles_section(root: Path) -> list[str]:
    lines = [
        "## Roles",
        "",
        "The playbooks call these roles and set most of their options.",
        "Use the roles directly only in your own playbooks.",
        f"`ansible-doc -t role {COLLECTION}.<role>` prints the same from an installed collection.",
    ]
    for spec_path in sorted((root / "roles").glob("*/meta/argument_specs.yml")):
        role = spec_path.parent.parent.name
        entry_points = (load(spec_path) or {}).get("argument_specs") or {}
        lines += ["", f"### `{COLLECTION}.{role}`"]
        seen = {}
        for entry_name, entry in entry_points.items():
            entry = entry or {}
            lines += ["", f"#### Entry point `{entry_name}`", ""]
            if entry.get("short_description"):
                lines.append(markup(entry["short_description"]) + ".")
            description = entry.get("description")
            if description:
                paragraphs = description if isinstance(description, list) else [description]
                for paragraph in paragraphs:
                    lines += ["", markup(paragraph)]
            options = entry.get("options") or {}
            same = next((name for name, opts in seen.items() if opts == options), None)
            lines.append("")
            if not options:
                lines.append("No options.")
            elif same is not None:
                lines.append(f"Options: the same as entry point `{same}`.")
            else:
                lines += options_table(options)
            seen.setdefault(entry_name, options)
    return lines


def render(root: Path = ROOT) -> str:
    lines = [
        "# Playbook and role reference",
        "",
        "<!-- Generated by hack/playbook_reference.py; do not edit. -->",
        "",
        "Generated by `python hack/playbook_reference.py` from `playbooks/upgrade.meta.yml`, the plays of",
        "`playbooks/*.yml` and `roles/*/meta/argument_specs.yml`. Do not edit it by hand: the unit tests",
        "fail when it differs from what the script writes.",
        "",
        *playbook_section(root),
        "",
        *variables_section(root),
        "",
        *roles_section(root),
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    target = ROOT / OUTPUT
    text = render(ROOT)
    if argv[1:] == ["--check"]:
        current = target.read_text(encoding="utf-8") if target.exists() else ""
        if current != text:
            print(f"{OUTPUT} is stale; run: python hack/playbook_reference.py", file=sys.stderr)
            return 1
        return 0
    if argv[1:]:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    target.write_text(text, encoding="utf-8")
    print(f"wrote {OUTPUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
