"""The rules that refuse a credential which would reach an unverified server (api_credential_check)."""

from __future__ import annotations

import os

import pytest
import yaml

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _api_credential as credential


def kubeconfig(tmp_path, name="kubeconfig", mode=0o600, cluster=None, user=None, current="admin", **extra):
    document = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "prod", "cluster": cluster or {"server": "https://10.0.0.10:6443"}}],
        "users": [{"name": "admin", "user": user or {"token": "T"}}],
        "contexts": [{"name": "admin", "context": {"cluster": "prod", "user": "admin"}}],
        **extra,
    }
    if current is not None:
        document["current-context"] = current
    path = tmp_path / name
    path.write_text(yaml.safe_dump(document))
    path.chmod(mode)
    return path


def assess(tmp_path, kubeconfig_value=None, env=None, endpoints=()):
    return credential.assess(kubeconfig_value, env or {}, str(tmp_path), endpoints)


def test_a_verified_kubeconfig_passes_and_names_what_it_found(tmp_path):
    facts, refusals = assess(tmp_path, str(kubeconfig(tmp_path)))
    assert refusals == []
    assert facts == {
        "source": "variable",
        "kubeconfig": str(tmp_path / "kubeconfig"),
        "context": "admin",
        "cluster": "prod",
        "server": "https://10.0.0.10:6443",
        "warnings": [],
    }


@pytest.mark.parametrize("value", [True, "true"])
def test_insecure_skip_tls_verify_is_refused_naming_cluster_and_context(tmp_path, value):
    path = kubeconfig(tmp_path, cluster={"server": "https://10.0.0.10:6443", "insecure-skip-tls-verify": value})
    _facts, refusals = assess(tmp_path, str(path))
    assert len(refusals) == 1
    assert "skewsafe_kubeconfig: cluster 'prod' (context 'admin') sets insecure-skip-tls-verify" in refusals[0]
    assert "never turns TLS verification off" in refusals[0]


def test_only_the_selected_context_is_judged(tmp_path):
    path = kubeconfig(
        tmp_path,
        clusters=[
            {"name": "prod", "cluster": {"server": "https://10.0.0.10:6443"}},
            {"name": "dev", "cluster": {"server": "https://dev:6443", "insecure-skip-tls-verify": True}},
        ],
        contexts=[
            {"name": "admin", "context": {"cluster": "prod", "user": "admin"}},
            {"name": "dev", "context": {"cluster": "dev", "user": "admin"}},
        ],
    )
    assert assess(tmp_path, str(path))[1] == []
    # K8S_AUTH_CONTEXT selects the context for every module, kubernetes.core included
    _facts, refusals = assess(tmp_path, str(path), env={"K8S_AUTH_CONTEXT": "dev"})
    assert len(refusals) == 1 and "cluster 'dev' (context 'dev')" in refusals[0]


@pytest.mark.parametrize("word", ["false", "False", "no", "0", "off", "n", "nope"])
@pytest.mark.parametrize("name", ["K8S_AUTH_VERIFY_SSL", "K8S_AUTH_VALIDATE_CERTS"])
def test_verification_turned_off_in_the_environment_is_refused_in_any_form(tmp_path, name, word):
    # with a good kubeconfig too: kubernetes.core puts the variable over it
    _facts, refusals = assess(tmp_path, str(kubeconfig(tmp_path)), env={name: word})
    assert refusals == [f"{name}={word} turns TLS verification off; unset it. {credential.TLS_ADVICE}."]


@pytest.mark.parametrize("word", ["true", "YES", "1", "on", ""])
def test_verification_left_on_in_the_environment_passes(tmp_path, word):
    assert assess(tmp_path, str(kubeconfig(tmp_path)), env={"K8S_AUTH_VERIFY_SSL": word})[1] == []


def test_a_token_from_the_environment_must_go_to_an_https_server(tmp_path):
    facts, refusals = assess(tmp_path, env={"K8S_AUTH_HOST": "http://10.0.0.10:6443", "K8S_AUTH_API_KEY": "T"})
    assert facts["source"] == "environment" and facts["server"] == "http://10.0.0.10:6443"
    assert refusals == [
        "K8S_AUTH_HOST is 'http://10.0.0.10:6443', not an https:// URL: the credential would be sent unencrypted "
        "or unverified."
    ]
    assert assess(tmp_path, env={"K8S_AUTH_HOST": "10.0.0.10:6443"})[1]  # no scheme: urllib3 speaks http
    assert assess(tmp_path, env={"K8S_AUTH_HOST": "https://10.0.0.10:6443"})[1] == []


def test_k8s_auth_host_wins_over_the_kubeconfig_server(tmp_path):
    facts, _refusals = assess(tmp_path, str(kubeconfig(tmp_path)), env={"K8S_AUTH_HOST": "https://lb:6443"})
    assert facts["server"] == "https://lb:6443" and facts["cluster"] == "prod"


def test_an_http_kubeconfig_server_is_refused(tmp_path):
    path = kubeconfig(tmp_path, cluster={"server": "http://10.0.0.10:8080"})
    assert "not an https:// URL" in assess(tmp_path, str(path))[1][0]


