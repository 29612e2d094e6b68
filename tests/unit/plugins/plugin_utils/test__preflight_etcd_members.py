"""Preflight's etcd member-list check against the control planes (kubeadm's stacked etcd)."""

from __future__ import annotations

import json

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._preflight import etcd_member_problems

IPS = {"cp-1": "10.214.0.11", "cp-2": "10.214.0.12", "cp-3": "10.214.0.13"}


def member(name, ip=None, learner=False):
    out = {"ID": 1, "name": name, "peerURLs": [f"https://{ip or IPS.get(name, '10.214.0.99')}:2380"]}
    if learner:
        out["isLearner"] = True
    return out


def hosts(members, names=("cp-1", "cp-2", "cp-3"), answer=None):
    listing = {"rc": 0, "stdout": json.dumps({"header": {}, "members": members}), "stderr": ""}
    return {
        n: {"role": "control_plane", "node_name": n, "etcd": "stacked", "etcd_members": answer or listing}
        for n in names
    } | {"w-1": {"role": "worker", "node_name": "w-1"}}


def nodes(names=("cp-1", "cp-2", "cp-3")):
    return {n: {"status": {"addresses": [{"type": "InternalIP", "address": IPS[n]}]}} for n in names}


def test_one_member_per_control_plane_on_its_address_is_fine():
    assert etcd_member_problems(hosts([member(n) for n in IPS]), nodes()) == []


def test_a_stale_member_is_named_and_a_restart_that_would_lose_quorum_too():
    # four voters, one of them a removed host: quorum 3, and each node step restarts one of the three left
    problems = etcd_member_problems(hosts([member(n) for n in IPS] + [member("cp-old")]), nodes())
    assert problems[0].startswith("etcd member cp-old (https://10.214.0.99:2380): no control plane of the inventory")
    assert "etcd: 4 voting members, 3 of them control planes of the inventory" in problems[1]
    assert "below the quorum of 3" in problems[1]


def test_a_learner_a_missing_member_and_a_wrong_peer_url_are_each_named():
    members = [member("cp-1"), member("cp-2", ip="10.9.9.9"), member("cp-3", learner=True)]
    problems = etcd_member_problems(hosts(members), nodes())
    assert any("etcd member cp-3" in p and "a learner" in p for p in problems), problems
    assert any("etcd member cp-2" in p and "not on an InternalIP of Node cp-2 (10.214.0.12)" in p for p in problems)
    # two voters, both control planes: a restart of one leaves one, below the quorum of two
    assert any("2 voting members" in p and "below the quorum of 2" in p for p in problems), problems


def test_a_control_plane_without_a_member_is_named():
    problems = etcd_member_problems(hosts([member("cp-1"), member("cp-2")]), nodes())
    assert "etcd: control plane cp-3 has no etcd member; kubeadm upgrade expects one per control plane" in problems


def test_one_control_plane_has_no_quorum_rule_and_external_etcd_is_not_judged():
    assert etcd_member_problems(hosts([member("cp-1")], names=("cp-1",)), nodes(("cp-1",))) == []
    external = {"cp-1": {"role": "control_plane", "node_name": "cp-1", "etcd": "external", "etcd_members": {}}}
    assert etcd_member_problems(external, nodes(("cp-1",))) == []


def test_an_etcd_that_does_not_answer_anywhere_is_a_problem():
    answer = {"rc": 3, "stdout": "", "stderr": "no running etcd container on this node"}
    problems = etcd_member_problems(hosts([], answer=answer), nodes())
    assert problems == [
        "etcd: no control plane could list the etcd members (cp-1: no running etcd container on this node;"
        " cp-2: no running etcd container on this node; cp-3: no running etcd container on this node)"
    ]
