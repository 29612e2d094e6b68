"""The prefetch step as the playbooks run it (playbooks/plays/prefetch.yml and roles/prefetch), in seconds: the API
reads and node_prefetch answer from recorded states (stub_lab); what each node is asked and how the run ends are real.
"""

from __future__ import annotations

import pytest
from stub_lab import StubLab

CLUSTER = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.36.5\n"


def fetched(problems=()):
    """node_prefetch's result shape (plugins/modules/node_prefetch.py RETURN)."""
    return {
        "changed": False,
        "packages": [{"name": "kubeadm", "fetched": False, "fetch": False, "installed": False, "size": 0}],
        "images": [{"image": "registry.k8s.io/pause:3.10.1", "present": True, "pulled": False}],
        "space": [],
        "problems": list(problems),
        "fetched_bytes": 0,
        "kubeadm_preflight": {"step": "node", "ran": True, "rc": 0, "errors": [], "warnings": []},
    }


@pytest.fixture
def lab(tmp_path):
    lab = StubLab(tmp_path)
    lab.overlay({"skewsafe.kubeadm": ["node_prefetch"], "kubernetes.core": ["k8s_info"]})
    lab.answers["*"]["k8s_info"] = [
        {"when": {"kind": "ConfigMap"}, "answer": {"resources": [{"data": {"ClusterConfiguration": CLUSTER}}]}},
        {"when": {"kind": "DaemonSet"}, "answer": {"resources": [{"metadata": {"name": "kube-proxy"}}]}},
        # CoreDNS runs on cp1 and w2
        {
            "when": {"kind": "Pod"},
            "answer": {"resources": [{"spec": {"nodeName": "cp1"}}, {"spec": {"nodeName": "w2"}}]},
        },
    ]
    lab.answers["*"]["node_prefetch"] = fetched()
    return lab


def asked(lab):
    return {c["host"]: c["args"] for c in lab.calls("node_prefetch")}


def test_each_node_is_asked_for_its_own_step_and_images(lab):
    run = lab.run(
        "skewsafe.kubeadm.prefetch",
        extra={"skewsafe_kubernetes_version": "1.37.2"},
        host_vars={
            h: {"control_plane_upgrade_ignore_preflight_errors": "\"['SystemVerification']\""}
            for h in ("cp1", "cp2", "cp3")
        },
    )
    assert run.returncode == 0, run.stdout[-3000:]
    args = asked(lab)
    assert set(args) == {"cp1", "cp2", "cp3", "w1", "w2"}
    # the first control plane runs kubeadm upgrade apply, the others kubeadm upgrade node: each its own preflight
    assert {h: a["kubeadm_preflight"] for h, a in args.items()} == {
        "cp1": "apply",
        "cp2": "node",
        "cp3": "node",
        "w1": "node",
        "w2": "node",
    }
    # control planes: every image kubeadm lists; workers: kube-proxy, pause, and CoreDNS only where it runs
    assert [args[h].get("kubeadm_image_names") for h in ("cp1", "cp2")] == [None, None]
    assert args["w1"]["kubeadm_image_names"] == ["kube-proxy", "pause"]
    assert args["w2"]["kubeadm_image_names"] == ["kube-proxy", "pause", "coredns"]
    # the checks the real step ignores, per role
    assert args["cp2"]["ignore_preflight_errors"] == ["SystemVerification"]
    assert args["w1"]["ignore_preflight_errors"] == []
    assert args["cp1"]["etcd_data_dir"] == "/var/lib/etcd" and "etcd_data_dir" not in args["w1"]
    assert "kubeadm 1.37.2's preflight of 'kubeadm upgrade node': passed" in run.stdout


