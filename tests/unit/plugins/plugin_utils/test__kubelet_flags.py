"""The target kubeadm's rewrite of kubeadm-flags.env, reproduced from kubeadm 1.35.4/1.36.5's
ReadKubeletDynamicEnvFile, ArgumentsFromCommand and WriteKubeletArgsToFile (cmd/kubeadm/app/phases/kubelet/flags.go,
cmd/kubeadm/app/util/arguments.go, cmd/kubeadm/app/phases/upgrade/postupgrade.go)."""

from __future__ import annotations

from pathlib import Path

import pytest

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _component_gates as component_gates
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._kubelet_flags import (
    FLAGS_FILE,
    INSTANCE_CONFIG,
    KubeletFlagsError,
    drift,
    rewritten,
)

FIXTURES = Path(__file__).parent / "fixtures"
CASES = FIXTURES / "kubeadm-flags"


def _recorded(version):
    """What kubeadm's own WriteKubeletConfigFiles left for each case (hack/kubeadm-flags-rewrite/record.sh)."""
    out = {}
    for block in (CASES / f"kubeadm-v{version}.txt").read_text().split("=== ")[1:]:
        name, rest = block.split("\n", 1)
        error = rest.split("--- error\n", 1)[1].split("\n--- kubeadm-flags.env\n", 1)[0]
        flags = rest.split("--- kubeadm-flags.env\n", 1)[1].split("--- instance-config.yaml", 1)[0]
        instance = rest.split("--- instance-config.yaml", 1)[1].split("\n", 1)[1]
        out[name] = {"error": error, "flags": flags, "instance": instance}
    return out


@pytest.mark.parametrize("case", sorted(p.name for p in (CASES / "in").iterdir()))
def test_the_model_writes_what_kubeadm_1_36_5_itself_wrote(case):
    original = (CASES / "in" / case).read_text()
    real = _recorded("1.36.5")[case]
    if real["error"].startswith("error reading kubeadm flags file"):
        with pytest.raises(KubeletFlagsError):
            rewritten(original)
        assert real["flags"] == original  # kubeadm stopped before writing
        return
    text, endpoint = rewritten(original)
    if text is None:  # nothing to move: kubeadm leaves the file, and writes an empty endpoint
        assert real["flags"] == original and real["instance"] == 'containerRuntimeEndpoint: ""\n'
        return
    assert text == real["flags"]
    assert real["instance"] == f'containerRuntimeEndpoint: "{endpoint}"\n'


SOCKET = "unix:///run/containerd/containerd.sock"


def flags(value):
    return {FLAGS_FILE: f'KUBELET_KUBEADM_ARGS="{value}"\n'}


def test_a_lab_node_read_has_an_instance_configuration_so_nothing_is_rewritten():
    files = component_gates.node_files((FIXTURES / "kubelet-node-read-v1.36.5.txt").read_text())
    assert INSTANCE_CONFIG in files
    assert drift(files, "1.36.5") == {"compared": [FLAGS_FILE], "lost": [], "altered": [], "moved": [], "fails": None}


def test_the_endpoint_moves_and_well_formed_flags_survive_in_any_order_and_form():
    # "--node-ip 10.0.0.5": kubeadm pairs a field without "=" with the next one, so a valued flag keeps its value
    found = drift(
        flags(
            f"--pod-infra-container-image=registry.k8s.io/pause:3.10 --container-runtime-endpoint={SOCKET} --node-ip 10.0.0.5"
        ),
        "1.36.5",
    )
    assert found["moved"] == [f"--container-runtime-endpoint={SOCKET} -> {INSTANCE_CONFIG} (containerRuntimeEndpoint)"]
    assert found["lost"] == [] and found["altered"] == [] and found["fails"] is None


def test_a_boolean_flag_without_a_value_swallows_the_next_flag_or_is_dropped():
    found = drift(
        flags(f"--container-runtime-endpoint={SOCKET} --fail-swap-on --node-ip=10.0.0.5 --rotate-server-certificates"),
        "1.35.4",
    )
    # kubeadm writes --fail-swap-on=--node-ip=10.0.0.5 and drops the last field, which has nothing to pair with
    assert found["lost"] == ["--node-ip=10.0.0.5", "--rotate-server-certificates=true"]
    assert found["altered"] == ["--fail-swap-on=true -> --fail-swap-on=--node-ip=10.0.0.5"]


def test_a_second_variable_in_the_file_becomes_part_of_the_flags():
    files = {
        FLAGS_FILE: f'KUBELET_KUBEADM_ARGS="--container-runtime-endpoint={SOCKET} --node-ip=10.0.0.5"\nHTTP_PROXY=x\n'
    }
    found = drift(files, "1.36.5")
    # the quote before the newline is not trimmed (only the outer ones are): the value gains it; HTTP_PROXY=x is no
    # --name=value field and is dropped, so the kubelet's environment loses it
    assert found["altered"] == ['--node-ip=10.0.0.5 -> --node-ip=10.0.0.5"']
    assert found["lost"] == ["HTTP_PROXY=x (the kubelet's environment)"]


def test_a_file_kubeadm_cannot_read_fails_its_step_and_says_so():
    found = drift(
        {FLAGS_FILE: f'# written by hand\nKUBELET_KUBEADM_ARGS="--container-runtime-endpoint={SOCKET}"\n'}, "1.36.5"
    )
    assert "would fail its upgrade step" in found["fails"] and "does not start with" in found["fails"]


@pytest.mark.parametrize(
    ("target", "gates", "files_extra"),
    [
        ("1.37.2", None, {}),  # kubeadm 1.37 and 1.38 leave the file alone
        ("1.38.0-rc.1", None, {}),
        ("1.35.4", {"NodeLocalCRISocket": False}, {}),  # the gate turned off in kubeadm-config (1.35 only)
        ("1.36.5", None, {INSTANCE_CONFIG: f"containerRuntimeEndpoint: {SOCKET}\n"}),  # already moved
    ],
)
def test_no_rewrite_no_change(target, gates, files_extra):
    files = {**flags(f"--container-runtime-endpoint={SOCKET} --fail-swap-on"), **files_extra}
    found = drift(files, target, gates)
    assert found == {"compared": [FLAGS_FILE], "lost": [], "altered": [], "moved": [], "fails": None}


def test_the_gate_cannot_be_turned_off_in_1_36():
    found = drift(
        flags(f"--container-runtime-endpoint={SOCKET} --fail-swap-on"), "1.36.5", {"NodeLocalCRISocket": False}
    )
    assert found["lost"] == ["--fail-swap-on=true"]


def test_nothing_to_compare_is_said_not_proved():
    assert "has none" in drift({}, "1.36.5")["skipped"]
    assert "not modelled" in drift(flags("--x=1"), "1.34.3")["skipped"]
    assert drift({}, "1.36.5")["compared"] == []


def test_a_file_without_the_endpoint_stays():
    assert drift(flags("--node-ip=10.0.0.5 --fail-swap-on"), "1.36.5")["lost"] == []
