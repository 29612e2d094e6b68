"""Component feature gates the target refuses, from the table measured on the real binaries."""

from __future__ import annotations

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _component_gates as gates
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._component_gates_table import LOCKED, REMOVED
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._preflight import assess


def _removed_at(component, minor):
    return sorted(REMOVED[component][minor])[0]


def _dropped(component, minor, name):
    """The advice a gate gets when the minor before had it locked (GA or deprecated): drop it."""
    was = LOCKED[component].get(minor - 1, {})
    return f" (1.{minor - 1} had it locked to {str(was[name]).lower()}: drop the line)" if name in was else ""


def _locked_at(component, minor):
    name, value = sorted(LOCKED[component][minor].items())[0]
    return name, value


def test_a_removed_gate_is_refused_with_the_component_and_minor():
    name = _removed_at("kube-apiserver", 37)
    assert gates.refused("kube-apiserver", {name: True}, 37) == [
        f"{name}: kube-apiserver 1.37 no longer knows this gate and would not start"
        + _dropped("kube-apiserver", 37, name)
    ]


def test_a_locked_gate_is_refused_only_with_the_other_value():
    name, value = _locked_at("kube-scheduler", 36)
    assert gates.refused("kube-scheduler", {name: value}, 36) == []
    (why,) = gates.refused("kube-scheduler", {name: not value}, 36)
    assert "is locked" in why and "kube-scheduler 1.36" in why


def test_the_mvp_gate_stays_valid_on_every_measured_minor():
    # mvp_enable sets it explicitly on 1.35 (alpha there); 1.36 and 1.37 still accept true
    for minor in sorted(m for m in gates.MEASURED_MINORS if m > 35):
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
        f"knows this gate and would not start{_dropped('kube-controller-manager', 37, removed)}; remove it from the ClusterConfiguration first "
        "(skewsafe.kubeadm.cluster_config with controller_manager_feature_gates: {<gate>: null})"
    ]


# ------------------------------------------------ where a node sets gates (the kubelet's files, the live manifests)

KUBELET_CONFIG = (
    "apiVersion: kubelet.config.k8s.io/v1beta1\nkind: KubeletConfiguration\nfeatureGates:\n  {gate}: true\n"
)


def _node_read(**files):
    return "".join(f"{gates.FILE_MARK}{path}\n{text}\n" for path, text in files.items())


def test_the_node_read_finds_the_gates_of_each_file_and_leaves_out_the_rest():
    text = _node_read(
        **{
            "/var/lib/kubelet/config.yaml": KUBELET_CONFIG.format(gate="NodeSwap"),
            "/var/lib/kubelet/kubeadm-flags.env": 'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint=unix:///x"',
            "/etc/default/kubelet": 'KUBELET_EXTRA_ARGS="--max-pods=50 --feature-gates=KubeletTracing=true,Foo=false"',
            "/etc/kubernetes/manifests/kube-apiserver.yaml": "spec:\n  containers:\n  - command:\n    - kube-apiserver\n"
            "    - --feature-gates=ServiceAccountTokenJTI=true\n",
        }
    )
    assert gates.node_sources(text) == [
        ("/var/lib/kubelet/config.yaml", "kubelet", {"NodeSwap": True}, None),
        ("/etc/default/kubelet", "kubelet", {"KubeletTracing": True, "Foo": False}, None),
        ("/etc/kubernetes/manifests/kube-apiserver.yaml", "kube-apiserver", {"ServiceAccountTokenJTI": True}, None),
    ]
    assert gates.node_sources("") == []
    broken = gates.node_sources(_node_read(**{"/var/lib/kubelet/config.yaml": "featureGates: [unclosed"}))
    assert broken[0][2] is None and broken[0][3].startswith("not YAML")


def test_the_kubelet_is_judged_by_the_measured_table_of_the_same_feature_registry():
    name = _removed_at("kube-controller-manager", 37)
    assert gates.refused("kubelet", {name: True}, 37) == [
        f"{name}: kubelet 1.37 no longer knows this gate and would not start"
        + (
            f" (1.36 had it locked to {str(LOCKED['kube-controller-manager'][36][name]).lower()}: drop the line)"
            if name in LOCKED["kube-controller-manager"].get(36, {})
            else ""
        )
    ]


def test_a_gate_removed_after_it_was_locked_says_to_drop_the_line():
    minor = max(REMOVED["kube-controller-manager"])
    was = LOCKED["kube-controller-manager"][minor - 1]
    name = sorted(set(REMOVED["kube-controller-manager"][minor]) & set(was))[0]
    (why,) = gates.refused("kube-controller-manager", {name: was[name]}, minor)
    assert why.endswith(f"(1.{minor - 1} had it locked to {str(was[name]).lower()}: drop the line)")


def test_preflight_names_the_node_the_file_and_what_to_do(tmp_path):
    minor = max(REMOVED["kube-controller-manager"])
    name = sorted(
        set(REMOVED["kube-controller-manager"][minor]) - set(REMOVED["kube-controller-manager"].get(minor - 1, ()))
    )[0]
    data = _data("", f"1.{minor}.0")
    data["kubeadm_config"] = None
    data["hosts"]["cp-1"]["gate_files"] = _node_read(
        **{"/var/lib/kubelet/config.yaml": KUBELET_CONFIG.format(gate=name)}
    )
    data["kubelet_config"] = KUBELET_CONFIG.format(gate=name)
    problems = [p for p in assess(data)["problems"] if name in p]
    assert len(problems) == 2, problems
    assert problems[0].startswith(
        f"kubelet-config: the ConfigMap's KubeletConfiguration featureGates {name}: kubelet 1.{minor}"
    )
    assert problems[0].endswith(
        "remove it from the ConfigMap kube-system/kubelet-config before the upgrade (kubeadm upgrade node writes it to every node)"
    )
    assert problems[1].startswith(
        f"node cp-1: /var/lib/kubelet/config.yaml: feature-gates {name}: kubelet 1.{minor} no longer knows"
    )
    assert "kubeadm upgrade node rewrites this file from them" in problems[1]
