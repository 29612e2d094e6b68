# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""The cluster_config module's flow: validate, read, edit, diff, write.

Failures are raised as RunFailure; the module turns them into fail_json (as the MVP path does).
"""

from __future__ import annotations

from ansible.module_utils.basic import missing_required_lib

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _client, _version
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._cluster_config.store import (
    ConfigMapStore,
    FileStore,
    StoreError,
)
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._errors import SkewsafeError
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._extra_args import FEATURE_GATES_ARG
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._kubeadm_config import (
    HAS_YAML,
    MVP_PEER_FLAGS,
    KubeadmConfig,
    KubeadmConfigError,
    build_default_args,
    build_updates,
)

# The changed-argument names (as config.apply reports them) that decide whether MVP can work.
MVP_ARGS = {f"apiServer.{name}" for name in (*MVP_PEER_FLAGS, FEATURE_GATES_ARG)}


class RunFailure(SkewsafeError):
    """The task fails with ``msg``; ``extra`` goes into the failed result as well."""

    def __init__(self, msg, **extra):
        super().__init__(msg)
        self.msg = msg
        self.extra = extra


def _store(module):
    params = module.params
    if params["source"] == "file":
        return FileStore(module, params["path"])
    if not _client.HAS_KUBERNETES:
        raise RunFailure(
            missing_required_lib("kubernetes") + " " + _client.missing_library_message(),
            exception=_client.KUBERNETES_IMPORT_ERROR,
        )
    try:
        return ConfigMapStore(params)
    except _client.ClientError as exc:
        raise RunFailure(str(exc)) from exc


def run(module):
    """The result of the task; raises RunFailure. Uses the module for its parameters, modes and warnings."""
    params = module.params
    if not HAS_YAML:
        raise RunFailure(missing_required_lib("PyYAML"))

    # 1. Input first: nothing is read or written when it is wrong.
    try:
        updates = build_updates(params)
        defaults = build_default_args(params)
    except KubeadmConfigError as exc:
        raise RunFailure(f"Invalid arguments: {exc}") from exc
    target_minor = None
    if params.get("kubeadm_version"):
        target_minor = _version.minor(params["kubeadm_version"])
        if target_minor is None:
            raise RunFailure(f"kubeadm_version {params['kubeadm_version']!r} is not a Kubernetes version like 1.37.2")

    # 2. Read and edit in memory.
    store = _store(module)
    try:
        text = store.read()
    except StoreError as exc:
        raise RunFailure(str(exc)) from exc
    try:
        config = KubeadmConfig(text)
        if defaults:
            arg_updates, gate_updates = updates["apiServer"]
            updates["apiServer"] = ({**arg_updates, **config.absent_args("apiServer", defaults)}, gate_updates)
        changed_args = config.apply(updates)
        mvp_problem = None
        if changed_args:
            config.check_writable(target_minor)
            mvp_problem = config.mvp_problem(params.get("kubeadm_version"))
            # MVP settings kube-apiserver cannot use are refused before anything is written (and so restarted)
            # when this edit touches them; an unrelated edit of a configuration that already has them warns.
            if mvp_problem and set(changed_args) & MVP_ARGS:
                raise KubeadmConfigError(mvp_problem)
    except KubeadmConfigError as exc:
        raise RunFailure(f"{store.location}: {exc}") from exc

    before = config.original_cluster_text
    after = config.cluster_text()
    result = {
        "changed": bool(changed_args),
        "api_version": config.api_version,
        "changed_args": changed_args,
        "cluster_configuration": config.cluster,
        "previous": config.original_document_text,
        "location": store.location,
    }
    resource_version = getattr(store, "resource_version", None)
    if resource_version is not None:
        result["resource_version_before"] = resource_version
    if module._diff:
        result["diff"] = {
            "before": before,
            "after": after,
            "before_header": f"{store.location} (ClusterConfiguration)",
            "after_header": f"{store.location} (ClusterConfiguration)",
        }

    if changed_args and config.drops_comments():
        module.warn(
            f"{store.location}: the comments inside the ClusterConfiguration document are not kept when it is "
            "rewritten (comments before it and other documents are); 'previous' holds the original text"
        )

    if mvp_problem:
        module.warn(f"{store.location}: {mvp_problem}")

    # 3. Write only when something changed and not in check mode.
    if changed_args and not module.check_mode:
        try:
            backup_file = store.write(config.render(), backup=params.get("backup"))
        except StoreError as exc:
            raise RunFailure(str(exc), conflict=exc.conflict) from exc
        if backup_file:
            result["backup_file"] = backup_file
    if resource_version is not None:
        result["resource_version"] = store.resource_version
    return result
