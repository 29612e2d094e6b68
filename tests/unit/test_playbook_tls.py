"""No playbook sends a credential to a server whose certificate is not checked (api_credential_check, first play).

A self-signed HTTPS stub on loopback records every request. Given an insecure credential, each playbook must stop
in its first play and the stub must see nothing; given the stub's own CA, the same run reaches it with the token
(so the stub does observe the playbooks' calls).
"""

from __future__ import annotations

import base64
import datetime
import http.server
import ipaddress
import json
import ssl
import threading

import pytest
import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import NameOID
from playbook_runner import ansible_playbook

PLAYBOOKS = ["preflight", "upgrade", "upgrade_path", "mvp_enable", "verify", "etcd_backup", "prefetch"]
TOKEN = "stub-secret-token"
ADDRESS = "127.0.0.77"


def self_signed(tmp_path):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "stub")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address(ADDRESS))]), critical=False)
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_pem = cert.public_bytes(serialization.Encoding.PEM)
    (tmp_path / "stub.crt").write_bytes(cert_pem)
    (tmp_path / "stub.key").write_bytes(
        key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    )
    return cert_pem


@pytest.fixture
def stub(tmp_path):
    """An HTTPS server on loopback that records (path, Authorization) of every request; yields (url, requests, CA)."""
    cert_pem = self_signed(tmp_path)
    requests = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            requests.append((self.path, self.headers.get("Authorization")))
            body = json.dumps({"major": "1", "minor": "36", "gitVersion": "v1.36.5"}).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        do_POST = do_PATCH = do_GET

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer((ADDRESS, 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(tmp_path / "stub.crt", tmp_path / "stub.key")
    server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"https://{ADDRESS}:{server.server_address[1]}", requests, cert_pem
    finally:
        server.shutdown()
        server.server_close()


def write_kubeconfig(path, server, cluster_extra):
    path.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "stub", "cluster": {"server": server, **cluster_extra}}],
                "users": [{"name": "u", "user": {"token": TOKEN}}],
                "contexts": [{"name": "c", "context": {"cluster": "stub", "user": "u"}}],
                "current-context": "c",
            }
        )
    )
    path.chmod(0o600)
    return path


def run(tmp_path, playbook, extra=None, env=None, *args):
    inventory = tmp_path / "inventory.ini"
    # hosts nobody can reach: what a playbook sends before its hosts answer goes from the controller
    inventory.write_text(
        "[kube_control_plane]\ncp1 ansible_host=192.0.2.1\n[kube_workers]\nw1 ansible_host=192.0.2.2\n"
    )
    extra = {"skewsafe_artifacts_dir": str(tmp_path / "artifacts"), **(extra or {})}
    if playbook == "upgrade_path":
        extra["skewsafe_upgrade_path"] = ["1.37.2"]
    else:
        extra.setdefault("skewsafe_kubernetes_version", "1.37.2")
    return ansible_playbook(
        tmp_path, "-i", str(inventory), f"skewsafe.kubeadm.{playbook}", "-e", json.dumps(extra), *args, env=env
    )


def insecure_credential(tmp_path, server, form):
    """(extra vars, environment) that hand the run a token for ``server`` with TLS verification off."""
    kubeconfig = write_kubeconfig(tmp_path / "insecure.kubeconfig", server, {"insecure-skip-tls-verify": True})
    if form == "variable":
        return {"skewsafe_kubeconfig": str(kubeconfig)}, {}
    if form == "environment-kubeconfig":  # what AWX's OpenShift/Kubernetes credential sets
        return {}, {"K8S_AUTH_KUBECONFIG": str(kubeconfig)}
    good = write_kubeconfig(tmp_path / "ca.kubeconfig", server, {"certificate-authority-data": ""})
    return {"skewsafe_kubeconfig": str(good)}, {
        "K8S_AUTH_HOST": server,
        "K8S_AUTH_API_KEY": TOKEN,
        "K8S_AUTH_VERIFY_SSL": "false",
    }


@pytest.mark.parametrize("form", ["variable", "environment-kubeconfig", "verify-ssl-false"])
@pytest.mark.parametrize("playbook", PLAYBOOKS)
def test_an_insecure_credential_stops_every_playbook_before_any_request(tmp_path, stub, playbook, form):
    server, requests, _ca = stub
    extra, env = insecure_credential(tmp_path, server, form)
    result = run(tmp_path, playbook, extra, env)
    out = result.stdout + result.stderr
    assert result.returncode != 0, out
    assert "Refused before any API call, nothing was contacted" in out, out
    assert "never turns TLS verification off" in out, out
    assert requests == [], requests
    assert TOKEN not in out
    # the first play stopped the run: no other play started
    assert out.count("PLAY [") == 1, out


def test_a_limit_without_localhost_still_runs_the_check(tmp_path, stub):
    server, requests, _ca = stub
    extra, env = insecure_credential(tmp_path, server, "variable")
    result = run(tmp_path, "verify", extra, env, "--limit", "cp1")
    assert result.returncode != 0 and "Refused before any API call" in result.stdout, result.stdout
    assert requests == []


def test_a_relative_kubeconfig_is_read_from_the_working_directory_by_the_check_and_the_modules(tmp_path, stub):
    """kubernetes.core would read a relative path from the playbook's files/, the collection's plugins from the
    working directory: both get it made absolute against the working directory, so the TLS check reads the file the
    modules use. Insecure there: refused before any request; verified: the run's requests carry its token."""
    server, requests, ca = stub
    write_kubeconfig(tmp_path / "rel.kubeconfig", server, {"insecure-skip-tls-verify": True})
    result = run(tmp_path, "verify", {"skewsafe_kubeconfig": "rel.kubeconfig"})
    assert "Refused before any API call" in result.stdout, result.stdout
    assert requests == []
    write_kubeconfig(tmp_path / "rel.kubeconfig", server, {"certificate-authority-data": base64.b64encode(ca).decode()})
    result = run(tmp_path, "verify", {"skewsafe_kubeconfig": "rel.kubeconfig"})
    assert "Refused before any API call" not in result.stdout and "relative" not in result.stdout, result.stdout
    assert requests and all(auth == f"Bearer {TOKEN}" for _path, auth in requests), requests


def test_with_the_servers_ca_the_same_run_reaches_the_stub_with_the_token(tmp_path, stub):
    """The control case: the stub does see what a playbook sends once the certificate is checked."""
    server, requests, ca = stub
    kubeconfig = write_kubeconfig(
        tmp_path / "verified.kubeconfig", server, {"certificate-authority-data": base64.b64encode(ca).decode()}
    )
    result = run(tmp_path, "verify", {"skewsafe_kubeconfig": str(kubeconfig)})
    assert "Refused before any API call" not in result.stdout, result.stdout
    assert requests and all(auth == f"Bearer {TOKEN}" for _path, auth in requests), requests
