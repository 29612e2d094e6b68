#!/usr/bin/python
# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later

from __future__ import annotations

DOCUMENTATION = r"""
module: node_prefetch
short_description: Prove a node can take its upgrade step - fetch its target packages and images ahead, check its disks
version_added: 0.1.0
description:
  - Resolves and downloads the target packages through the node's own apt configuration (its sources, proxies, pins
    and C(apt.conf.d)), with only the Kubernetes repository file (O(apt_replace_sources)) swapped for
    O(apt_repo_line). The index is private (a scratch directory); the node's own lists are not changed. Downloads land
    in C(/var/cache/apt/archives), where the install step finds them; nothing is installed.
  - Lists the target images with the target kubeadm itself - unpacked from its downloaded package, or
    O(kubeadm_path) - as C(kubeadm config images list) on the cluster's ClusterConfiguration with
    C(kubernetesVersion) set to O(version), so C(imageRepository), external etcd and the target's etcd, CoreDNS and
    pause tags are kubeadm's own answer; O(kubeadm_image_names) keeps those the node runs. Images not present in the
    container runtime are pulled with C(crictl pull).
  - Checks free disk space first, per file system - packages in the package cache, images (estimated from the size of
    the version present) in O(images_dir), kubeadm's copy of the etcd data directory in C(/etc/kubernetes/tmp), the
    snapshot in O(snapshot_dir) - keeping O(reserve_mib) free on each.
  - With O(kubeadm_preflight), runs the target kubeadm's own preflight of the node's step last - C(kubeadm upgrade
    apply phase preflight) as a dry run on the first control plane (its CoreDNS checks refuse a Corefile kubeadm cannot
    migrate; cluster health, version policy), C(kubeadm upgrade node phase preflight) elsewhere (system verification,
    the container runtime's version) - with the checks O(ignore_preflight_errors) lets the real step ignore.
  - What the node cannot do does not fail the module - it is listed in RV(problems), so a play can name every node
    that cannot take its step at once. The module fails only on bad options.
  - apt nodes only; a dnf node gets a problem saying so.
author:
  - skewsafe developers (@skewsafe)
extends_documentation_fragment:
  - skewsafe.kubeadm._attributes
attributes:
  check_mode:
    support: full
    details:
      - The packages are resolved and downloaded into the scratch directory, which is removed, so check mode still
        proves that they download and lists the target images; no image is pulled (missing ones are listed) and the
        package cache is not changed.
  diff_mode:
    support: none
  idempotent:
    support: full
    details: A second run finds the packages in the cache and the images present, and reports no change.
options:
  version:
    description:
      - The target Kubernetes version (C(1.37.2), or a pre-release C(1.38.0-rc.1)); the packages' versions are its
        package revisions (C(1.37.2-*), C(1.38.0~rc.1-*) as upstream spells a pre-release).
    type: str
    required: true
  packages:
    description: The packages to download (not install), at O(version). Empty - no package is fetched.
    type: list
    elements: str
    default: []
  apt_repo_line:
    description:
      - The apt sources line of the target minor's repository, as the install step writes it (C(deb [signed-by=...]
        https://pkgs.k8s.io/core:/stable:/v1.37/deb/ /)). Required with O(packages).
    type: str
  kubeadm_preflight:
    description:
      - Run the target kubeadm's own preflight of this node's step - V(apply) (the first control plane, a dry run that
        writes nothing) or V(node) - after the packages and images; a failed check is a problem. V(none) skips it.
      - The kubeadm is the one the image listing uses (unpacked from the downloaded package, or O(kubeadm_path)).
    type: str
    choices: [none, apply, node]
    default: none
  ignore_preflight_errors:
    description: The kubeadm preflight checks whose errors the real step ignores (its C(--ignore-preflight-errors)).
    type: list
    elements: str
    default: []
  control_plane:
    description:
      - The node is a control plane. In check mode C(kubeadm upgrade node phase preflight) is not run on one, since it
        pulls the images check mode left missing.
    type: bool
    default: false
  apt_replace_sources:
    description:
      - Files of C(/etc/apt/sources.list.d) left out of the private index because O(apt_repo_line) replaces them.
    type: list
    elements: str
    default: [kubernetes.list]
  kubeadm_images:
    description:
      - List the target images with the target kubeadm (needs O(cluster_configuration), and C(kubeadm) in O(packages)
        or O(kubeadm_path)).
    type: bool
    default: false
  kubeadm_image_names:
    description:
      - Of kubeadm's list, only the images with these names (the last path element without tag - C(kube-proxy),
        C(coredns), C(pause), C(etcd)). Unset or empty, all of them (a control plane).
    type: list
    elements: str
  cluster_configuration:
    description: kubeadm's ClusterConfiguration (C(kubeadm-config)'s C(data.ClusterConfiguration) parsed from YAML).
    type: dict
  kubeadm_path:
    description: A target kubeadm already on the node, instead of the one in the downloaded package.
    type: path
  images:
    description: More images to have present (pulled when missing), besides kubeadm's.
    type: list
    elements: str
    default: []
  cri_socket:
    description:
      - The container runtime's endpoint for C(crictl) (C(unix:///run/containerd/containerd.sock)); default
        C(crictl)'s own configuration.
    type: str
  images_dir:
    description: Where the runtime keeps images (for the space check).
    type: path
    default: /var/lib/containerd
  etcd_data_dir:
    description:
      - A stacked etcd member's data directory. kubeadm copies it to C(/etc/kubernetes/tmp) before it upgrades etcd,
        so that much space is checked there.
    type: path
  snapshot_dir:
    description:
      - Where the run's etcd snapshot will be written; the size of etcd's database (under O(etcd_data_dir)) is checked
        there.
    type: path
  scratch_dir:
    description:
      - The parent of the scratch directory (the private index, the unpacked kubeadm). It is on the node's disk, not
        C(/tmp), which may be C(noexec).
    type: path
    default: /var/lib/skewsafe/prefetch
  reserve_mib:
    description: MiB each file system keeps free besides what is needed.
    type: int
    default: 256
  timeout:
    description: Seconds each command (an C(apt-get) run, a pull) may take before it is stopped and reported.
    type: int
    default: 900
notes:
  - Run it with C(become) - the package cache and the runtime need root.
seealso:
  - module: skewsafe.kubeadm.etcd_snapshot
"""

