# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection.

from __future__ import annotations


class ModuleDocFragment:
    # Mirrors AUTH_ARG_SPEC in plugins/module_utils/_args.py.
    DOCUMENTATION = r"""
options:
  kubeconfig:
    description:
      - Path to a kubeconfig file.
      - When neither O(kubeconfig) nor O(host) is given, C(/etc/kubernetes/admin.conf) is used if it exists
        (a kubeadm control-plane node), then C(~/.kube/config), then the in-cluster service account.
      - Falls back to the E(K8S_AUTH_KUBECONFIG) environment variable.
    type: path
  context:
    description:
      - The kubeconfig context to use. Falls back to E(K8S_AUTH_CONTEXT).
    type: str
  host:
    description:
      - URL of the Kubernetes API server. Falls back to E(K8S_AUTH_HOST).
    type: str
  api_key:
    description:
      - Bearer token for the API server. Falls back to E(K8S_AUTH_API_KEY).
    type: str
  ca_cert:
    description:
      - CA bundle that signs the API server certificate. Falls back to E(K8S_AUTH_SSL_CA_CERT).
    type: path
    aliases: [ssl_ca_cert]
  client_cert:
    description:
      - Client certificate for the API server. Falls back to E(K8S_AUTH_CERT_FILE).
    type: path
    aliases: [cert_file]
  client_key:
    description:
      - Key of O(client_cert). Falls back to E(K8S_AUTH_KEY_FILE).
    type: path
    aliases: [key_file]
  validate_certs:
    description:
      - Kept for compatibility with C(kubernetes.core) and AWX credentials (E(K8S_AUTH_VERIFY_SSL)).
      - TLS verification is never turned off; V(false) is refused with an error. Give O(ca_cert) instead.
      - A kubeconfig with C(insecure-skip-tls-verify) is refused too.
    type: bool
    default: true
    aliases: [verify_ssl]
requirements:
  - kubernetes >= 24.2.0 (Python library)
"""
