"""The input rules of every playbook (inputs_check): each problem names the rule and the variable to change."""

from __future__ import annotations

import pytest

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _inputs

GROUPS = {"all": ["cp1", "cp2", "w1"], "ungrouped": [], "kube_control_plane": ["cp1", "cp2"], "kube_workers": ["w1"]}


def problems(playbook="upgrade", groups=None, limited=None, **inputs):
    if playbook in _inputs.NEED_TARGET:
        inputs.setdefault("skewsafe_kubernetes_version", "1.37.2")
    return _inputs.problems(playbook, inputs, GROUPS if groups is None else groups, limited)


def test_good_inputs_pass_for_every_playbook():
    for playbook in _inputs.PLAYBOOKS:
        extra = {"skewsafe_upgrade_path": ["1.37.2"]} if playbook == "upgrade_path" else {}
        assert problems(playbook, **extra) == [], playbook


@pytest.mark.parametrize("version", ["v1.37.2", "1.37", "latest", "1.37.2-beta", "1.37.2-dev.1", " 1.37.2"])
def test_a_target_not_in_the_x_y_z_form_is_refused(version):
    found = problems(skewsafe_kubernetes_version=version)
    assert len(found) == 1 and found[0].startswith(f"skewsafe_kubernetes_version: {version!r} is not a version")


@pytest.mark.parametrize("version", ["1.38.0-alpha.1", "1.38.0-beta.0", "1.38.0-rc.2"])
def test_a_pre_release_needs_the_explicit_setting_and_the_refusal_says_so(version):
    found = problems(skewsafe_kubernetes_version=version)
    assert len(found) == 1 and "is a pre-release" in found[0] and "skewsafe_allow_prerelease=true" in found[0]
    assert problems(skewsafe_kubernetes_version=version, skewsafe_allow_prerelease=True) == []


@pytest.mark.parametrize("playbook", ["upgrade", "preflight", "prefetch"])
def test_the_target_is_required_where_the_playbook_upgrades_to_it(playbook):
    found = _inputs.problems(playbook, {}, GROUPS)
    assert found == [f"skewsafe_kubernetes_version: {playbook} needs the target version, for example 1.37.2."]


@pytest.mark.parametrize("playbook", ["mvp_enable", "verify", "etcd_backup"])
def test_other_playbooks_need_no_target_but_check_one_given(playbook):
    assert _inputs.problems(playbook, {}, GROUPS) == []
    assert "is not a version" in _inputs.problems(playbook, {"skewsafe_kubernetes_version": "v1"}, GROUPS)[0]


def test_an_empty_inventory_is_refused_naming_the_group_variable():
    found = problems(groups={"all": [], "ungrouped": []})
    assert found == [
        "skewsafe_control_plane_group: the inventory has no hosts in the group 'kube_control_plane' (it has no group "
        "with hosts). Put the control planes there, or set skewsafe_control_plane_group to their group; upgrade needs "
        "them."
    ]


def test_a_misnamed_group_lists_the_groups_the_inventory_has():
    groups = {"all": ["m1", "w1"], "masters": ["m1"], "workers": ["w1"], "empty": []}
    found = problems(groups=groups)
    assert len(found) == 1 and "(its groups with hosts are masters, workers)" in found[0]
    assert problems(groups=groups, skewsafe_control_plane_group="masters", skewsafe_worker_group="workers") == []


def test_the_group_settings_must_name_real_hosts_and_groups():
    assert problems(skewsafe_first_control_plane="cp9") == [
        "skewsafe_first_control_plane: 'cp9' is not a host of the group 'kube_control_plane'."
    ]
    assert problems(skewsafe_worker_group="nodes") == ["skewsafe_worker_group: the inventory has no group 'nodes'."]
    assert "need a group of their own" in problems(skewsafe_worker_group="kube_control_plane")[0]
    # the default worker group may be absent: a cluster without workers
    assert problems(groups={"all": ["cp1"], "kube_control_plane": ["cp1"]}) == []


@pytest.mark.parametrize("playbook", ["upgrade", "upgrade_path", "preflight", "mvp_enable"])
def test_a_limit_must_keep_every_control_plane_where_each_is_read_or_changed(playbook):
    extra = {"skewsafe_upgrade_path": ["1.37.2"]} if playbook == "upgrade_path" else {}
    found = problems(playbook, limited=["cp1", "w1"], **extra)
    assert len(found) == 1 and found[0].startswith("--limit: it leaves out the control planes cp2.")
    assert problems(playbook, limited=["cp1", "cp2"], **extra) == []


@pytest.mark.parametrize("playbook", ["verify", "etcd_backup"])
def test_a_limit_is_free_where_one_control_plane_is_enough(playbook):
    assert problems(playbook, limited=["cp1"]) == []


