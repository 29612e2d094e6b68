# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection.
"""The base of every error the controller-side helpers (plugin_utils) raise."""

from __future__ import annotations

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._errors import SkewsafeError


class PluginError(SkewsafeError):
    """An error of a controller-side helper (filters, actions, lookups turn it into their own failure)."""
