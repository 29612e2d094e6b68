"""What enabling MVP does to each control plane: before an upgrade the first one is left to kubeadm upgrade apply."""

from __future__ import annotations

import pytest

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._mvp_enable import etcd_servers, step


def control_plane(**kw):
    observed = {"configured": False, "single": False, "first": False, "version": "v1.36.5", "upgrade_to": ""}
    observed.update(kw)
    return step(observed)


@pytest.mark.parametrize(
    ("state", "observed", "action", "source"),
    [
        ("mvp_enable on its own re-renders every control plane", {"first": True}, "rerender", True),
        (
            "before an upgrade: the first control plane is rendered by upgrade apply",
            {"first": True, "upgrade_to": "1.37.2"},
            "apply_renders",
            False,
        ),
        (
            "before an upgrade: the others still old when the first new server starts",
            {"upgrade_to": "1.37.2"},
            "rerender",
            True,
        ),
        # a patch upgrade renders it too (upgrade apply runs whenever the first control plane is behind)
        ("before a patch upgrade", {"first": True, "upgrade_to": "1.36.6"}, "apply_renders", False),
        # a rerun after the upgrade finished the first control plane: apply will not run there again
        (
            "the first control plane already at the target",
            {"first": True, "version": "v1.37.2", "upgrade_to": "1.37.2"},
            "rerender",
            True,
        ),
        (
            "already on (the first one after upgrade apply, or a rerun)",
            {"configured": True, "first": True, "upgrade_to": "1.37.2"},
            "none",
            True,
        ),
        ("already on, enabled on its own", {"configured": True}, "none", True),
        ("one control plane: nothing restarts", {"single": True, "first": True}, "record_only", False),
        (
            "one control plane before an upgrade",
            {"single": True, "first": True, "upgrade_to": "1.37.2"},
            "record_only",
            False,
        ),
    ],
)
def test_step(state, observed, action, source):
    result = control_plane(**observed)
    assert (result["action"], result["source"]) == (action, source), state
    assert result["reason"]


def test_refuses_a_version_it_cannot_compare():
    with pytest.raises(ValueError, match="mvp_enable_step"):
        control_plane(first=True, version="sha256:abc", upgrade_to="1.37.2")


@pytest.mark.parametrize(
    ("state", "configured", "expected"),
    [
        # kubeadm-config got the flag (the first task), then the run was killed before any re-render
        ("killed after kubeadm-config, before the re-renders", {}, ["apply_renders", "rerender", "rerender"]),
        ("killed after cp-2's re-render", {"cp-2"}, ["apply_renders", "none", "rerender"]),
        ("enabled, the upgrade killed before apply", {"cp-2", "cp-3"}, ["apply_renders", "none", "none"]),
        # upgrade apply rendered the flag on cp-1 (killed after, or a later hop): nothing left to do
        ("killed after upgrade apply", {"cp-1", "cp-2", "cp-3"}, ["none", "none", "none"]),
    ],
)
def test_a_rerun_before_an_upgrade_converges(state, configured, expected):
    """Each rerun decides from the manifests alone; the gates prove the servers that are sources so far."""
    steps = [
        control_plane(
            configured=name in configured,
            first=name == "cp-1",
            version="v1.37.2" if name == "cp-1" and "cp-1" in configured else "v1.36.5",
            upgrade_to="1.37.2",
        )
        for name in ("cp-1", "cp-2", "cp-3")
    ]
    assert [s["action"] for s in steps] == expected, state
    # cp-1 is never a proxy source before it runs the target; every re-rendered or configured one is
    assert [s["source"] for s in steps] == [a != "apply_renders" for a in expected]


def etcd_pod(*urls):
    annotations = {"kubeadm.kubernetes.io/etcd.advertise-client-urls": ",".join(urls)} if urls else {}
    return {"metadata": {"name": "etcd-x", "annotations": annotations}}


def test_every_stacked_member_is_listed_after_the_local_one():
    pods = [etcd_pod("https://10.0.0.13:2379"), etcd_pod("https://10.0.0.11:2379"), etcd_pod("https://10.0.0.12:2379")]
    assert etcd_servers(pods) == (
        "https://127.0.0.1:2379,https://10.0.0.11:2379,https://10.0.0.12:2379,https://10.0.0.13:2379"
    )


@pytest.mark.parametrize(
    ("case", "pods"),
    [
        ("external etcd: no etcd static Pod (kubeadm already lists every endpoint)", []),
        ("one member: nothing to fail over to", [etcd_pod("https://10.0.0.11:2379")]),
        ("a Pod without kubeadm's annotation says nothing", [etcd_pod("https://10.0.0.11:2379"), etcd_pod()]),
        ("the same member twice is one member", [etcd_pod("https://10.0.0.11:2379")] * 2),
    ],
)
def test_nothing_to_add(case, pods):
    assert etcd_servers(pods) == "", case


def test_a_member_with_several_client_urls_keeps_them_all():
    pods = [etcd_pod("https://10.0.0.11:2379", "https://[fd00::11]:2379"), etcd_pod("https://10.0.0.12:2379")]
    assert etcd_servers(pods).split(",") == [
        "https://127.0.0.1:2379",
        "https://10.0.0.11:2379",
        "https://10.0.0.12:2379",
        "https://[fd00::11]:2379",
    ]
