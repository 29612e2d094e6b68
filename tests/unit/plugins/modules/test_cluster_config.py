"""cluster_config module tests; the Kubernetes client is mocked at its HTTP boundary (urllib3)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import urllib3
import yaml

from ansible_collections.skewsafe.kubeadm.plugins.modules import cluster_config

FIXTURES = Path(__file__).parents[1] / "module_utils" / "fixtures"
CM_URL = "/api/v1/namespaces/kube-system/configmaps/kubeadm-config"
PEER_CA = {"peer-ca-file": "/etc/kubernetes/pki/ca.crt"}

CLUSTER_TEXT = """\
apiServer:
  extraArgs:
  - name: authorization-mode
    value: Node,RBAC
  - name: feature-gates
    value: SomeGate=true
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: v1.36.5
"""

INIT_FILE = """\
apiVersion: kubeadm.k8s.io/v1beta4
kind: InitConfiguration
localAPIEndpoint:
  advertiseAddress: 10.0.0.1   # kept as written
  bindPort: 6443
---
apiVersion: kubeadm.k8s.io/v1beta4
kind: ClusterConfiguration
kubernetesVersion: v1.37.2
---
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
failCgroupV1: false
"""


class FakeApiServer:
    """Answers the ConfigMap GET/PUT the module makes, like kube-apiserver would."""

    def __init__(self, text=CLUSTER_TEXT, resource_version="100"):
        self.configmap = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "kubeadm-config", "namespace": "kube-system", "resourceVersion": resource_version},
            "data": {"ClusterConfiguration": text},
        }
        self.requests = []
        self.conflict_on_put = False

    def _response(self, status, body):
        return urllib3.HTTPResponse(
            body=json.dumps(body).encode(),
            status=status,
            headers={"content-type": "application/json"},
            preload_content=True,
        )

    def request(self, method, url, body=None, **_kwargs):
        path = urllib3.util.parse_url(url).path
        sent = json.loads(body) if body else None
        self.requests.append((method, path, sent))
        if path != CM_URL:
            return self._response(404, {"kind": "Status", "message": f"{path} not found", "code": 404})
        if method == "GET":
            return self._response(200, self.configmap)
        if method == "PUT":
            current = self.configmap["metadata"]["resourceVersion"]
            if self.conflict_on_put or sent["metadata"].get("resourceVersion") != current:
                return self._response(
                    409,
                    {
                        "kind": "Status",
                        "code": 409,
                        "reason": "Conflict",
                        "message": 'Operation cannot be fulfilled on configmaps "kubeadm-config": '
                        "the object has been modified; please apply your changes to the latest version and try again",
                    },
                )
            stored = json.loads(body)
            stored["metadata"]["resourceVersion"] = str(int(current) + 1)
            self.configmap = stored
            return self._response(200, stored)
        return self._response(405, {"kind": "Status", "code": 405, "message": "not allowed"})

    @property
    def writes(self):
        return [r for r in self.requests if r[0] != "GET"]

    @property
    def text(self):
        return self.configmap["data"]["ClusterConfiguration"]


@pytest.fixture
def api(monkeypatch, tmp_path):
    server = FakeApiServer()
    monkeypatch.setattr(
        urllib3.PoolManager, "request", lambda _self, method, url, **kw: server.request(method, url, **kw)
    )
    kubeconfig = tmp_path / "kubeconfig"
    ca = tmp_path / "ca.crt"
    ca.write_text("not used: no TLS handshake happens with the mocked transport\n")
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [
                    {"name": "c", "cluster": {"server": "https://127.0.0.1:6443", "certificate-authority": str(ca)}}
                ],
                "users": [{"name": "u", "user": {"token": "secret-token"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    server.kubeconfig = str(kubeconfig)
    return server


def cm_args(api, **kwargs):
    return {"kubeconfig": api.kubeconfig, **kwargs}


def test_configmap_set_writes_once_with_resource_version(run_module, api):
    failed, result = run_module(cluster_config.main, cm_args(api, api_server_extra_args=PEER_CA), diff=True)
    assert not failed, result
    assert result["changed"] is True
    assert result["changed_args"] == ["apiServer.peer-ca-file"]
    assert result["api_version"] == "kubeadm.k8s.io/v1beta4"
    assert result["resource_version_before"] == "100"
    assert result["resource_version"] == "101"
    assert result["previous"] == CLUSTER_TEXT
    assert "+  - name: peer-ca-file" not in result["diff"]["before"]
    assert "- name: peer-ca-file" in result["diff"]["after"]
    ((method, path, body),) = api.writes
    assert (method, path) == ("PUT", CM_URL)
    assert body["metadata"]["resourceVersion"] == "100"
    written = yaml.safe_load(api.text)
    assert written["apiServer"]["extraArgs"][-1] == {"name": "peer-ca-file", "value": "/etc/kubernetes/pki/ca.crt"}
    assert written["apiServer"]["extraArgs"][:2] == yaml.safe_load(CLUSTER_TEXT)["apiServer"]["extraArgs"]


def test_configmap_second_run_is_idempotent(run_module, api):
    run_module(cluster_config.main, cm_args(api, api_server_extra_args=PEER_CA))
    failed, result = run_module(cluster_config.main, cm_args(api, api_server_extra_args=PEER_CA))
    assert not failed
    assert result["changed"] is False
    assert result["changed_args"] == []
    assert len(api.writes) == 1


def test_configmap_check_mode_writes_nothing_but_predicts_change(run_module, api):
    failed, result = run_module(
        cluster_config.main,
        cm_args(api, api_server_extra_args=PEER_CA, feature_gates={"Other": False}),
        check_mode=True,
    )
    assert not failed
    assert result["changed"] is True
    assert result["changed_args"] == ["apiServer.peer-ca-file", "apiServer.feature-gates"]
    assert api.writes == []
    assert api.text == CLUSTER_TEXT
    gates = [a for a in result["cluster_configuration"]["apiServer"]["extraArgs"] if a["name"] == "feature-gates"]
    assert gates == [{"name": "feature-gates", "value": "SomeGate=true,Other=false"}]


def test_configmap_conflict_fails_clearly_and_loses_nothing(run_module, api):
    api.conflict_on_put = True
    failed, result = run_module(cluster_config.main, cm_args(api, api_server_extra_args=PEER_CA))
    assert failed
    assert result["conflict"] is True
    assert "changed since it was read" in result["msg"]
    assert "Run the task again" in result["msg"]
    assert api.text == CLUSTER_TEXT


def test_configmap_read_error_names_the_object(run_module, api, monkeypatch):
    monkeypatch.setattr(
        "ansible_collections.skewsafe.kubeadm.plugins.module_utils._cluster_config.store.KUBEADM_CONFIGMAP_NAME",
        "missing",
    )
    failed, result = run_module(cluster_config.main, cm_args(api, api_server_extra_args=PEER_CA))
    assert failed
    assert "cannot read configmap kube-system/kubeadm-config" in result["msg"]
    assert "not found" in result["msg"]


@pytest.mark.parametrize(
    "args, message",
    [
        ({"api_server_extra_args": {"--peer-ca-file": "x"}}, "starts with '-'"),
        ({"api_server_extra_args": {"v": 3}}, "must be a string"),
        ({"feature_gates": {"UnknownVersionInteroperabilityProxy": "yes"}}, "must be a boolean"),
        ({"api_server_extra_args": {"feature-gates": "A=true"}, "feature_gates": {"B": True}}, "not both"),
        ({"kubeadm_version": "latest", "api_server_extra_args": PEER_CA}, "not a Kubernetes version"),
        ({"api_server_default_args": {"v": None}}, "has no value"),
        ({"api_server_default_args": {"v": 2}}, "must be a string"),
        ({"api_server_default_args": {"feature-gates": "A=true"}}, "go in feature_gates"),
        ({"api_server_default_args": PEER_CA, "api_server_extra_args": PEER_CA}, "also given in api_server_extra_args"),
    ],
)
def test_bad_input_fails_before_any_request(run_module, api, args, message):
    failed, result = run_module(cluster_config.main, cm_args(api, **args))
    assert failed
    assert message in result["msg"]
    assert api.requests == []


GRACEFUL = {"shutdown-delay-duration": "5s", "shutdown-watch-termination-grace-period": "5s"}


def test_default_args_fill_only_absent_names_and_keep_the_operators_value(run_module, api):
    api.configmap["data"]["ClusterConfiguration"] = CLUSTER_TEXT.replace(
        "    value: SomeGate=true\n", "    value: SomeGate=true\n  - name: shutdown-delay-duration\n    value: 20s\n"
    )
    failed, result = run_module(
        cluster_config.main, cm_args(api, api_server_extra_args=PEER_CA, api_server_default_args=GRACEFUL)
    )
    assert not failed, result
    assert result["changed_args"] == ["apiServer.peer-ca-file", "apiServer.shutdown-watch-termination-grace-period"]
    args = {a["name"]: a["value"] for a in yaml.safe_load(api.text)["apiServer"]["extraArgs"]}
    assert args["shutdown-delay-duration"] == "20s"
    assert args["shutdown-watch-termination-grace-period"] == "5s"
    failed, again = run_module(
        cluster_config.main, cm_args(api, api_server_extra_args=PEER_CA, api_server_default_args=GRACEFUL)
    )
    assert not failed and again["changed"] is False
    assert len(api.writes) == 1


def test_default_args_alone_in_check_mode_predict_without_writing(run_module, api):
    failed, result = run_module(cluster_config.main, cm_args(api, api_server_default_args=GRACEFUL), check_mode=True)
    assert not failed, result
    assert result["changed"] is True
    assert sorted(result["changed_args"]) == sorted(f"apiServer.{n}" for n in GRACEFUL)
    assert api.writes == []


def test_validate_certs_false_is_refused(run_module, api):
    failed, result = run_module(cluster_config.main, cm_args(api, api_server_extra_args=PEER_CA, validate_certs=False))
    assert failed
    assert "never turns TLS verification off" in result["msg"]
    assert api.requests == []


def test_insecure_kubeconfig_is_refused(run_module, api, tmp_path):
    data = yaml.safe_load(Path(api.kubeconfig).read_text())
    data["clusters"][0]["cluster"] = {"server": "https://127.0.0.1:6443", "insecure-skip-tls-verify": True}
    Path(api.kubeconfig).write_text(yaml.safe_dump(data))
    failed, result = run_module(cluster_config.main, cm_args(api, api_server_extra_args=PEER_CA))
    assert failed
    assert "insecure-skip-tls-verify" in result["msg"]
    assert api.requests == []


def test_malformed_configmap_content_fails_without_write(run_module, api):
    api.configmap["data"]["ClusterConfiguration"] = "kind: ClusterConfiguration\napiServer: [\n"
    failed, result = run_module(cluster_config.main, cm_args(api, api_server_extra_args=PEER_CA))
    assert failed
    assert "malformed YAML" in result["msg"]
    assert api.writes == []


def test_env_fallbacks_like_kubernetes_core(run_module, api, monkeypatch):
    monkeypatch.setenv("K8S_AUTH_KUBECONFIG", api.kubeconfig)
    failed, result = run_module(cluster_config.main, {"api_server_extra_args": PEER_CA})
    assert not failed, result
    assert result["changed"]


def test_file_source_edits_only_cluster_document(run_module, tmp_path):
    path = tmp_path / "kubeadm.yaml"
    path.write_text(INIT_FILE)
    path.chmod(0o600)
    failed, result = run_module(
        cluster_config.main,
        {"source": "file", "path": str(path), "backup": True, "api_server_extra_args": PEER_CA},
    )
    assert not failed, result
    assert result["changed"]
    assert Path(result["backup_file"]).read_text() == INIT_FILE
    text = path.read_text()
    docs = text.split("---\n")
    assert docs[0] == INIT_FILE.split("---\n", maxsplit=1)[0]  # comment and spacing kept byte-for-byte
    assert docs[2] == INIT_FILE.split("---\n")[2]
    assert yaml.safe_load(docs[1])["apiServer"]["extraArgs"] == [
        {"name": "peer-ca-file", "value": "/etc/kubernetes/pki/ca.crt"}
    ]
    assert path.stat().st_mode & 0o777 == 0o600
    failed, again = run_module(
        cluster_config.main, {"source": "file", "path": str(path), "api_server_extra_args": PEER_CA}
    )
    assert not failed and again["changed"] is False


def test_file_source_check_mode_leaves_file_alone(run_module, tmp_path):
    path = tmp_path / "kubeadm.yaml"
    path.write_text(INIT_FILE)
    failed, result = run_module(
        cluster_config.main,
        {"source": "file", "path": str(path), "api_server_extra_args": PEER_CA},
        check_mode=True,
        diff=True,
    )
    assert not failed and result["changed"]
    assert path.read_text() == INIT_FILE
    assert "peer-ca-file" in result["diff"]["after"]


def test_file_source_v1beta3_for_new_kubeadm_is_refused(run_module, tmp_path):
    path = tmp_path / "old.yaml"
    path.write_text("apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\nkubernetesVersion: v1.36.0\n")
    failed, result = run_module(
        cluster_config.main, {"source": "file", "path": str(path), "api_server_extra_args": PEER_CA}
    )
    assert failed
    assert "kubeadm config migrate" in result["msg"]
    assert "kubeadm.k8s.io/v1beta3" in path.read_text()


def test_file_source_missing_file(run_module, tmp_path):
    failed, result = run_module(
        cluster_config.main, {"source": "file", "path": str(tmp_path / "nope.yaml"), "api_server_extra_args": PEER_CA}
    )
    assert failed and "cannot read" in result["msg"]


def test_file_without_cluster_configuration(run_module, tmp_path):
    path = tmp_path / "join.yaml"
    path.write_text("apiVersion: kubeadm.k8s.io/v1beta4\nkind: JoinConfiguration\n")
    failed, result = run_module(
        cluster_config.main, {"source": "file", "path": str(path), "api_server_extra_args": PEER_CA}
    )
    assert failed and "no ClusterConfiguration document" in result["msg"]


def test_api_key_is_not_logged(run_module, api):
    _failed, result = run_module(
        cluster_config.main,
        {
            "host": "https://127.0.0.1:6443",
            "api_key": "s3cr3t",
            "ca_cert": api.kubeconfig,
            "api_server_extra_args": PEER_CA,
        },
    )
    assert "s3cr3t" not in json.dumps(result)


def test_an_unreachable_api_server_is_a_clear_failure_not_a_traceback(run_module, api, monkeypatch):
    def refuse(*_args, **_kwargs):
        raise urllib3.exceptions.MaxRetryError(None, CM_URL, "Connection refused")

    monkeypatch.setattr(api, "request", refuse)
    failed, result = run_module(cluster_config.main, cm_args(api, api_server_extra_args=PEER_CA))
    assert failed
    assert result["msg"].startswith("cannot reach the API server at https://")
    assert "to read configmap kube-system/kubeadm-config" in result["msg"]


def test_file_source_through_a_symlink_keeps_the_link(run_module, tmp_path):
    real = tmp_path / "real" / "kubeadm.yaml"
    real.parent.mkdir()
    real.write_text(INIT_FILE)
    link = tmp_path / "kubeadm.yaml"
    link.symlink_to(real)
    failed, result = run_module(
        cluster_config.main, {"source": "file", "path": str(link), "api_server_extra_args": PEER_CA}
    )
    assert not failed and result["changed"], result
    assert link.is_symlink() and link.resolve() == real
    assert "peer-ca-file" in real.read_text()


def test_file_source_keeps_crlf_and_the_original_text(run_module, tmp_path, monkeypatch):
    from ansible.module_utils import basic

    warnings = []
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda self, msg, **kw: warnings.append(msg))
    original = INIT_FILE.replace("kind: ClusterConfiguration\n", "kind: ClusterConfiguration\n# why: audited\n", 1)
    crlf = original.replace("\n", "\r\n")
    path = tmp_path / "kubeadm.yaml"
    path.write_bytes(crlf.encode())
    failed, result = run_module(
        cluster_config.main, {"source": "file", "path": str(path), "api_server_extra_args": PEER_CA}
    )
    assert not failed and result["changed"], result
    written = path.read_bytes().decode()
    assert "\n" not in written.replace("\r\n", ""), "a bare LF crept in"
    # the other documents are byte for byte what they were
    for doc in crlf.split("---")[1:]:
        if "ClusterConfiguration" not in doc:
            assert doc in written
    assert "# why: audited" in result["previous"] and "\r\n" in result["previous"]
    assert any("comments inside the ClusterConfiguration" in w for w in warnings), warnings


# ---------------------------------------------------------------- MVP settings a kube-apiserver cannot use
# kubeadm-config as kubeadm 1.35.4 wrote it (fixtures/README.md): MVP is alpha there, off by default.
ALPHA_TEXT = (FIXTURES / "kubeadm-config-configmap-v1.35.4.yaml.txt").read_text()
GATE_ON = {"UnknownVersionInteroperabilityProxy": True}


@pytest.fixture
def alpha_api(api):
    api.configmap["data"]["ClusterConfiguration"] = ALPHA_TEXT
    return api


def test_alpha_flag_without_gate_is_refused_before_any_write(run_module, alpha_api):
    failed, result = run_module(cluster_config.main, cm_args(alpha_api, api_server_extra_args=PEER_CA))
    assert failed
    assert "would refuse to start" in result["msg"]
    assert "--peer-ca-file requires UnknownVersionInteroperabilityProxy feature to be turned on" in result["msg"]
    assert alpha_api.writes == []
    assert alpha_api.text == ALPHA_TEXT


def test_alpha_gate_without_flag_is_refused_before_any_write(run_module, alpha_api):
    failed, result = run_module(cluster_config.main, cm_args(alpha_api, feature_gates=GATE_ON))
    assert failed
    assert "never proxy" in result["msg"]
    assert alpha_api.writes == []


def test_alpha_check_mode_refuses_too(run_module, alpha_api):
    failed, result = run_module(cluster_config.main, cm_args(alpha_api, api_server_extra_args=PEER_CA), check_mode=True)
    assert failed and "would refuse to start" in result["msg"]


def test_alpha_flag_and_gate_together_are_written(run_module, alpha_api):
    # what mvp_enable does on 1.35 (feature_gates from the mvp_feature_gates filter)
    failed, result = run_module(
        cluster_config.main, cm_args(alpha_api, api_server_extra_args=PEER_CA, feature_gates=GATE_ON)
    )
    assert not failed, result
    assert result["changed_args"] == ["apiServer.peer-ca-file", "apiServer.feature-gates"]
    args = {a["name"]: a["value"] for a in yaml.safe_load(alpha_api.text)["apiServer"]["extraArgs"]}
    assert args["feature-gates"] == "APIServerIdentity=true,UnknownVersionInteroperabilityProxy=true"
    assert args["peer-ca-file"] == PEER_CA["peer-ca-file"]


def test_alpha_removing_the_flag_but_not_the_gate_is_refused(run_module, alpha_api):
    run_module(cluster_config.main, cm_args(alpha_api, api_server_extra_args=PEER_CA, feature_gates=GATE_ON))
    failed, result = run_module(cluster_config.main, cm_args(alpha_api, api_server_extra_args={"peer-ca-file": None}))
    assert failed and "never proxy" in result["msg"]
    failed, result = run_module(
        cluster_config.main,
        cm_args(
            alpha_api,
            api_server_extra_args={"peer-ca-file": None},
            feature_gates={"UnknownVersionInteroperabilityProxy": None},
        ),
    )
    assert not failed, result  # both off again: a stock 1.35 kube-apiserver
    assert len(alpha_api.writes) == 2


def test_alpha_kubeadm_version_of_the_next_minor_accepts_the_flag_alone(run_module, alpha_api):
    failed, result = run_module(
        cluster_config.main, cm_args(alpha_api, api_server_extra_args=PEER_CA, kubeadm_version="1.36.5")
    )
    assert not failed, result


def test_unrelated_edit_of_a_half_configured_alpha_config_warns(run_module, alpha_api, monkeypatch):
    from ansible.module_utils import basic

    alpha_api.configmap["data"]["ClusterConfiguration"] = ALPHA_TEXT.replace(
        "  - name: profiling\n", "  - name: peer-ca-file\n    value: /etc/kubernetes/pki/ca.crt\n  - name: profiling\n"
    )
    warnings = []
    monkeypatch.setattr(basic.AnsibleModule, "warn", lambda self, msg, **kw: warnings.append(msg))
    failed, result = run_module(
        cluster_config.main, cm_args(alpha_api, api_server_extra_args={"audit-log-maxage": "7"})
    )
    assert not failed, result
    assert any("would refuse to start" in w for w in warnings), warnings
