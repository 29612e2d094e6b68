from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.skewsafe.kubeadm.plugins.filter import upgrade


def test_filters_are_registered_and_wrap_errors():
    filters = upgrade.FilterModule().filters()
    assert set(filters) == {"upgrade_steps", "node_upgrade_plan", "host_batches", "removed_feature_gates",
                            "hostname_problems", "kube_minor", "preflight_assessment", "upgrade_report",
                            "upgrade_report_markdown", "apiserver_endpoint"}  # fmt: skip
    assert filters["kube_minor"]("v1.37.2") == 37
    assert filters["upgrade_steps"]("1.36.5", "1.37.2") == ["1.37.2"]
    with pytest.raises(AnsibleFilterError, match="skips"):
        filters["upgrade_steps"]("1.35.0", "1.37.2")
    assert filters["node_upgrade_plan"]("1.36.5", "1.37.2", name="w", role="worker")["node"] == "w"


def test_apiserver_endpoint():
    endpoint = upgrade.apiserver_endpoint
    assert endpoint({"inventory_hostname": "cp-1", "ansible_host": "10.0.0.1"}) == {
        "name": "cp-1",
        "url": "https://10.0.0.1:6443",
    }
    assert endpoint(
        {"inventory_hostname": "cp-1", "skewsafe_apiserver_address": "fd00::1", "skewsafe_apiserver_port": 8443}
    ) == {
        "name": "cp-1",
        "url": "https://[fd00::1]:8443",
    }
