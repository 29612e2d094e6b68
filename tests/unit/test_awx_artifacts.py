"""The AWX survey and workflow shipped in docs/awx match the playbooks' argument specs."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[2]
SURVEY_TYPES = {
    "text": "str",
    "textarea": "str",
    "password": "str",
    "integer": "int",
    "float": "float",
    "multiplechoice": "str",
    "multiselect": "list",
}


def options():
    meta = yaml.safe_load((ROOT / "playbooks" / "upgrade.meta.yml").read_text())
    return meta["argument_specs"]["main"]["options"]


def test_survey_variables_are_playbook_options_with_the_same_type():
    survey = json.loads((ROOT / "docs" / "awx" / "survey-upgrade.json").read_text())
    opts = options()
    assert survey["spec"], "empty survey"
    for question in survey["spec"]:
        name = question["variable"]
        assert name in opts, f"survey variable {name} is not an option of playbooks/upgrade.meta.yml"
        assert "." not in name, "dotted survey variables only reach the job as prompt-on-launch extra vars"
        assert SURVEY_TYPES[question["type"]] == opts[name]["type"], name
        if question["required"]:
            assert opts[name].get("required") or "default" in opts[name], name
        if "default" in opts[name] and question.get("default") not in ("", None):
            assert question["default"] == opts[name]["default"], name
        if question["type"] == "integer":
            assert question["min"] <= question["default"] <= question["max"], name
        if question["type"] == "multiplechoice":  # AWX takes the choices one per line
            assert question["choices"].split("\n") == opts[name]["choices"], name
        if opts[name].get("required"):
            assert question["required"], f"{name} is required by the playbook"


def test_required_playbook_options_are_asked():
    survey = json.loads((ROOT / "docs" / "awx" / "survey-upgrade.json").read_text())
    asked = {q["variable"] for q in survey["spec"]}
    assert {n for n, o in options().items() if o.get("required")} <= asked


def test_workflow_has_an_approval_before_the_upgrade():
    workflow = yaml.safe_load((ROOT / "docs" / "awx" / "workflow-upgrade.yml").read_text())
    nodes = {n["identifier"]: n for n in workflow["workflow_nodes"]}
    assert nodes["preflight"]["related"]["success_nodes"] == [{"identifier": "approve"}]
    assert nodes["approve"]["unified_job_template"]["type"] == "workflow_approval"
    assert nodes["approve"]["unified_job_template"]["timeout"] > 0
    assert nodes["approve"]["related"]["success_nodes"] == [{"identifier": "upgrade"}]
