"""The minted credential (skewsafe.kubeadm.admin_credential) with the real kubeadm against real kube-apiservers.

Instead of copying admin.conf (a cluster-admin certificate valid for a year), the playbooks ask the first control
plane's kubeadm for a client certificate of the group kubeadm:cluster-admins, valid for hours
(``kubeadm kubeconfig user``). Here: the group's ClusterRoleBinding is made by kubeadm's own init phase, the
certificate is minted by the real kubeadm through ansible-playbook (the "first control plane" is this machine, its
/etc/kubernetes the harness node's directory), then used by the gate against the real servers, and it expires
when it says. A check-mode run that fails leaves nothing behind.
"""

from __future__ import annotations

import datetime
import os
import subprocess
import sys
import time

import pytest
import yaml
from conftest import LAB_PAIR, only_pairs, peer_ca_hook

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._apiserver_http import ApiServerClient, Credentials
from skewsafe_harness.pins import harness_versions, k8s_bin

UTC = datetime.timezone.utc


@pytest.mark.parametrize("version", harness_versions())
def test_kubeadm_kubeconfig_user_has_the_flags_the_playbooks_use(version):
    """Every pinned kubeadm (1.35, 1.36, 1.37) mints as admin_credential asks it to."""
    result = subprocess.run(
        [str(k8s_bin(version, "kubeadm")), "kubeconfig", "user", "--help"], capture_output=True, text=True, check=True
    )
    for flag in ("--client-name string", "--org strings", "--validity-period duration", "--config string"):
        assert flag in result.stdout, (version, flag, result.stdout)


@pytest.fixture(scope="module")
def cluster(harness_factory, ansible_module, pair):
    # one old and one new server: the gate still has a proxy to prove
    harness = harness_factory(pair.servers(olds=1, news=1), config_hook=peer_ca_hook(ansible_module))
    harness.admin_conf = harness.bootstrap_cluster_admins()
    return harness


def node_files(harness):
    root = harness.node_dir(harness.first.name)
    return {str(p.relative_to(root)): p.stat().st_mtime for p in root.rglob("*") if p.is_file() and p.suffix != ".log"}


def mint(cluster, tmp_path, validity="1h", keep=False, check=False, then=()):
    """A play on the "first control plane" (this machine, with the harness node's files) that mints the credential,
    then ``then`` (tasks, with the registered ``credential``); returns (process, result of the mint or None)."""
    first = cluster.first
    dest = tmp_path / "credentials"
    out = tmp_path / "minted.yml"
    play = {
        "name": "Mint",
        "hosts": "cp",
        "gather_facts": False,
        "tasks": [
            {
                "name": "Mint a credential",
                "skewsafe.kubeadm.admin_credential": {
                    "dest": str(dest),
                    "name": first.name,
                    "validity": validity,
                    "remove_at_exit": not keep,
                    "admin_kubeconfig": str(cluster.admin_conf),
                    "manifest": str(cluster.node_dir(first.name) / "etc" / "manifests" / "kube-apiserver.yaml"),
                    "kubeadm": str(k8s_bin(first.version, "kubeadm")),
                    "kubectl": str(k8s_bin(first.version, "kubectl")),
                },
                "register": "credential",
            },
            {
                "name": "Keep the result",
                "ansible.builtin.copy": {
                    "content": "{{ credential | to_nice_yaml }}",
                    "dest": str(out),
                    "mode": "0600",
                },
                "check_mode": False,
            },
            *then,
        ],
    }
    playbook = tmp_path / "mint.yml"
    playbook.write_text(yaml.safe_dump([play], sort_keys=False))
    cmd = ["ansible-playbook", "-i", "cp,", str(playbook), "-e", "ansible_connection=local"]
    cmd += ["-e", f"ansible_python_interpreter={sys.executable}", *(["--check"] if check else [])]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    return proc, (yaml.safe_load(out.read_text()) if out.exists() else None), dest


def openssl(cert, *fields):
    return subprocess.run(
        ["openssl", "x509", "-noout", *fields, "-in", cert], capture_output=True, text=True, check=True
    ).stdout.strip()


def client_for(minted, ca_file):
    return ApiServerClient(
        Credentials(ca_file=str(ca_file), cert_file=minted["client_certificate"], key_file=minted["client_key"]),
        timeout=10,
    )


@only_pairs([LAB_PAIR], "the lab's versions")
def test_kubeadm_init_binds_its_admin_group_to_cluster_admin(cluster, pair):
    binding = cluster.request(
        cluster.first.name, "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/kubeadm:cluster-admins"
    ).json()
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "ClusterRole",
        "name": "cluster-admin",
    }
    assert binding["subjects"] == [
        {"apiGroup": "rbac.authorization.k8s.io", "kind": "Group", "name": "kubeadm:cluster-admins"}
    ]
    admin = yaml.safe_load(cluster.admin_conf.read_text())
    assert admin["users"][0]["name"] == "kubernetes-admin"


