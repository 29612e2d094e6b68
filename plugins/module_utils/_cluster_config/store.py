# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""Where a ClusterConfiguration lives: a local file or the kubeadm-config ConfigMap."""

from __future__ import annotations

import os
import tempfile

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._client import (
    REQUEST_TIMEOUT,
    TRANSPORT_ERRORS,
    ApiException,
    api_error_message,
    build_api_client,
    k8s_client,
)
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._errors import SkewsafeError

KUBEADM_CONFIGMAP_NAMESPACE = "kube-system"
KUBEADM_CONFIGMAP_NAME = "kubeadm-config"
KUBEADM_CONFIGMAP_KEY = "ClusterConfiguration"


class StoreError(SkewsafeError):
    """Reading or writing failed; ``conflict`` is true when a retry can succeed."""

    def __init__(self, msg, conflict=False):
        super().__init__(msg)
        self.conflict = conflict


class FileStore:
    def __init__(self, module, path):
        self.module = module
        self.path = path
        self.location = path

    def read(self):
        try:
            # newline="": CRLF files are read and written back as they are
            with open(self.path, encoding="utf-8", newline="") as handle:
                return handle.read()
        except OSError as exc:
            raise StoreError(f"cannot read {self.path}: {exc.strerror}") from exc

    def write(self, text, backup=False):
        """Atomically replace the file (same mode), through a symlink to its target; return the backup path or None."""
        target = os.path.realpath(self.path)  # a symlinked config stays a symlink; its target is edited
        backup_file = self.module.backup_local(target) if backup else None
        directory = os.path.dirname(target)
        fd, tmp = tempfile.mkstemp(prefix=".cluster_config.", dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
            os.chmod(tmp, os.stat(target).st_mode & 0o7777)
            self.module.atomic_move(tmp, target)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
        return backup_file


class ConfigMapStore:
    """kube-system/kubeadm-config; every write carries the resourceVersion that was read."""

    location = f"configmap {KUBEADM_CONFIGMAP_NAMESPACE}/{KUBEADM_CONFIGMAP_NAME}"

    def __init__(self, params):
        self.api = k8s_client.CoreV1Api(build_api_client(params))
        self.configmap = None
        self.resource_version = None

    def _host(self):
        return self.api.api_client.configuration.host

    def read(self):
        try:
            self.configmap = self.api.read_namespaced_config_map(
                KUBEADM_CONFIGMAP_NAME, KUBEADM_CONFIGMAP_NAMESPACE, _request_timeout=REQUEST_TIMEOUT
            )
        except ApiException as exc:
            raise StoreError(f"cannot read {self.location}: {api_error_message(exc)}") from exc
        except TRANSPORT_ERRORS as exc:
            raise StoreError(f"cannot reach the API server at {self._host()} to read {self.location}: {exc}") from exc
        self.resource_version = self.configmap.metadata.resource_version
        data = self.configmap.data or {}
        if KUBEADM_CONFIGMAP_KEY not in data:
            raise StoreError(f"{self.location} has no key {KUBEADM_CONFIGMAP_KEY}")
        return data[KUBEADM_CONFIGMAP_KEY]

    def write(self, text, backup=False):
        del backup  # the previous content is returned to the caller instead
        body = self.configmap
        body.data[KUBEADM_CONFIGMAP_KEY] = text
        body.metadata.resource_version = self.resource_version
        try:
            written = self.api.replace_namespaced_config_map(
                KUBEADM_CONFIGMAP_NAME, KUBEADM_CONFIGMAP_NAMESPACE, body, _request_timeout=REQUEST_TIMEOUT
            )
        except ApiException as exc:
            if exc.status == 409:
                raise StoreError(
                    f"{self.location} changed since it was read (resourceVersion {self.resource_version}); "
                    "nothing was written. Run the task again to apply the change on top of the current content.",
                    conflict=True,
                ) from exc
            raise StoreError(f"cannot write {self.location}: {api_error_message(exc)}") from exc
        except TRANSPORT_ERRORS as exc:
            # the write may or may not have landed: the next read shows which
            raise StoreError(f"cannot reach the API server at {self._host()} to write {self.location}: {exc}") from exc
        self.resource_version = written.metadata.resource_version
