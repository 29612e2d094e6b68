# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The resume decision filter (documented in upgrade_left_to_do.yml beside)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _resume


def upgrade_left_to_do(observed):
    try:
        return _resume.left_to_do(observed)
    except _resume.ResumeError as exc:
        raise AnsibleFilterError(f"upgrade_left_to_do: {exc}") from exc


class FilterModule:
    def filters(self):
        return {"upgrade_left_to_do": upgrade_left_to_do}
