"""The playbooks refuse bad inputs in their first play, before any host is contacted; the mvp_enable role checks its
balancer files itself."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from playbook_runner import ansible_playbook

PLAYBOOK = "skewsafe.kubeadm.upgrade"


def upgrade(tmp_path: Path, **extra) -> subprocess.CompletedProcess:
    inventory = tmp_path / "inventory.ini"
    # a host nobody can reach: reaching it at all would fail differently (and slowly)
    inventory.write_text("[kube_control_plane]\ncp1 ansible_host=192.0.2.1\n")
    # a run that gets past the validation writes its report: into tmp_path, never into the checkout
    extra = {"skewsafe_kubernetes_version": "1.37.2", "skewsafe_artifacts_dir": str(tmp_path / "artifacts"), **extra}
    return ansible_playbook(tmp_path, "-i", str(inventory), PLAYBOOK, "-e", json.dumps(extra))


@pytest.mark.parametrize(
    ("files", "rule"),
    [
        ({"skewsafe_balancer_take_out_tasks": "TAKE_OUT"}, "go together"),  # taken out, never put back
        (
            {"skewsafe_balancer_take_out_tasks": "TAKE_OUT", "skewsafe_balancer_put_back_tasks": "put-back.yml"},
            "skewsafe_balancer_put_back_tasks: 'put-back.yml' is relative",
        ),
        (
            {"skewsafe_balancer_take_out_tasks": "TAKE_OUT", "skewsafe_balancer_put_back_tasks": "/nonexistent.yml"},
            "skewsafe_balancer_put_back_tasks: /nonexistent.yml is not a file",
        ),
    ],
    ids=["one-of-two", "relative", "missing"],
)
def test_bad_balancer_files_stop_the_run_before_any_host(tmp_path, files, rule):
    take_out = tmp_path / "take-out.yml"
    take_out.write_text("---\n[]\n")
    files = {k: v.replace("TAKE_OUT", str(take_out)) for k, v in files.items()}
    run = upgrade(tmp_path, **files)
    out = run.stdout + run.stderr
    assert run.returncode != 0, out
    assert "Invalid input for upgrade, nothing was contacted or changed" in out and rule in out, out
    assert "192.0.2.1" not in out and out.count("PLAY [") == 1, out


PLAYBOOKS = ["preflight", "upgrade", "upgrade_path", "mvp_enable", "verify", "etcd_backup", "prefetch"]


@pytest.mark.parametrize(
    "inventory", ["", "[masters]\nm1 ansible_host=192.0.2.1\n[workers]\nw1 ansible_host=192.0.2.2\n"]
)
@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_an_empty_or_misnamed_inventory_stops_every_playbook_in_its_first_play(tmp_path, playbook, inventory):
    (tmp_path / "inventory.ini").write_text(inventory)
    extra = {"skewsafe_artifacts_dir": str(tmp_path / "artifacts")}
    extra.update(
        {"skewsafe_upgrade_path": ["1.37.2"]}
        if playbook == "upgrade_path"
        else {"skewsafe_kubernetes_version": "1.37.2"}
    )
    run = ansible_playbook(
        tmp_path, "-i", str(tmp_path / "inventory.ini"), f"skewsafe.kubeadm.{playbook}", "-e", json.dumps(extra)
    )
    out = run.stdout + run.stderr
    assert run.returncode != 0, out
    assert "skewsafe_control_plane_group: the inventory has no hosts in the group 'kube_control_plane'" in out, out
    if inventory:
        assert "its groups with hosts are masters, workers" in out, out
    assert "192.0.2" not in out and out.count("PLAY [") == 1, out


def test_a_pre_release_target_is_refused_without_the_setting_and_passes_with_it(tmp_path):
    out = upgrade(tmp_path, skewsafe_kubernetes_version="1.38.0-beta.0").stdout
    assert "1.38.0-beta.0 is a pre-release" in out and "skewsafe_allow_prerelease=true" in out, out
    out = upgrade(tmp_path, skewsafe_kubernetes_version="1.38.0-beta.0", skewsafe_allow_prerelease=True).stdout
    assert "is a pre-release" not in out and "PLAY [Preflight" in out, out


def test_good_balancer_files_pass_the_validation(tmp_path):
    files = {}
    for name in ("take_out", "put_back"):
        path = tmp_path / f"{name}.yml"
        path.write_text("---\n[]\n")
        files[f"skewsafe_balancer_{name}_tasks"] = str(path)
    run = upgrade(tmp_path, **files)
    out = run.stdout + run.stderr
    # past the validation, the run goes on to the hosts (here one nobody reaches)
    assert "Check the forms, the inventory's groups and what goes together] ***" in out and "go together" not in out
    assert "PLAY [Preflight" in out, out


def mvp_enable_role(tmp_path: Path, *files: str) -> str:
    """The mvp_enable role on localhost with these balancer files (take out, put back); its output."""
    paths = []
    for name in files:
        path = tmp_path / name
        path.write_text("---\n[]\n")
        paths.append(str(path))
    paths += [""] * (2 - len(paths))
    play = tmp_path / "play.yml"
    play.write_text(
        "- hosts: localhost\n  gather_facts: false\n  roles:\n    - role: skewsafe.kubeadm.mvp_enable\n"
        f"      mvp_enable_take_out_tasks: '{paths[0]}'\n      mvp_enable_put_back_tasks: '{paths[1]}'\n"
        "      skewsafe_apiserver_endpoints: [{name: cp1, url: 'https://192.0.2.1:6443'}]\n"
    )
    run = ansible_playbook(tmp_path, "-i", "localhost,", str(play))
    # this machine has no kube-apiserver manifest: the role always stops, the question is where
    assert run.returncode != 0, run.stdout
    return run.stdout + run.stderr


def test_the_mvp_enable_role_refuses_one_balancer_file_before_it_reads_a_node(tmp_path):
    out = mvp_enable_role(tmp_path, "take-out.yml")
    assert "go together" in out and "Nothing was changed" in out, out
    assert "Read the running kube-apiserver version" not in out, out


def test_the_mvp_enable_role_takes_a_pair_of_balancer_files(tmp_path):
    out = mvp_enable_role(tmp_path, "take-out.yml", "put-back.yml")
    assert "go together" not in out and "TASK [skewsafe.kubeadm.mvp_enable : Enable MVP | Read the running" in out, out


def test_a_run_whose_hosts_refuse_the_connection_writes_a_failed_report_naming_them_unreachable(tmp_path):
    inventory = tmp_path / "inventory.ini"
    # closed ports on loopback: refused at once, nothing leaves the machine
    inventory.write_text(
        "[kube_control_plane]\ncp1 ansible_host=127.0.0.1 ansible_port=9\n"
        "[kube_workers]\nw1 ansible_host=127.0.0.1 ansible_port=9\n"
    )
    extra = {"skewsafe_kubernetes_version": "1.37.2", "skewsafe_artifacts_dir": str(tmp_path / "artifacts")}
    run = ansible_playbook(tmp_path, "-i", str(inventory), PLAYBOOK, "-e", json.dumps(extra))
    assert run.returncode != 0, run.stdout
    reports = sorted((tmp_path / "artifacts" / "reports").glob("upgrade-*.json"))
    assert reports, run.stdout
    report = json.loads(reports[-1].read_text())
    assert report["status"] == "failed", report
    assert [(h["host"], h["outcome"]) for h in report["hosts"]] == [("cp1", "unreachable"), ("w1", "unreachable")]
    assert all("Connection refused" in h["msg"] for h in report["hosts"]), report["hosts"]
