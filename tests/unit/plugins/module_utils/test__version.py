from __future__ import annotations

import pytest

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _version


@pytest.mark.parametrize(
    "text, parsed",
    [
        ("v1.37.2", (1, 37, 2, "")),
        ("1.37", (1, 37, None, "")),
        (" v1.35.0-rc.1 ", (1, 35, 0, "-rc.1")),
        ("v1.36.5+k3s1", (1, 36, 5, "+k3s1")),
        ("stable-1.36", (1, 36, None, "")),
        ("2.0.0", (2, 0, 0, "")),
        ("1", None),
        ("x", None),
        ("1.37.2.1", None),
        ("", None),
        (None, None),
        (1.37, None),
    ],
)
def test_parse(text, parsed):
    assert _version.parse(text) == parsed


@pytest.mark.parametrize(
    "text, minor",
    [
        ("v1.36.2", 36),
        ("1.37", 37),
        ("v1.35.0-rc.1", 35),
        ("stable-1.36", 36),
        ("stable-v1.36", 36),
        ("2.0.0", None),
        ("x", None),
        (None, None),
    ],
)
def test_minor(text, minor):
    assert _version.minor(text) == minor


@pytest.mark.parametrize(
    "text, triple, release",
    [
        ("v1.37.2", (1, 37, 2), (1, 37, 2)),
        ("1.37.2", (1, 37, 2), (1, 37, 2)),
        ("v1.37.0-rc.1", (1, 37, 0), None),
        ("v1.36.5+k3s1", (1, 36, 5), None),
        ("1.37", None, None),
        ("stable-1.37.2", (1, 37, 2), None),
        ("latest", None, None),
    ],
)
def test_triple_and_release(text, triple, release):
    assert _version.triple(text) == triple
    assert _version.release(text) == release


@pytest.mark.parametrize(
    "text, expected",
    [("v1.35.4", False), ("1.36.0", True), ("v1.37.2", True), ("1.36", True), ("x", None), (None, None)],
)
def test_mvp_default_on(text, expected):
    assert _version.mvp_default_on(text) is expected


def test_key_orders_pre_releases_before_their_release():
    from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _version

    ordered = ["v1.37.2", "1.38.0-alpha.0", "1.38.0-alpha.10", "1.38.0-beta.0", "1.38.0-rc.1", "1.38.0", "1.38.1"]
    assert sorted(reversed(ordered), key=_version.key) == ordered
    assert _version.key("1.36.5+k3s1") == _version.key("1.36.5")  # build metadata does not order
    assert [_version.key(v) for v in ("1.38", "1.38.0-dev.1", "latest", None)] == [None, None, None, None]
    assert [_version.format_key(_version.key(v)) for v in ("v1.38.0-rc.1", "1.37.2")] == ["1.38.0-rc.1", "1.37.2"]
    assert [_version.is_prerelease(v) for v in ("1.38.0-rc.1", "1.38.0", "x")] == [True, False, None]
