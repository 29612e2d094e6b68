# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Package repository trust filters (documented in repo_key_check.yml and package_repo_settings.yml beside)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _repo_key


def repo_key_check(colons, expected=None):
    try:
        return _repo_key.check(colons, expected)
    except _repo_key.RepoKeyError as exc:
        raise AnsibleFilterError(f"repo_key_check: {exc}") from exc


def package_repo_settings(url, kind, trusted=False, key_path=None):
    try:
        return _repo_key.repo_settings(kind, url, trusted, key_path)
    except _repo_key.RepoKeyError as exc:
        raise AnsibleFilterError(f"package_repo_settings: {exc}") from exc


class FilterModule:
    def filters(self):
        return {"repo_key_check": repo_key_check, "package_repo_settings": package_repo_settings}
