"""The admin_credential action and its helpers: kubeadm's answers replaced, the files on the controller real."""

from __future__ import annotations

import base64
import datetime
import json
import os
import stat
import subprocess
import sys
import time
from unittest import mock

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID

from ansible_collections.skewsafe.kubeadm.plugins.action import admin_credential as action_mod
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _admin_credential as cred

UTC = datetime.timezone.utc
SERVER = "https://10.0.0.10:6443"


def _key():
    return ec.generate_private_key(ec.SECP256R1())


def _pem_key(key):
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


@pytest.fixture(scope="module")
def ca():
    key = _key()
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "kubernetes")])
    now = datetime.datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(1)
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=3650))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def client_cert(ca, cn, groups, seconds):
    """What kubeadm signs: CN = client name, O = groups, not after = now + validity."""
    ca_key, ca_cert = ca
    key = _key()
    subject = x509.Name(
        [x509.NameAttribute(NameOID.ORGANIZATION_NAME, g) for g in groups]
        + [x509.NameAttribute(NameOID.COMMON_NAME, cn)]
    )
    now = datetime.datetime.now(UTC)
    cert = (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(ca_cert.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(ca_cert.not_valid_before_utc)
        .not_valid_after(now + datetime.timedelta(seconds=seconds))
        .sign(ca_key, hashes.SHA256())
    )
    return cert.public_bytes(serialization.Encoding.PEM), _pem_key(key)


def kubeadm_kubeconfig(ca, cn="skewsafe.kubeadm", groups=("kubeadm:cluster-admins",), seconds=3600, server=SERVER):
    """A kubeconfig as kubeadm kubeconfig user prints it (inline data)."""
    cert, key = client_cert(ca, cn, groups, seconds)

    def b64(data):
        return base64.b64encode(data).decode()

    ca_pem = ca[1].public_bytes(serialization.Encoding.PEM)
    return yaml.safe_dump(
        {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {"name": "kubernetes", "cluster": {"server": server, "certificate-authority-data": b64(ca_pem)}}
            ],
            "contexts": [{"name": f"{cn}@kubernetes", "context": {"cluster": "kubernetes", "user": cn}}],
            "current-context": f"{cn}@kubernetes",
            "users": [{"name": cn, "user": {"client-certificate-data": b64(cert), "client-key-data": b64(key)}}],
        }
    )


# ---------------------------------------------------------------- pure helpers
@pytest.mark.parametrize(
    ("text", "seconds"), [("4h", 14400), ("90m", 5400), ("1h30m", 5400), ("45s", 45), ("1h0m5s", 3605)]
)
def test_durations(text, seconds):
    assert cred.parse_duration(text) == seconds


@pytest.mark.parametrize("text", ["", "4", "4d", "-1h", "0s", "h", None, "1.5h"])
def test_bad_durations_are_refused(text):
    with pytest.raises(cred.CredentialError):
        cred.parse_duration(text)


def test_renewal_margin_is_half_the_validity_at_most_an_hour():
    assert cred.renew_margin(3600) == 1800
    assert cred.renew_margin(4 * 3600) == 3600
    assert cred.renew_margin(60) == 30


@pytest.mark.parametrize(
    ("server", "endpoint"),
    [
        ("https://10.0.0.10:6443", "10.0.0.10:6443"),
        ("https://api.example.internal", "api.example.internal:443"),
        ("https://[fd00::10]:6443", "[fd00::10]:6443"),
    ],
)
def test_control_plane_endpoint_from_the_server(server, endpoint):
    assert cred.control_plane_endpoint(server) == endpoint


def test_plain_http_server_is_refused():
    with pytest.raises(cred.CredentialError, match="not an https"):
        cred.control_plane_endpoint("http://10.0.0.10:8080")


