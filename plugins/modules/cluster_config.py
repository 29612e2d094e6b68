#!/usr/bin/python
# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: cluster_config
short_description: Edit the kubeadm ClusterConfiguration (component extra args and feature gates)
version_added: 0.1.0
description:
  - Sets or removes C(extraArgs) of C(apiServer), C(controllerManager) and C(scheduler) in a kubeadm
    C(ClusterConfiguration), and merges feature gates into the single comma-separated C(feature-gates) argument
    without touching other gates.
  - With O(source=configmap) it edits the C(ClusterConfiguration) key of the C(kube-system/kubeadm-config)
    ConfigMap, which every C(kubeadm upgrade apply) and C(kubeadm upgrade node) renders the static Pod manifests
    from. The write carries the C(resourceVersion) that was read, so a concurrent change fails the task instead of
    being overwritten.
  - With O(source=file) it edits a local kubeadm config file that may hold several documents
    (C(InitConfiguration), C(JoinConfiguration), C(KubeletConfiguration), ...). Only the C(ClusterConfiguration)
    document is rewritten; every other document keeps its exact bytes.
  - For C(kubeadm.k8s.io/v1beta4) C(extraArgs) is a list of C({name, value}) in which a name may repeat. Setting a
    name leaves exactly one entry of that name, at the position of its first occurrence; removing a name removes
    every entry of it. Order and unrelated entries are kept.
  - C(kubeadm.k8s.io/v1beta3) (map form) is read, and written only for kubeadm 1.35 or older; for a newer target
    the task fails and asks for C(kubeadm config migrate).
  - All input is validated before anything is read from or written to the target.
author:
  - skewsafe developers (@skewsafe)
extends_documentation_fragment:
  - skewsafe.kubeadm._auth
  - skewsafe.kubeadm._attributes
  - skewsafe.kubeadm._attributes.actiongroup_kubeadm
attributes:
  check_mode:
    support: full
  diff_mode:
    support: full
  idempotent:
    support: full
options:
  source:
    description:
      - Where the ClusterConfiguration lives.
      - V(configmap) needs the C(kubernetes) Python library and credentials (see the auth options).
      - V(file) needs O(path); the auth options are ignored.
    type: str
    choices: [configmap, file]
    default: configmap
  path:
    description:
      - The kubeadm config file to edit when O(source=file).
      - A symlink is followed; its target is replaced atomically and the link stays. CRLF line endings are kept.
      - Only the ClusterConfiguration document is rewritten; other documents and the comment lines before it stay
        byte for byte. Comments inside the ClusterConfiguration mapping are not kept (a warning says so); the
        original text is in RV(previous).
    type: path
  backup:
    description:
      - With O(source=file), keep a timestamped copy of the file next to it before writing.
      - The previous ClusterConfiguration is always returned in RV(previous) so it can be saved on the controller.
    type: bool
    default: false
  api_server_extra_args:
    description:
      - C(apiServer.extraArgs) to set (name to string value) or remove (name to V(null)).
      - Names are flag names without leading dashes, for example V(peer-ca-file).
      - Values must be strings; quote booleans and numbers.
    type: dict
  api_server_default_args:
    description:
      - C(apiServer.extraArgs) to set only where the ClusterConfiguration has no entry of that name, so a value an
        operator chose is kept (whatever it is) and a rerun changes nothing.
      - Same name and value rules as O(api_server_extra_args); no V(null) values, no name that is also in
        O(api_server_extra_args), no C(feature-gates).
      - The C(skewsafe.kubeadm.mvp_enable) role gives kube-apiserver's graceful-shutdown settings this way.
    type: dict
  feature_gates:
    description:
      - kube-apiserver feature gates to set (V(true) or V(false)) or remove (V(null)), merged into the
        C(feature-gates) extra argument of C(apiServer). Other gates in that value are kept.
      - Existing values may contain spaces and repeated gates; the last occurrence of a gate wins, as in
        kube-apiserver. The value is rewritten (deduplicated, without spaces) only when a gate changes.
      - Do not also give C(feature-gates) in O(api_server_extra_args).
    type: dict
  controller_manager_extra_args:
    description:
      - C(controllerManager.extraArgs), with the same rules as O(api_server_extra_args).
    type: dict
  controller_manager_feature_gates:
    description:
      - kube-controller-manager feature gates, with the same rules as O(feature_gates).
    type: dict
  scheduler_extra_args:
    description:
      - C(scheduler.extraArgs), with the same rules as O(api_server_extra_args).
    type: dict
  scheduler_feature_gates:
    description:
      - kube-scheduler feature gates, with the same rules as O(feature_gates).
    type: dict
  kubeadm_version:
    description:
      - Version of the kubeadm that will read the configuration, for example V(1.37.2).
      - Only used to decide whether a C(kubeadm.k8s.io/v1beta3) configuration may be written. Defaults to the
        C(kubernetesVersion) of the ClusterConfiguration.
    type: str
notes:
  - Changing the ConfigMap does not restart anything. The flags reach the static Pod manifests when kubeadm renders
    them again (C(kubeadm upgrade apply|node), or C(kubeadm init phase control-plane apiserver) on each node); the
    C(skewsafe.kubeadm.mvp_enable) role does that one control plane at a time.
  - Per-node values (for example C(peer-advertise-ip)) do not belong in the ClusterConfiguration, which is shared by
    every control plane; use kubeadm patch files for them.
