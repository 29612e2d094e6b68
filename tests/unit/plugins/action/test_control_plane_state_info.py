"""The control_plane_state_info action: API reads (client replaced) and node reads (slurp replaced) in one task."""

from __future__ import annotations

import base64
from unittest import mock

import pytest
import yaml
from conftest import NEW, OLD, manifest, pod_for

from ansible_collections.skewsafe.kubeadm.plugins.action import control_plane_state_info as action_mod
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._client import ApiException
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _control_plane_state as state


def api_error(status):
    exc = ApiException()
    exc.status, exc.reason, exc.body = status, "Forbidden" if status == 403 else "Not Found", None
    return exc


class Core:
    """CoreV1Api stand-in: answers or raises per object, records the request timeouts."""

    def __init__(self, node=None, pods=(), config_map=None, errors=None):
        self.node = {"status": {"nodeInfo": {"kubeletVersion": OLD}}} if node is None else node
        self.pods, self.config_map, self.errors, self.timeouts = list(pods), config_map, errors or {}, []

    def _answer(self, what, value, kwargs):
        self.timeouts.append(kwargs.get("_request_timeout"))
        if what in self.errors:
            raise self.errors[what]
        return value

    def read_node(self, name, **kwargs):
        return self._answer("node", self.node, kwargs)

    def list_namespaced_pod(self, namespace, label_selector, **kwargs):
        assert (namespace, label_selector) == ("kube-system", "component=kube-apiserver")
        return self._answer("pods", {"items": self.pods}, kwargs)

    def read_namespaced_config_map(self, name, namespace, **kwargs):
        assert (name, namespace) == ("kubeadm-config", "kube-system")
        if self.config_map is None and "config_map" not in self.errors:
            raise api_error(404)
        return self._answer("config_map", self.config_map, kwargs)


class Apps:
    def __init__(self, image=None, error=None):
        self.image, self.error = image, error

    def read_namespaced_daemon_set(self, name, namespace, **kwargs):
        if self.error:
            raise self.error
        if self.image is None:
            raise api_error(404)
        containers = [{"name": "sidecar", "image": "example/sidecar:1"}, {"name": "kube-proxy", "image": self.image}]
        return {"spec": {"template": {"spec": {"containers": containers}}}}


def cluster_config(version):
    return {"data": {"ClusterConfiguration": yaml.safe_dump({"kubernetesVersion": version})}}


def read(core, apps=None):
    return state.read(core, apps or Apps(), lambda obj: obj, "cp-2", 7)


def test_reads_every_object_with_the_request_timeout():
    pods = [pod_for("kube-apiserver", manifest("kube-apiserver", tag)) for tag in (NEW, OLD, OLD)]
    core = Core(pods=pods, config_map=cluster_config(NEW))
    got = read(core, Apps(image=f"registry.k8s.io/kube-proxy:{OLD}"))
    assert got == {"kubelet": OLD, "apiservers": [NEW, OLD, OLD], "cluster_version": NEW, "kube_proxy": OLD}
    assert core.timeouts == [7, 7, 7]


def test_missing_config_map_and_daemon_set_are_none():
    got = read(Core())
    assert got == {"kubelet": OLD, "apiservers": [], "cluster_version": None, "kube_proxy": None}


def test_missing_node_fails_naming_it():
    with pytest.raises(state.StateError, match="Node cp-2 does not exist"):
        read(Core(errors={"node": api_error(404)}))


@pytest.mark.parametrize("what", ["node", "pods", "config_map"])
def test_api_errors_fail_naming_the_object(what):
    with pytest.raises(state.StateError, match=r"cannot read .*Forbidden"):
        read(Core(config_map=cluster_config(NEW), errors={what: api_error(403)}))


def test_transport_error_fails():
    with pytest.raises(state.StateError, match=r"cannot read the kube-apiserver Pods: .*refused"):
        read(Core(errors={"pods": ConnectionRefusedError("connection refused")}))


def test_daemon_set_error_other_than_404_fails():
    with pytest.raises(state.StateError, match="DaemonSet kube-system/kube-proxy"):
        read(Core(), Apps(error=api_error(403)))


