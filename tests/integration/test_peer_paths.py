"""The MVP gate judges the peer paths from the control-plane nodes, not from the controller.

A controller on another network (a bastion, AWX in another cluster) reaches the API servers at
addresses of its own and cannot reach the addresses they advertise to each other. The harness
shows it: each server also answers at an alias address, NATed to it inside the harness's network
namespace (each server binds only its own address there) and in its certificate's SANs; host
routes cut the controller off from the advertise addresses, and the peers (one network namespace)
still reach each other. apiserver_peer_dial_info runs inside that namespace, as on a node.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
import yaml
from conftest import LAB_PAIR, only_pairs, peer_ca_hook

from skewsafe_harness.pins import k8s_bin

ALIAS_OFFSET = 100


def alias(harness, name):
    return harness.network.address(ALIAS_OFFSET + harness.servers[name].host_number)


def cert_sans_hook(ansible_module):
    """MVP on (as the other tests), plus the alias addresses in each serving certificate."""
    mvp = peer_ca_hook(ansible_module)

    def hook(server, path):
        mvp(server, path)
        docs = list(yaml.safe_load_all(path.read_text()))
        for doc in docs:
            if doc.get("kind") == "ClusterConfiguration":
                prefix = server.address.rsplit(".", 1)[0]
                # every alias: kubeadm's certSANs are cluster-wide
                doc.setdefault("apiServer", {})["certSANs"] = [f"{prefix}.{ALIAS_OFFSET + n}" for n in range(1, 10)]
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False))

    return hook


@pytest.fixture(scope="module")
def far_controller(harness_factory, ansible_module, pair, tmp_path_factory):
    """A mixed harness the controller reaches only at the alias addresses, with its kubeconfig."""
    harness = harness_factory(pair.servers(), config_hook=cert_sans_hook(ansible_module))
    netns = harness.network.netns
    for name, server in harness.servers.items():
        subprocess.run(["ip", "-n", netns, "addr", "add", f"{alias(harness, name)}/24", "dev", "eth0"], check=True)
        nat = ["-t", "nat", "-A", "PREROUTING", "-d", f"{alias(harness, name)}/32", "-p", "tcp", "--dport", "6443"]
        nat += ["-j", "DNAT", "--to-destination", f"{server.address}:6443"]
        # rules of the harness's own namespace: they go with it at teardown
        subprocess.run(["ip", "netns", "exec", netns, "iptables", *nat], check=True)
    # what each node's kubelet would publish (the harness runs none): the gate finds each Node's advertise address there
    harness.publish_mirror_pods()
    # kubeadm init's admin.conf on the first node, its server an address the controller reaches (as a
    # controlPlaneEndpoint would be): what the playbooks mint a credential from when given none
    admin_conf = harness.bootstrap_cluster_admins()
    admin = yaml.safe_load(admin_conf.read_text())
    admin["clusters"][0]["cluster"]["server"] = f"https://{alias(harness, 'cp-1')}:6443"
    admin_conf.write_text(yaml.safe_dump(admin))
    config = yaml.safe_load(harness.kubeconfig.read_text())
    config["clusters"][0]["cluster"]["server"] = f"https://{alias(harness, 'cp-1')}:6443"
    kubeconfig = tmp_path_factory.mktemp("far") / "kubeconfig"
    kubeconfig.write_text(yaml.safe_dump(config))
    routes = [["unreachable", f"{s.address}/32"] for s in harness.servers.values()]
    for route in routes:
        subprocess.run(["ip", "route", "add", *route], check=True)
    try:
        yield harness, kubeconfig
    finally:
        for route in routes:
            subprocess.run(["ip", "route", "del", *route], check=False)


def endpoints(harness):
    return [{"name": name, "url": f"https://{alias(harness, name)}:6443"} for name in harness.servers]


def dials_from_the_nodes(ansible_module, harness, kubeconfig):
    leases = ansible_module(
        "kubernetes.core.k8s_info",
        {
            "kubeconfig": str(kubeconfig),
            "api_version": "coordination.k8s.io/v1",
            "kind": "Lease",
            "namespace": "kube-system",
            "label_selectors": ["apiserver.kubernetes.io/identity=kube-apiserver"],
        },
    )
    assert not leases.get("failed"), leases
    peers = [item["metadata"]["annotations"]["kubernetes.io/peer-advertise-address"] for item in leases["resources"]]
    assert len(peers) == len(harness.servers), peers
    result = ansible_module(
        "skewsafe.kubeadm.apiserver_peer_dial_info",
        {"peers": peers, "peer_ca_file": str(harness.ca_file), "wait_timeout": 20},
        netns=harness.network.netns,
    )
    assert not result.get("failed"), result
    return result


def gate(ansible_module, kubeconfig, harness, **extra):
    args = {"kubeconfig": str(kubeconfig), "endpoints": endpoints(harness), "wait_timeout": 60, "wait_sleep": 2}
    return ansible_module("skewsafe.kubeadm.mvp_check", {**args, **extra})


@only_pairs([LAB_PAIR], "the lab's versions")
def test_the_gate_passes_from_where_peers_dial(far_controller, ansible_module, pair):
    harness, kubeconfig = far_controller
    dials = dials_from_the_nodes(ansible_module, harness, kubeconfig)
    assert dials["verified"], dials
    result = gate(ansible_module, kubeconfig, harness, peer_dials=[dials])
    assert result["passed"], result["msg"]
    assert result["mode"] == "mixed"
    details = [r["detail"] for r in result["checks"] if r["check"] == "peer_tls"]
    assert len(details) == 3 and all(f"from {dials['node']}" in d for d in details), details


@only_pairs([LAB_PAIR], "the lab's versions")
def test_dialled_from_the_controller_the_same_cluster_looks_broken(far_controller, ansible_module, pair):
    # What the gate said before it dialled from the nodes: every peer blamed for the controller's network.
    harness, kubeconfig = far_controller
    result = gate(ansible_module, kubeconfig, harness, wait_timeout=10)
    assert not result["passed"]
    assert {c for _s, c in {(r["server"], r["cause"]) for r in result["failed_checks"]}} == {"peer_unreachable"}


FQDN = "{name}.cluster.example.internal"

# The collection's own verify playbook (endpoints from the skewsafe.kubeadm.apiserver_endpoint filter over
# hostvars, peer dials from the control planes, mvp_check), then the gate's result kept for the test.
VERIFY_AND_KEEP = """
- name: The collection's verify playbook
  ansible.builtin.import_playbook: skewsafe.kubeadm.verify