seealso:
  - name: kubeadm configuration (v1beta4)
    description: Reference of the kubeadm configuration API.
    link: https://kubernetes.io/docs/reference/config-api/kubeadm-config.v1beta4/
  - name: Reconfiguring a kubeadm cluster
    description: How kubeadm applies ClusterConfiguration changes.
    link: https://kubernetes.io/docs/tasks/administer-cluster/kubeadm/kubeadm-reconfigure/
"""

EXAMPLES = r"""
- name: Turn on the Mixed Version Proxy for kube-apiserver 1.36+ in the cluster's kubeadm-config
  skewsafe.kubeadm.cluster_config:
    api_server_extra_args:
      peer-ca-file: /etc/kubernetes/pki/ca.crt
  register: mvp_config

- name: Keep the previous ClusterConfiguration on the controller
  ansible.builtin.copy:
    content: "{{ mvp_config.previous }}"
    dest: "backups/kubeadm-config-{{ mvp_config.resource_version_before }}.yaml"
    mode: "0600"
  delegate_to: localhost
  when: mvp_config is changed

- name: Kubernetes 1.35 (alpha) also needs the gate, merged into any existing feature-gates value
  skewsafe.kubeadm.cluster_config:
    api_server_extra_args:
      peer-ca-file: /etc/kubernetes/pki/ca.crt
    feature_gates:
      UnknownVersionInteroperabilityProxy: true

- name: Graceful kube-apiserver restarts, unless the operator already set these flags
  skewsafe.kubeadm.cluster_config:
    api_server_default_args:
      shutdown-delay-duration: 5s
      shutdown-watch-termination-grace-period: 5s

- name: Drop a gate that kubeadm 1.36 no longer knows
  skewsafe.kubeadm.cluster_config:
    feature_gates:
      ControlPlaneKubeletLocalMode: null

- name: Edit a kubeadm config file used for kubeadm init, keeping a backup next to it
  skewsafe.kubeadm.cluster_config:
    source: file
    path: /root/kubeadm-init.yaml
    backup: true
    api_server_extra_args:
      peer-ca-file: /etc/kubernetes/pki/ca.crt
      profiling: "false"

- name: Use an AWX Kubernetes credential (K8S_AUTH_* variables) from the controller
  skewsafe.kubeadm.cluster_config:
    api_server_extra_args:
      peer-ca-file: /etc/kubernetes/pki/ca.crt
  delegate_to: localhost
"""

RETURN = r"""
api_version:
  description: The apiVersion of the ClusterConfiguration.
  returned: success
  type: str
  sample: kubeadm.k8s.io/v1beta4
changed_args:
  description: The changed (set or removed) arguments, as C(<component>.<flag name>).
  returned: success
  type: list
  elements: str
  sample: [apiServer.peer-ca-file, apiServer.feature-gates]
cluster_configuration:
  description: The resulting ClusterConfiguration (what would be written in check mode).
  returned: success
  type: dict
  sample: {apiVersion: kubeadm.k8s.io/v1beta4, kind: ClusterConfiguration, kubernetesVersion: v1.36.5}
previous:
  description:
    - The ClusterConfiguration exactly as it was read, comments and quoting included (for O(source=file), the
      ClusterConfiguration document only). Save it on the controller to keep a backup.
  returned: success
  type: str
location:
  description: What was read and written.
  returned: success
  type: str
  sample: configmap kube-system/kubeadm-config
resource_version_before:
  description: The ConfigMap resourceVersion that was read (and required by the write).
  returned: when O(source=configmap)
  type: str
  sample: "1234"
resource_version:
  description: The ConfigMap resourceVersion after the write (unchanged when nothing was written).
  returned: when O(source=configmap)
  type: str
  sample: "1240"
backup_file:
  description: The backup copy of the file.
  returned: when O(source=file), O(backup=true) and the file changed
  type: str
  sample: /root/kubeadm-init.yaml.12345.2026-11-29@21:00:00~
conflict:
  description: True when the ConfigMap changed between read and write; running the task again is safe.
  returned: failure
  type: bool
"""

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._args import auth_argspec
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._cluster_config.run import RunFailure, run


def main() -> None:
    argument_spec = auth_argspec()
    argument_spec.update(
        source={"type": "str", "choices": ["configmap", "file"], "default": "configmap"},
        path={"type": "path"},
        backup={"type": "bool", "default": False},
        api_server_extra_args={"type": "dict"},
        api_server_default_args={"type": "dict"},
        feature_gates={"type": "dict"},
        controller_manager_extra_args={"type": "dict"},
        controller_manager_feature_gates={"type": "dict"},
        scheduler_extra_args={"type": "dict"},
        scheduler_feature_gates={"type": "dict"},
        kubeadm_version={"type": "str"},
    )
    module = AnsibleModule(
        argument_spec=argument_spec,
        supports_check_mode=True,
        required_if=[("source", "file", ["path"])],
    )
    try:
        result = run(module)
    except RunFailure as exc:
        module.fail_json(msg=exc.msg, **exc.extra)
    module.exit_json(**result)


if __name__ == "__main__":
    main()