def test_the_current_context_names_the_cluster():
    doc = {
        "clusters": [
            {"name": "a", "cluster": {"server": "https://a:6443"}},
            {"name": "b", "cluster": {"server": "https://b:6443"}},
        ],
        "contexts": [{"name": "ctx", "context": {"cluster": "b", "user": "u"}}],
        "current-context": "ctx",
    }
    assert cred.current_cluster(doc) == ("b", "https://b:6443")
    assert cred.current_cluster({"clusters": doc["clusters"]}) == ("a", "https://a:6443")
    with pytest.raises(cred.CredentialError):
        cred.current_cluster({"clusters": []})


def test_certificates_dir_is_where_the_client_ca_is():
    assert cred.certificates_dir({"client-ca-file": "/srv/pki/ca.crt"}) == "/srv/pki"
    assert cred.certificates_dir({}) == "/etc/kubernetes/pki"


def test_kubeadm_reads_the_config_from_stdin_with_the_server_of_admin_conf():
    config = yaml.safe_load(cred.user_config("v1.36.5", "10.0.0.10:6443", "kubernetes", "/etc/kubernetes/pki"))
    assert config == {
        "apiVersion": "kubeadm.k8s.io/v1beta4",
        "kind": "ClusterConfiguration",
        "kubernetesVersion": "v1.36.5",  # no stable-1 lookup on the internet
        "controlPlaneEndpoint": "10.0.0.10:6443",
        "clusterName": "kubernetes",
        "certificatesDir": "/etc/kubernetes/pki",
    }
    argv = cred.kubeadm_args("kubeadm", "skewsafe.kubeadm", ["kubeadm:cluster-admins"], 3600)
    assert argv == [
        "kubeadm",
        "kubeconfig",
        "user",
        "--client-name=skewsafe.kubeadm",
        "--org=kubeadm:cluster-admins",
        "--validity-period=3600s",
        "--config=/dev/stdin",
    ]


def test_split_moves_certificate_and_key_into_files(ca, tmp_path):
    text, cert, key, server = cred.split_kubeconfig(kubeadm_kubeconfig(ca), tmp_path / "c.crt", tmp_path / "c.key")
    doc = yaml.safe_load(text)
    user = doc["users"][0]["user"]
    assert user == {"client-certificate": str(tmp_path / "c.crt"), "client-key": str(tmp_path / "c.key")}
    assert b"BEGIN CERTIFICATE" in cert and b"PRIVATE KEY" in key
    assert server == SERVER
    assert "PRIVATE" not in text and base64.b64encode(key).decode()[:40] not in text


@pytest.mark.parametrize("text", ["", "not: [a kubeconfig", "users: []", "users: [{name: u, user: {token: t}}]"])
def test_split_refuses_what_is_not_kubeadms_kubeconfig(text, tmp_path):
    with pytest.raises(cred.CredentialError):
        cred.split_kubeconfig(text, tmp_path / "c.crt", tmp_path / "c.key")


def test_the_kubernetes_client_writes_inline_keys_to_temporary_files_but_not_file_paths(ca, tmp_path, monkeypatch):
    """Why the key is a file of its own: measured on the installed kubernetes client (FileOrData.as_file)."""
    from kubernetes import client, config
    from kubernetes.config import kube_config

    inline = tmp_path / "inline.conf"
    inline.write_text(kubeadm_kubeconfig(ca))
    text, cert, key, _server = cred.split_kubeconfig(inline.read_text(), tmp_path / "c.crt", tmp_path / "c.key")
    (tmp_path / "c.crt").write_bytes(cert)
    (tmp_path / "c.key").write_bytes(key)
    split = tmp_path / "split.conf"
    split.write_text(text)

    def temp_files_after_loading(path):
        monkeypatch.setattr(kube_config, "_temp_files", {})
        configuration = client.Configuration()
        config.load_kube_config(config_file=str(path), client_configuration=configuration)
        return configuration, set(kube_config._temp_files.values())

    configuration, written = temp_files_after_loading(inline)
    assert configuration.key_file in written and configuration.cert_file in written
    assert len(written) == 3  # CA, certificate and key, each a temporary file of the client
    for path in written:
        os.unlink(path)
    configuration, written = temp_files_after_loading(split)
    assert configuration.key_file == str(tmp_path / "c.key") and configuration.cert_file == str(tmp_path / "c.crt")
    assert written == {configuration.ssl_ca_cert}  # only the (public) CA
    os.unlink(configuration.ssl_ca_cert)


