"""Where the load goes: named API endpoints sharing one set of credentials from a kubeconfig.

A target is either one API server (``direct``: its /version is polled to see when it changes
version) or a load-balanced endpoint (its /version would only say which backend answered).
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlsplit

import urllib3

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._apiserver_http import Credentials


@dataclass
class Target:
    name: str
    url: str
    direct: bool = True
    server_name: str | None = None  # TLS host name to verify when the URL's host is not in the certificate


def parse_target(text: str, direct: bool) -> Target:
    """``NAME=URL`` or ``NAME=URL@TLS_NAME``."""
    name, sep, rest = text.partition("=")
    if not sep or not name or not rest.startswith("https://"):
        raise ValueError(f"target {text!r} is not NAME=https://HOST:PORT[@TLS_NAME]")
    url, _at, server_name = rest.partition("@")
    return Target(name, url.rstrip("/"), direct, server_name or None)


def load_credentials(kubeconfig: str) -> Credentials:
    """CA, client certificate/key or token as the collection reads them (embedded data goes to temp files)."""
    return Credentials.from_params({"kubeconfig": kubeconfig})


def pool(target: Target, creds: Credentials, size: int, timeout: float) -> urllib3.HTTPSConnectionPool:
    """A keep-alive pool like a real client's; no retries, so every failure is seen and recorded."""
    parts = urlsplit(target.url)
    extra = {"server_hostname": target.server_name, "assert_hostname": target.server_name} if target.server_name else {}
    return urllib3.HTTPSConnectionPool(
        parts.hostname,
        parts.port or 443,
        maxsize=size,
        block=False,
        cert_reqs="CERT_REQUIRED",
        ca_certs=creds.ca_file,
        cert_file=creds.cert_file,
        key_file=creds.key_file,
        retries=False,
        timeout=urllib3.Timeout(total=timeout),
        **extra,
    )


def auth_headers(creds: Credentials) -> dict:
    headers = {"User-Agent": "skewsafe-bench-loadgen"}
    if creds.token:
        headers["Authorization"] = f"Bearer {creds.token}"
    return headers