def test_upgrade_path_alone_never_beside_a_single_target():
    found = problems("upgrade_path", skewsafe_upgrade_path=["1.37.2"], skewsafe_kubernetes_version="1.37.2")
    assert found == [
        "skewsafe_kubernetes_version: give the hops in skewsafe_upgrade_path only; 1.37.2 would override every hop."
    ]


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (None, "give a non-empty list of versions"),
        ([], "give a non-empty list of versions"),
        ("1.37.2", "give a non-empty list of versions"),
        (["1.36.5", "v1.37.2"], "'v1.37.2' is not a version"),
        (["1.36.5", "1.38.0"], "1.36.5 -> 1.38.0; each hop must be the next minor"),
        (["1.37.2", "1.36.5"], "1.37.2 -> 1.36.5; each hop must be the next minor"),
        (["1.35.4", "1.36.5", "1.37.2", "1.38.0"], "4 hops; kubelets may be at most 3 minors behind"),
    ],
)
def test_the_upgrade_path_form(path, message):
    found = problems("upgrade_path", skewsafe_upgrade_path=path)
    assert len(found) == 1 and found[0].startswith("skewsafe_upgrade_path: ") and message in found[0], found


def test_a_pre_release_in_the_path_needs_the_setting_and_may_only_end_it():
    assert "is a pre-release" in problems("upgrade_path", skewsafe_upgrade_path=["1.37.2", "1.38.0-rc.1"])[0]
    ok = problems("upgrade_path", skewsafe_upgrade_path=["1.37.2", "1.38.0-rc.1"], skewsafe_allow_prerelease=True)
    assert ok == []
    middle = problems("upgrade_path", skewsafe_upgrade_path=["1.37.0-rc.1", "1.38.0"], skewsafe_allow_prerelease=True)
    assert middle == ["skewsafe_upgrade_path: only the last hop may be a pre-release (got 1.37.0-rc.1, 1.38.0)."]


@pytest.mark.parametrize("batch", ["0", "-1", "0%", "101%", "abc", "10 %"])
def test_a_bad_worker_batch_is_refused(batch):
    assert problems(skewsafe_worker_batch_size=batch)[0].startswith(f"skewsafe_worker_batch_size: {batch!r}")


@pytest.mark.parametrize("batch", ["1", "3", "25%", "100%", 2])
def test_a_good_worker_batch_passes(batch):
    assert problems(skewsafe_worker_batch_size=batch) == []


@pytest.mark.parametrize("value", [-1, 101, "10", True])
def test_the_fail_percentage_is_an_integer_0_to_100(value):
    assert problems(skewsafe_worker_max_fail_percentage=value)[0].startswith("skewsafe_worker_max_fail_percentage:")


def test_the_credential_validity_is_a_duration():
    assert problems(skewsafe_credential_validity="1h30m") == []
    assert problems(skewsafe_credential_validity="4 hours")[0].startswith("skewsafe_credential_validity: '4 hours'")


def test_the_key_fingerprint_is_full_and_not_beside_a_trusted_repository():
    good = "DE15 B144 86CD 377B 9E87  6E1A 2346 54DA 9A29 6436"
    assert problems(skewsafe_package_repo_key_fingerprint=good) == []
    assert "not a short key ID" in problems(skewsafe_package_repo_key_fingerprint="9A296436")[0]
    both = problems(skewsafe_package_repo_key_fingerprint=good, skewsafe_package_repo_trusted=True)
    assert both == [
        "skewsafe_package_repo_trusted: true trusts the repository without a signature, so "
        "skewsafe_package_repo_key_fingerprint would never be checked; set one or the other."
    ]


def test_the_balancer_files_go_together_absolute_and_present(tmp_path):
    take_out, put_back = tmp_path / "out.yml", tmp_path / "back.yml"
    take_out.write_text("[]")
    put_back.write_text("[]")
    both = {"skewsafe_balancer_take_out_tasks": str(take_out), "skewsafe_balancer_put_back_tasks": str(put_back)}
    assert problems(**both) == []
    assert "go together" in problems(skewsafe_balancer_take_out_tasks=str(take_out))[0]
    relative = problems(**{**both, "skewsafe_balancer_put_back_tasks": "back.yml"})
    assert relative == [
        "skewsafe_balancer_put_back_tasks: 'back.yml' is relative; give the absolute path of a tasks file on the controller."
    ]
    missing = problems(**{**both, "skewsafe_balancer_take_out_tasks": "/nonexistent.yml"})
    assert missing == ["skewsafe_balancer_take_out_tasks: /nonexistent.yml is not a file on the controller."]


def test_a_relative_kubeconfig_is_taken_and_made_absolute_against_the_working_directory(tmp_path, monkeypatch):
    from ansible_collections.skewsafe.kubeadm.plugins.filter.kubeconfig import kubeconfig_path

    assert problems(skewsafe_kubeconfig="cluster.kubeconfig") == []
    monkeypatch.chdir(tmp_path)
    assert kubeconfig_path("cluster.kubeconfig") == str(tmp_path / "cluster.kubeconfig")
    assert kubeconfig_path("a.conf:/etc/b.conf") == f"{tmp_path / 'a.conf'}:/etc/b.conf"
    assert kubeconfig_path("") == "" and kubeconfig_path(None) is None


def test_every_problem_is_reported_at_once():
    found = problems(
        groups={"all": []},
        skewsafe_kubernetes_version="v1.37.2",
        skewsafe_worker_batch_size="0",
        skewsafe_credential_validity="x",
    )
    assert [p.split(":")[0] for p in found] == [
        "skewsafe_control_plane_group",
        "skewsafe_kubernetes_version",
        "skewsafe_worker_batch_size",
        "skewsafe_credential_validity",
    ]


def test_an_unknown_playbook_is_a_programming_error():
    with pytest.raises(ValueError, match="playbook must be one of"):
        _inputs.problems("deploy", {}, GROUPS)
