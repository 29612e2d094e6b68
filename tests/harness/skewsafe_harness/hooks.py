"""Config hooks for Harness(config_hook=...): they edit a node's kubeadm config before kubeadm renders it."""

from __future__ import annotations

from pathlib import Path


def peer_ca_hook(server, path: Path) -> None:
    """Add --peer-ca-file with the collection's own ClusterConfiguration editor (same code as the module)."""
    from ansible_collections.skewsafe.kubeadm.plugins.module_utils._kubeadm_config import (
        KubeadmConfig,
        build_updates,
    )

    config = KubeadmConfig(path.read_text())
    ca = str(Path(config.cluster["certificatesDir"]) / "ca.crt")
    if config.apply(build_updates({"api_server_extra_args": {"peer-ca-file": ca}})):
        path.write_text(config.render())