- name: Keep what the gate said
  hosts: localhost
  gather_facts: false
  tasks:
    - name: Write the gate's result
      ansible.builtin.copy:
        content: "{{{{ {{'gate': __first.verify_mvp, 'kubeconfig': __first.skewsafe_kubeconfig,
          'kubeconfig_text': lookup('ansible.builtin.file', __first.skewsafe_kubeconfig)}} | to_json }}}}"
        dest: "{out}"
        mode: "0600"
      vars:
        __first: "{{{{ hostvars[groups['kube_control_plane'][0]] }}}}"
"""


def fqdn_inventory(harness, tmp_path):
    """Control planes named by FQDN aliases, reached at the NAT alias addresses (not what they advertise). Each
    host's modules run "on its node": inside the harness's network namespace, with the node's directory as
    /etc/kubernetes (a private mount namespace) and its version's kubeadm and kubectl on PATH."""
    lines = ["[kube_control_plane]"]
    for name, server in harness.servers.items():
        on_node = tmp_path / f"python-on-{name}"
        etc = harness.node_dir(name) / "etc"
        bin_dir = k8s_bin(server.version, "kubeadm").parent
        on_node.write_text(
            "#!/bin/sh\n"
            f"PATH={bin_dir}:$PATH; export PATH\n"
            'exec unshare --mount --propagation private sh -c \'mount --bind "$1" /etc/kubernetes && shift && exec "$@"\' '
            f'sh {etc} ip netns exec {harness.network.netns} {sys.executable} "$@"\n'
        )
        on_node.chmod(0o755)
        # skewsafe_node_name: what the nodename fact gives on a real node (here all hosts are this machine)
        lines.append(
            f"{FQDN.format(name=name)} ansible_host={alias(harness, name)} skewsafe_node_name={name} "
            f"ansible_python_interpreter={on_node}"
        )
    lines += [
        "",
        "[kube_control_plane:vars]",
        "ansible_connection=local",
        "",
        "[controller]",
        f"localhost ansible_connection=local ansible_python_interpreter={sys.executable}",
    ]
    inventory = tmp_path / "inventory.ini"
    inventory.write_text("\n".join(lines) + "\n")
    return inventory