EXAMPLES = r"""
- name: Read kubeadm-config
  kubernetes.core.k8s_info:
    kind: ConfigMap
    namespace: kube-system
    name: kubeadm-config
  register: kubeadm_config
  delegate_to: localhost
  run_once: true

- name: Fetch the control plane's target packages and images ahead
  skewsafe.kubeadm.node_prefetch:
    version: 1.37.2
    packages: [kubeadm, kubelet, kubectl]
    apt_repo_line: "deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] https://pkgs.k8s.io/core:/stable:/v1.37/deb/ /"
    kubeadm_images: true
    cluster_configuration: "{{ kubeadm_config.resources[0].data.ClusterConfiguration | from_yaml }}"
    etcd_data_dir: /var/lib/etcd
    snapshot_dir: /var/lib/skewsafe/etcd-snapshots
  become: true
  register: prefetch

- name: Stop when the node cannot take its step
  ansible.builtin.assert:
    that: prefetch.problems | length == 0
    fail_msg: "{{ inventory_hostname }}: {{ prefetch.problems | join('; ') }}"
"""

RETURN = r"""
packages:
  description:
    - The target packages, with the exact version, the file in the cache, whether it had to be fetched (C(fetch)) and
      whether this run downloaded it (C(fetched)).
    - A package already installed at the target (a rerun after the upgrade) has C(installed) true and no file; with
      kubeadm installed at the target, that kubeadm lists the images.
  returned: always
  type: list
  elements: dict
  sample: [{name: kubeadm, version: 1.37.2-1.1, path: /var/cache/apt/archives/kubeadm_1.37.2-1.1_amd64.deb,
            size: 12550904, fetch: true, fetched: true, installed: false}]
images:
  description: The target images, whether each was present and whether this run pulled it.
  returned: always
  type: list
  elements: dict
  sample: [{image: registry.k8s.io/kube-apiserver:v1.37.2, present: false, pulled: true}]
space:
  description: Per file system, the free bytes and what was needed there (the reserve included), and for what.
  returned: always
  type: list
  elements: dict
  sample: [{path: /var/cache/apt/archives, free: 21474836480, need: 330301440, for: ["packages (46 MiB at ...)"]}]
problems:
  description: Why the node cannot take its step (empty when it can).
  returned: always
  type: list
  elements: str
  sample: ["cannot pull registry.k8s.io/etcd:3.6.5-0 (rc 1): ... connection refused"]
kubeadm_preflight:
  description:
    - The target kubeadm's preflight of the node's step - its C(step), whether it C(ran) (and C(why) not), its C(rc),
      and the checks it reported as C(errors) and C(warnings) (each C(<Check>) then its message); null when not asked for or when
      an earlier problem stopped the node first.
  returned: always
  type: dict
  sample: {step: apply, ran: true, rc: 1, warnings: [],
           errors: ["CoreDNSUnsupportedPlugins: CoreDNS cannot migrate the following plugins: [Plugin \"foo\" is unsupported ...]"]}
fetched_bytes:
  description: Bytes of packages this run downloaded.
  returned: always
  type: int
"""

