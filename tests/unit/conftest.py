# Shared helpers for unit tests: run an Ansible module in-process and capture its result.
from __future__ import annotations

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
