# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Kubernetes API client construction from the shared auth options."""

from __future__ import annotations

import json
import os
import sys
import traceback

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._errors import SkewsafeError

try:
    import kubernetes  # noqa: F401  pylint: disable=unused-import
    from kubernetes import client as k8s_client
    from kubernetes import config as k8s_config

    # re-exported for the callers of this module
    from kubernetes.client.exceptions import ApiException  # pylint: disable=unused-import

    HAS_KUBERNETES = True
    KUBERNETES_IMPORT_ERROR = None
except ImportError:
    HAS_KUBERNETES = False
    KUBERNETES_IMPORT_ERROR = traceback.format_exc()
    k8s_client = k8s_config = None

    class ApiException(Exception):  # type: ignore[no-redef]
        """Stand-in so callers can name the exception without the library."""

        status = None
        reason = None
        body = None


try:
    import urllib3

    # connection refused, timeouts and retries given up surface as urllib3 errors, not OSError
    TRANSPORT_ERRORS = (OSError, urllib3.exceptions.HTTPError)
except ImportError:  # pragma: no cover - kubernetes depends on urllib3
    TRANSPORT_ERRORS = (OSError,)

# Seconds for one API request of the typed client (a hung API server must not stall a run).
REQUEST_TIMEOUT = 30

# A request the server never received is tried again, with backoff: refused or timed-out connections and TLS handshakes
# cut short (a balancer in front of a restarting or loaded kube-apiserver; CI, 2026-12-07: a preflight stopped on one
# SSLEOFError through the lab's haproxy at load 70, urllib3's default retries spent within milliseconds). urllib3 calls
# a reset during the handshake a read error, as it calls one after the request was sent: such errors are tried once
# more, and only for GET and HEAD (a write that may have reached the server is never repeated; a hung server fails a
# read after two REQUEST_TIMEOUTs).
RETRY = {
    "total": 4,
    "connect": 4,
    "other": 4,
    "read": 1,
    "redirect": 0,
    "status": 0,
    "backoff_factor": 0.5,
    "allowed_methods": frozenset({"GET", "HEAD"}),
}

# kubeadm writes the admin kubeconfig here on every control-plane node.
KUBEADM_ADMIN_KUBECONFIG = "/etc/kubernetes/admin.conf"


class ClientError(SkewsafeError):
    """Credentials or connection settings that cannot work."""


def missing_library_message():
    return (
        "The 'kubernetes' Python library is required on the host that runs this task "
        f"(Python: {sys.executable}). Install it with 'pip install kubernetes' or the OS package "
        "python3-kubernetes."
    )


def resolve_kubeconfig(params):
    """The kubeconfig to use, or None for host/token or in-cluster settings."""
    if params.get("kubeconfig"):
        return params["kubeconfig"]
    if params.get("host"):
        return None
    if os.path.exists(KUBEADM_ADMIN_KUBECONFIG):
        return KUBEADM_ADMIN_KUBECONFIG
    default = os.path.expanduser("~/.kube/config")
    return default if os.path.exists(default) else None


def load_configuration(params):
    """A ``kubernetes.client.Configuration`` for the auth params; TLS verification always on."""
    if not params.get("validate_certs", True):
        raise ClientError(
            "validate_certs=false is refused: skewsafe.kubeadm never turns TLS verification off. "
            "Give the cluster CA with ca_cert (on kubeadm clusters /etc/kubernetes/pki/ca.crt)."
        )
    kubeconfig = resolve_kubeconfig(params)
    configuration = k8s_client.Configuration()
    if kubeconfig:
        if not os.path.exists(kubeconfig):
            raise ClientError(f"kubeconfig {kubeconfig} does not exist")
        try:
            k8s_config.load_kube_config(
                config_file=kubeconfig, context=params.get("context"), client_configuration=configuration
            )
        except Exception as exc:  # the loader raises several unrelated types
            raise ClientError(f"cannot load kubeconfig {kubeconfig}: {exc}") from exc
    elif not params.get("host"):
        try:
            k8s_config.load_incluster_config(client_configuration=configuration)
        except k8s_config.ConfigException as exc:
            raise ClientError(
                "no credentials: give kubeconfig, or host with api_key/client_cert, "
                f"or run on a control-plane node that has {KUBEADM_ADMIN_KUBECONFIG}"
            ) from exc
    if configuration.verify_ssl is False:
        raise ClientError(
            f"the kubeconfig {kubeconfig} sets insecure-skip-tls-verify; skewsafe.kubeadm never turns TLS "
            "verification off. Give the cluster CA with ca_cert."
        )
    if params.get("host"):
        configuration.host = params["host"]
    if params.get("api_key"):
        configuration.api_key = {"authorization": f"Bearer {params['api_key']}"}
    if params.get("ca_cert"):
        configuration.ssl_ca_cert = params["ca_cert"]
    if params.get("client_cert"):
        configuration.cert_file = params["client_cert"]
    if params.get("client_key"):
        configuration.key_file = params["client_key"]
    configuration.verify_ssl = True
    configuration.retries = urllib3.util.Retry(**RETRY)
    return configuration


def build_api_client(params):
    """A ``kubernetes.client.ApiClient`` for the auth params."""
    return k8s_client.ApiClient(load_configuration(params))


def api_error_message(exc):
    """The API's own message from an ApiException body, else its reason."""
    body = getattr(exc, "body", None)
    if body:
        try:
            return json.loads(body).get("message") or str(exc.reason)
        except (ValueError, AttributeError):
            pass
    return f"{getattr(exc, 'status', '')} {getattr(exc, 'reason', '')}".strip()
