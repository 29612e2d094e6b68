#!/usr/bin/python
# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: apiserver_peers_info
short_description: Facts about every kube-apiserver that matter to the Mixed Version Proxy
version_added: 0.1.0
description:
  - Reaches every API server directly (never through the load balancer) and returns its version, identity lease
    (name, host name, holder, renew age, advertised peer address), the MVP post-start hooks of C(/readyz?verbose),
    the MVP metrics, the local (C(profile=nopeer)) and merged aggregated discovery, and which resources each server
    would proxy.
  - When it runs on a control-plane node it also reports the MVP-relevant flags of that node's kube-apiserver
    static Pod manifest.
  - Read-only. The same evidence drives M(skewsafe.kubeadm.mvp_check), which adds the verdict and the waiting.
author:
  - skewsafe developers (@skewsafe)
extends_documentation_fragment:
  - skewsafe.kubeadm._auth
  - skewsafe.kubeadm._apiservers
  - skewsafe.kubeadm._attributes
  - skewsafe.kubeadm._attributes.info_module
  - skewsafe.kubeadm._attributes.actiongroup_kubeadm
options:
  manifest:
    description:
      - The kube-apiserver static Pod manifest to read flags from, if it exists on the host the module runs on.
    type: path
    default: /etc/kubernetes/manifests/kube-apiserver.yaml
notes:
  - Needs the C(kubernetes) Python library where it runs.
"""

EXAMPLES = r"""
- name: Collect MVP facts from the control plane (run on the first control-plane node)
  skewsafe.kubeadm.apiserver_peers_info:
  register: peers

- name: Is MVP configured on this node's kube-apiserver?
  ansible.builtin.debug:
    msg: "{{ peers.manifest.flags['peer-ca-file'] | default('not set') }}"

- name: Which resources would each server proxy?
  ansible.builtin.debug:
    msg: "{{ peers.servers | items2dict(key_name='name', value_name='discovery') }}"
"""

RETURN = r"""
mode:
  description: V(mixed) when the servers run more than one version, else V(steady).
  returned: success
  type: str
servers:
  description: One entry per API server.
  returned: success
  type: list
  elements: dict
  contains:
    name:
      description: Endpoint name (or its host).
      type: str
    endpoint:
      description: URL used.
      type: str
    version:
      description: C(gitVersion) from C(/version).
      type: str
    ready:
      description: C(/readyz) answered 200.
      type: bool
    hooks:
      description: MVP-related post-start hooks and their state (C(ok) or C(failed)).
      type: dict
    metrics:
      description: C(rerouted) samples, C(proxy_errors) and C(sync_errors) by type.
      type: dict
    discovery:
      description: C(local_count), C(merged_count) and C(peer_only) (resources served only through peers).
      type: dict
    error:
      description: Why the server could not be read, if it could not.
      type: str
leases:
  description: The kube-apiserver identity leases in C(kube-system) (label C(apiserver.kubernetes.io/identity=kube-apiserver)), one per running server.
  returned: success
  type: list
  elements: dict
  contains:
    name:
      description: Lease name (C(apiserver-) and a hash of the server's host name).
      type: str
    hostname:
      description: The C(kubernetes.io/hostname) label, the host name the server runs on.
      type: str
    holder:
      description: C(spec.holderIdentity), the server's identity.
      type: str
    renew_age:
      description: Seconds since the lease was last renewed; a live server renews every 10 seconds.
      type: float
    peer_address:
      description: The address peers dial to proxy to this server (C(host:port) from its peer-advertise annotation).
      type: str
  sample:
    - name: apiserver-4k3ffrnhq3anqfsbfmhbkz4l3y
      hostname: sslab-cp1
      holder: apiserver-4k3ffrnhq3anqfsbfmhbkz4l3y_5f0e6c1a-8d6b-4b52-9b7e-2f3c1b2a9d10
      renew_age: 3.2
      peer_address: 10.214.1.11:6443
peer_tls:
  description: Per server, the address peers dial and the TLS error verifying it as C(kubernetes.default.svc), if any.
  returned: success
  type: dict
probes:
  description: In mixed mode, the live probes of resources only newer servers serve, on each older server; empty in steady mode.
  returned: success
  type: list
  elements: dict
  contains:
    server:
      description: The older server probed.
      type: str
    gvr:
      description: Group, version and resource probed.
      type: list
      elements: str
    path:
      description: The request path (a list with C(limit=1)).
      type: str
    status:
      description: HTTP status of the request as a client sends it; 200 means the server proxied it to a peer.
      type: int
    status_local:
      description: HTTP status with C(x-kubernetes-peer-proxied) set, which stops proxying; 404 shows the server does not serve the resource itself.
      type: int
    body:
      description: The first 300 characters of the answer, or the transport error.
      type: str
  sample:
    - server: sslab-cp2
      gvr: [resource.k8s.io, v1beta2, deviceclasses]
      path: /apis/resource.k8s.io/v1beta2/deviceclasses?limit=1
      status: 200
      status_local: 404
      body: '{"kind":"DeviceClassList","apiVersion":"resource.k8s.io/v1beta2","metadata":{"resourceVersion":"1234"},"items":[]}'
manifest:
  description: MVP-relevant flags of the local kube-apiserver manifest.
  returned: success
  type: dict
  contains:
    path:
      description: The manifest read.
      type: str
    present:
      description: Whether it exists on this host.
      type: bool
    flags:
      description: Flag name to value, for the flags MVP depends on.
      type: dict
requests:
  description: HTTP requests made.
  returned: success
  type: int
"""

from ansible.module_utils.basic import AnsibleModule, missing_required_lib

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _client
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._manifest import ManifestError, read_mvp_flags
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.args import apiservers_argspec
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.run import RunError, collect_once


def main() -> None:
    argument_spec = apiservers_argspec()
    argument_spec.update(manifest={"type": "path", "default": "/etc/kubernetes/manifests/kube-apiserver.yaml"})
    module = AnsibleModule(argument_spec=argument_spec, supports_check_mode=True)
    if not _client.HAS_KUBERNETES:
        module.fail_json(
            msg=missing_required_lib("kubernetes") + " " + _client.missing_library_message(),
            exception=_client.KUBERNETES_IMPORT_ERROR,
        )
    try:
        mode, evidence, requests = collect_once(module.params)
    except RunError as exc:
        module.fail_json(msg=f"Cannot collect API server facts: {exc}")
    try:
        manifest = read_mvp_flags(module.params["manifest"])
    except ManifestError as exc:
        module.fail_json(msg=f"Cannot read the kube-apiserver manifest {module.params['manifest']}: {exc}")
    module.exit_json(changed=False, mode=mode, requests=requests, manifest=manifest, **evidence)


if __name__ == "__main__":
    main()
