"""Component feature gates the target refuses, from the table measured on the real binaries."""

from __future__ import annotations

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _component_gates as gates
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._component_gates_table import LOCKED, REMOVED
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._preflight import assess


def _removed_at(component, minor):
    return sorted(REMOVED[component][minor])[0]


def _locked_at(component, minor):
    name, value = sorted(LOCKED[component][minor].items())[0]
    return name, value


def test_a_removed_gate_is_refused_with_the_component_and_minor():
    name = _removed_at("kube-apiserver", 37)
    assert gates.refused("kube-apiserver", {name: True}, 37) == [
        f"{name}: kube-apiserver 1.37 no longer knows this gate and would not start"
    ]


def test_a_locked_gate_is_refused_only_with_the_other_value():
    name, value = _locked_at("kube-scheduler", 36)
    assert gates.refused("kube-scheduler", {name: value}, 36) == []
    (why,) = gates.refused("kube-scheduler", {name: not value}, 36)
    assert "is locked" in why and "kube-scheduler 1.36" in why


def test_the_mvp_gate_stays_valid_on_every_measured_minor():
    # enable_mvp sets it explicitly on 1.35 (alpha there); 1.36 and 1.37 still accept true
    for minor in (36, 37):
        assert gates.refused("kube-apiserver", {"UnknownVersionInteroperabilityProxy": True}, minor) == []


def test_an_unmeasured_minor_is_not_judged():
    name = _removed_at("kube-apiserver", 37)
    assert gates.refused("kube-apiserver", {name: True}, 99) == []


def _data(cluster_cfg, target):
    return {
        "target": target,
        "first_control_plane": "cp-1",
        "require_mvp": False,
        "hosts": {"cp-1": {"role": "control_plane", "kubelet_version": "v1.36.5", "apiserver_version": "v1.36.5"}},
        "nodes": [{"metadata": {"name": "cp-1"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}}],
        "pods": [],
        "kubeadm_config": cluster_cfg,
    }


def test_preflight_names_the_section_gate_and_the_way_out():
    removed = _removed_at("kube-controller-manager", 37)
    cfg = (
        "apiVersion: kubeadm.k8s.io/v1beta4\nkind: ClusterConfiguration\nkubernetesVersion: v1.36.5\n"
        "controllerManager:\n  extraArgs:\n"
        f"  - {{name: feature-gates, value: 'UnknownVersionInteroperabilityProxy=true,{removed}=true'}}\n"
    )
    problems = [p for p in assess(_data(cfg, "1.37.2"))["problems"] if "feature-gates" in p]
    assert problems == [
        f"kubeadm-config: controllerManager.extraArgs feature-gates {removed}: kube-controller-manager 1.37 no longer "
        "knows this gate and would not start; remove it from the ClusterConfiguration first "
        "(skewsafe.kubeadm.cluster_config with controller_manager_feature_gates: {<gate>: null})"
    ]
