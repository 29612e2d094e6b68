# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Drift between the live control-plane manifests and what kubeadm would render in their place.

kubeadm re-renders a manifest from kubeadm-config (and ``--patches``) and throws the old file away: a flag,
volume, mount or environment variable that exists only in the live file is lost. What kubeadm would write
comes from its own dry run (``kubeadm upgrade node phase control-plane --dry-run`` prints every manifest after
``[dryrun] Would write file "<path>" with content:``), compared here on the controller (nodes need no PyYAML).
"""

from __future__ import annotations

import base64
import re

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _manifest
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _component_gates
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._errors import PluginError

KUBELET_CONFIG = _component_gates.KUBELET_CONFIG
# kubeadm applies the node's instance configuration (its CRI socket) last; its dry run reads it from a scratch
# directory instead, so the node's own file is applied here, as the real step does.
INSTANCE_CONFIG = "/var/lib/kubelet/instance-config.yaml"
# The dry run prints what it reads: kubeadm-config's ClusterConfiguration, then this node's Node object.
_CLUSTER_VERSION = re.compile(r"^\s*kubernetesVersion: (?P<version>v\S+)\s*$", re.M)
_KUBELET_VERSION = re.compile(r"^\s*kubeletVersion: (?P<version>v\S+)\s*$", re.M)

# Searched, not matched: kubeadm prints the line before it without a newline ("...to version "v1.36.5"[dryrun]...").
_WOULD_WRITE = re.compile(r'\[dryrun\] Would write file "(?P<path>[^"]+)" with content:\s*$')


# kubeadm says which version it renders ("...control plane instance to version "v1.36.5"...").
_RENDER_VERSION = re.compile(r'control plane instance to version "(?P<version>v[^"]+)"')


class DriftError(PluginError, ValueError):
    pass


def parse_dryrun(stdout):
    """``{path: manifest text}`` of every manifest a kubeadm dry run would write."""
    files, path, lines = {}, None, []
    for line in (stdout or "").splitlines():
        match = _WOULD_WRITE.search(line)
        if match or (path and line.startswith("[")):
            if path:
                files[path] = "\n".join(lines) + "\n"
            path, lines = (match["path"], []) if match else (None, [])
            continue
        if path is not None:
            lines.append(line)
    if path:
        files[path] = "\n".join(lines) + "\n"
    return files


def _by(items, key):
    return {key(item): item for item in items or [] if isinstance(item, dict)}


def _volume_key(volume):
    return volume.get("name")


def _mount_key(mount):
    return (mount.get("name"), mount.get("mountPath"))


# List flags where a render that keeps every live entry and adds more loses nothing: the mvp_enable role names every
# stacked etcd member in kubeadm-config, and the control planes not yet re-rendered still list the local one only.
_GROWING_LISTS = ("etcd-servers",)


def _keeps_every(live, rendered):
    kept = [item for item in rendered.split(",") if item]
    return all(item in kept for item in live.split(",") if item)


def compare(live, rendered):
    """``{lost, altered, added}`` lists of human-readable findings for one component's manifests."""
    lc, rc = _manifest.container(live), _manifest.container(rendered)
    lf, rf = _manifest.command_flags(lc.get("command")), _manifest.command_flags(rc.get("command"))
    lost, altered, added = [], [], []
    for name, value in lf.items():
        if name not in rf:
            lost.append(f"flag --{name}={value}")
        elif rf[name] != value and name in _GROWING_LISTS and _keeps_every(value, rf[name]):
            added.append(f"flag --{name}: {value} -> {rf[name]}")
        elif rf[name] != value:
            altered.append(f"flag --{name}: {value} -> {rf[name]}")
    added += [f"flag --{name}={value}" for name, value in rf.items() if name not in lf]

    sections = (
        ("volume", (live.get("spec") or {}).get("volumes"), (rendered.get("spec") or {}).get("volumes"), _volume_key),
        ("mount", lc.get("volumeMounts"), rc.get("volumeMounts"), _mount_key),
        ("env", lc.get("env"), rc.get("env"), lambda e: e.get("name")),
    )
    for kind, live_items, rendered_items, key in sections:
        lv, rv = _by(live_items, key), _by(rendered_items, key)
        for name, item in lv.items():
            label = ":".join(str(part) for part in name) if isinstance(name, tuple) else name
            if name not in rv:
                lost.append(f"{kind} {label}")
            elif rv[name] != item:
                altered.append(f"{kind} {label}")
        added += [f"{kind} {':'.join(map(str, n)) if isinstance(n, tuple) else n}" for n in rv if n not in lv]
    return {"lost": lost, "altered": altered, "added": added}


def _live_texts(live):
    """``{path: text}`` from slurp results (a loop's ``results`` or single results) or a mapping."""
    if isinstance(live, dict) and "results" in live:
        live = live["results"]
    if isinstance(live, dict):
        return dict(live)
    out = {}
    for item in live or []:
        if not isinstance(item, dict) or "content" not in item:
            raise DriftError("live manifests must be ansible.builtin.slurp results")
        out[item.get("source") or item.get("item")] = base64.b64decode(item["content"]).decode()
    return out