def test_every_node_that_cannot_take_its_step_is_named_in_one_failure(lab):
    lab.answers["w1"] = {"node_prefetch": fetched(["apt-get update through the node's own sources failed"])}
    lab.answers["cp2"] = {"node_prefetch": fetched(["cannot pull registry.k8s.io/kube-scheduler:v1.37.2"])}
    run = lab.run("skewsafe.kubeadm.prefetch", extra={"skewsafe_kubernetes_version": "1.37.2"})
    out = run.stdout
    assert run.returncode == 2, out[-3000:]
    assert "2 node(s) cannot take their upgrade step to 1.37.2" in out, out[-3000:]
    assert "cp2: cannot pull registry.k8s.io/kube-scheduler:v1.37.2" in out and "w1: apt-get update" in out
    assert "Nothing was installed or changed on any node" in out
    # every node was tried before the stop
    assert set(asked(lab)) == {"cp1", "cp2", "cp3", "w1", "w2"}


def test_a_named_first_control_plane_runs_the_apply_preflight(lab):
    run = lab.run(
        "skewsafe.kubeadm.prefetch",
        extra={"skewsafe_kubernetes_version": "1.37.2", "skewsafe_first_control_plane": "cp2"},
    )
    assert run.returncode == 0, run.stdout[-3000:]
    assert {h: a["kubeadm_preflight"] for h, a in asked(lab).items() if h.startswith("cp")} == {
        "cp1": "node",
        "cp2": "apply",
        "cp3": "node",
    }


@pytest.fixture
def upgrade_lab(tmp_path):
    lab = StubLab(tmp_path)
    lab.overlay({"skewsafe.kubeadm": ["node_prefetch", "run_lock"], "kubernetes.core": ["k8s_info"]})
    lab.answers["*"]["k8s_info"] = [
        {"when": {"kind": "ConfigMap"}, "answer": {"resources": [{"data": {"ClusterConfiguration": CLUSTER}}]}},
        {"when": {"kind": "DaemonSet"}, "answer": {"resources": []}},
        {"when": {"kind": "Pod"}, "answer": {"resources": []}},
    ]
    lab.answers["*"]["node_prefetch"] = fetched()
    lab.answers["*"]["run_lock"] = [
        {"when": {"state": "absent"}, "answer": {"changed": True, "released": True}},
        {"when": {}, "answer": {"changed": True, "action": "create", "taken_over_from": None}},
    ]
    return lab


def test_an_upgrade_stopped_in_its_prefetch_step_reports_the_run_and_gives_up_its_lock(upgrade_lab):
    lab = upgrade_lab
    lab.answers["w2"] = {"node_prefetch": fetched(["cannot pull registry.k8s.io/kube-proxy:v1.37.2"])}
    # the prefetch step alone (with the plays tagged always: inputs, start, lock)
    run = lab.run("skewsafe.kubeadm.upgrade", "--tags", "prefetch", extra={"skewsafe_kubernetes_version": "1.37.2"})
    out = run.stdout
    assert run.returncode == 2, out[-4000:]
    assert "1 node(s) cannot take their upgrade step to 1.37.2: w2: cannot pull" in out, out[-4000:]
    states = [c["args"].get("state", "present") for c in lab.calls("run_lock")]
    assert states == ["present", "absent"], lab.calls("run_lock")
    [report] = (lab.tmp / "artifacts" / "reports").glob("upgrade-*.json")
    body = report.read_text()
    assert '"status": "failed"' in body and "cannot pull registry.k8s.io/kube-proxy:v1.37.2" in body, body[:3000]
    # the hosts stopped by that one failure say so, not "see the output above"
    assert "stopped before its own step" in body and "see the output above" not in body, body[:3000]
    # the snapshot, MVP and node plays were never reached
    assert "PLAY [Etcd backup" not in out and "PLAY [Enable MVP" not in out


def test_an_imported_playbook_renews_the_lock_under_the_name_of_the_one_that_took_it(upgrade_lab):
    lab = upgrade_lab
    run = lab.run("skewsafe.kubeadm.upgrade", "--tags", "prefetch", extra={"skewsafe_kubernetes_version": "1.37.2"})
    assert run.returncode == 0, run.stdout[-4000:]
    calls = [c["args"] for c in lab.calls("run_lock")]
    # taken by upgrade, renewed by the mvp_enable playbook it imports, given up at its end: a second run is always
    # told "playbook upgrade"
    assert [c.get("playbook") for c in calls if c.get("state", "present") == "present"] == ["upgrade", "upgrade"]
    assert calls[-1].get("state") == "absent"
