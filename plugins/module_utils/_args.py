# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Shared option specs. Each block here has a doc fragment of the same name."""

from __future__ import annotations

import copy

from ansible.module_utils.basic import env_fallback

# Same option names and K8S_AUTH_* variables as kubernetes.core, so AWX's
# Kubernetes credential and existing module_defaults work unchanged.
# Mirrors plugins/doc_fragments/_auth.py.
AUTH_ARG_SPEC = {
    "kubeconfig": {"type": "path", "fallback": (env_fallback, ["K8S_AUTH_KUBECONFIG"])},
    "context": {"type": "str", "fallback": (env_fallback, ["K8S_AUTH_CONTEXT"])},
    "host": {"type": "str", "fallback": (env_fallback, ["K8S_AUTH_HOST"])},
    "api_key": {"type": "str", "no_log": True, "fallback": (env_fallback, ["K8S_AUTH_API_KEY"])},
    "ca_cert": {"type": "path", "aliases": ["ssl_ca_cert"], "fallback": (env_fallback, ["K8S_AUTH_SSL_CA_CERT"])},
    "client_cert": {"type": "path", "aliases": ["cert_file"], "fallback": (env_fallback, ["K8S_AUTH_CERT_FILE"])},
    "client_key": {
        "type": "path",
        "aliases": ["key_file"],
        "no_log": False,  # a path, not the key itself
        "fallback": (env_fallback, ["K8S_AUTH_KEY_FILE"]),
    },
    "validate_certs": {
        "type": "bool",
        "default": True,
        "aliases": ["verify_ssl"],
        "fallback": (env_fallback, ["K8S_AUTH_VERIFY_SSL"]),
    },
}


def auth_argspec():
    return copy.deepcopy(AUTH_ARG_SPEC)


# The control-plane node an action plugin reads on (through the connection) and in the API.
# Mirrors plugins/doc_fragments/_control_plane_node.py.
CONTROL_PLANE_NODE_ARG_SPEC = {
    "node_name": {"type": "str", "required": True},
    "manifests_dir": {"type": "path", "default": "/etc/kubernetes/manifests"},
}


def control_plane_node_argspec():
    """The auth options and the control-plane node options."""
    spec = auth_argspec()
    spec.update(copy.deepcopy(CONTROL_PLANE_NODE_ARG_SPEC))
    return spec
