# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""The base of every error the collection's module_utils raise (plugin_utils' base derives from it), so that a
caller can catch the collection's own errors apart from Python's and the libraries'."""

from __future__ import annotations


class SkewsafeError(Exception):
    """An error of the collection's own making: bad input, a state it refuses, a step that cannot run."""