# ---------------------------------------------------------------- files
def test_private_directory_and_files(tmp_path):
    dest = tmp_path / "a" / "credentials"
    cred.ensure_private_dir(str(dest))
    assert stat.S_IMODE(dest.stat().st_mode) == 0o700
    dest.chmod(0o755)
    cred.ensure_private_dir(str(dest))
    assert stat.S_IMODE(dest.stat().st_mode) == 0o700
    path = dest / "x.key"
    cred.write_private(str(path), b"secret")
    cred.write_private(str(path), b"secret 2")
    assert path.read_bytes() == b"secret 2" and stat.S_IMODE(path.stat().st_mode) == 0o600
    assert sorted(p.name for p in dest.iterdir()) == ["x.key"]  # no temporary file left beside it


def test_prune_removes_only_expired_credentials(ca, tmp_path):
    now = datetime.datetime.now(UTC)
    for stem, seconds in (("old-1", -10), ("live-2", 600)):
        cert, key = client_cert(ca, "skewsafe.kubeadm", ["kubeadm:cluster-admins"], seconds)
        for suffix, data in ((".crt", cert), (".key", key), (".conf", b"kubeconfig")):
            (tmp_path / f"{stem}{suffix}").write_bytes(data)
    (tmp_path / "unrelated.crt").write_text("not a certificate")
    removed = cred.prune_expired(str(tmp_path), now)
    assert sorted(os.path.basename(p) for p in removed) == ["old-1.conf", "old-1.crt", "old-1.key"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["live-2.conf", "live-2.crt", "live-2.key", "unrelated.crt"]


def test_the_files_go_when_the_run_ends_however_it_ends(tmp_path):
    run = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    paths = []
    for name in ("r.conf", "r.crt", "r.key"):
        (tmp_path / name).write_text("x")
        paths.append(str(tmp_path / name))
    cred.remove_when_gone(run.pid, paths)
    time.sleep(1.5)
    assert all(os.path.exists(p) for p in paths), "removed while the run still runs"
    run.kill()  # not even a clean exit
    run.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(os.path.exists(p) for p in paths):
        time.sleep(0.2)
    assert not any(os.path.exists(p) for p in paths)


# ---------------------------------------------------------------- the action
class Node:
    """The first control plane: kubectl's redacted view of admin.conf, the manifest, kubeadm."""

    def __init__(self, ca, seconds_left=None, kubeadm_rc=0):
        self.ca, self.seconds_left, self.kubeadm_rc = ca, seconds_left, kubeadm_rc
        self.calls = []

    def __call__(self, module_name=None, module_args=None, task_vars=None, check_mode=None, no_log=None):
        argv = (module_args or {}).get("argv") or []
        self.calls.append({"module": module_name, "args": module_args, "check_mode": check_mode, "no_log": no_log})
        if module_name == "ansible.builtin.slurp":
            pod = {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "kube-apiserver"},
                "spec": {
                    "containers": [
                        {
                            "name": "kube-apiserver",
                            "image": "registry.k8s.io/kube-apiserver:v1.36.5",
                            "command": ["kube-apiserver", "--client-ca-file=/srv/pki/ca.crt"],
                        }
                    ]
                },
            }
            return {"content": base64.b64encode(yaml.safe_dump(pod).encode()).decode()}
        if argv[:3] == ["kubectl", "config", "view"]:
            view = {
                "clusters": [
                    {"name": "kubernetes", "cluster": {"server": SERVER, "certificate-authority-data": "DATA+OMITTED"}}
                ],
                "contexts": [{"name": "admin", "context": {"cluster": "kubernetes", "user": "kubernetes-admin"}}],
                "current-context": "admin",
                "users": [{"name": "kubernetes-admin", "user": {"client-key-data": "DATA+OMITTED"}}],
            }
            return {"rc": 0, "stdout": json.dumps(view)}
        if argv[1:] == ["version", "--output=short"]:
            return {"rc": 0, "stdout": "v1.36.5\n"}
        assert argv[1:3] == ["kubeconfig", "user"], argv
        if self.kubeadm_rc:
            return {"rc": 1, "failed": True, "stdout": "client-key-data: SECRET", "stderr": "couldn't load the CA"}
        seconds = int(argv[-2].split("=")[1].rstrip("s")) if self.seconds_left is None else self.seconds_left
        groups = [a.split("=", 1)[1] for a in argv if a.startswith("--org=")]
        client = next(a.split("=", 1)[1] for a in argv if a.startswith("--client-name="))
        return {"rc": 0, "stdout": kubeadm_kubeconfig(self.ca, client, groups, seconds)}


