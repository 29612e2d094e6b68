"""static_pod_manifests_info: real files in a temporary directory, run through AnsibleModule."""

from __future__ import annotations

import base64
import json

import pytest
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.skewsafe.kubeadm.plugins.modules import static_pod_manifests_info as module
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _node_manifests

APISERVER = "apiVersion: v1\nkind: Pod\nspec:\n  containers:\n  - image: registry.k8s.io/kube-apiserver:v1.37.2\n"


def run(args, monkeypatch):
    """The module's exit_json/fail_json answer as a dict (failed set on fail_json)."""
    answer = {}

    def finish(_module, **kwargs):
        answer.update(kwargs)
        raise SystemExit(0)

    def fail(_module, **kwargs):
        answer.update(kwargs, failed=True)
        raise SystemExit(1)

    monkeypatch.setattr(basic.AnsibleModule, "exit_json", finish)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail)
    with patch_module_args(args), pytest.raises(SystemExit):
        module.main()
    return answer


def test_reads_present_and_absent_manifests_in_one_run(tmp_path, monkeypatch):
    (tmp_path / "kube-apiserver.yaml").write_text(APISERVER)
    got = run({"manifests_dir": str(tmp_path), "names": ["kube-apiserver", "etcd"]}, monkeypatch)
    assert got["changed"] is False and not got.get("failed"), got
    entry = got["manifests"]["kube-apiserver"]
    assert base64.b64decode(entry["content"]).decode() == APISERVER
    assert entry["source"] == str(tmp_path / "kube-apiserver.yaml") and entry["encoding"] == "base64"
    assert got["manifests"]["etcd"] is None
    json.dumps(got)  # what the controller receives


def test_must_exist_fails_naming_the_missing_manifest(tmp_path, monkeypatch):
    (tmp_path / "kube-apiserver.yaml").write_text(APISERVER)
    got = run(
        {"manifests_dir": str(tmp_path), "names": ["kube-apiserver", "kube-scheduler"], "must_exist": True}, monkeypatch
    )
    assert got["failed"] and got["msg"] == f"the kube-scheduler manifest does not exist: {tmp_path}/kube-scheduler.yaml"


def test_a_directory_in_place_of_a_manifest_fails_naming_it(tmp_path, monkeypatch):
    (tmp_path / "kube-scheduler.yaml").mkdir()
    got = run({"manifests_dir": str(tmp_path), "names": ["kube-scheduler"]}, monkeypatch)
    assert got["failed"] and "cannot read the kube-scheduler manifest" in got["msg"], got


@pytest.mark.parametrize("name", ["../etc/shadow", "a/b", "..", ""])
def test_refuses_a_name_with_a_directory(tmp_path, monkeypatch, name):
    got = run({"manifests_dir": str(tmp_path), "names": [name]}, monkeypatch)
    assert got["failed"] and "without a directory" in got["msg"]


def test_the_action_helper_decodes_what_the_module_returns(tmp_path):
    (tmp_path / "kube-apiserver.yaml").write_text(APISERVER)

    def run_module(name, args):
        assert name == _node_manifests.MODULE
        found, error = module.read_manifests(args["manifests_dir"], args["names"])
        return {"failed": True, "msg": error} if error else {"manifests": found}

    got = _node_manifests.read(run_module, str(tmp_path), ["kube-apiserver", "etcd"])
    assert got["etcd"] is None
    assert got["kube-apiserver"]["spec"]["containers"][0]["image"].endswith(":v1.37.2")


def test_the_action_helper_refuses_an_answer_without_a_manifest():
    with pytest.raises(_node_manifests.NodeManifestError, match="did not answer for the etcd manifest"):
        _node_manifests.read(lambda name, args: {"manifests": {}}, "/m", ["etcd"])
