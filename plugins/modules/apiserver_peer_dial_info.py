#!/usr/bin/python
# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: apiserver_peer_dial_info
short_description: Dial kube-apiserver peers from a control-plane node, as kube-apiserver does when it proxies
version_added: 0.1.0
description:
  - Runs on a control-plane node and opens a TLS connection to each given peer address (the C(host:port) of a
    kube-apiserver identity lease's peer-advertise annotation) with the server name C(kubernetes.default.svc),
    verified against the peer CA - the path and the check a proxying kube-apiserver on this node uses.
  - Run it on every control-plane node and give the results to M(skewsafe.kubeadm.mvp_check) as
    O(skewsafe.kubeadm.mvp_check#module:peer_dials). The gate then judges the peer paths from where peers dial, not
    from the controller (a bastion or an AWX execution environment on another network cannot reach the advertise
    addresses, and need not).
  - A failing address is dialled again until O(wait_timeout) (a peer that restarts refuses for a few seconds).
    It never fails on a dial error; the errors are returned for the gate to judge.
  - Read-only. Standard library only, nothing to install on the node.
author:
  - skewsafe developers (@skewsafe)
extends_documentation_fragment:
  - skewsafe.kubeadm._attributes
  - skewsafe.kubeadm._attributes.info_module
options:
  peers:
    description:
      - Peer addresses to dial, C(host:port) (C([v6]:port) for IPv6).
    type: list
    elements: str
    required: true
  peer_ca_file:
    description:
      - The CA the peers' serving certificates must verify against, on this node (kube-apiserver's
        C(--peer-ca-file); the collection sets the cluster CA).
    type: path
    default: /etc/kubernetes/pki/ca.crt
  timeout:
    description: Seconds for one connection and handshake.
    type: float
    default: 5.0
  wait_timeout:
    description: Seconds to keep dialling the addresses that fail; V(0) dials each once.
    type: float
    default: 30.0
  wait_sleep:
    description: Seconds between two rounds of dials.
    type: float
    default: 2.0
"""

EXAMPLES = r"""
- name: Read the addresses the API servers advertise to their peers
  kubernetes.core.k8s_info:
    kind: Lease
    namespace: kube-system
    label_selectors: [apiserver.kubernetes.io/identity=kube-apiserver]
  delegate_to: localhost
  run_once: true
  register: identity_leases

- name: Dial them from every control-plane node
  skewsafe.kubeadm.apiserver_peer_dial_info:
    peers: >-
      {{ identity_leases.resources | map(attribute='metadata.annotations')
         | map(attribute='kubernetes.io/peer-advertise-address', default='') | select | list }}
  register: dials

- name: Judge the gate with what the nodes saw
  skewsafe.kubeadm.mvp_check:
    peer_dials: "{{ ansible_play_hosts | map('extract', hostvars, 'dials') | list }}"
  run_once: true
"""

RETURN = r"""
node:
  description: The host name of the node the dials were made from (what its kube-apiserver's identity lease names).
  returned: always
  type: str
  sample: sslab-cp1
dials:
  description: One entry per address, in the order given.
  returned: always
  type: list
  elements: dict
  contains:
    address:
      description: The address dialled.
      type: str
    error:
      description: Null when the handshake verified; else what failed (refused, timed out, certificate verify failed, ...).
      type: str
  sample:
    - address: 10.214.1.12:6443
      error: null
    - address: 10.214.1.13:6443
      error: "[Errno 113] No route to host"
verified:
  description: Every address verified.
  returned: always
  type: bool
"""

import socket

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._peer_dial import dial_peers


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "peers": {"type": "list", "elements": "str", "required": True},
            "peer_ca_file": {"type": "path", "default": "/etc/kubernetes/pki/ca.crt"},
            "timeout": {"type": "float", "default": 5.0},
            "wait_timeout": {"type": "float", "default": 30.0},
            "wait_sleep": {"type": "float", "default": 2.0},
        },
        supports_check_mode=True,
    )
    p = module.params
    for name in ("timeout", "wait_timeout", "wait_sleep"):
        if p[name] < 0 or (name == "timeout" and p[name] == 0):
            module.fail_json(msg=f"{name} must be {'positive' if name == 'timeout' else 'zero or more'}, got {p[name]}")
    peers = list(dict.fromkeys(a.strip() for a in p["peers"] if a and a.strip()))
    dials = dial_peers(peers, p["peer_ca_file"], p["timeout"], p["wait_timeout"], p["wait_sleep"])
    module.exit_json(changed=False, node=socket.gethostname(), dials=dials, verified=not any(d["error"] for d in dials))


if __name__ == "__main__":
    main()