def drift(dryrun_stdout, live):
    """Per component what a re-render would lose or change, and what it would add.

    Returns ``{compared, components: {name: {lost, altered, added}}, lost, altered}`` with the flat ``lost`` and
    ``altered`` lists prefixed by the component; a live manifest kubeadm would not render is an error (the dry
    run did not cover it: nothing would be known about it).
    """
    rendered = parse_dryrun(dryrun_stdout)
    if not rendered:
        raise DriftError("the kubeadm dry run printed no manifest (was it run with --dry-run?)")
    texts = _live_texts(live)
    # kubeadm renders kubeadm-config's version: in the middle of an upgrade that is not the node's, and every
    # image and version-dependent flag would differ without anyone having edited anything.
    version = _RENDER_VERSION.search(dryrun_stdout or "")
    live_versions = sorted({_manifest.summary(_manifest.load(t) or {})["version"] or "" for t in texts.values()})
    if version and live_versions != [version["version"]]:
        return {
            "compared": [],
            "components": {},
            "lost": [],
            "altered": [],
            "skipped": f"kubeadm-config is at {version['version']}, the manifests at {', '.join(live_versions)} "
            "(an upgrade in progress)",
        }
    by_name = {path.rsplit("/", 1)[-1].rsplit(".", 1)[0]: text for path, text in rendered.items()}
    components, lost, altered = {}, [], []
    for path, text in sorted(texts.items()):
        name = str(path).rsplit("/", 1)[-1].rsplit(".", 1)[0]
        if name not in by_name:
            raise DriftError(f"the kubeadm dry run renders no {name} (it rendered {', '.join(sorted(by_name))})")
        try:
            found = compare(_manifest.load(text) or {}, _manifest.load(by_name[name]) or {})
        except _manifest.ManifestError as exc:
            raise DriftError(f"{name}: {exc}") from exc
        components[name] = found
        lost += [f"{name}: {item}" for item in found["lost"]]
        altered += [f"{name}: {item}" for item in found["altered"]]
    return {"compared": sorted(components), "components": components, "lost": lost, "altered": altered}


def _leaves(value, prefix=""):
    """``{dotted.path: value}`` of a document; a list is one leaf (a kubeletconfiguration patch replaces it whole)."""
    if isinstance(value, dict) and value:
        out = {}
        for key, item in value.items():
            out.update(_leaves(item, f"{prefix}.{key}" if prefix else str(key)))
        return out
    return {prefix: value}


def _empty(value):
    # kubeadm writes the Go struct with omitempty: a null or empty field it leaves out is no setting lost.
    return value is None or value in ({}, [], "")


def _merged(base, patch):
    """``patch`` merged into ``base`` as a strategic merge into KubeletConfiguration does (maps merge, lists replace)."""
    out = dict(base)
    for key, value in patch.items():
        out[key] = _merged(out[key], value) if isinstance(value, dict) and isinstance(out.get(key), dict) else value
    return out


def kubelet_config_drift(dryrun_stdout, live_text):
    """What ``kubeadm upgrade node`` would drop or change in this node's kubelet configuration.

    kubeadm rewrites ``/var/lib/kubelet/config.yaml`` from the kubelet-config ConfigMap, its ``kubeletconfiguration``
    patches and the node's instance configuration (``kubeadm upgrade node phase kubelet-config --dry-run`` prints
    that file); a setting only this node's file has is lost. ``live_text`` is the file's text, or the preflight's
    node read (a ``#skewsafe-file <path>`` line before each file), whose ``instance-config.yaml`` is applied to the
    rendering last, as kubeadm does. Returns ``{compared, lost, altered, added}``.
    """
    instance_text = None
    if (live_text or "").startswith(_component_gates.FILE_MARK):
        files = _component_gates.node_files(live_text)
        if KUBELET_CONFIG not in files:
            raise DriftError(f"the node has no readable {KUBELET_CONFIG}")
        live_text, instance_text = files[KUBELET_CONFIG], files.get(INSTANCE_CONFIG)
    rendered = {path.rsplit("/", 1)[-1]: text for path, text in parse_dryrun(dryrun_stdout).items()}
    cluster, kubelet = _CLUSTER_VERSION.search(dryrun_stdout or ""), _KUBELET_VERSION.search(dryrun_stdout or "")
    if cluster and kubelet and cluster["version"] != kubelet["version"]:
        # kubeadm upgrade apply re-uploads the ConfigMap kubelet-config with the target's defaults, and kubeadm
        # upgrade node may have rewritten the file since: what differs then is not a setting of the node's own.
        return {
            "compared": [],
            "lost": [],
            "altered": [],
            "added": [],
            "skipped": f"kubeadm-config is at {cluster['version']}, this node's kubelet at {kubelet['version']} (an "
            "upgrade in progress: its kubelet configuration was compared before the first change)",
        }
    if "config.yaml" not in rendered:
        raise DriftError(f"the kubeadm dry run printed no kubelet configuration (it printed {sorted(rendered)})")
    try:
        live, new = _manifest.load(live_text), _manifest.load(rendered["config.yaml"])
    except _manifest.ManifestError as exc:
        raise DriftError(f"{KUBELET_CONFIG}: {exc}") from exc
    if not isinstance(live, dict) or not isinstance(new, dict):
        raise DriftError(f"{KUBELET_CONFIG} or its rendering is not a KubeletConfiguration document")
    if instance_text:
        try:
            instance = _manifest.load(instance_text) or {}
        except _manifest.ManifestError as exc:
            raise DriftError(f"{INSTANCE_CONFIG}: {exc}") from exc
        new = _merged(new, instance if isinstance(instance, dict) else {})
    lv, rv = _leaves(live), _leaves(new)
    lost = [f"{key}: {value!r}" for key, value in lv.items() if key not in rv and not _empty(value)]
    altered = [f"{key}: {value!r} -> {rv[key]!r}" for key, value in lv.items() if key in rv and rv[key] != value]
    added = [f"{key}: {value!r}" for key, value in rv.items() if key not in lv and not _empty(value)]
    return {"compared": [KUBELET_CONFIG], "lost": lost, "altered": altered, "added": added}
