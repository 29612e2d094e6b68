# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Option specs of apiserver_peers_info and mvp_check (mirrors doc_fragments/_apiservers.py and mvp_check's docs).

The defaults are defined here only: the action plugin validates against these specs and the shared
flow in _mvp.run reads its defaults from them.
"""

from __future__ import annotations

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._args import auth_argspec
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.evaluate import CHECKS

APISERVERS_ARG_SPEC = {
    "endpoints": {"type": "list", "elements": "raw"},
    "peer_ca_file": {"type": "path"},
    "front_proxy_client_cert": {"type": "path"},
    "front_proxy_client_key": {"type": "path", "no_log": False},
    "probe_limit": {"type": "int", "default": 2},
    "request_timeout": {"type": "float", "default": 5.0},
}


# mvp_check's own options, on top of APISERVERS_ARG_SPEC.
MVP_CHECK_ARG_SPEC = {
    "mode": {"type": "str", "choices": ["auto", "steady", "mixed"], "default": "auto"},
    "checks": {"type": "list", "elements": "str", "choices": list(CHECKS)},
    "wait_timeout": {"type": "int", "default": 300},
    "wait_sleep": {"type": "int", "default": 5},
    "success_threshold": {"type": "int", "default": 2},
    "fail_fast": {"type": "bool", "default": True},
    "proxy_sources": {"type": "list", "elements": "str"},
    "peer_dials": {"type": "list", "elements": "dict"},
}


def apiservers_argspec():
    spec = auth_argspec()
    spec.update({k: dict(v) for k, v in APISERVERS_ARG_SPEC.items()})
    return spec


def mvp_check_argspec():
    spec = apiservers_argspec()
    spec.update({k: dict(v) for k, v in MVP_CHECK_ARG_SPEC.items()})
    return spec


def with_defaults(params):
    """``params`` with every unset option of APISERVERS_ARG_SPEC and MVP_CHECK_ARG_SPEC at its default."""
    out = dict(params)
    for name, spec in {**APISERVERS_ARG_SPEC, **MVP_CHECK_ARG_SPEC}.items():
        if out.get(name) is None and "default" in spec:
            out[name] = spec["default"]
    return out


def normalize_peer_dials(raw):
    """apiserver_peer_dial_info results (``{node, dials: [{address, error}]}``, one per node), or ValueError;
    None when not given (the controller dials then)."""
    if raw is None:
        return None
    out = []
    for item in raw:
        dials = item.get("dials") if isinstance(item, dict) else None
        if not isinstance(dials, list) or not all(
            isinstance(d, dict) and isinstance(d.get("address"), str) for d in dials
        ):
            raise ValueError(
                f"peer_dials entry {item!r} must be an apiserver_peer_dial_info result: a mapping with 'dials', "
                "a list of {address, error}"
            )
        node = str(item.get("node") or item.get("item") or f"node {len(out) + 1}")
        out.append({"node": node, "dials": [{"address": d["address"], "error": d.get("error")} for d in dials]})
    return out


def normalize_endpoints(raw):
    """Accept URLs or ``{url, name, hostname, node_name, advertise_address}`` mappings; a list of dicts or ValueError."""
    out = []
    for item in raw or []:
        if isinstance(item, str):
            item = {"url": item}
        if not isinstance(item, dict) or not isinstance(item.get("url"), str):
            raise ValueError(f"endpoint {item!r} must be a URL or a mapping with 'url'")
        url = item["url"].strip()
        if not url.startswith("https://"):
            raise ValueError(f"endpoint {url!r} must be an https:// URL (TLS is always verified)")
        entry = {"url": url.rstrip("/"), "name": item.get("name"), "hostname": item.get("hostname")}
        for key in ("node_name", "advertise_address"):
            if item.get(key):
                entry[key] = str(item[key])
        out.append(entry)
    names = [e["name"] for e in out if e["name"]]
    if len(names) != len(set(names)):
        raise ValueError("endpoint names must be unique")
    return out
