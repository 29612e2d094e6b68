"""KubeadmConfig.mvp_problem: MVP settings a kube-apiserver cannot use, on kubeadm-config as kubeadm wrote it.

The ClusterConfigurations are the real ones kubeadm 1.35.4, 1.36.5 and 1.37.2 uploaded to kube-system/kubeadm-config
(fixtures/README.md); the error text is what a real 1.35.4 kube-apiserver logged when it refused to start
(tests/integration/test_mvp_check.py::test_alpha_flag_without_gate).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _version
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._kubeadm_config import (
    MVP_FLAG_WITHOUT_GATE_ERROR,
    KubeadmConfig,
    build_updates,
)

FIXTURES = Path(__file__).parent / "fixtures"
GATE = _version.MVP_GATE
PEER_CA = "/etc/kubernetes/pki/ca.crt"


def recorded(version):
    return (FIXTURES / f"kubeadm-config-configmap-v{version}.yaml.txt").read_text()


def edited(version, args=None, gates=None):
    config = KubeadmConfig(recorded(version))
    config.apply(build_updates({"api_server_extra_args": args, "feature_gates": gates}))
    return config


def recorded_versions():
    return sorted(p.name.split("-v")[1].removesuffix(".yaml.txt") for p in FIXTURES.glob("kubeadm-config-configmap-*"))


def test_every_pinned_minor_is_recorded():
    # the recordings these tests read exist for 1.35 (alpha) and the default-on minors
    versions = recorded_versions()
    assert any(not _version.mvp_default_on(v) for v in versions), versions
    assert any(_version.mvp_default_on(v) for v in versions), versions


@pytest.mark.parametrize("version", recorded_versions())
def test_stock_configuration_has_no_problem(version):
    # kubeadm's own configuration (with an operator's APIServerIdentity=true gate) never sets MVP
    assert KubeadmConfig(recorded(version)).mvp_problem() is None


@pytest.mark.parametrize("version", recorded_versions())
def test_what_mvp_enable_writes_has_no_problem(version):
    config = edited(version, {"peer-ca-file": PEER_CA}, _version.mvp_feature_gates(version))
    assert config.mvp_problem() is None
    gates = next(a["value"] for a in config.cluster["apiServer"]["extraArgs"] if a["name"] == "feature-gates")
    assert ("UnknownVersionInteroperabilityProxy=true" in gates) == (not _version.mvp_default_on(version))
    assert "APIServerIdentity=true" in gates  # merged into the operator's value, not replacing it


def test_alpha_flag_without_gate_would_not_start():
    problem = edited("1.35.4", {"peer-ca-file": PEER_CA}).mvp_problem()
    assert problem is not None
    assert "peer-ca-file" in problem and "off by default on v1.35.4" in problem
    assert MVP_FLAG_WITHOUT_GATE_ERROR in problem
    assert "refuse to start" in problem


@pytest.mark.parametrize("flag", ["peer-advertise-ip", "peer-advertise-port"])
def test_alpha_other_peer_flags_without_gate_would_not_start(flag):
    problem = edited("1.35.4", {flag: "10.0.0.1"}).mvp_problem()
    assert problem is not None and flag in problem and "refuse to start" in problem


def test_alpha_gate_without_flag_never_proxies():
    problem = edited("1.35.4", gates={GATE: True}).mvp_problem()
    assert problem is not None
    assert "without peer-ca-file" in problem and "never proxy" in problem


@pytest.mark.parametrize("version", ["1.36.5", "1.37.2"])
def test_default_on_flag_alone_is_fine(version):
    assert edited(version, {"peer-ca-file": PEER_CA}).mvp_problem() is None


@pytest.mark.parametrize("version", ["1.36.5", "1.37.2"])
def test_default_on_gate_turned_off_with_flag_would_not_start(version):
    problem = edited(version, {"peer-ca-file": PEER_CA}, {GATE: False}).mvp_problem()
    assert problem is not None and "is set to false" in problem and MVP_FLAG_WITHOUT_GATE_ERROR in problem


@pytest.mark.parametrize("version", ["1.36.5", "1.37.2"])
def test_default_on_gate_without_flag_is_the_kubeadm_default(version):
    # on by default: an explicit gate=true without the flag is what kubeadm's own default already is
    assert edited(version, gates={GATE: True}).mvp_problem() is None


def test_the_version_given_wins_over_kubernetes_version():
    # kubeadm-config still says v1.35.4; the kube-apiserver that will read it is 1.36 (after the upgrade)
    config = edited("1.35.4", {"peer-ca-file": PEER_CA})
    assert config.mvp_problem() is not None
    assert config.mvp_problem("1.36.5") is None


def test_a_new_minor_needs_no_code_change():
    # any minor from the default-on one up behaves like 1.36 (no list of known minors)
    assert edited("1.37.2", {"peer-ca-file": PEER_CA}).mvp_problem("v1.41.0") is None
    assert edited("1.35.4", {"peer-ca-file": PEER_CA}).mvp_problem("v1.34.9") is not None


def test_gate_spread_over_two_feature_gates_entries():
    text = recorded("1.35.4").replace(
        "  - name: feature-gates\n    value: APIServerIdentity=true\n",
        "  - name: feature-gates\n    value: APIServerIdentity=true\n"
        f"  - name: feature-gates\n    value: {GATE}=true\n"
        f"  - name: peer-ca-file\n    value: {PEER_CA}\n",
    )
    assert KubeadmConfig(text).mvp_problem() is None


def test_malformed_feature_gates_is_a_problem_not_a_traceback():
    text = recorded("1.35.4").replace("value: APIServerIdentity=true", "value: APIServerIdentity")
    problem = KubeadmConfig(text).mvp_problem()
    assert problem is not None and "malformed" in problem
