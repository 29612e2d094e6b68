from __future__ import annotations

import pytest
from ansible.errors import AnsibleFilterError

from ansible_collections.skewsafe.kubeadm.plugins.test import mvp as mvp_tests
from ansible_collections.skewsafe.kubeadm.plugins.test.mvp import mvp_configured


def test_registered_names():
    assert set(mvp_tests.TestModule().tests()) == {"mvp_configured"}


@pytest.mark.parametrize(
    "flags, version, expected",
    [
        ({"peer-ca-file": "/etc/kubernetes/pki/ca.crt"}, "v1.36.5", True),
        ({"peer-ca-file": "/etc/kubernetes/pki/ca.crt"}, "v1.35.4", False),
        ({"peer-ca-file": "/p", "feature-gates": "A=true, UnknownVersionInteroperabilityProxy=true"}, "v1.35.4", True),
        ({"peer-ca-file": "/p", "feature-gates": "UnknownVersionInteroperabilityProxy=false"}, "v1.37.2", False),
        ({}, "v1.37.2", False),
        ({"peer-ca-file": "/p"}, None, False),
    ],
)
def test_mvp_configured(flags, version, expected):
    assert mvp_configured(flags, version) is expected


def test_mvp_configured_accepts_module_result_and_command():
    assert mvp_configured({"manifest": {"flags": {"peer-ca-file": "/p"}}}, "v1.36.0")
    assert mvp_configured(["kube-apiserver", "--peer-ca-file=/p"], "1.37.0")
    with pytest.raises(AnsibleFilterError):
        mvp_configured("peer-ca-file", "1.37.0")


def test_kube_prerelease():
    from ansible_collections.skewsafe.kubeadm.plugins.test import version as version_tests

    test = version_tests.TestModule().tests()["kube_prerelease"]
    assert [test(v) for v in ("1.38.0-alpha.1", "v1.38.0-beta.0", "1.38.0-rc.2")] == [True, True, True]
    assert [test(v) for v in ("1.37.2", "v1.38.0", "1.36.5+k3s1")] == [False, False, False]
    with pytest.raises(AnsibleFilterError, match="not a Kubernetes version"):
        test("1.38")
