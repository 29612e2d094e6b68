# Shared helpers for unit tests: run an Ansible module in-process and capture its result.
from __future__ import annotations

import copy
import json

import pytest
from ansible.module_utils import basic
from ansible.module_utils.testing import patch_module_args


class ModuleExit(Exception):
    def __init__(self, result, failed):
        super().__init__(result.get("msg", ""))
        self.result = result
        self.failed = failed


def _exit_json(self, **kwargs):
    kwargs.setdefault("changed", False)
    raise ModuleExit(kwargs, failed=False)


def _fail_json(self, msg, **kwargs):
    kwargs["msg"] = msg
    kwargs["failed"] = True
    raise ModuleExit(kwargs, failed=True)


@pytest.fixture
def run_module(monkeypatch):
    """run_module(main, args, check_mode=False, diff=False) -> (failed, result)."""
    monkeypatch.setattr(basic.AnsibleModule, "exit_json", _exit_json)
    monkeypatch.setattr(basic.AnsibleModule, "fail_json", _fail_json)

    def runner(main, args, check_mode=False, diff=False):
        args = dict(args)
        args["_ansible_check_mode"] = check_mode
        args["_ansible_diff"] = diff
        with patch_module_args(args):
            with pytest.raises(ModuleExit) as excinfo:
                main()
        result = excinfo.value.result
        json.dumps(result, default=str)  # results must serialise
        return excinfo.value.failed, result

    return runner


# Static Pod manifests and mirror Pods of one control-plane node (control_plane_health tests).
NEW, OLD = "v1.37.2", "v1.36.5"


def manifest(component, tag, extra=()):
    command = [component, "--advertise-address=10.0.0.12", "--secure-port=6443", *extra]
    if component == "kube-apiserver":
        command += [
            "--etcd-servers=https://127.0.0.1:2379",
            "--etcd-cafile=/pki/etcd/ca.crt",
            "--etcd-certfile=/pki/apiserver-etcd-client.crt",
            "--etcd-keyfile=/pki/apiserver-etcd-client.key",
        ]
    return {
        "spec": {"containers": [{"name": component, "image": f"registry.k8s.io/{component}:{tag}", "command": command}]}
    }


def pod_for(component, doc, running_tag=None, ready=True, running=True):
    container = copy.deepcopy(doc["spec"]["containers"][0])
    image = container["image"] if running_tag is None else container["image"].rsplit(":", 1)[0] + ":" + running_tag
    return {
        "metadata": {"name": f"{component}-cp-2", "labels": {"component": component, "tier": "control-plane"}},
        "spec": {"containers": [container]},
        "status": {
            "conditions": [{"type": "Ready", "status": "True" if ready else "False"}],
            "containerStatuses": [
                {"image": image, "ready": ready, "state": {"running": {}} if running else {"waiting": {}}}
            ],
        },
    }


def whole_node(tag=NEW):
    manifests = {
        c: manifest(c, "3.6.8-0" if c == "etcd" else tag)
        for c in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")
    }
    pods = [pod_for(c, manifests[c]) for c in ("etcd", "kube-apiserver", "kube-controller-manager", "kube-scheduler")]
    return manifests, pods


class FakeClock:
    """``clock()`` and ``clock.sleep(s)`` for code that takes ``sleep`` and ``clock`` callables: sleeping advances it."""

    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds
