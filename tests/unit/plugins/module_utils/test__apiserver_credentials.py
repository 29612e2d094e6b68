"""Credentials for direct API-server requests from every kind of kubeconfig the kubernetes client loads."""

from __future__ import annotations

import json
import stat

import pytest
import yaml

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._apiserver_http import Credentials
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._client import ClientError

CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"


def kubeconfig(tmp_path, user):
    (tmp_path / "ca.crt").write_text(CA)
    doc = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": "c",
                "cluster": {"server": "https://10.0.0.1:6443", "certificate-authority": str(tmp_path / "ca.crt")},
            }
        ],
        "users": [{"name": "u", "user": user}],
        "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
        "current-context": "x",
    }
    path = tmp_path / "kubeconfig"
    path.write_text(yaml.safe_dump(doc))
    return str(path)


def test_token(tmp_path):
    creds = Credentials.from_params({"kubeconfig": kubeconfig(tmp_path, {"token": "abc.def"})})
    assert creds.token == "abc.def" and creds.cert_file is None
    assert creds.host == "https://10.0.0.1:6443"


def test_token_file(tmp_path):
    (tmp_path / "token").write_text("from-file\n")
    creds = Credentials.from_params({"kubeconfig": kubeconfig(tmp_path, {"tokenFile": str(tmp_path / "token")})})
    assert creds.token == "from-file"


def test_exec_plugin(tmp_path):
    plugin = tmp_path / "plugin.sh"
    credential = {
        "apiVersion": "client.authentication.k8s.io/v1",
        "kind": "ExecCredential",
        "status": {"token": "exec-tok"},
    }
    plugin.write_text(f"#!/bin/sh\ncat <<'EOF'\n{json.dumps(credential)}\nEOF\n")
    plugin.chmod(plugin.stat().st_mode | stat.S_IEXEC)
    user = {
        "exec": {"apiVersion": "client.authentication.k8s.io/v1", "command": str(plugin), "interactiveMode": "Never"}
    }
    creds = Credentials.from_params({"kubeconfig": kubeconfig(tmp_path, user)})
    assert creds.token == "exec-tok"


def test_api_key_option_as_awx_sets_it(tmp_path):
    (tmp_path / "ca.crt").write_text(CA)
    creds = Credentials.from_params(
        {"host": "https://10.0.0.1:6443", "api_key": "k", "ca_cert": str(tmp_path / "ca.crt")}
    )
    assert creds.token == "k"


def test_no_credential_is_one_clear_error(tmp_path):
    with pytest.raises(ClientError) as excinfo:
        Credentials.from_params({"kubeconfig": kubeconfig(tmp_path, {})})
    message = str(excinfo.value)
    assert "neither a bearer token nor a client certificate" in message
    assert message.count("neither") == 1


class FakePool:
    def __init__(self, error=None):
        self.calls, self.error = [], error

    def request(self, method, url, **kwargs):
        self.calls.append((method, url, kwargs))
        if self.error:
            raise self.error
        return type("R", (), {"status": 201, "headers": {"Content-Type": "application/json"}, "data": b'{"ok": 1}'})()


def client(monkeypatch, pool, token="t"):
    from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _apiserver_http

    api = _apiserver_http.ApiServerClient(Credentials(ca_file="/ca", token=token))
    monkeypatch.setattr(api, "_pool", pool)
    return api


def test_request_sends_json_bodies_with_the_credentials(monkeypatch):
    pool = FakePool()
    api = client(monkeypatch, pool)
    resp = api.request("POST", "https://10.0.0.1:6443/", "/apis/x", body={"a": 1}, timeout=60)
    assert resp.status == 201 and resp.json() == {"ok": 1} and api.requests == 1
    method, url, kwargs = pool.calls[0]
    assert (method, url) == ("POST", "https://10.0.0.1:6443/apis/x")
    assert json.loads(kwargs["body"]) == {"a": 1}
    assert kwargs["headers"]["Content-Type"] == "application/json"
    assert kwargs["headers"]["Authorization"] == "Bearer t"
    assert kwargs["timeout"].total == 60


def test_get_sends_no_body_and_keeps_the_client_timeout(monkeypatch):
    pool = FakePool()
    client(monkeypatch, pool).get("https://10.0.0.1:6443", "/version", headers={"Accept": "application/json"})
    method, _url, kwargs = pool.calls[0]
    assert method == "GET" and kwargs["body"] is None and "timeout" not in kwargs
    assert "Content-Type" not in kwargs["headers"] and kwargs["headers"]["Accept"] == "application/json"


def test_transport_errors_come_back_as_a_response(monkeypatch):
    import urllib3

    pool = FakePool(error=urllib3.exceptions.NewConnectionError(None, "refused"))
    resp = client(monkeypatch, pool).get("https://10.0.0.1:6443", "/readyz")
    assert resp.status is None and "refused" in resp.error


def test_real_transport_failures_are_classified_from_urllib3s_own_words():
    """Loopback only: a closed port and a socket that never answers the TLS handshake."""
    import socket

    from ansible_collections.skewsafe.kubeadm.plugins.module_utils._apiserver_http import ApiServerClient, Credentials
    from ansible_collections.skewsafe.kubeadm.plugins.module_utils._mvp.evaluate import classify_endpoint_error

    client = ApiServerClient(Credentials(ca_file="/etc/ssl/certs/ca-certificates.crt", token="t"), timeout=1.0)
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()
    refused = client.get(f"https://127.0.0.1:{port}", "/version")
    assert classify_endpoint_error(refused.status, refused.error) == "endpoint_refused", refused.error
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(1)
        stalled = client.get(f"https://127.0.0.1:{silent.getsockname()[1]}", "/version")
    assert classify_endpoint_error(stalled.status, stalled.error) == "endpoint_timeout", stalled.error
