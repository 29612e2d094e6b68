# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""The TLS handshake one kube-apiserver makes to a peer, from wherever it runs. Standard library only:
it also runs on control-plane nodes, which need no Python packages."""

from __future__ import annotations

import socket
import ssl
import time

# The host name every kube-apiserver uses to verify its peers (hard-coded in kube-apiserver).
PEER_SERVER_NAME = "kubernetes.default.svc"


def split_address(address, default_port=443):
    """``host:port`` (``[v6]:port`` too) -> (host, port)."""
    host, sep, port = str(address).rpartition(":")
    if not sep or not port.isdigit() or host.endswith(":"):
        return str(address).strip("[]"), default_port
    return host.strip("[]"), int(port)


def peer_tls_handshake(host, port, peer_ca_file, timeout=5.0):
    """Do what a peer kube-apiserver does: TLS with SNI kubernetes.default.svc, verified against the peer CA.

    Returns ``None`` on success, else the error text.
    """
    try:
        context = ssl.create_default_context(cafile=peer_ca_file)
    except (OSError, ssl.SSLError) as exc:
        return f"cannot load peer CA {peer_ca_file}: {exc}"
    try:
        with socket.create_connection((host, int(port)), timeout=timeout) as sock:
            with context.wrap_socket(sock, server_hostname=PEER_SERVER_NAME):
                return None
    except ssl.SSLCertVerificationError as exc:
        return f"certificate verify failed: {exc.verify_message}"
    except (OSError, ssl.SSLError) as exc:
        return str(exc)


def dial_peers(
    addresses,
    peer_ca_file,
    timeout=5.0,
    wait_timeout=0.0,
    wait_sleep=2.0,
    handshake=peer_tls_handshake,
    sleep=time.sleep,
    clock=time.monotonic,
):
    """Dial each address; redial the failing ones until all verify or ``wait_timeout`` seconds passed
    (a peer that restarts refuses for a few seconds). Returns ``[{"address", "error"}]`` in input order."""
    started = clock()
    errors = dict.fromkeys(addresses, "not dialled")
    while True:
        for address in [a for a, error in errors.items() if error]:
            host, port = split_address(address)
            errors[address] = handshake(host, port, peer_ca_file, timeout)
        if not any(errors.values()) or clock() - started + wait_sleep > wait_timeout:
            return [{"address": a, "error": errors[a]} for a in addresses]
        sleep(wait_sleep)
