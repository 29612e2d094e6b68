# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Jinja tests over Kubernetes version strings (documented in the .yml files beside)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _version


def kube_prerelease(value):
    """True for an alpha, beta or rc version ('1.38.0-beta.0'), False for a release."""
    found = _version.is_prerelease(str(value))
    if found is None:
        raise AnsibleFilterError(f"{value!r} is not a Kubernetes version like 1.37.2 or 1.38.0-rc.1")
    return found


class TestModule:
    def tests(self):
        return {"kube_prerelease": kube_prerelease}
