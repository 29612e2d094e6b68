from __future__ import annotations

from unittest import mock

import pytest
from ansible.errors import AnsibleLookupError

from ansible_collections.skewsafe.kubeadm.plugins.lookup import node_name


def lookup(variables):
    plugin = node_name.LookupModule()
    plugin._templar = mock.MagicMock()
    plugin._templar.template.side_effect = lambda value: value
    return plugin.run([], variables=variables)


def test_node_name_prefers_skewsafe_node_name():
    assert lookup({"skewsafe_node_name": "node-a", "ansible_facts": {"nodename": "host-a"}}) == ["node-a"]


def test_node_name_falls_back_to_the_nodename_fact():
    assert lookup({"ansible_facts": {"nodename": "host-a"}}) == ["host-a"]
    assert lookup({"skewsafe_node_name": None, "ansible_facts": {"nodename": "host-a"}}) == ["host-a"]


def test_node_name_without_facts_says_so():
    with pytest.raises(AnsibleLookupError, match="cp-1: no skewsafe_node_name and no nodename fact"):
        lookup({"inventory_hostname": "cp-1"})
    with pytest.raises(AnsibleLookupError, match="no terms"):
        node_name.LookupModule().run(["x"], variables={})


def test_the_node_name_is_the_host_name_as_the_kubelet_registers_it():
    from ansible_collections.skewsafe.kubeadm.plugins.lookup.node_name import node_name

    assert node_name(None, {"nodename": "CP-1.Example.COM"}) == "cp-1.example.com"
    assert node_name("Given-As-Is", {"nodename": "x"}) == "Given-As-Is"
    assert node_name(None, {}) is None
