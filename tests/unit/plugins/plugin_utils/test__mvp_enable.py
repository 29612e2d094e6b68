"""What enabling MVP does to each control plane: before an upgrade the first one is left to kubeadm upgrade apply."""

from __future__ import annotations

import pytest

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._mvp_enable import step


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