def verify_playbook(harness, kubeconfig, tmp_path, *extra):
    """The verify playbook on the FQDN inventory; ``kubeconfig`` None: no credential given (one is minted)."""
    out = tmp_path / "gate.json"
    playbook = tmp_path / "verify-and-keep.yml"
    playbook.write_text(VERIFY_AND_KEEP.format(out=out))
    cmd = ["ansible-playbook", "-i", str(fqdn_inventory(harness, tmp_path)), str(playbook)]
    cmd += ["-e", f"mvp_enable_peer_ca_file={harness.ca_file}", *extra]
    cmd += ["-e", f"skewsafe_kubeconfig={kubeconfig}"] if kubeconfig else []
    env = {k: v for k, v in os.environ.items() if not k.startswith("K8S_AUTH_")}
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False, env={**env, "ANSIBLE_NOCOLOR": "1"})
    return proc, (json.loads(out.read_text()) if out.exists() else None)


@only_pairs([LAB_PAIR], "the lab's versions")
def test_fqdn_inventory_through_nat_matches_servers_by_what_the_cluster_says(far_controller, pair, tmp_path):
    """Inventory names are FQDN aliases and ansible_host a NAT alias: neither is what identity leases carry (host name
    cp-N, advertise address). The gate must match each server by its Node's kube-apiserver Pod."""
    harness, kubeconfig = far_controller
    proc, kept = verify_playbook(harness, kubeconfig, tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    gate = kept["gate"]
    assert gate["passed"] and gate["mode"] == "mixed", gate["msg"]
    servers = {s["name"]: s for s in gate["evidence"]["servers"]}
    assert set(servers) == {FQDN.format(name=n) for n in harness.servers}
    leases = {r["server"]: r["detail"] for r in gate["checks"] if r["check"] == "identity_leases" and r["passed"]}
    for name, server in harness.servers.items():
        entry = servers[FQDN.format(name=name)]
        assert entry["endpoint"] == f"https://{alias(harness, name)}:6443"  # reached where the inventory says
        assert entry["node_name"] == name
        # matched by the address its Node's kube-apiserver Pod advertises, which only the cluster knows here
        assert entry["advertise_address"] == f"{server.address}:6443", entry
        assert f"(host {server.hostname})" in leases[FQDN.format(name=name)], leases
    probes = {p["server"] for p in gate["evidence"]["probes"]}
    assert probes == {FQDN.format(name=n) for n, s in harness.servers.items() if s.version == pair.old}


@only_pairs([LAB_PAIR], "the lab's versions")
def test_fqdn_inventory_matched_by_inventory_names_finds_no_lease(far_controller, pair, tmp_path):
    """The control: node names taken from the inventory (as the gate did before) match no identity lease."""
    harness, kubeconfig = far_controller
    proc, kept = verify_playbook(harness, kubeconfig, tmp_path, "-e", "skewsafe_node_name={{ inventory_hostname }}")
    assert proc.returncode != 0 and kept is None, proc.stdout[-3000:]
    for name in harness.servers:
        assert f"{FQDN.format(name=name)}: no identity lease names this server" in proc.stdout, proc.stdout[-3000:]


@only_pairs([LAB_PAIR], "the lab's versions")
def test_verify_without_a_credential_mints_one_from_kubeadm_and_leaves_nothing(far_controller, pair, tmp_path):
    """No skewsafe_kubeconfig, no K8S_AUTH_*: the playbook's settings have the first control plane's kubeadm mint a
    short-lived cluster-admin certificate (admin_credential), the gate passes with it, and it is gone after the run."""
    harness, _kubeconfig = far_controller
    credentials = tmp_path / "credentials"
    started = time.time()
    proc, kept = verify_playbook(harness, None, tmp_path, "-e", f"skewsafe_credentials_dir={credentials}")
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert kept["gate"]["passed"] and kept["gate"]["mode"] == "mixed", kept["gate"]["msg"]
    assert kept["kubeconfig"].startswith(f"{credentials}/cp-1.cluster.example.internal-"), kept["kubeconfig"]
    minted = yaml.safe_load(kept["kubeconfig_text"])
    assert minted["clusters"][0]["cluster"]["server"] == f"https://{alias(harness, 'cp-1')}:6443"  # admin.conf's
    assert set(minted["users"][0]["user"]) == {"client-certificate", "client-key"}  # files, no inline key
    assert "PRIVATE KEY" not in proc.stdout
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(credentials.iterdir()):
        time.sleep(0.3)
    assert not list(credentials.iterdir()), list(credentials.iterdir())
    gate = kept["gate"]
    print(
        f"\nverify minted its own credential, passed and removed it: {time.time() - started:.0f}s "
        f"(gate {gate['elapsed']:.0f}s, {gate['attempts']} rounds)"
    )
