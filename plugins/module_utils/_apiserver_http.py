# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Direct HTTPS requests to individual API servers, bypassing any load balancer.

Credentials come from the shared auth options through the ``kubernetes`` library's
kubeconfig loader (exec plugins, embedded certificates); requests go through
urllib3, the library's own transport, because MVP evidence needs raw non-resource
paths (/readyz, /metrics, aggregated discovery with a profile) and custom headers on
one chosen server, which the typed client does not offer. TLS is always verified.
"""

from __future__ import annotations

import json
import time

try:
    import urllib3

    HAS_URLLIB3 = True
except ImportError:  # pragma: no cover - reported by the callers
    HAS_URLLIB3 = False

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._client import ClientError, load_configuration


class Credentials:
    """CA bundle, client certificate/key and/or bearer token for talking to API servers."""

    def __init__(self, ca_file=None, cert_file=None, key_file=None, token=None, host=None):
        self.ca_file = ca_file
        self.cert_file = cert_file
        self.key_file = key_file
        self.token = token
        self.host = host

    @classmethod
    def from_params(cls, params):
        configuration = load_configuration(params)
        creds = cls(
            ca_file=configuration.ssl_ca_cert,
            cert_file=configuration.cert_file,
            key_file=configuration.key_file,
            token=bearer_token(configuration),
            host=configuration.host,
        )
        if not creds.ca_file:
            raise ClientError("no CA bundle: give ca_cert or a kubeconfig with the cluster's certificate-authority")
        if not (creds.token or creds.cert_file):
            raise ClientError(
                "the kubeconfig or options give neither a bearer token nor a client certificate "
                "(token, tokenFile, exec plugin, client-certificate, api_key or client_cert/client_key)"
            )
        return creds


def bearer_token(configuration):
    """The bearer token the kubernetes client would send, wherever it keeps it.

    The kubeconfig loader stores ``token``/``tokenFile``/exec-plugin tokens as ``api_key['BearerToken']``
    (with an expiry-driven refresh hook), an explicit ``api_key`` option lands in ``api_key['authorization']``;
    ``auth_settings()`` reads both and runs the refresh hook.
    """
    value = ((configuration.auth_settings() or {}).get("BearerToken") or {}).get("value") or ""
    value = value.strip()
    if value.lower().startswith("bearer "):
        value = value[len("bearer ") :].strip()
    return value or None


class Response:
    def __init__(self, status, headers, body, error=None, seconds=0.0):
        self.status = status
        self.headers = headers
        self.body = body
        self.error = error
        self.seconds = seconds

    @property
    def ok(self):
        return self.status is not None and 200 <= self.status < 300

    def text(self):
        return (self.body or b"").decode("utf-8", "replace")

    def json(self):
        return json.loads(self.body)


class ApiServerClient:
    """Keep-alive HTTPS to many API servers with one set of credentials; counts requests."""

    def __init__(self, credentials, timeout=5.0):
        if not HAS_URLLIB3:
            raise ClientError("the urllib3 Python library (a dependency of kubernetes) is required")
        self.credentials = credentials
        self.timeout = timeout
        self.requests = 0
        self._pool = urllib3.PoolManager(
            cert_reqs="CERT_REQUIRED",
            ca_certs=credentials.ca_file,
            cert_file=credentials.cert_file,
            key_file=credentials.key_file,
            retries=False,
            timeout=urllib3.Timeout(total=timeout),
        )

    def get(self, base_url, path, headers=None, timeout=None):
        """GET ``base_url + path``; transport errors come back as ``Response(None, ..., error=...)``."""
        return self.request("GET", base_url, path, headers=headers, timeout=timeout)

    def request(self, method, base_url, path, headers=None, body=None, timeout=None):
        """Any method; a dict or list ``body`` is sent as JSON. Transport errors as in ``get``."""
        hdrs = {"User-Agent": "skewsafe.kubeadm"}
        if self.credentials.token:
            hdrs["Authorization"] = f"Bearer {self.credentials.token}"
        payload = json.dumps(body).encode() if isinstance(body, (dict, list)) else body
        if payload is not None:
            hdrs["Content-Type"] = "application/json"
        hdrs.update(headers or {})
        extra = {"timeout": urllib3.Timeout(total=timeout)} if timeout is not None else {}
        self.requests += 1
        started = time.monotonic()
        try:
            resp = self._pool.request(
                method, base_url.rstrip("/") + path, headers=hdrs, body=payload, preload_content=True, **extra
            )
        except urllib3.exceptions.HTTPError as exc:
            return Response(None, {}, b"", error=_reason(exc), seconds=time.monotonic() - started)
        return Response(resp.status, dict(resp.headers), resp.data, seconds=time.monotonic() - started)


def _reason(exc):
    reason = getattr(exc, "reason", None)
    return str(reason or exc)
