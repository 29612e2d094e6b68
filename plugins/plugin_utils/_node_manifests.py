# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Static Pod manifests read on the node by an action plugin (through ansible.builtin.slurp, with become)."""

from __future__ import annotations

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _manifest


class NodeManifestError(Exception):
    """A manifest exists but cannot be read or parsed."""


def read(run_module, manifests_dir, names):
    """``{name: static Pod document, or None when the file does not exist}``.

    ``run_module(module_name, module_args)`` runs a module on the node and returns its result.
    """
    manifests = {}
    for name in names:
        got = run_module("ansible.builtin.slurp", {"src": f"{manifests_dir}/{name}.yaml"})
        if got.get("failed"):
            if "not found" in str(got.get("msg", "")).lower():
                manifests[name] = None
                continue
            raise NodeManifestError(f"cannot read the {name} manifest: {got.get('msg')}")
        try:
            manifests[name] = _manifest.decode(got["content"])
        except _manifest.ManifestError as exc:
            raise NodeManifestError(f"the {name} manifest is {exc}") from exc
    return manifests
