# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""The kubeconfig path filter (documented in kubeconfig_path.yml beside)."""

from __future__ import annotations

import os


def kubeconfig_path(value):
    """Each path of a kubeconfig value (paths joined by ':', as KUBECONFIG) made absolute against the working
    directory of ansible-playbook. kubernetes.core reads a relative kubeconfig from the playbook's files/ directory,
    the collection's own plugins from the working directory: made absolute here, every module reads the same file."""
    if not value or not isinstance(value, str):
        return value
    parts = [os.path.abspath(os.path.expanduser(p.strip())) for p in value.split(os.pathsep) if p.strip()]
    return os.pathsep.join(parts)


class FilterModule:
    def filters(self):
        return {"kubeconfig_path": kubeconfig_path}