def make_action(monkeypatch, node, args, check_mode=False, run_id=4242):
    task = mock.MagicMock()
    task.args = args
    task.check_mode = check_mode
    task.no_log = False
    task.async_val = 0
    task.delegate_to = "cp-1"
    action = action_mod.ActionModule(
        task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None
    )

    def execute(module_name=None, module_args=None, task_vars=None):
        return node(module_name, module_args, task_vars, check_mode=task.check_mode, no_log=task.no_log)

    monkeypatch.setattr(action, "_execute_module", execute)
    monkeypatch.setattr(action_mod.os, "getppid", lambda: run_id)
    spawned = []
    monkeypatch.setattr(action_mod.cred, "remove_when_gone", lambda pid, paths: spawned.append((pid, paths)) or 99)
    action.spawned = spawned
    return action


def test_mints_a_credential_the_kubeconfig_names_and_keeps_no_key_in_the_result(monkeypatch, ca, tmp_path):
    node = Node(ca)
    dest = tmp_path / "credentials"
    action = make_action(
        monkeypatch, node, {"dest": str(dest), "name": "cp-1", "validity": "1h", "remove_at_exit": True}
    )
    result = action.run(task_vars={})
    assert result["minted"] and not result["changed"] and not result.get("failed"), result
    assert result["kubeconfig"] == str(dest / "cp-1-4242.conf")
    assert result["server"] == SERVER and result["client_name"] == "skewsafe.kubeadm"
    assert result["groups"] == ["kubeadm:cluster-admins"]
    expires = datetime.datetime.fromisoformat(result["expires"])
    assert 3500 < (expires - datetime.datetime.now(UTC)).total_seconds() <= 3600
    assert stat.S_IMODE(dest.stat().st_mode) == 0o700
    for key in ("kubeconfig", "client_certificate", "client_key"):
        assert stat.S_IMODE(os.stat(result[key]).st_mode) == 0o600
    assert sorted(p.name for p in dest.iterdir()) == ["cp-1-4242.conf", "cp-1-4242.crt", "cp-1-4242.key"]
    user = yaml.safe_load(open(result["kubeconfig"]))["users"][0]["user"]
    assert user == {"client-certificate": result["client_certificate"], "client-key": result["client_key"]}
    key = open(result["client_key"]).read()
    assert "PRIVATE KEY" not in json.dumps(result) and key.splitlines()[1] not in json.dumps(result)
    assert action.spawned == [(4242, [result["kubeconfig"], result["client_certificate"], result["client_key"]])]
    kubeadm = node.calls[-1]
    config = yaml.safe_load(kubeadm["args"]["stdin"])
    assert config["controlPlaneEndpoint"] == "10.0.0.10:6443" and config["certificatesDir"] == "/srv/pki"
    assert config["kubernetesVersion"] == "v1.36.5"
    assert "--validity-period=3600s" in kubeadm["args"]["argv"]
    # nothing on the node is written: only reads and kubeadm printing to stdout
    assert [c["module"] for c in node.calls] == ["ansible.builtin.command", "ansible.builtin.slurp"] + [
        "ansible.builtin.command"
    ] * 2
    assert all(c["no_log"] for c in node.calls)