@only_pairs([LAB_PAIR], "the lab's versions")
def test_minted_credential_passes_the_gate_and_is_gone_after_the_run(cluster, ansible_module, tmp_path, pair):
    before = node_files(cluster)
    started = datetime.datetime.now(UTC)
    proc, minted, dest = mint(
        cluster,
        tmp_path,
        validity="1h",
        then=[
            {
                "name": "The gate with the minted credential",
                "skewsafe.kubeadm.mvp_check": {
                    "kubeconfig": "{{ credential.kubeconfig }}",
                    "endpoints": [{"name": s.name, "url": s.url} for s in cluster.servers.values()],
                    "wait_timeout": 90,
                    "wait_sleep": 2,
                },
                "delegate_to": "localhost",
                "register": "gate",
            },
            {
                "name": "Files while the run runs",
                "ansible.builtin.stat": {"path": "{{ credential.client_key }}"},
                "register": "key",
            },
            {
                "name": "Keep what the gate and the files showed",
                "ansible.builtin.copy": {
                    "content": "{{ {'gate': gate.msg, 'passed': gate.passed, 'mode': key.stat.mode} | to_json }}",
                    "dest": str(tmp_path / "gate.json"),
                    "mode": "0600",
                },
            },
        ],
    )
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    gate = yaml.safe_load((tmp_path / "gate.json").read_text())
    assert gate["passed"], gate["gate"]
    assert gate["mode"] == "0600"
    admin = yaml.safe_load(cluster.admin_conf.read_text())
    assert minted["minted"] and minted["server"] == admin["clusters"][0]["cluster"]["server"]
    assert minted["client_name"] == "skewsafe.kubeadm" and minted["groups"] == ["kubeadm:cluster-admins"]
    expires = datetime.datetime.fromisoformat(minted["expires"])
    assert abs((expires - started).total_seconds() - 3600) < 120, (started, expires)
    assert "PRIVATE KEY" not in proc.stdout and "client-key-data" not in proc.stdout
    assert node_files(cluster) == before, "kubeadm wrote on the node"
    # remove_at_exit: the detached remover deletes the files once ansible-playbook has exited
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(dest.iterdir()):
        time.sleep(0.3)
    assert not list(dest.iterdir()), list(dest.iterdir())
    print(f"\nminted by kubeadm v{pair.old}: {minted['client_name']} {minted['groups']} until {minted['expires']}")


@only_pairs([LAB_PAIR], "the lab's versions")
def test_minted_credential_expires_when_it_says(cluster, tmp_path, pair):
    proc, minted, _dest = mint(cluster, tmp_path, validity="30s", keep=True)
    assert proc.returncode == 0, proc.stdout[-4000:] + proc.stderr[-2000:]
    cert = minted["client_certificate"]
    assert "CN = skewsafe.kubeadm" in openssl(cert, "-subject") and "O = kubeadm:cluster-admins" in openssl(
        cert, "-subject"
    )
    not_after = datetime.datetime.strptime(openssl(cert, "-enddate").split("=", 1)[1], "%b %d %H:%M:%S %Y %Z")
    not_after = not_after.replace(tzinfo=UTC)
    assert not_after == datetime.datetime.fromisoformat(minted["expires"])
    client = client_for(minted, cluster.ca_file)
    url = cluster.first.url
    assert client.get(url, "/api/v1/namespaces/kube-system/configmaps?limit=1").status == 200
    wait = (not_after - datetime.datetime.now(UTC)).total_seconds() + 3
    assert 0 < wait < 60, wait
    time.sleep(wait)
    expired = client_for(minted, cluster.ca_file)  # new connections: the handshake sends the expired certificate
    assert expired.get(url, "/api/v1/namespaces/kube-system/configmaps?limit=1").status == 401
    for key in ("kubeconfig", "client_certificate", "client_key"):
        os.unlink(minted[key])


@only_pairs([LAB_PAIR], "the lab's versions")
def test_a_check_mode_run_that_fails_leaves_no_credential(cluster, tmp_path, pair):
    proc, minted, dest = mint(
        cluster,
        tmp_path,
        validity="1h",
        check=True,
        then=[
            {
                "name": "Read with it",
                "kubernetes.core.k8s_info": {"kubeconfig": "{{ credential.kubeconfig }}", "kind": "Namespace"},
                "delegate_to": "localhost",
                "register": "namespaces",
            },
            {
                "name": "It was there and worked",
                "ansible.builtin.assert": {"that": ["namespaces.resources | length > 0"]},
            },
            {"name": "Then the run fails", "ansible.builtin.fail": {"msg": "a failed check-mode run"}},
        ],
    )
    assert proc.returncode != 0 and "a failed check-mode run" in proc.stdout, proc.stdout[-3000:]
    assert minted["minted"] and minted["remove_at_exit"], minted
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(dest.iterdir()):
        time.sleep(0.3)
    assert not list(dest.iterdir()), list(dest.iterdir())
