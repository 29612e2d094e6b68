# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection.
"""The rules a playbook's inputs must keep before any host is contacted: the inputs_check action's logic. Pure.

Each problem names the rule that failed and the variable to change. The argument spec (playbooks/upgrade.meta.yml)
checks the types; these rules check what the types cannot: forms, the inventory's groups, what goes together.
"""

from __future__ import annotations

import os
import re

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _version
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _upgrade_plan as plan

PLAYBOOKS = ("upgrade", "upgrade_path", "preflight", "mvp_enable", "verify", "etcd_backup", "prefetch")
# The playbooks that read the cluster's version from every control plane, or change each of them.
NEED_EVERY_CONTROL_PLANE = ("upgrade", "upgrade_path", "preflight", "mvp_enable")
NEED_TARGET = ("upgrade", "preflight", "prefetch")
DEFAULT_CP_GROUP = "kube_control_plane"
DEFAULT_WORKER_GROUP = "kube_workers"
_VERSION_FORM = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+(-(alpha|beta|rc)\.[0-9]+)?$")
_BATCH_FORM = re.compile(r"^([1-9][0-9]*|([1-9][0-9]?|100)%)$")
_DURATION_FORM = re.compile(r"^(?=.)([0-9]+h)?([0-9]+m)?([0-9]+s)?$")
_FINGERPRINT_FORM = re.compile(r"^(0X)?([0-9A-F]{40}|[0-9A-F]{64})$")
# Groups Ansible always has; an inventory with only these has no hosts of its own.
_IMPLICIT_GROUPS = ("all", "ungrouped")


def version_problems(value, variable, allow_prerelease):
    """The form of one target version: X.Y.Z, or X.Y.Z-alpha|beta|rc.N with skewsafe_allow_prerelease."""
    text = str(value)
    if not _VERSION_FORM.match(text):
        return [
            f"{variable}: {text!r} is not a version like 1.37.2 (no leading v; a pre-release as 1.38.0-rc.1). "
            f"Set {variable} to the target's X.Y.Z."
        ]
    if _version.is_prerelease(text) and not allow_prerelease:
        return [
            f"{variable}: {text} is a pre-release. Upgrading to one is refused unless skewsafe_allow_prerelease=true "
            "(kubeadm then gets --allow-experimental-upgrades, and packages come from pkgs.k8s.io's prerelease "
            "channel or your skewsafe_package_repo_base_url)."
        ]
    return []


def path_problems(path, allow_prerelease):
    """The form of skewsafe_upgrade_path: a list of versions, one minor per hop, at most MAX_PATH_HOPS."""
    variable = "skewsafe_upgrade_path"
    if not isinstance(path, (list, tuple)) or not path:
        return [f"{variable}: give a non-empty list of versions, one per minor, oldest first (got {path!r})."]
    problems = []
    for value in path:
        problems += version_problems(value, variable, allow_prerelease)
    if problems:
        return problems
    if len(path) > plan.MAX_PATH_HOPS:
        problems.append(
            f"{variable}: {len(path)} hops; kubelets may be at most {plan.MAX_PATH_HOPS} minors behind, so a path has "
            f"at most {plan.MAX_PATH_HOPS}."
        )
    keys = [plan.parse(v) for v in path]
    for before, after in zip(keys, keys[1:]):
        if after[:1] != before[:1] or after[1] != before[1] + 1:
            problems.append(f"{variable}: {plan.fmt(before)} -> {plan.fmt(after)}; each hop must be the next minor.")
    if any(_version.is_prerelease(str(v)) for v in path[:-1]):
        problems.append(f"{variable}: only the last hop may be a pre-release (got {', '.join(map(str, path))}).")
    return problems


def group_problems(inputs, groups, playbook):
    """The inventory has the control-plane group, with hosts; the first control plane is one of them."""
    cp_group = inputs.get("skewsafe_control_plane_group") or DEFAULT_CP_GROUP
    worker_group = inputs.get("skewsafe_worker_group") or DEFAULT_WORKER_GROUP
    named = sorted(g for g, hosts in groups.items() if g not in _IMPLICIT_GROUPS and hosts)
    if not groups.get(cp_group):
        found = f"its groups with hosts are {', '.join(named)}" if named else "it has no group with hosts"
        return [
            f"skewsafe_control_plane_group: the inventory has no hosts in the group {cp_group!r} ({found}). Put the "
            f"control planes there, or set skewsafe_control_plane_group to their group; {playbook} needs them."
        ]
    problems = []
    if cp_group == worker_group:
        problems.append(
            f"skewsafe_worker_group: it names the control-plane group {cp_group!r}; workers need a group of their own."
        )
    first = inputs.get("skewsafe_first_control_plane")
    if first and first not in groups[cp_group]:
        problems.append(f"skewsafe_first_control_plane: {first!r} is not a host of the group {cp_group!r}.")
    if "skewsafe_worker_group" in inputs and worker_group not in groups:
        problems.append(f"skewsafe_worker_group: the inventory has no group {worker_group!r}.")
    return problems