def test_check_mode_mints_too_with_the_node_reads_run_for_real(monkeypatch, ca, tmp_path):
    node = Node(ca)
    args = {"dest": str(tmp_path), "name": "cp-1", "validity": "1h", "remove_at_exit": True}
    action = make_action(monkeypatch, node, args, check_mode=True)
    result = action.run(task_vars={})
    assert result["minted"] and os.path.exists(result["client_key"])
    assert all(c["check_mode"] is False for c in node.calls)  # command would skip in check mode
    assert action._task.check_mode is True and action._task.no_log is False  # restored
    assert action.spawned


def test_the_same_run_uses_its_credential_again_until_it_nears_its_end(monkeypatch, ca, tmp_path):
    args = {"dest": str(tmp_path), "name": "cp-1", "validity": "4h"}
    node = Node(ca)
    first = make_action(monkeypatch, node, args).run(task_vars={})
    again = make_action(monkeypatch, node, args).run(task_vars={})
    assert first["minted"] and not again["minted"] and not again["changed"]
    assert again["expires"] == first["expires"] and again["server"] == SERVER
    assert len(node.calls) == 4  # minted once
    # less than the margin (1 h for 4 h) left: minted again, into the same files
    os.unlink(first["client_certificate"])
    node.seconds_left = 1800
    short = make_action(monkeypatch, node, args).run(task_vars={})
    assert short["minted"]
    node.seconds_left = None
    renewed = make_action(monkeypatch, node, args).run(task_vars={})
    assert renewed["minted"] and renewed["kubeconfig"] == first["kubeconfig"]
    assert renewed["expires"] > short["expires"]
    # another run never touches this run's files
    other = make_action(monkeypatch, Node(ca), args, run_id=5151).run(task_vars={})
    assert other["minted"] and other["kubeconfig"] != first["kubeconfig"] and os.path.exists(first["kubeconfig"])


def test_another_identity_is_minted_not_reused(monkeypatch, ca, tmp_path):
    node = Node(ca)
    make_action(monkeypatch, node, {"dest": str(tmp_path), "name": "cp-1"}).run(task_vars={})
    other = make_action(monkeypatch, node, {"dest": str(tmp_path), "name": "cp-1", "client_name": "ops"}).run(
        task_vars={}
    )
    assert other["minted"] and other["client_name"] == "ops"


def test_absent_removes_this_runs_files(monkeypatch, ca, tmp_path):
    args = {"dest": str(tmp_path), "name": "cp-1"}
    minted = make_action(monkeypatch, Node(ca), args).run(task_vars={})
    gone = make_action(monkeypatch, Node(ca), {**args, "state": "absent"}).run(task_vars={})
    assert gone["changed"] and sorted(gone["removed"]) == sorted(
        [minted["kubeconfig"], minted["client_certificate"], minted["client_key"]]
    )
    assert list(tmp_path.iterdir()) == []
    assert not make_action(monkeypatch, Node(ca), {**args, "state": "absent"}).run(task_vars={})["changed"]


def test_a_kubeadm_failure_names_the_node_and_never_shows_stdout(monkeypatch, ca, tmp_path):
    action = make_action(monkeypatch, Node(ca, kubeadm_rc=1), {"dest": str(tmp_path), "name": "cp-1"})
    result = action.run(task_vars={})
    assert result["failed"], result
    assert "cp-1" in result["msg"] and "couldn't load the CA" in result["msg"]
    assert "SECRET" not in str(result)
    assert not list(tmp_path.iterdir())


def test_bad_validity_is_refused_before_the_node_is_asked(monkeypatch, ca, tmp_path):
    node = Node(ca)
    action = make_action(monkeypatch, node, {"dest": str(tmp_path), "name": "cp-1", "validity": "1d"})
    result = action.run(task_vars={})
    assert result["failed"] and "validity" in result["msg"], result
    assert node.calls == []
