# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Static Pod manifests read on the node by an action plugin, in one module run (with become)."""

from __future__ import annotations

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _manifest
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._errors import PluginError

MODULE = "skewsafe.kubeadm.static_pod_manifests_info"


class NodeManifestError(PluginError):
    """A manifest exists but cannot be read or parsed."""


def read(run_module, manifests_dir, names):
    """``{name: static Pod document, or None when the file does not exist}``.

    ``run_module(module_name, module_args)`` runs a module on the node and returns its result. One run reads every
    manifest: a module run per manifest cost about a second each on a loaded node.
    """
    got = run_module(MODULE, {"manifests_dir": manifests_dir, "names": list(names)})
    if got.get("failed"):
        raise NodeManifestError(str(got.get("msg") or "cannot read the manifests"))
    found = got.get("manifests") or {}
    manifests = {}
    for name in names:
        if name not in found:
            raise NodeManifestError(f"the node did not answer for the {name} manifest")
        entry = found[name]
        if entry is None:
            manifests[name] = None
            continue
        try:
            manifests[name] = _manifest.decode(entry["content"])
        except _manifest.ManifestError as exc:
            raise NodeManifestError(f"the {name} manifest is {exc}") from exc
    return manifests
