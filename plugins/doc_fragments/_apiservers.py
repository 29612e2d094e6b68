# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection.

from __future__ import annotations


class ModuleDocFragment:
    # Mirrors APISERVERS_ARG_SPEC in plugins/module_utils/_mvp/args.py.
    DOCUMENTATION = r"""
options:
  endpoints:
    description:
      - The API servers to check, each reached directly (never through the load balancer).
      - Items are C(https://) URLs or mappings with C(url) and optional C(name) (shown in results), C(node_name)
        (the Kubernetes Node the server runs on), C(advertise_address) (C(host:port) it advertises) and C(hostname)
        (its OS host name).
      - Each server is matched to its identity lease by what the cluster says first, the address its kubeadm
        kube-apiserver Pod advertises (found by C(node_name), or C(advertise_address) when given), then the address
        of C(url), then C(hostname), then C(name). An inventory of FQDN aliases, or a C(url) through NAT or DNS that
        differs from the advertise address, is matched this way.
      - When omitted, the endpoints are the C(kubernetes.io/peer-advertise-address) annotations of the
        kube-apiserver identity leases, read through O(host) or the kubeconfig's server. A server with the
        C(UnknownVersionInteroperabilityProxy) gate off has no such annotation and is then not found; list
        every control plane explicitly to catch that case.
    type: list
    elements: raw
  peer_ca_file:
    description:
      - CA bundle to verify the servers' certificates the way a peer does (server name C(kubernetes.default.svc)).
        Use the same file as C(--peer-ca-file); on kubeadm clusters that is the cluster CA C(/etc/kubernetes/pki/ca.crt).
      - Defaults to the CA that verifies the API connection (O(ca_cert) or the kubeconfig's).
    type: path
  front_proxy_client_cert:
    description:
      - Certificate a kube-apiserver presents to its peers (kubeadm C(/etc/kubernetes/pki/front-proxy-client.crt)).
        With O(front_proxy_client_key) the peer discovery call is reproduced against every server to prove the
        request-header trust between peers. Skipped when not given.
    type: path
  front_proxy_client_key:
    description:
      - Key of O(front_proxy_client_cert).
    type: path
  probe_limit:
    description:
      - How many resources only newer servers serve are probed on each older server per round (mixed mode).
    type: int
    default: 2
  request_timeout:
    description:
      - Timeout in seconds of each HTTP request and TLS handshake.
    type: float
    default: 5.0
"""
