"""node_prefetch: the module's option checks and its run through AnsibleModule, commands answered by a fake."""

from __future__ import annotations

import pytest
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args

from ansible_collections.skewsafe.kubeadm.plugins.modules import node_prefetch as module

REPO = "deb [trusted=yes] http://10.214.0.1:8081/core:/stable:/v1.37/deb/ /"


def run(args, monkeypatch, commands=None):
    answer = {}

    def finish(_module, **kwargs):
        answer.update(kwargs)
        raise SystemExit(0)

    def fail(_module, **kwargs):
        answer.update(kwargs, failed=True)
        raise SystemExit(1)

    def run_command(_module, argv, **_kwargs):
        (commands if commands is not None else []).append(argv)
        return 1, "", "not on this test machine"

    monkeypatch.setattr(basic.AnsibleModule, "exit_json", finish)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", fail)
    monkeypatch.setattr(basic.AnsibleModule, "run_command", run_command)
    with patch_module_args(args), pytest.raises(SystemExit):
        module.main()
    return answer


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ({"version": "1.37"}, "version must be a Kubernetes release"),
        ({"version": "1.37.2", "packages": ["kubeadm"]}, "packages need apt_repo_line"),
        (
            {
                "version": "1.37.2",
                "packages": ["kubelet"],
                "apt_repo_line": REPO,
                "kubeadm_images": True,
                "cluster_configuration": {"kind": "ClusterConfiguration"},
            },
            "kubeadm_images and kubeadm_preflight need the target kubeadm",
        ),
        ({"version": "1.37.2", "reserve_mib": -1}, "reserve_mib must be >= 0"),
        ({"version": "1.37.2", "scratch_dir": "/var/lib/"}, "scratch_dir must be a directory of its own"),
    ],
)
def test_bad_options_fail_before_any_command(args, message, monkeypatch):
    commands = []
    got = run(args, monkeypatch, commands)
    assert got["failed"] and message in got["msg"]
    assert commands == []


def test_a_runtime_that_cannot_pull_is_a_problem_not_a_failure(tmp_path, monkeypatch):
    commands = []
    got = run(
        {
            "version": "v1.37.2",
            "images": ["registry.lab:5000/pause:3.10.1"],
            "images_dir": str(tmp_path),
            "scratch_dir": str(tmp_path / "scratch"),
            "cri_socket": "unix:///run/containerd/containerd.sock",
        },
        monkeypatch,
        commands,
    )
    assert not got.get("failed") and got["changed"] is False
    assert got["problems"] == ["cannot pull registry.lab:5000/pause:3.10.1 (rc 1): not on this test machine"]
    assert commands[0][:4] == ["timeout", "--kill-after=10", "900", "crictl"]
    assert list((tmp_path / "scratch").iterdir()) == []  # the run's scratch directory is removed


@pytest.fixture
def seen(monkeypatch):
    """The options the module hands to Prefetch (which runs nothing here)."""
    params = {}

    class Recorder:
        def __init__(self, options, run, check_mode, scratch):
            params.update(options)

        def go(self):
            return {"changed": False, "packages": [], "images": [], "space": [], "problems": [], "fetched_bytes": 0}

    monkeypatch.setattr(module.prefetch, "Prefetch", Recorder)
    return params


@pytest.mark.parametrize(("names", "expected"), [(None, []), ([], []), (["kube-proxy"], ["kube-proxy"])])
def test_kubeadm_images_without_names_means_all_of_them(names, expected, tmp_path, monkeypatch, seen):
    args = {
        "version": "1.37.2",
        "kubeadm_images": True,
        "kubeadm_path": "/usr/bin/kubeadm",
        "cluster_configuration": {"kind": "ClusterConfiguration"},
        "scratch_dir": str(tmp_path),
    }
    if names is not None:
        args["kubeadm_image_names"] = names
    run(args, monkeypatch)
    assert seen["kubeadm_images"] == expected


def test_no_kubeadm_images_unless_asked(tmp_path, monkeypatch, seen):
    run({"version": "1.37.2", "scratch_dir": str(tmp_path)}, monkeypatch)
    assert seen["kubeadm_images"] is None
