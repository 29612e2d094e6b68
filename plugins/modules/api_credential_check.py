#!/usr/bin/python
# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: api_credential_check
short_description: Refuse a Kubernetes API credential that would be sent to a server whose certificate is not checked
version_added: 0.1.0
description:
  - Reads, on the controller and without any network call, the credential every Kubernetes API call of the run
    would use (the collection's modules and C(kubernetes.core)'s alike), and fails with every reason it finds
    before anything is contacted.
  - "Refuses: E(K8S_AUTH_VERIFY_SSL) or E(K8S_AUTH_VALIDATE_CERTS) set to anything but a true word (C(kubernetes.core)
    applies them over any kubeconfig); a kubeconfig whose selected context (E(K8S_AUTH_CONTEXT), else
    C(current-context)) points at a cluster with C(insecure-skip-tls-verify) or a server that is not C(https://);
    E(K8S_AUTH_HOST) or an O(endpoints) URL that is not C(https://); a kubeconfig that is missing, unreadable, not
    YAML, or writable by every user (anyone could point the run at another server). A kubeconfig readable by every
    user while it holds a token, key or password gets a warning."
  - The kubeconfig is O(kubeconfig) when given, else E(K8S_AUTH_KUBECONFIG); several files may be joined by C(:),
    and are read as the kubernetes client merges them (the first C(current-context), the first entry of each name).
    Relative paths are taken from O(working_dir).
  - With neither, the run uses a token from E(K8S_AUTH_HOST) or mints its own credential
    (M(skewsafe.kubeadm.admin_credential)); only the environment is checked then.
  - Changes nothing.
author:
  - skewsafe developers (@skewsafe)
extends_documentation_fragment:
  - skewsafe.kubeadm._attributes
  - skewsafe.kubeadm._attributes.controller_action
attributes:
  check_mode:
    support: full
    details: Read-only; it runs normally in check mode.
  diff_mode:
    support: none
  idempotent:
    support: full
options:
  kubeconfig:
    description:
      - The kubeconfig the run passes to every API call (the playbooks' C(skewsafe_kubeconfig)); one path, or paths
        joined by C(:). Unset, E(K8S_AUTH_KUBECONFIG) is read.
    type: raw
  endpoints:
    description:
      - The API servers the MVP gate calls directly with the same credential, as the
        P(skewsafe.kubeadm.apiserver_endpoint#filter) filter gives them (C(name), C(url)). Each must be C(https://).
    type: list
    elements: dict
    default: []
  working_dir:
    description: Where relative kubeconfig paths start. Default the controller's working directory.
    type: path
notes:
  - The environment read is the one of C(ansible-playbook) on the controller, the one the API modules delegated to
    C(localhost) inherit.
seealso:
  - module: skewsafe.kubeadm.admin_credential
"""

EXAMPLES = r"""
- name: Refuse a credential that would reach an unverified server, before any API call
  skewsafe.kubeadm.api_credential_check:
    kubeconfig: "{{ skewsafe_kubeconfig | default(omit) }}"
    endpoints: "{{ groups['kube_control_plane'] | map('extract', hostvars) | map('skewsafe.kubeadm.apiserver_endpoint') | list }}"
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
source:
  description: Where the credential comes from - V(variable) (O(kubeconfig)), V(environment) (E(K8S_AUTH_*)) or
    V(minted) (the run mints its own).
  returned: always
  type: str
  sample: variable
kubeconfig:
  description: The kubeconfig file or files read, absolute, joined by C(:); null when none.
  returned: always
  type: str
  sample: /home/ops/cluster.kubeconfig
context:
  description: The kubeconfig context the run selects.
  returned: always
  type: str
  sample: kubernetes-admin@kubernetes
cluster:
  description: The cluster that context names.
  returned: always
  type: str
  sample: kubernetes
server:
  description: The API server the credential is sent to (E(K8S_AUTH_HOST) when set, which wins over the kubeconfig).
  returned: always
  type: str
  sample: https://10.0.0.10:6443
warnings:
  description: What is unsafe but not refused (a kubeconfig with a secret that every user can read).
  returned: always
  type: list
  elements: str
refusals:
  description: Each reason the credential is refused, naming the variable or file to change. Empty when it passes.
  returned: always
  type: list
  elements: str
  sample: ["skewsafe_kubeconfig: cluster 'prod' (context 'admin') sets insecure-skip-tls-verify. ..."]
"""