def limit_problems(inputs, groups, limited_hosts, playbook):
    """A --limit must keep every control plane where the playbook reads or changes each of them."""
    if limited_hosts is None or playbook not in NEED_EVERY_CONTROL_PLANE:
        return []
    cp_group = inputs.get("skewsafe_control_plane_group") or DEFAULT_CP_GROUP
    missing = [h for h in groups.get(cp_group) or [] if h not in set(limited_hosts)]
    if not missing:
        return []
    return [
        f"--limit: it leaves out the control planes {', '.join(missing)}. Keep every host of {cp_group!r} in the limit "
        "(they are read for the cluster's version and skipped when already at the target); limit the workers as "
        "you like."
    ]


def setting_problems(inputs, playbook):
    """Forms the argument spec cannot check, and settings that contradict each other."""
    problems = []
    if playbook in ("upgrade", "upgrade_path"):
        batch = str(inputs.get("skewsafe_worker_batch_size", "1"))
        if not _BATCH_FORM.match(batch):
            problems.append(
                f"skewsafe_worker_batch_size: {batch!r} is neither a positive number nor a percentage 1%-100%."
            )
        fail = inputs.get("skewsafe_worker_max_fail_percentage", 0)
        if not isinstance(fail, int) or isinstance(fail, bool) or not 0 <= fail <= 100:
            problems.append(f"skewsafe_worker_max_fail_percentage: {fail!r} is not a percentage 0-100.")
    if "skewsafe_credential_validity" in inputs:
        validity = str(inputs["skewsafe_credential_validity"])
        if not _DURATION_FORM.match(validity):
            problems.append(f"skewsafe_credential_validity: {validity!r} is not a duration such as 4h, 90m or 1h30m.")
    fingerprint = inputs.get("skewsafe_package_repo_key_fingerprint") or ""
    if fingerprint:
        if not _FINGERPRINT_FORM.match(re.sub(r"[\s:]", "", str(fingerprint)).upper()):
            problems.append(
                "skewsafe_package_repo_key_fingerprint: give a full key fingerprint (40 hexadecimal digits, spaces "
                f"allowed), not a short key ID (got {fingerprint!r})."
            )
        if inputs.get("skewsafe_package_repo_trusted"):
            problems.append(
                "skewsafe_package_repo_trusted: true trusts the repository without a signature, so "
                "skewsafe_package_repo_key_fingerprint would never be checked; set one or the other."
            )
    problems += balancer_problems(inputs)
    return problems


def balancer_problems(inputs):
    """A node taken out of the balancer must be put back: both tasks files or neither, absolute and present."""
    files = [inputs.get("skewsafe_balancer_take_out_tasks") or "", inputs.get("skewsafe_balancer_put_back_tasks") or ""]
    given = [f for f in files if f]
    if not given:
        return []
    if len(given) == 1:
        return [
            "skewsafe_balancer_take_out_tasks and skewsafe_balancer_put_back_tasks go together (a node taken out of the "
            f"balancer must be put back); only {'the first' if files[0] else 'the second'} is set."
        ]
    problems = []
    for name, path in zip(("skewsafe_balancer_take_out_tasks", "skewsafe_balancer_put_back_tasks"), files):
        if not os.path.isabs(path):
            problems.append(f"{name}: {path!r} is relative; give the absolute path of a tasks file on the controller.")
        elif not os.path.isfile(path):
            problems.append(f"{name}: {path} is not a file on the controller.")
    return problems


def problems(playbook, inputs, groups, limited_hosts=None):
    """Every problem of a playbook's inputs; empty when it may contact its hosts.

    ``inputs``: the skewsafe_* variables that are set; ``groups``: the inventory's groups (name -> hosts);
    ``limited_hosts``: the hosts a --limit keeps, None without one.
    """
    if playbook not in PLAYBOOKS:
        raise ValueError(f"playbook must be one of {', '.join(PLAYBOOKS)}, not {playbook!r}")
    allow = bool(inputs.get("skewsafe_allow_prerelease", False))
    found = group_problems(inputs, groups, playbook)
    found += limit_problems(inputs, groups, limited_hosts, playbook)
    target = inputs.get("skewsafe_kubernetes_version")
    if playbook == "upgrade_path":
        if target is not None:
            found.append(
                f"skewsafe_kubernetes_version: give the hops in skewsafe_upgrade_path only; {target} would override "
                "every hop."
            )
        found += path_problems(inputs.get("skewsafe_upgrade_path"), allow)
    elif target is None and playbook in NEED_TARGET:
        found.append(f"skewsafe_kubernetes_version: {playbook} needs the target version, for example 1.37.2.")
    elif target is not None:
        found += version_problems(target, "skewsafe_kubernetes_version", allow)
    found += setting_problems(inputs, playbook)
    return found
