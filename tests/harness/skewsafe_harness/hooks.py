"""Config hooks for Harness(config_hook=...): they edit a node's kubeadm config before kubeadm renders it."""

from __future__ import annotations

from pathlib import Path


def pinned_args_hook(server, path: Path) -> None:
    """The kube-apiserver extra args pinned for the server's minor (pins.apiserver_args), through the collection's
    ClusterConfiguration editor, as an operator sets them."""
    from ansible_collections.skewsafe.kubeadm.plugins.module_utils._kubeadm_config import (
        KubeadmConfig,
        build_updates,
    )

    from .pins import apiserver_args

    args = apiserver_args(server.version)
    if not args:
        return
    config = KubeadmConfig(path.read_text())
    if config.apply(build_updates({"api_server_extra_args": args})):
        path.write_text(config.render())


def peer_ca_hook(server, path: Path) -> None:
    """Turn MVP on as mvp_enable does, with the collection's own ClusterConfiguration editor (same code as the
    module): --peer-ca-file, plus the gate on a version where MVP is not on by default (1.35, alpha)."""
    from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _version
    from ansible_collections.skewsafe.kubeadm.plugins.module_utils._kubeadm_config import (
        KubeadmConfig,
        build_updates,
    )

    config = KubeadmConfig(path.read_text())
    ca = str(Path(config.cluster["certificatesDir"]) / "ca.crt")
    updates = {
        "api_server_extra_args": {"peer-ca-file": ca},
        "feature_gates": _version.mvp_feature_gates(server.version),
    }
    if config.apply(build_updates(updates)):
        path.write_text(config.render())
