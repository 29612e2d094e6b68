"""Trust in the package repository's signing key, and the repository settings that use it."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._repo_key import (
    UPSTREAM_KEY_FINGERPRINT,
    RepoKeyError,
    check,
    normalize_fingerprint,
    parse_colons,
    repo_settings,
)

NOW = 1_800_000_000  # 2027-01-15


def listing(
    fpr, expires="1880000000", validity="-", uid="isv:kubernetes OBS Project <isv:kubernetes@build.opensuse.org>"
):
    """The shape of ``gpg --batch --show-keys --with-colons`` for one RSA key with a subkey."""
    return "\n".join(
        [
            f"pub:{validity}:2048:1:{fpr[-16:]}:1692000000:{expires}::-:::scESC::::::23::0:",
            f"fpr:::::::::{fpr}:",
            f"uid:{validity}::::1692000000::0123456789ABCDEF0123456789ABCDEF01234567::{uid}::::::::::0:",
            "sub:-:2048:1:1111222233334444:1692000000:1880000000:::::e::::::23:",
            "fpr:::::::::AAAABBBBCCCCDDDDEEEEFFFF1111222233334444:",
        ]
    )


def test_upstream_key_passes_by_default_and_subkeys_do_not_count():
    verdict = check(listing(UPSTREAM_KEY_FINGERPRINT), None, now=NOW)
    assert verdict == {
        "ok": True,
        "problem": "",
        "fingerprints": [UPSTREAM_KEY_FINGERPRINT],
        "expected": UPSTREAM_KEY_FINGERPRINT,
    }


def test_another_key_is_refused_with_both_fingerprints_named():
    other = "D0DDA481B8BB6BF7EF4084BE222B8DDA3443E807"
    verdict = check(listing(other, uid="mirror <m@example.org>"), None, now=NOW)
    assert not verdict["ok"]
    assert (
        verdict["problem"]
        == f"its key is {other} (mirror <m@example.org>), not the expected {UPSTREAM_KEY_FINGERPRINT}"
    )
    assert check(listing(other), other.lower(), now=NOW)["ok"]


def test_a_file_with_the_right_key_and_another_one_is_refused():
    other = "D0DDA481B8BB6BF7EF4084BE222B8DDA3443E807"
    both = listing(UPSTREAM_KEY_FINGERPRINT) + "\n" + listing(other)
    verdict = check(both, None, now=NOW)
    assert not verdict["ok"] and other in verdict["problem"]


def test_expired_or_revoked_keys_and_empty_files_are_refused():
    assert check(listing(UPSTREAM_KEY_FINGERPRINT, expires="1700000000"), None, now=NOW)["problem"] == (
        f"the key {UPSTREAM_KEY_FINGERPRINT} expired on 2023-11-14"
    )
    assert "expired" in check(listing(UPSTREAM_KEY_FINGERPRINT, validity="e"), None, now=NOW)["problem"]
    assert check(listing(UPSTREAM_KEY_FINGERPRINT, validity="r"), None, now=NOW)["problem"].endswith("is revoked")
    assert check("", None, now=NOW)["problem"] == "it holds no OpenPGP public key"
    # no expiry at all is fine
    assert check(listing(UPSTREAM_KEY_FINGERPRINT, expires=""), None, now=NOW)["ok"]


@pytest.mark.parametrize(
    "value",
    ["DE15 B144 86CD 377B 9E87  6E1A 2346 54DA 9A29 6436", "0xde15b14486cd377b9e876e1a234654da9a296436"],
)
def test_fingerprints_are_normalised(value):
    assert normalize_fingerprint(value) == UPSTREAM_KEY_FINGERPRINT


@pytest.mark.parametrize("value", ["234654DA9A296436", "not-hex" * 6, ""])
def test_short_ids_and_junk_are_refused_before_anything_is_read(value):
    with pytest.raises(RepoKeyError, match="40 \\(or 64\\) hexadecimal digits"):
        check(listing(UPSTREAM_KEY_FINGERPRINT), value or "x", now=NOW)


def test_apt_line_and_dnf_settings_use_the_checked_key():
    url = "https://pkgs.k8s.io/core:/stable:/v1.37/deb/"
    assert repo_settings("deb", url, key_path="/etc/apt/keyrings/k.gpg") == {
        "line": f"deb [signed-by=/etc/apt/keyrings/k.gpg] {url} /"
    }
    assert repo_settings("deb", url, trusted=True) == {"line": f"deb [trusted=yes] {url} /"}
    rpm = "https://pkgs.k8s.io/core:/stable:/v1.37/rpm/"
    assert repo_settings("rpm", rpm, key_path="/etc/pki/rpm-gpg/kubernetes.asc") == {
        "gpgcheck": True,
        "repo_gpgcheck": True,
        "gpgkey": "file:///etc/pki/rpm-gpg/kubernetes.asc",
    }
    assert repo_settings("rpm", rpm, trusted=True) == {"gpgcheck": False, "repo_gpgcheck": False, "gpgkey": None}
    for kind in ("deb", "rpm"):
        with pytest.raises(RepoKeyError, match="needs the key"):
            repo_settings(kind, url)
    with pytest.raises(RepoKeyError, match="deb or rpm"):
        repo_settings("apk", url)


def test_real_gpg_listing_of_a_generated_key(tmp_path):
    """The parser against what gpg itself prints (armored and dearmored), not only the shape above."""
    gpg = shutil.which("gpg")
    assert gpg, "gpg is missing: apt-get install -y gpg (hack/host-packages.txt)"
    env = dict(os.environ, GNUPGHOME=str(tmp_path / "home"))
    os.mkdir(env["GNUPGHOME"], 0o700)

    def run(*args):
        return subprocess.run([gpg, "--batch", *args], env=env, check=True, capture_output=True)

    try:
        run("--passphrase", "", "--quick-gen-key", "unit <unit@skewsafe.invalid>", "ed25519", "sign", "1d")
    finally:
        # making a key starts a gpg-agent for this home: it must not outlive the test
        if shutil.which("gpgconf"):
            subprocess.run(["gpgconf", "--homedir", env["GNUPGHOME"], "--kill", "gpg-agent"], check=False)
    (tmp_path / "key.asc").write_bytes(run("--armor", "--export").stdout)
    run("--dearmor", "-o", str(tmp_path / "key.gpg"), str(tmp_path / "key.asc"))
    for name in ("key.asc", "key.gpg"):
        text = run("--show-keys", "--with-colons", str(tmp_path / name)).stdout.decode()
        keys = parse_colons(text)
        assert len(keys) == 1 and keys[0]["uid"] == "unit <unit@skewsafe.invalid>"
        assert check(text, keys[0]["fingerprint"])["ok"]
        assert not check(text, UPSTREAM_KEY_FINGERPRINT)["ok"]
        assert not check(text, keys[0]["fingerprint"], now=keys[0]["expires"] + 1)["ok"]
