#!/usr/bin/python
# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: etcd_snapshot
short_description: Save and verify an etcd snapshot through etcd's HTTP gateway, from any node with a client certificate
version_added: 0.1.0
description:
  - Streams a snapshot from the first etcd endpoint that gives one (C(POST /v3/maintenance/snapshot) on etcd's client
    URL, the JSON gateway etcd serves by default) into O(dest), as C(etcdctl snapshot save) would write it.
  - First asks the member its database size (C(POST /v3/maintenance/status)) and fails, before the snapshot is
    requested, when the file system of O(dest) has less free space than that plus 64 MiB.
  - Verifies it before it is kept - the SHA-256 etcd sends after the data must match, and the file must be a bbolt
    database - then renames it into place (C(0600)). A failed or unverified snapshot leaves no file at O(dest).
  - Works from any node with an etcd client certificate - with external etcd (C(etcd.external) in kubeadm's
    ClusterConfiguration) a control-plane node has no etcd container and no C(etcdctl), only the client certificate
    kube-apiserver uses; with kubeadm's stacked etcd, the local member and kubeadm's health-check client
    certificate. Standard library only, nothing to install on the node.
  - TLS is always verified against O(ca_file).
author:
  - skewsafe developers (@skewsafe)
extends_documentation_fragment:
  - skewsafe.kubeadm._attributes
attributes:
  check_mode:
    support: full
    details: Nothing is requested from etcd and nothing is written; the result says what would be saved.
  diff_mode:
    support: none
  idempotent:
    support: none
    details: Every run takes a new snapshot and reports a change.
options:
  endpoints:
    description:
      - etcd client URLs (C(https://host:2379)), tried in order until one gives a verified snapshot.
    type: list
    elements: str
    required: true
  ca_file:
    description: The CA the etcd servers' certificates must verify against.
    type: path
    required: true
  cert_file:
    description: Client certificate etcd accepts (kube-apiserver's C(--etcd-certfile)).
    type: path
  key_file:
    description: Key of O(cert_file).
    type: path
  dest:
    description: Path of the snapshot file on the node. Its directory must exist.
    type: path
    required: true
  timeout:
    description: Seconds the connection may stay silent (per endpoint).
    type: float
    default: 120.0
"""

EXAMPLES = r"""
- name: Read what kube-apiserver uses to reach etcd
  ansible.builtin.slurp:
    src: /etc/kubernetes/manifests/kube-apiserver.yaml
  register: apiserver

- name: Snapshot the external etcd
  skewsafe.kubeadm.etcd_snapshot:
    endpoints: "{{ (apiserver | skewsafe.kubeadm.static_pod).flags['etcd-servers'].split(',') }}"
    ca_file: "{{ (apiserver | skewsafe.kubeadm.static_pod).flags['etcd-cafile'] }}"
    cert_file: "{{ (apiserver | skewsafe.kubeadm.static_pod).flags['etcd-certfile'] }}"
    key_file: "{{ (apiserver | skewsafe.kubeadm.static_pod).flags['etcd-keyfile'] }}"
    dest: /var/lib/skewsafe/etcd-snapshots/cp-1-before-upgrade.db
  become: true
"""

RETURN = r"""
path:
  description: The verified snapshot (O(dest)).
  returned: changed
  type: str
  sample: /var/lib/skewsafe/etcd-snapshots/cp-1-20261202T101500Z.db
endpoint:
  description: The endpoint that gave it.
  returned: changed
  type: str
  sample: https://10.214.1.31:2379
size:
  description: Bytes of the file (the database and the 32-byte SHA-256 trailer).
  returned: changed
  type: int
  sample: 4177952
sha256:
  description: SHA-256 of the whole file, to compare with copies.
  returned: changed
  type: str
revision:
  description: The etcd revision of the response header, when etcd sends one (3.6 sends none; null then).
  returned: changed
  type: int
  sample: 48211
version:
  description: The storage version etcd reported with the snapshot, when it does (etcd 3.6 and later).
  returned: changed
  type: str
  sample: 3.6.0
space:
  description:
    - C(free) bytes on the file system of O(dest) and the C(need) it was compared with (etcd's database size, the most
      a snapshot of it takes); the snapshot is not requested when C(free) is below C(need) plus 64 MiB.
  returned: changed
  type: dict
  sample: {free: 21474836480, need: 4177920}
errors:
  description: Endpoints tried before the one that worked, with what failed.
  returned: changed
  type: list
  elements: str
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _etcd_snapshot as snap


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "endpoints": {"type": "list", "elements": "str", "required": True},
            "ca_file": {"type": "path", "required": True},
            "cert_file": {"type": "path"},
            "key_file": {"type": "path", "no_log": False},  # a path, not the key
            "dest": {"type": "path", "required": True},
            "timeout": {"type": "float", "default": 120.0},
        },
        required_together=[("cert_file", "key_file")],
        supports_check_mode=True,
    )
    p = module.params
    endpoints = [e.strip() for e in p["endpoints"] if e and e.strip()]
    bad = [e for e in endpoints if not e.startswith("https://")]
    if not endpoints or bad:
        module.fail_json(msg=f"endpoints must be https:// etcd client URLs, got {p['endpoints']}")
    if p["timeout"] <= 0:
        module.fail_json(msg=f"timeout must be positive, got {p['timeout']}")
    if module.check_mode:
        module.exit_json(changed=True, msg=f"would save a snapshot from {endpoints[0]} to {p['dest']}")
    try:
        context = snap.tls_context(p["ca_file"], p["cert_file"], p["key_file"])
        result = snap.save_from_any(endpoints, p["dest"], context, p["timeout"])
    except (OSError, snap.SnapshotError) as exc:
        module.fail_json(msg=str(exc))
    keep = ("path", "endpoint", "size", "sha256", "revision", "version", "errors", "space")
    module.exit_json(changed=True, **{k: result[k] for k in keep})


if __name__ == "__main__":
    main()
