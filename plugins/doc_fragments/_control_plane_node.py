# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection.

from __future__ import annotations


class ModuleDocFragment:
    # Mirrors CONTROL_PLANE_NODE_ARG_SPEC in plugins/module_utils/_args.py.
    DOCUMENTATION = r"""
options:
  node_name:
    description:
      - The Node name of the control plane (what C(kubectl get nodes) shows).
    type: str
    required: true
  manifests_dir:
    description:
      - Where kubeadm writes the static Pod manifests on the node.
    type: path
    default: /etc/kubernetes/manifests
"""
