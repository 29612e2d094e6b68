#!/usr/bin/python
# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: admin_credential
short_description: Mint a short-lived cluster-admin client certificate with kubeadm and keep it private on the controller
version_added: 0.1.0
description:
  - Instead of copying a control plane's C(/etc/kubernetes/admin.conf) (a cluster-admin certificate valid for a
    year that cannot be revoked on its own), asks that control plane's kubeadm for a new client certificate
    (C(kubeadm kubeconfig user --client-name ... --org ... --validity-period ...)), valid for O(validity) only.
    kubeadm signs it with the cluster CA on the node and prints it; nothing is written on the node and nothing is
    recorded in the cluster.
  - Run it with C(delegate_to) the control plane, with privilege escalation (the cluster CA key and admin.conf
    belong to root). It reads there, without any key, the server of admin.conf (C(kubectl config view --minify),
    which omits certificate data and keys), the certificates directory from kube-apiserver's C(--client-ca-file),
    and the kubeadm version; then kubeadm prints a kubeconfig for the same server, read from a
    ClusterConfiguration given on its standard input.
  - On the controller the certificate, the key and a kubeconfig that names them are written to O(dest) (made
    0700; each file 0600, written in place, no other copy). The kubernetes Python client writes inline
    certificate data to temporary files of its own in every process that loads a kubeconfig; with files it
    reads them where they are.
  - The files are named after O(name) and the process id of the C(ansible-playbook) run, so a run never uses or
    removes another run's credential. Within a run the credential is used again while more than half of
    O(validity) (at most an hour) is left, and minted again when less is left, so a long run (several hops of
    an upgrade path) never holds a certificate valid for longer than O(validity). Expired credentials of earlier
    runs in O(dest) are removed.
  - With O(remove_at_exit) a detached process removes the files as soon as the C(ansible-playbook) run ends, also
    when it fails, is interrupted or is killed.
  - The group C(kubeadm:cluster-admins) is bound to C(cluster-admin) by C(kubeadm init) since kubeadm 1.29
    (ClusterRoleBinding C(kubeadm:cluster-admins)), and admin.conf's own certificate carries it.
  - Needs the cluster CA key on the node (C(<certificatesDir>/ca.key)); with an external CA, give a credential
    instead (a kubeconfig or C(K8S_AUTH_*)). Needs C(kubectl) and C(kubeadm) there.
author:
  - skewsafe developers (@skewsafe)
extends_documentation_fragment:
  - skewsafe.kubeadm._attributes
  - skewsafe.kubeadm._attributes.controller_action
attributes:
  check_mode:
    support: full
    details:
      - It runs in check mode as well (a run in check mode needs a credential to read the cluster); it changes
        nothing on the node or in the cluster. Use a short O(validity) and O(remove_at_exit) there.
  diff_mode:
    support: none
  idempotent:
    support: full
    details:
      - Within one run the same credential is returned until it nears its end.
      - It never reports C(changed) when it mints (see RV(minted)) - the credential is the run's own state on the
        controller, not a change to a host or the cluster, so a rerun of a playbook that changes nothing stays at
        C(changed=0). Removing files (O(state=absent)) reports C(changed).
options:
  dest:
    description:
      - Private directory on the controller for the credential (created 0700; an existing one must belong to the
        user and is made 0700).
    type: path
    required: true
  name:
    description:
      - Base name of the files, C(<name>-<pid of ansible-playbook>.conf), C(.crt) and C(.key).
    type: str
    required: true
  state:
    description:
      - V(present) mints (or reuses) the credential, V(absent) removes this run's files.
    type: str
    choices: [present, absent]
    default: present
  client_name:
    description:
      - The certificate's common name, the user name the API server sees (audit logs).
    type: str
    default: skewsafe.kubeadm
  groups:
    description:
      - The certificate's organizations, the groups the API server sees.
    type: list
    elements: str
    default: [kubeadm:cluster-admins]
  validity:
    description:
      - How long the certificate is valid, a duration such as V(4h), V(90m) or V(1h30m).
    type: str
    default: 4h
  remove_at_exit:
    description:
      - Remove the files when the C(ansible-playbook) run ends, however it ends.
    type: bool
    default: false
  admin_kubeconfig:
    description:
      - admin.conf on the node, read only for its server address (no key leaves the node).
    type: str
    default: /etc/kubernetes/admin.conf
  manifest:
    description:
      - kube-apiserver's static Pod manifest on the node; its C(--client-ca-file) says where the cluster CA is.
    type: str
    default: /etc/kubernetes/manifests/kube-apiserver.yaml
  kubeadm:
    description:
      - The kubeadm command on the node.
    type: str
    default: kubeadm
  kubectl:
    description:
      - The kubectl command on the node.
    type: str
    default: kubectl
seealso:
  - name: kubeadm kubeconfig user
    description: The kubeadm command that mints the certificate.
    link: https://kubernetes.io/docs/reference/setup-tools/kubeadm/kubeadm-kubeconfig/
"""

EXAMPLES = r"""
- name: A cluster-admin credential for this run, valid for 4 hours, gone when the run ends
  skewsafe.kubeadm.admin_credential:
    dest: "{{ lookup('ansible.builtin.env', 'HOME') }}/.cache/skewsafe.kubeadm/credentials"
    name: "{{ groups['kube_control_plane'][0] }}"
    validity: 4h
    remove_at_exit: true
  delegate_to: "{{ groups['kube_control_plane'][0] }}"
  become: true
  run_once: true
  register: credential

- name: Use it
  kubernetes.core.k8s_info:
    kubeconfig: "{{ credential.kubeconfig }}"
    kind: Node
  delegate_to: localhost
  run_once: true
"""

RETURN = r"""
kubeconfig:
  description: The kubeconfig on the controller; it names the certificate and key files.
  returned: always
  type: str
  sample: /home/ops/.cache/skewsafe.kubeadm/credentials/cp-1-48213.conf
client_certificate:
  description: The client certificate file.
  returned: always
  type: str
client_key:
  description: The private key file (0600).
  returned: always
  type: str
server:
  description: The API server address the kubeconfig names (the one admin.conf names).
  returned: when state is present
  type: str
  sample: https://10.0.0.10:6443
expires:
  description: When the certificate stops being valid (UTC, ISO 8601).
  returned: when state is present
  type: str
  sample: "2026-12-02T10:41:07+00:00"
client_name:
  description: The certificate's common name.
  returned: when state is present
  type: str
groups:
  description: The certificate's organizations.
  returned: when state is present
  type: list
  elements: str
minted:
  description: A certificate was minted in this call (false when this run's was used again).
  returned: when state is present
  type: bool
pruned:
  description: Files of earlier runs' expired credentials that were removed.
  returned: when state is present
  type: list
  elements: str
removed:
  description: The files removed.
  returned: when state is absent
  type: list
  elements: str
"""
