# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
from __future__ import annotations

DOCUMENTATION = r"""
name: node_name
author: skewsafe developers (@skewsafe)
version_added: 0.1.0
short_description: The Kubernetes Node name of the current host
description:
  - Returns O(ignore:skewsafe_node_name) when it is set (as a host, play, role or task variable), otherwise the
    host's C(nodename) fact in lower case, which is the name kubeadm gives the Node by default.
  - Every role of the collection names the host's Node this way.
  - Needs gathered facts (C(gather_subset=min) is enough) unless C(skewsafe_node_name) is set.
options: {}
"""

EXAMPLES = r"""
- name: Read the host's Node
  kubernetes.core.k8s_info:
    kind: Node
    name: "{{ lookup('skewsafe.kubeadm.node_name') }}"
  delegate_to: localhost
"""

RETURN = r"""
_raw:
  description: The Node name, a single string.
  type: list
  elements: str
"""

from ansible.errors import AnsibleLookupError
from ansible.plugins.lookup import LookupBase


def node_name(node_name_var, facts):
    """``skewsafe_node_name`` when set, else the ``nodename`` fact in lower case (kubeadm and the kubelet register
    the host name lower-cased: cmd/kubeadm nodeutil.GetHostname); None when neither is known."""
    return node_name_var or ((facts or {}).get("nodename") or "").lower() or None


class LookupModule(LookupBase):
    def run(self, terms, variables=None, **kwargs):
        if terms:
            raise AnsibleLookupError("node_name takes no terms")
        variables = variables or {}
        name = node_name(
            self._templar.template(variables.get("skewsafe_node_name")),
            self._templar.template(variables.get("ansible_facts")),
        )
        if not name:
            raise AnsibleLookupError(
                f"{variables.get('inventory_hostname')}: no skewsafe_node_name and no nodename fact (gather facts first)"
            )
        return [name]
