# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Trust in the package repository: the signing key's fingerprint, checked before a key is trusted.

The key comes from ``gpg --batch --show-keys --with-colons`` (no keyring touched); a key is good only when
every primary key in the file has the expected fingerprint and none is expired or revoked.
"""

from __future__ import annotations

import re
import time

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._errors import PluginError

# The pkgs.k8s.io signing key ("isv:kubernetes OBS Project"), the same for every minor's Release.key and
# repomd.xml.key. Its expiry is extended now and then under the same fingerprint (kubernetes/release#3818).
UPSTREAM_KEY_FINGERPRINT = "DE15B14486CD377B9E876E1A234654DA9A296436"

_FINGERPRINT = re.compile(r"^(?:[0-9A-F]{40}|[0-9A-F]{64})$")


class RepoKeyError(PluginError, ValueError):
    pass


def normalize_fingerprint(value):
    """Upper-case hex without spaces or colons; 40 (OpenPGP v4) or 64 (v5) digits, else RepoKeyError."""
    text = re.sub(r"[\s:]", "", str(value or "")).upper()
    if text.startswith("0X"):
        text = text[2:]
    if not _FINGERPRINT.match(text):
        raise RepoKeyError(
            f"a key fingerprint is 40 (or 64) hexadecimal digits, not {value!r} (a short key ID is not enough)"
        )
    return text


def parse_colons(text):
    """The primary keys of ``gpg --with-colons`` output: [{fingerprint, validity, expires, uid}]."""
    keys = []
    current = None
    expect_fpr = False
    for line in (text or "").splitlines():
        fields = line.split(":")
        kind = fields[0]
        if kind == "pub":
            current = {
                "fingerprint": None,
                "validity": fields[1] if len(fields) > 1 else "",
                "expires": int(fields[6]) if len(fields) > 6 and fields[6].isdigit() else None,
                "uid": None,
            }
            keys.append(current)
            expect_fpr = True
        elif kind in ("sub", "ssb"):
            expect_fpr = False
        elif kind == "fpr" and expect_fpr and current is not None:
            current["fingerprint"] = fields[9].upper() if len(fields) > 9 else None
            expect_fpr = False
        elif kind == "uid" and current is not None and current["uid"] is None and len(fields) > 9:
            current["uid"] = fields[9]
    return keys


def check(colons, expected=None, now=None):
    """``{ok, problem, fingerprints, expected}`` of a key file's listing against the expected fingerprint.

    ``expected`` empty means the upstream key. ``problem`` says in one sentence what is wrong.
    """
    want = normalize_fingerprint(expected or UPSTREAM_KEY_FINGERPRINT)
    now = time.time() if now is None else now
    keys = parse_colons(colons)
    found = [k["fingerprint"] for k in keys]
    problem = ""
    if not keys:
        problem = "it holds no OpenPGP public key"
    elif any(f != want for f in found):
        names = ", ".join(f"{k['fingerprint']} ({k['uid'] or 'no user ID'})" for k in keys)
        problem = f"its key is {names}, not the expected {want}"
    else:
        for key in keys:
            if key["validity"] == "r":
                problem = f"the key {key['fingerprint']} is revoked"
            elif key["validity"] == "e" or (key["expires"] is not None and key["expires"] <= now):
                when = time.strftime("%Y-%m-%d", time.gmtime(key["expires"])) if key["expires"] else "some time"
                problem = f"the key {key['fingerprint']} expired on {when}"
    return {"ok": not problem, "problem": problem, "fingerprints": found, "expected": want}


def repo_settings(kind, url, trusted=False, key_path=None):
    """What the packages role writes: the apt source line, or the dnf repository's signature settings.

    Signed repositories check both the packages and the repository metadata (dnf: gpgcheck and repo_gpgcheck;
    apt checks InRelease by itself) against the local key file that passed ``check``.
    """
    if kind == "deb":
        option = "trusted=yes" if trusted else f"signed-by={key_path}"
        if not trusted and not key_path:
            raise RepoKeyError("a signed apt repository needs the keyring path")
        return {"line": f"deb [{option}] {url} /"}
    if kind == "rpm":
        if trusted:
            return {"gpgcheck": False, "repo_gpgcheck": False, "gpgkey": None}
        if not key_path:
            raise RepoKeyError("a signed dnf repository needs the key file path")
        return {"gpgcheck": True, "repo_gpgcheck": True, "gpgkey": f"file://{key_path}"}
    raise RepoKeyError(f"kind must be deb or rpm, not {kind!r}")
