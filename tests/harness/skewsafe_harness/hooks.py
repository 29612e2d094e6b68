"""Config hooks for Harness(config_hook=...): they edit a node's kubeadm config before kubeadm renders it."""

from __future__ import annotations

from pathlib import Path


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
