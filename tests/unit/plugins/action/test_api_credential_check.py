"""The api_credential_check action: refusals come back as a failed result (so rescue and failed_when see them)."""

from __future__ import annotations

from unittest import mock

import yaml

from ansible_collections.skewsafe.kubeadm.plugins.action import api_credential_check as action_mod


def run(args, monkeypatch, env=None):
    for name in (
        "K8S_AUTH_KUBECONFIG",
        "K8S_AUTH_HOST",
        "K8S_AUTH_VERIFY_SSL",
        "K8S_AUTH_VALIDATE_CERTS",
        "K8S_AUTH_CONTEXT",
    ):
        monkeypatch.delenv(name, raising=False)
    for name, value in (env or {}).items():
        monkeypatch.setenv(name, value)
    task = mock.MagicMock()
    task.args = args
    task.check_mode = False
    task.async_val = 0
    action = action_mod.ActionModule(
        task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None
    )
    return action.run(task_vars={})


def write(tmp_path, insecure):
    cluster = {"server": "https://10.0.0.10:6443"}
    if insecure:
        cluster["insecure-skip-tls-verify"] = True
    path = tmp_path / "kc"
    path.write_text(
        yaml.safe_dump(
            {
                "clusters": [{"name": "p", "cluster": cluster}],
                "contexts": [{"name": "c", "context": {"cluster": "p", "user": "u"}}],
                "users": [{"name": "u", "user": {"token": "T"}}],
                "current-context": "c",
            }
        )
    )
    path.chmod(0o600)
    return path


def test_a_refusal_is_a_failed_result_with_every_reason(tmp_path, monkeypatch):
    result = run({"kubeconfig": str(write(tmp_path, True))}, monkeypatch, env={"K8S_AUTH_VERIFY_SSL": "false"})
    assert result["failed"] is True
    assert result["msg"].startswith("Refused before any API call, nothing was contacted: ")
    assert len(result["refusals"]) == 2 and result["source"] == "variable" and result["cluster"] == "p"


def test_a_good_credential_passes_unchanged(tmp_path, monkeypatch):
    result = run({"kubeconfig": str(write(tmp_path, False))}, monkeypatch)
    assert not result.get("failed") and result["changed"] is False and result["refusals"] == []
    assert result["server"] == "https://10.0.0.10:6443"


def test_relative_paths_start_at_working_dir(tmp_path, monkeypatch):
    write(tmp_path, False)
    result = run({"kubeconfig": "kc", "working_dir": str(tmp_path)}, monkeypatch)
    assert result["kubeconfig"] == str(tmp_path / "kc") and not result.get("failed")


def test_an_inline_kubeconfig_and_bad_arguments_are_failed_results(monkeypatch):
    assert run({"kubeconfig": {"clusters": []}}, monkeypatch)["msg"].startswith("kubeconfig must be a path")
    result = run({"endpoints": "not-a-list-of-dicts"}, monkeypatch)
    assert result["failed"] is True and "endpoints" in result["msg"]