import os
import shutil
import tempfile

from ansible.module_utils.basic import AnsibleModule

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _node_prefetch as prefetch


def main() -> None:
    module = AnsibleModule(
        argument_spec={
            "version": {"type": "str", "required": True},
            "packages": {"type": "list", "elements": "str", "default": []},
            "apt_repo_line": {"type": "str"},
            "apt_replace_sources": {"type": "list", "elements": "str", "default": [prefetch.KUBERNETES_SOURCES]},
            "kubeadm_images": {"type": "bool", "default": False},
            "kubeadm_image_names": {"type": "list", "elements": "str"},
            "cluster_configuration": {"type": "dict"},
            "kubeadm_path": {"type": "path"},
            "images": {"type": "list", "elements": "str", "default": []},
            "cri_socket": {"type": "str"},
            "images_dir": {"type": "path", "default": "/var/lib/containerd"},
            "etcd_data_dir": {"type": "path"},
            "snapshot_dir": {"type": "path"},
            "scratch_dir": {"type": "path", "default": "/var/lib/skewsafe/prefetch"},
            "reserve_mib": {"type": "int", "default": 256},
            "timeout": {"type": "int", "default": 900},
            "kubeadm_preflight": {"type": "str", "choices": ["none", "apply", "node"], "default": "none"},
            "ignore_preflight_errors": {"type": "list", "elements": "str", "default": []},
            "control_plane": {"type": "bool", "default": False},
        },
        required_if=[("kubeadm_images", True, ("cluster_configuration",))],
        supports_check_mode=True,
    )
    p = dict(module.params)
    problem = bad_options(p)
    if problem:
        module.fail_json(msg=problem)
    # None: no kubeadm images; a list: those names, empty for all of them
    p["kubeadm_images"] = (p["kubeadm_image_names"] or []) if p["kubeadm_images"] else None
    if p["packages"] and not module.get_bin_path("apt-get"):
        module.exit_json(
            changed=False,
            packages=[],
            images=[],
            space=[],
            fetched_bytes=0,
            kubeadm_preflight=None,
            problems=["node_prefetch fetches packages with apt only; this node has no apt-get"],
        )

    def run(argv):
        rc, out, err = module.run_command(
            ["timeout", "--kill-after=10", str(p["timeout"]), *argv],
            environ_update={"LANG": "C", "LC_ALL": "C", "DEBIAN_FRONTEND": "noninteractive"},
        )
        if rc == 124:
            err = f"stopped after {p['timeout']} s (timeout). {err}"
        return rc, out, err

    os.makedirs(p["scratch_dir"], mode=0o700, exist_ok=True)
    scratch = tempfile.mkdtemp(prefix="run-", dir=p["scratch_dir"])
    try:
        result = prefetch.Prefetch(p, run, module.check_mode, scratch).go()
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    module.exit_json(**result)


def bad_options(p: dict) -> str | None:
    """The first problem with the options, or None; normalises ``version`` (no leading v)."""
    p["version"] = p["version"].lstrip("v")
    needs_kubeadm = (p["kubeadm_images"] or p["kubeadm_preflight"] != "none") and not p["kubeadm_path"]
    needs_kubeadm = needs_kubeadm and "kubeadm" not in p["packages"]
    checks = [
        (
            not prefetch.VERSION_FORM.match(p["version"]),
            f"version must be a Kubernetes release (1.37.2, or 1.38.0-rc.1), got {p['version']!r}",
        ),
        (
            p["packages"] and not (p["apt_repo_line"] or "").strip().startswith(("deb ", "deb\t")),
            "packages need apt_repo_line, the target repository's apt sources line (deb [...] URL /)",
        ),
        (
            needs_kubeadm,
            "kubeadm_images and kubeadm_preflight need the target kubeadm: kubeadm in packages, or kubeadm_path",
        ),
        (
            p["reserve_mib"] < 0 or p["timeout"] <= 0,
            f"reserve_mib must be >= 0 and timeout > 0, got {p['reserve_mib']} and {p['timeout']}",
        ),
        (
            os.path.realpath(p["scratch_dir"]) in ("/", "/var", "/var/lib", "/tmp"),
            f"scratch_dir must be a directory of its own, not {p['scratch_dir']}",
        ),
    ]
    return next((msg for bad, msg in checks if bad), None)


if __name__ == "__main__":
    main()