def test_cluster_configuration_that_is_not_yaml_fails():
    with pytest.raises(state.StateError, match="not YAML"):
        read(Core(config_map={"data": {"ClusterConfiguration": "a: [b"}}))


def slurp_node(missing=(), broken=()):
    """The node's static_pod_manifests_info; calls has the paths asked for, one list per module run."""
    calls = []

    def run(name, args, task_vars):
        assert name == "skewsafe.kubeadm.static_pod_manifests_info"
        calls.append([f"{args['manifests_dir']}/{n}.yaml" for n in args["names"]])
        manifests = {}
        for component in args["names"]:
            if component in broken:
                return {"failed": True, "msg": f"cannot read the {component} manifest: Permission denied"}
            if component in missing:
                manifests[component] = None
                continue
            text = yaml.safe_dump(manifest(component, NEW if component == "kube-apiserver" else OLD))
            manifests[component] = {"content": base64.b64encode(text.encode()).decode(), "encoding": "base64"}
        return {"changed": False, "manifests": manifests}

    return run, calls


def make_action(monkeypatch, remote, cluster=None, args=None, check_mode=False):
    task = mock.MagicMock()
    task.args = {"node_name": "cp-2", "kubeconfig": "/nonexistent", **(args or {})}
    task.check_mode = check_mode
    task.async_val = 0
    action = action_mod.ActionModule(
        task, mock.MagicMock(), mock.MagicMock(), loader=None, templar=None, shared_loader_obj=None
    )
    monkeypatch.setattr(action_mod._client, "HAS_KUBERNETES", True)
    monkeypatch.setattr(action, "remote", remote)
    answer = cluster or {"kubelet": OLD, "apiservers": [NEW, OLD, OLD], "cluster_version": NEW, "kube_proxy": OLD}
    monkeypatch.setattr(action, "_read_api", lambda params: answer)
    return action


@pytest.mark.parametrize("check_mode", [False, True])
def test_action_returns_api_and_node_reads(monkeypatch, check_mode):
    remote, calls = slurp_node()
    result = make_action(monkeypatch, remote, args={"manifests_dir": "/m"}, check_mode=check_mode).run(task_vars={})
    assert not result.get("failed") and result["changed"] is False, result
    assert result["manifests"] == {"kube-apiserver": NEW, "kube-controller-manager": OLD, "kube-scheduler": OLD}
    assert (result["kubelet"], result["apiservers"], result["kube_proxy"]) == (OLD, [NEW, OLD, OLD], OLD)
    # one module run on the node for the three manifests
    assert calls == [["/m/kube-apiserver.yaml", "/m/kube-controller-manager.yaml", "/m/kube-scheduler.yaml"]]


def test_action_missing_manifest_is_none(monkeypatch):
    remote, _calls = slurp_node(missing=("kube-scheduler",))
    result = make_action(monkeypatch, remote).run(task_vars={})
    assert result["manifests"]["kube-scheduler"] is None


def test_action_unreadable_manifest_fails(monkeypatch):
    remote, _calls = slurp_node(broken=("kube-controller-manager",))
    result = make_action(monkeypatch, remote).run(task_vars={})
    assert result["failed"], result
    assert "cannot read the kube-controller-manager manifest: Permission denied" in result["msg"], result


def test_action_api_failure_reads_nothing_on_the_node(monkeypatch):
    remote, calls = slurp_node()
    action = make_action(monkeypatch, remote)

    def fail(params):
        raise state.StateError("cannot read Node cp-2: Forbidden")

    monkeypatch.setattr(action, "_read_api", fail)
    result = action.run(task_vars={})
    assert result["failed"] and "Forbidden" in result["msg"], result
    assert calls == []


def test_action_refuses_a_request_timeout_below_one(monkeypatch):
    remote, calls = slurp_node()
    result = make_action(monkeypatch, remote, args={"request_timeout": 0}).run(task_vars={})
    assert result["failed"] and "request_timeout must be at least 1" in result["msg"], result
    assert calls == []
