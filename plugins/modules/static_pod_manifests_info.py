#!/usr/bin/python
# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: static_pod_manifests_info
short_description: Read several static Pod manifests of a node in one task
version_added: 0.1.0
description:
  - Reads the static Pod manifests kubeadm writes (C(<name>.yaml) in O(manifests_dir)) on the node it runs on and
    returns each one as M(ansible.builtin.slurp) would (base64 C(content), C(encoding), C(source)), or null when
    the file does not exist.
  - One module run for every manifest instead of one M(ansible.builtin.slurp) each, about a second fewer per
    manifest on a loaded node. The action plugins M(skewsafe.kubeadm.control_plane_state_info) and
    M(skewsafe.kubeadm.control_plane_health) read the node through it.
  - Needs privilege escalation for a non-root user (kubeadm writes the manifests readable by root only).
  - Read-only. Standard library only, nothing to install on the node.
author:
  - skewsafe developers (@skewsafe)
extends_documentation_fragment:
  - skewsafe.kubeadm._attributes
  - skewsafe.kubeadm._attributes.info_module
options:
  manifests_dir:
    description: The kubelet's static Pod directory.
    type: path
    default: /etc/kubernetes/manifests
  names:
    description:
      - Manifest names without C(.yaml), for example V(kube-apiserver). A name with a C(/) is refused.
    type: list
    elements: str
    required: true
  must_exist:
    description: Fail, naming it, when a manifest does not exist (instead of returning null for it).
    type: bool
    default: false
"""

EXAMPLES = r"""
- name: Read the control-plane manifests
  skewsafe.kubeadm.static_pod_manifests_info:
    names: [kube-apiserver, kube-controller-manager, kube-scheduler, etcd]
  become: true
  register: manifests

- name: The version kube-apiserver runs
  ansible.builtin.debug:
    msg: "{{ (manifests.manifests['kube-apiserver'] | skewsafe.kubeadm.static_pod).version }}"
"""

RETURN = r"""
manifests:
  description:
    - Name to what M(ansible.builtin.slurp) would return for the manifest (so the
      P(skewsafe.kubeadm.static_pod#filter) filter takes it), or null when the file does not exist (and
      O(must_exist) is false).
  returned: success
  type: dict
  sample:
    kube-apiserver:
      content: YXBpVmVyc2lvbjogdjEKa2luZDogUG9kCg==
      encoding: base64
      source: /etc/kubernetes/manifests/kube-apiserver.yaml
    etcd: null
"""

import base64
import os

from ansible.module_utils.basic import AnsibleModule


def read_manifests(manifests_dir, names, must_exist=False):
    """``({name: slurp-shaped dict or None}, error)``; error names the first manifest that cannot be read."""
    manifests = {}
    for name in names:
        path = os.path.join(manifests_dir, f"{name}.yaml")
        try:
            with open(path, "rb") as handle:
                content = base64.b64encode(handle.read()).decode("ascii")
            manifests[name] = {"content": content, "encoding": "base64", "source": path}
        except FileNotFoundError:
            if must_exist:
                return manifests, f"the {name} manifest does not exist: {path}"
            manifests[name] = None
        except OSError as exc:
            return manifests, f"cannot read the {name} manifest: {exc}"
    return manifests, None


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "manifests_dir": {"type": "path", "default": "/etc/kubernetes/manifests"},
            "names": {"type": "list", "elements": "str", "required": True},
            "must_exist": {"type": "bool", "default": False},
        },
        supports_check_mode=True,
    )
    p = module.params
    bad = [n for n in p["names"] if not n or "/" in n or n in (".", "..")]
    if bad:
        module.fail_json(msg=f"names are manifest names without a directory, not {bad}")
    manifests, error = read_manifests(p["manifests_dir"], list(dict.fromkeys(p["names"])), p["must_exist"])
    if error:
        module.fail_json(msg=error)
    module.exit_json(changed=False, manifests=manifests)


if __name__ == "__main__":
    main()