def test_the_environment_kubeconfig_is_read_when_no_variable_is_given(tmp_path):
    insecure = kubeconfig(tmp_path, cluster={"server": "https://x:6443", "insecure-skip-tls-verify": True})
    facts, refusals = assess(tmp_path, env={"K8S_AUTH_KUBECONFIG": str(insecure)})
    assert facts["source"] == "environment" and "K8S_AUTH_KUBECONFIG: cluster 'prod'" in refusals[0]
    # the variable wins: the environment's file is not what the run uses
    good = kubeconfig(tmp_path, name="good")
    assert assess(tmp_path, str(good), env={"K8S_AUTH_KUBECONFIG": str(insecure)})[1] == []


def test_nothing_given_means_a_minted_credential_and_only_the_environment_is_judged(tmp_path):
    assert assess(tmp_path) == (
        {"source": "minted", "kubeconfig": None, "context": None, "cluster": None, "server": None, "warnings": []},
        [],
    )


def test_a_relative_kubeconfig_is_read_from_the_working_directory(tmp_path):
    kubeconfig(tmp_path, name="rel.kubeconfig")
    facts, refusals = assess(tmp_path, "rel.kubeconfig")
    assert refusals == [] and facts["kubeconfig"] == str(tmp_path / "rel.kubeconfig")


def test_several_files_merge_as_the_kubernetes_client_merges_them(tmp_path):
    first = kubeconfig(tmp_path, name="a", current="admin")
    # the second file's insecure 'prod' is shadowed by the first's
    second = kubeconfig(
        tmp_path, name="b", current="other", cluster={"server": "http://x", "insecure-skip-tls-verify": True}
    )
    facts, refusals = assess(tmp_path, f"{first}{os.pathsep}{second}")
    assert refusals == [] and facts["context"] == "admin"
    facts, refusals = assess(tmp_path, f"{second}{os.pathsep}{first}")
    assert facts["context"] == "other" and "has no context 'other'" in refusals[0]


@pytest.mark.parametrize(
    ("setup", "message"),
    [
        (lambda p: None, "cannot be read: No such file or directory"),
        (lambda p: p.mkdir(), "is not a file"),
        (lambda p: p.write_text("key: [unclosed"), "is not YAML"),
        (lambda p: p.write_text("- a list"), "is not a kubeconfig"),
    ],
    ids=["missing", "directory", "not-yaml", "not-a-mapping"],
)
def test_a_kubeconfig_that_cannot_be_read_is_refused_by_name(tmp_path, setup, message):
    path = tmp_path / "kc"
    setup(path)
    refusals = assess(tmp_path, str(path))[1]
    assert (
        len(refusals) == 1
        and refusals[0].startswith(f"skewsafe_kubeconfig: kubeconfig {path} ")
        and message in refusals[0]
    )


def test_a_kubeconfig_without_current_context_is_refused(tmp_path):
    assert "has no current-context" in assess(tmp_path, str(kubeconfig(tmp_path, current=None)))[1][0]


def test_a_context_naming_an_undefined_cluster_is_refused(tmp_path):
    path = kubeconfig(tmp_path, contexts=[{"name": "admin", "context": {"cluster": "gone", "user": "admin"}}])
    assert "names cluster 'gone', which it does not define" in assess(tmp_path, str(path))[1][0]


def test_a_world_writable_kubeconfig_is_refused(tmp_path):
    refusals = assess(tmp_path, str(kubeconfig(tmp_path, mode=0o602)))[1]
    assert refusals == [f"kubeconfig {tmp_path / 'kubeconfig'} is writable by every user (mode 602): chmod o-w it."]


def test_a_world_readable_kubeconfig_with_a_secret_is_warned_about_not_refused(tmp_path):
    facts, refusals = assess(tmp_path, str(kubeconfig(tmp_path, mode=0o644)))
    assert refusals == [] and "holds a secret and is readable by every user" in facts["warnings"][0]
    # certificate and key in files of their own: the kubeconfig itself holds nothing secret
    files = kubeconfig(tmp_path, name="files", mode=0o644, user={"client-certificate": "/c", "client-key": "/k"})
    assert assess(tmp_path, str(files)) == ({**assess(tmp_path, str(files))[0], "warnings": []}, [])


def test_every_endpoint_the_gate_calls_must_be_https(tmp_path):
    endpoints = [{"name": "cp1", "url": "https://10.0.0.11:6443"}, {"name": "cp2", "url": "http://10.0.0.12:6443"}]
    refusals = assess(tmp_path, str(kubeconfig(tmp_path)), endpoints=endpoints)[1]
    assert refusals == [
        "the API server endpoint of cp2 is 'http://10.0.0.12:6443', not an https:// URL: the credential would be sent "
        "unencrypted or unverified."
    ]


def test_every_refusal_is_reported_at_once(tmp_path):
    path = kubeconfig(tmp_path, mode=0o666, cluster={"server": "http://x", "insecure-skip-tls-verify": True})
    refusals = assess(tmp_path, str(path), env={"K8S_AUTH_VERIFY_SSL": "false", "K8S_AUTH_HOST": "http://y"})[1]
    assert len(refusals) == 5, refusals
