from __future__ import annotations

import copy
from pathlib import Path

import pytest

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._preflight import assess
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._report import build, markdown

CLUSTER_CFG = "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.36.5\n"


def node(name, ready=True, cordoned=False):
    return {
        "metadata": {"name": name},
        "spec": {"unschedulable": cordoned} if cordoned else {},
        "status": {"conditions": [{"type": "Ready", "status": "True" if ready else "False"}]},
    }


def host(role, version="v1.36.5", **extra):
    facts = {"role": role, "kubelet_version": version, "expiring_certs": [], "missing_packages": []}
    if role == "control_plane":
        facts["apiserver_version"] = version
    facts.update(extra)
    return facts


@pytest.fixture
def data():
    return {
        "target": "1.37.2",
        "first_control_plane": "cp-1",
        "require_mvp": True,
        "hosts": {
            "cp-1": host("control_plane", node_name="cp-1", hostname="cp-1"),
            "cp-2": host("control_plane", node_name="cp-2", hostname="cp-2"),
            "w-1": host("worker", node_name="w-1"),
        },
        "nodes": [node("cp-1"), node("cp-2"), node("w-1")],
        "pods": [{"metadata": {"name": "etcd-cp-1"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}],
        "kubeadm_config": CLUSTER_CFG,
        "mvp": {"passed": True, "msg": "MVP proved"},
    }


def test_healthy_cluster_has_no_problems_and_a_plan(data):
    result = assess(data)
    assert result["problems"] == []
    assert result["cluster_version"] == "1.36.5"
    assert result["steps"] == ["1.37.2"]
    roles = {p["node"]: p["role"] for p in result["plan"]}
    assert roles == {"cp-1": "first_control_plane", "cp-2": "control_plane", "w-1": "worker"}
    # the default order: every control plane's components, then their kubelets, then the workers
    assert [(s["node"], s["phase"]) for s in result["order"]] == [
        ("cp-1", "control-plane components"),
        ("cp-2", "control-plane components"),
        ("cp-1", "control-plane kubelet"),
        ("cp-2", "control-plane kubelet"),
        ("w-1", "worker"),
    ]


def test_the_plan_follows_the_control_plane_order(data):
    kubeadms = dict(data, control_plane_order="node_by_node")
    result = assess(kubeadms)
    assert result["problems"] == []
    assert [(s["node"], s["phase"]) for s in result["order"]] == [
        ("cp-1", "control plane"),
        ("cp-2", "control plane"),
        ("w-1", "worker"),
    ]
    assert result["plan"][0]["action"] == "upgrade (kubeadm upgrade apply, then the MVP gate, then the kubelet)"
    assert "once every control plane's components" in assess(data)["plan"][0]["action"]
    assert "must be one of components_first, node_by_node" in assess(dict(data, control_plane_order="x"))["problems"][0]


def test_every_problem_is_reported_at_once(data):
    bad = copy.deepcopy(data)
    bad["target"] = "1.38.0"
    bad["nodes"][2] = node("w-1", ready=False)
    bad["pods"][0]["status"]["conditions"][0]["status"] = "False"
    bad["kubeadm_config"] = (
        "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nfeatureGates:\n  ControlPlaneKubeletLocalMode: true\n"
    )
    bad["hosts"]["cp-2"]["hostname"] = "cp-1"
    bad["hosts"]["cp-1"]["expiring_certs"] = ["apiserver.crt"]
    bad["hosts"]["cp-1"]["missing_packages"] = ["kubeadm"]
    bad["mvp"] = {"passed": False, "msg": "MVP not proved: cp-2: kube-apiserver runs without --peer-ca-file"}
    problems = assess(bad)["problems"]
    joined = "\n".join(problems)
    for needle in (
        "skips 1 minor",
        "node w-1: not Ready",
        "etcd-cp-1: not Ready",
        "v1beta3",
        "ControlPlaneKubeletLocalMode",
        "used by 2 control planes",
        "apiserver.crt expires",
        "kubeadm 1.38.0 not found",
        "mvp_enable",
    ):
        assert needle in joined, needle


def test_downgrade_and_bad_target(data):
    data["target"] = "1.36.1"
    assert any("does not downgrade" in p for p in assess(data)["problems"])
    data["target"] = "v1.37"
    assert assess(data)["problems"] == ["target: 'v1.37' is not a Kubernetes version like 1.37.2 or 1.38.0-rc.1"]


def test_mvp_optional_when_the_upgrade_enables_it(data):
    data["mvp"] = {"passed": False, "msg": "nope"}
    data["require_mvp"] = False
    assert assess(data)["problems"] == []


def test_half_finished_upgrade_must_finish_first(data):
    data["hosts"]["cp-1"]["apiserver_version"] = "v1.37.0"
    data["target"] = "1.37.2"
    assert any("finish the upgrade in progress" in p for p in assess(data)["problems"])
    data["target"] = "1.37.0"  # resuming the same target is fine
    assert assess(data)["problems"] == []


def test_report_and_markdown():
    nodes = [
        {
            "node": "cp-1",
            "role": "first control plane",
            "from": "v1.36.5",
            "to": "v1.37.2",
            "action": "upgraded",
            "started": "2026-11-29T10:00:00+00:00",
            "finished": "2026-11-29T10:03:30+00:00",
            "mvp": {
                "mode": "mixed",
                "elapsed": 1.5,
                "probes": [
                    {
                        "server": "cp-2",
                        "gvr": "storagemigration.k8s.io/v1/storageversionmigrations",
                        "status": 200,
                        "status_local": 404,
                        "rerouted_before": 0,
                        "rerouted_after": 1,
                    }
                ],
            },
        },
        {"node": "w-1", "role": "worker", "from": "v1.37.2", "to": "v1.37.2", "action": "skipped (already at target)"},
        {
            "node": "w-2",
            "role": "worker",
            "from": "v1.36.5",
            "to": "v1.37.2",
            "action": "upgraded",
            "kept_cordoned": True,
        },
    ]
    report = build(
        nodes,
        "1.37.2",
        "1.36.5",
        {"path": "/b/x.db", "sha256": "ab" * 32},
        "2026-11-29T10:00:00+00:00",
        "2026-11-29T10:05:00+00:00",
    )
    assert report["upgraded"] == ["cp-1", "w-2"] and report["skipped"] == ["w-1"]
    assert report["kept_cordoned"] == ["w-2"]
    assert report["nodes"][0]["seconds"] == 210.0 and report["seconds"] == 300.0
    text = markdown(report)
    assert (
        "| cp-1 | first control plane | v1.36.5 | v1.37.2 | upgraded | 210.0 | mixed: 1/1 probes proxied, 1.5 s |"
        in text
    )
    assert (
        "GET storagemigration.k8s.io/v1/storageversionmigrations` on cp-2: 200 through a peer, "
        "404 served locally (x-kubernetes-peer-proxied: true)" in text
    )
    assert "etcd snapshot: `/b/x.db`" in text
    assert "left cordoned (cordoned before the run, not by skewsafe.kubeadm): w-2" in text


def test_report_shows_the_order_of_the_run():
    def at(minute):
        return f"2026-12-03T10:{minute:02d}:00+00:00"

    def cp(name, role, components, kubelet, action="upgraded"):
        return {
            "node": name,
            "role": role,
            "from": "v1.36.5",
            "to": "v1.37.2",
            "action": action,
            "started": at(components[0]),
            "finished": at(kubelet[1]),
            "steps": [
                {
                    "step": "components",
                    "action": components[2],
                    "started": at(components[0]),
                    "finished": at(components[1]),
                },
                {"step": "kubelet", "action": kubelet[2], "started": at(kubelet[0]), "finished": at(kubelet[1])},
            ],
        }

    nodes = [
        cp("cp-1", "first control plane", (0, 2, "kubeadm upgrade apply"), (4, 5, "upgraded")),
        cp("cp-2", "control plane", (2, 4, "kubeadm upgrade node"), (5, 6, "upgraded")),
        {
            "node": "w-1",
            "role": "worker",
            "from": "v1.36.5",
            "to": "v1.37.2",
            "action": "upgraded",
            "started": at(6),
            "finished": at(7),
        },
    ]
    report = build(nodes, "1.37.2", "1.36.5")
    assert [(s["node"], s["step"], s["action"], s["seconds"]) for s in report["order"]] == [
        ("cp-1", "control-plane components", "kubeadm upgrade apply", 120.0),
        ("cp-2", "control-plane components", "kubeadm upgrade node", 120.0),
        ("cp-1", "control-plane kubelet", "upgraded", 60.0),
        ("cp-2", "control-plane kubelet", "upgraded", 60.0),
        ("w-1", "worker", "upgraded", 60.0),
    ]
    text = markdown(report)
    assert "## Order of the run" in text
    assert "1. cp-1: control-plane components (kubeadm upgrade apply), 120.0 s" in text
    assert "3. cp-1: control-plane kubelet (upgraded), 60.0 s" in text
    assert "5. w-1: worker (upgraded), 60.0 s" in text
    # the row still spans the whole node, both phases
    assert report["nodes"][0]["seconds"] == 300.0


def test_report_leaves_out_rows_of_an_earlier_hop():
    # upgrade_path.yml: hop 1.36.5 recorded cp-2, hop 1.37.2 stopped before reaching it.
    nodes = [
        {"node": "cp-1", "role": "first control plane", "from": "v1.36.5", "to": "v1.37.2", "action": "upgraded"},
        {"node": "cp-2", "role": "control plane", "from": "v1.35.4", "to": "v1.36.5", "action": "upgraded"},
    ]
    report = build(nodes, "1.37.2")
    assert [r["node"] for r in report["nodes"]] == ["cp-1"] and report["upgraded"] == ["cp-1"]
    assert "| cp-2 |" not in markdown(report)


def test_disruption_budgets_that_never_allow_an_eviction_are_named(data):
    def pdb(name, spec, allowed, expected):
        return {
            "metadata": {"namespace": "db", "name": name},
            "spec": spec,
            "status": {"disruptionsAllowed": allowed, "expectedPods": expected},
        }

    data["pdbs"] = [
        pdb("all", {"minAvailable": 3}, 0, 3),
        pdb("pct", {"minAvailable": "100%"}, 0, 2),
        pdb("none", {"maxUnavailable": 0}, 0, 2),
        pdb("healing", {"minAvailable": 2}, 0, 3),  # one pod not ready yet: may allow one later
        pdb("fine", {"minAvailable": 2}, 1, 3),
        pdb("empty", {"minAvailable": 1}, 0, 0),
    ]
    problems = [p for p in assess(data)["problems"] if p.startswith("pdb ")]
    assert [p.split(":", maxsplit=1)[0] for p in problems] == [
        "pdb db/all (minAvailable 3 of 3 pods)",
        "pdb db/pct (minAvailable 100% of 2 pods)",
        "pdb db/none (maxUnavailable 0)",
    ]


@pytest.mark.parametrize(
    "text, message",
    [
        ("apiVersion: kubeadm.k8s.io/v1beta2\nkind: ClusterConfiguration\n", "unknown ClusterConfiguration apiVersion"),
        ("apiVersion: kubeadm.k8s.io/v1beta4\nkind: InitConfiguration\n", "no ClusterConfiguration document found"),
        ("apiVersion: [kubeadm", "malformed YAML"),
    ],
)
def test_unreadable_kubeadm_config_is_a_problem_not_a_crash(data, text, message):
    data["kubeadm_config"] = text
    problems = [p for p in assess(data)["problems"] if p.startswith("kubeadm-config: ")]
    assert len(problems) == 1 and message in problems[0], problems


# kubeadm-config as kubeadm 1.35.4 wrote it (tests/unit/plugins/module_utils/fixtures/README.md).
ALPHA_CFG = (
    Path(__file__).parents[1] / "module_utils" / "fixtures" / "kubeadm-config-configmap-v1.35.4.yaml.txt"
).read_text()
PEER_CA_ARG = "  - name: peer-ca-file\n    value: /etc/kubernetes/pki/ca.crt\n"
GATE_VALUE = "APIServerIdentity=true,UnknownVersionInteroperabilityProxy=true"


@pytest.fixture
def alpha(data):
    """A 1.35.4 cluster (MVP alpha) going to 1.36.5."""
    data["target"] = "1.36.5"
    for facts in data["hosts"].values():
        facts["kubelet_version"] = "v1.35.4"
        if "apiserver_version" in facts:
            facts["apiserver_version"] = "v1.35.4"
    return data


def mvp_problems(result):
    return [p for p in result["problems"] if "UnknownVersionInteroperabilityProxy" in p]


def test_alpha_stock_configuration_has_no_mvp_problem(alpha):
    alpha["kubeadm_config"] = ALPHA_CFG
    assert assess(alpha)["problems"] == []


def test_alpha_flag_and_gate_together_have_no_problem(alpha):
    alpha["kubeadm_config"] = ALPHA_CFG.replace(
        "value: APIServerIdentity=true\n", f"value: {GATE_VALUE}\n" + PEER_CA_ARG
    )
    assert assess(alpha)["problems"] == []


def test_alpha_flag_without_gate_is_a_problem(alpha):
    alpha["kubeadm_config"] = ALPHA_CFG.replace("  - name: profiling\n", PEER_CA_ARG + "  - name: profiling\n")
    (problem,) = mvp_problems(assess(alpha))
    assert problem.startswith("kubeadm-config: ")
    assert "would refuse to start" in problem and "off by default on 1.35.4" in problem


def test_alpha_gate_without_flag_is_a_problem(alpha):
    alpha["kubeadm_config"] = ALPHA_CFG.replace("value: APIServerIdentity=true\n", f"value: {GATE_VALUE}\n")
    (problem,) = mvp_problems(assess(alpha))
    assert "never proxy" in problem


def test_flag_alone_is_fine_on_a_default_on_running_version(alpha):
    # the running version decides, not kubeadm-config's kubernetesVersion: 1.36 servers need no gate
    for facts in alpha["hosts"].values():
        facts["kubelet_version"] = "v1.36.5"
        if "apiserver_version" in facts:
            facts["apiserver_version"] = "v1.36.5"
    alpha["target"] = "1.37.2"
    alpha["kubeadm_config"] = ALPHA_CFG.replace("  - name: profiling\n", PEER_CA_ARG + "  - name: profiling\n")
    assert mvp_problems(assess(alpha)) == []


def test_report_names_the_snapshot_on_the_node_and_a_skipped_backup():
    kept = markdown(build([], "1.37.2", etcd_backup={"node_path": "/n/x.db", "path": "/c/x.db", "sha256": "cd" * 32}))
    assert "etcd snapshot: `/n/x.db` and `/c/x.db` (sha256 `cdcdcdcdcdcdcdcd…`)" in kept
    node_only = markdown(build([], "1.37.2", etcd_backup={"node_path": "/n/x.db", "path": None, "sha256": "cd" * 32}))
    assert "etcd snapshot: `/n/x.db` (sha256" in node_only
    skipped = markdown(build([], "1.37.2", etcd_backup={"skipped": True, "reason": "external etcd (https://e:2379)"}))
    assert "etcd snapshot: none taken by this run (external etcd (https://e:2379))" in skipped


def test_manifest_drift_is_a_problem_unless_accepted(data):
    drift = {
        "compared": ["kube-apiserver"],
        "lost": ["kube-apiserver: flag --audit-log-path=/var/log/audit.log"],
        "altered": ["kube-scheduler: flag --bind-address: 0.0.0.0 -> 127.0.0.1"],
        "accepted": False,
    }
    data["hosts"]["cp-2"]["manifest_drift"] = drift
    problems = assess(data)["problems"]
    assert len(problems) == 1 and problems[0].startswith("node cp-2: the live control-plane manifests differ")
    assert "flag --audit-log-path=/var/log/audit.log; kube-scheduler: flag --bind-address" in problems[0]
    assert "skewsafe_kubeadm_patches_dir" in problems[0]
    drift["accepted"] = True
    assert assess(data)["problems"] == []
    data["hosts"]["cp-2"]["manifest_drift"] = {"compared": [], "lost": [], "altered": [], "skipped": "in progress"}
    assert assess(data)["problems"] == []


def test_kubelet_config_drift_is_a_problem_on_a_node_the_run_upgrades_unless_accepted(data):
    drift = {
        "compared": ["/var/lib/kubelet/config.yaml"],
        "lost": ["kubeReserved.memory: '1Gi'"],
        "altered": ["maxPods: 250 -> 110"],
        "accepted": False,
    }
    data["hosts"]["w-1"]["kubelet_config_drift"] = drift
    problems = assess(data)["problems"]
    assert problems == [
        "node w-1: kubeadm upgrade node rewrites /var/lib/kubelet/config.yaml from the ConfigMap kube-system/kubelet-config"
        " (and the patches directory), which would drop or change: kubeReserved.memory: '1Gi'; maxPods: 250 -> 110."
        " Carry them in that ConfigMap (every node) or a kubeletconfiguration patch in skewsafe_kubeadm_patches_dir"
        " (this node), or accept the loss with skewsafe_accept_kubelet_config_drift=true"
    ]
    drift["accepted"] = True
    assert assess(data)["problems"] == []
    # a node whose kubelet already runs the target is not upgraded again: nothing of its file is rewritten
    drift["accepted"] = False
    data["hosts"]["w-1"]["kubelet_version"] = "v1.37.2"
    assert not [p for p in assess(data)["problems"] if "kubelet-config" in p]
    data["hosts"]["w-1"]["kubelet_config_drift"] = {
        "compared": [],
        "lost": [],
        "altered": [],
        "skipped": "dry run failed",
    }
    data["hosts"]["w-1"]["kubelet_version"] = "v1.36.5"
    assert assess(data)["problems"] == []


def test_a_control_plane_mid_upgrade_may_be_restarting(data):
    """Rerun right after a kill in `kubeadm upgrade apply`: cp-1's kube-apiserver runs the target and restarts,
    its kubelet cannot report (Node Unknown, its Pods not Ready). Not a problem there; anywhere else it is."""
    data["hosts"]["cp-1"]["apiserver_version"] = "v1.37.2"
    data["nodes"][0] = node("cp-1", ready=False)
    restarting = {"metadata": {"name": "kube-apiserver-cp-1"}, "spec": {"nodeName": "cp-1"}, "status": {}}
    data["pods"].append(restarting)
    assert assess(data)["problems"] == []
    data["pods"].append({"metadata": {"name": "kube-apiserver-cp-2"}, "spec": {"nodeName": "cp-2"}, "status": {}})
    data["nodes"][1] = node("cp-2", ready=False)
    assert assess(data)["problems"] == ["node cp-2: not Ready", "pod kube-system/kube-apiserver-cp-2: not Ready"]
    # not mid-upgrade (every control plane at one version): a not-Ready Pod is a problem again
    data["hosts"]["cp-1"]["apiserver_version"] = "v1.36.5"
    assert "pod kube-system/kube-apiserver-cp-1: not Ready" in assess(data)["problems"]


def test_a_patches_directory_missing_on_a_control_plane_is_a_problem(data):
    data["hosts"]["cp-1"]["manifest_drift"] = {
        "compared": [],
        "lost": [],
        "altered": [],
        "patches_missing": True,
        "skipped": "the kubeadm patches directory /etc/kubernetes/patches is missing",
    }
    assert assess(data)["problems"] == [
        "node cp-1: the kubeadm patches directory /etc/kubernetes/patches is missing"
        " (kubeadm fails on a --patches path that does not exist)"
    ]


def test_report_seconds_with_and_without_an_offset():
    # now(utc=true).isoformat() has no offset; a time with one (UTC) must still compare
    row = {"node": "w-1", "role": "worker", "to": "v1.37.2", "action": "upgraded"}
    row.update(started="2026-12-03T10:00:00+00:00", finished="2026-12-03T10:01:30")
    assert build([row], "1.37.2")["order"][0]["seconds"] == 90.0


def test_a_gate_with_nothing_to_proxy_is_reported_as_such_never_as_probes_proxied():
    def row(node, outcome, mode="mixed", probes=()):
        mvp = {"mode": mode, "outcome": outcome, "elapsed": 3.0, "probes": list(probes), "msg": "m"}
        return {
            "node": node,
            "role": "control plane",
            "from": "v1.37.2",
            "to": "v1.38.0-beta.0",
            "action": "upgraded",
            "mvp": mvp,
        }

    text = markdown(
        build(
            [row("cp-1", "nothing_to_proxy"), row("cp-2", "not_probed"), row("cp-3", "steady", "steady")],
            "1.38.0-beta.0",
        )
    )
    assert "| mixed: nothing to proxy (no resource differs; configuration proved), 3.0 s |" in text
    assert "| mixed: proxying not probed (no listable resource differs; configuration proved), 3.0 s |" in text
    assert "| steady, 3.0 s |" in text
    assert "probes proxied" not in text and "MVP evidence" not in text


def test_a_run_that_reached_no_host_is_incomplete_never_a_finished_upgrade():
    from ansible_collections.skewsafe.kubeadm.plugins.filter.upgrade import upgrade_report

    done = {"node": "w-1", "role": "worker", "from": "v1.36.5", "to": "v1.37.2", "action": "upgraded"}
    none_reached = upgrade_report([], "1.37.2", hosts=["cp1", "w1"], host_records=[{}, {}])
    assert none_reached["status"] == "incomplete" and none_reached["not_reached"] == ["cp1", "w1"]
    assert "- status: incomplete (no record for: cp1, w1)" in markdown(none_reached)
    # an earlier hop's record is no record of this target
    old_hop = {**done, "to": "v1.36.5"}
    half = upgrade_report([done], "1.37.2", hosts=["w1", "w2"], host_records=[{}, {"w1": done, "w2": old_hop}])
    assert half["status"] == "incomplete" and half["not_reached"] == ["w2"]
    full = upgrade_report([done], "1.37.2", hosts=["w1"], host_records=[{"w1": None}, {"w1": done}])
    assert full["status"] == "succeeded" and full["not_reached"] == []
    assert upgrade_report([], "1.37.2", hosts=["w1"], host_records=[], check_mode=True)["status"] == "plan"


def test_a_pod_that_would_stop_a_drain_is_named_for_nodes_that_are_drained(data):
    refused = {"pod": "default/debug", "why": "no controller: nothing would recreate it"}
    # as registered with failed_when: false (ansible-core then sets failed to false)
    data["drains"] = [
        {"item": "w-1", "failed": False, "refused": [refused], "evicted": [], "msg": "the drain of w-1 would stop"},
        {"item": "cp-2", "failed": False, "msg": "API request failed: Forbidden"},
        {"item": "cp-1", "failed": False, "refused": [], "evicted": ["default/web-1"]},
    ]
    problems = assess(data)["problems"]
    assert [p.split(":", maxsplit=1)[0] for p in problems] == ["node w-1", "node cp-2"]
    assert "default/debug (no controller: nothing would recreate it)" in problems[0]
    assert "node_upgrade_drain_force=true" in problems[0]
    assert "cannot be planned: API request failed: Forbidden" in problems[1]
    # a node already at the target is not drained: what its drain would stop at does not matter
    data["hosts"]["w-1"]["kubelet_version"] = "v1.37.2"
    assert [p.split(":", maxsplit=1)[0] for p in assess(data)["problems"]] == ["node cp-2"]


def test_a_failed_step_makes_a_failed_report_with_every_host_and_what_happened_to_it():
    from ansible_collections.skewsafe.kubeadm.plugins.filter.upgrade import upgrade_report

    done = {"node": "cp1", "role": "first control plane", "to": "v1.37.2", "action": "upgraded"}
    skipped = {"node": "w1", "role": "worker", "to": "v1.37.2", "action": "skipped (already at target)"}
    failure = {"host": "w2", "step": "Node upgrade | Drain w2", "msg": "the drain of w2 ran out", "target": "1.37.2"}
    earlier_hop = {"host": "w3", "step": "x", "msg": "an earlier hop's failure", "target": "1.36.5"}
    report = upgrade_report(
        [done, skipped],
        "1.37.2",
        hosts=["cp1", "w1", "w2", "w3"],
        host_records=[{"cp1": done}, {"w1": skipped}],
        failures=[failure, earlier_hop],
    )
    assert report["status"] == "failed"
    assert report["failed"] == [{"host": "w2", "step": "Node upgrade | Drain w2", "msg": "the drain of w2 ran out"}]
    assert report["not_reached"] == ["w3"]  # the failed host is failed, not "not reached"
    assert [(h["host"], h["outcome"]) for h in report["hosts"]] == [
        ("cp1", "upgraded"),
        ("w1", "skipped"),
        ("w2", "failed"),
        ("w3", "not reached"),
    ]
    text = markdown(report)
    assert "- status: failed" in text
    assert "- failed: w2 at 'Node upgrade | Drain w2': the drain of w2 ran out" in text
    # a failure of an earlier hop alone does not fail this one
    assert (
        upgrade_report([done], "1.37.2", hosts=["cp1"], host_records=[{"cp1": done}], failures=[earlier_hop])["status"]
        == "succeeded"
    )


def test_a_host_the_last_try_could_not_reach_fails_the_run_and_is_named_unreachable():
    from ansible_collections.skewsafe.kubeadm.plugins.filter.upgrade import upgrade_report

    done = {"node": "cp1", "role": "first control plane", "to": "v1.37.2", "action": "upgraded"}
    # the report role's ping loop, registered with ignore_unreachable: one result per host without a record
    reach = [
        {"item": "w1", "unreachable": True, "msg": "Failed to connect to the host via ssh: Connection refused"},
        {"item": "w2", "ping": "pong", "changed": False},
        {"item": "cp1", "unreachable": True, "msg": "a host with a record is not re-judged"},
    ]
    report = upgrade_report([done], "1.37.2", hosts=["cp1", "w1", "w2"], host_records=[{"cp1": done}, {}], reach=reach)
    assert report["status"] == "failed", report
    assert report["unreachable"] == [{"host": "w1", "msg": "Failed to connect to the host via ssh: Connection refused"}]
    assert [(h["host"], h["outcome"]) for h in report["hosts"]] == [
        ("cp1", "upgraded"),
        ("w1", "unreachable"),
        ("w2", "not reached"),
    ]
    assert "- unreachable: w1: Failed to connect to the host via ssh: Connection refused" in markdown(report)
    # reachable, only left out (--limit, --tags): incomplete, as before
    left_out = upgrade_report([done], "1.37.2", hosts=["cp1", "w2"], host_records=[{"cp1": done}], reach=reach[1:2])
    assert left_out["status"] == "incomplete" and left_out["unreachable"] == [], left_out


def test_etcd_drift_joins_the_control_plane_drift_problem_and_each_node_says_what_was_compared(data):
    """The preflight role adds the etcd comparison to manifest_drift (etcd_drift.yml); the assessment lists per
    node what it compared and why anything was not."""
    data["hosts"]["cp-1"]["manifest_drift"] = {
        "compared": ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"],
        "lost": ["etcd: flag --quota-backend-bytes=8589934592"],
        "altered": [],
        "accepted": False,
        "etcd_skipped": None,
    }
    data["hosts"]["cp-2"]["manifest_drift"] = {
        "compared": ["kube-apiserver", "kube-controller-manager", "kube-scheduler"],
        "lost": [],
        "altered": [],
        "etcd_skipped": "etcd runs 3.6.6-0, the installed kubeadm renders 3.6.8-0 (...): not comparable",
    }
    data["hosts"]["w-1"]["kubelet_config_drift"] = {"compared": [], "lost": [], "altered": [], "skipped": "behind"}
    result = assess(data)
    assert [p for p in result["problems"] if "etcd" in p] == [
        "node cp-1: the live control-plane manifests differ from what kubeadm renders from kubeadm-config (and the"
        " patches directory), so the next re-render would drop or change: etcd: flag --quota-backend-bytes=8589934592."
        " Put these into kubeadm-config (extraArgs, extraVolumes) or a kubeadm patches directory"
        " (skewsafe_kubeadm_patches_dir), or accept the loss with skewsafe_accept_manifest_drift=true"
    ]
    by_node = {row["node"]: row for row in result["compared"]}
    assert by_node["cp-1"] == {
        "node": "cp-1",
        "compared": ["kube-apiserver", "kube-controller-manager", "kube-scheduler", "etcd"],
        "not_compared": [],
    }
    assert by_node["cp-2"]["not_compared"] == [
        "etcd manifest: etcd runs 3.6.6-0, the installed kubeadm renders 3.6.8-0 (...): not comparable"
    ]
    assert by_node["w-1"] == {"node": "w-1", "compared": [], "not_compared": ["kubelet configuration: behind"]}
    data["hosts"]["cp-1"]["manifest_drift"]["accepted"] = True
    assert not [p for p in assess(data)["problems"] if "etcd" in p]
    data["hosts"]["cp-2"]["etcd"] = "external"
    data["hosts"]["cp-2"]["manifest_drift"].pop("etcd_skipped")
    by_node = {row["node"]: row for row in assess(data)["compared"]}
    assert by_node["cp-2"]["not_compared"] == [
        "etcd manifest: external etcd (no member on this node for kubeadm to render)"
    ]


def test_report_lists_what_was_compared_on_each_node():
    compared = [
        {"node": "cp-1", "compared": ["kube-apiserver", "etcd", "/var/lib/kubelet/config.yaml"], "not_compared": []},
        {"node": "w-1", "compared": [], "not_compared": ["kubelet configuration: behind"]},
    ]
    report = build([], "1.37.2", compared=compared)
    assert report["compared"] == compared
    text = markdown(report)
    assert "## Compared with kubeadm's renderings before the first change" in text
    assert "- cp-1: kube-apiserver, etcd, /var/lib/kubelet/config.yaml\n" in text
    assert "- w-1: nothing; not compared: kubelet configuration: behind\n" in text
    assert "## Compared" not in markdown(build([], "1.37.2"))


def test_kubelet_flags_kubeadm_would_mangle_are_a_problem_unless_accepted_and_are_listed_as_compared(data):
    read = (
        "#skewsafe-file /var/lib/kubelet/kubeadm-flags.env\n"
        'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///run/containerd/containerd.sock --fail-swap-on '
        '--node-ip=10.0.0.5"\n'
    )
    data["target"] = "1.36.5"
    data["kubeadm_config"] = CLUSTER_CFG.replace("v1.36.5", "v1.35.4")
    for name in data["hosts"]:
        data["hosts"][name].update(kubelet_version="v1.35.4", apiserver_version="v1.35.4")
    data["hosts"]["w-1"]["gate_files"] = read
    data["hosts"]["cp-1"]["gate_files"] = "#skewsafe-file /var/lib/kubelet/config.yaml\nkind: KubeletConfiguration\n"
    data["hosts"]["w-1"].pop("apiserver_version")
    result = assess(data)
    [problem] = [p for p in result["problems"] if "kubeadm-flags.env" in p]
    assert problem.startswith("node w-1: the target kubeadm moves --container-runtime-endpoint")
    assert "--node-ip=10.0.0.5; --fail-swap-on=true -> --fail-swap-on=--node-ip=10.0.0.5" in problem
    [row] = [r for r in result["compared"] if r["node"] == "w-1"]
    assert row["compared"] == ["/var/lib/kubelet/kubeadm-flags.env"]
    [cp_row] = [r for r in result["compared"] if r["node"] == "cp-1"]
    assert "kubelet flags: /var/lib/kubelet/kubeadm-flags.env: the node has none" in cp_row["not_compared"][0]
    data["accept_kubelet_config_drift"] = True
    assert not [p for p in assess(data)["problems"] if "kubeadm-flags.env" in p]
    # a file kubeadm cannot read fails its step: accepting changes nothing
    data["hosts"]["w-1"]["gate_files"] = read.replace("KUBELET_KUBEADM_ARGS=", "# hand-edited\nKUBELET_KUBEADM_ARGS=")
    assert [p for p in assess(data)["problems"] if "would fail its upgrade step" in p]
    data["check_drift"] = False
    assert not [p for p in assess(data)["problems"] if "kubeadm-flags.env" in p]
