# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection.
"""What the run's Kubernetes API credential would send where: the rules of the api_credential_check action.

Every API call of a run (the collection's modules and kubernetes.core's alike) takes its credential from the same
places: the ``kubeconfig`` option (the playbooks pass ``skewsafe_kubeconfig``), else ``K8S_AUTH_KUBECONFIG``; and
kubernetes.core applies ``K8S_AUTH_HOST``, ``K8S_AUTH_VERIFY_SSL`` (or ``K8S_AUTH_VALIDATE_CERTS``) and
``K8S_AUTH_CONTEXT`` over any kubeconfig (kubernetes.core ``module_utils/k8s/client.py``, ``_create_auth_spec``
and ``_create_configuration``). kubernetes.core honours an insecure kubeconfig and a false VERIFY_SSL: its calls
would send the token to a server whose certificate nobody checked. These rules find that on the controller,
before any call.
"""

from __future__ import annotations

import os
import stat
from urllib.parse import urlsplit

import yaml

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._errors import PluginError

# ansible's own true words (module_utils.parsing.convert_bool.BOOLEANS_TRUE); anything else turns verification off
# for the collection's modules or for kubernetes.core (which reads only 0, false and no as false).
TRUE_WORDS = ("1", "true", "yes", "on", "y", "t")
VERIFY_VARIABLES = ("K8S_AUTH_VERIFY_SSL", "K8S_AUTH_VALIDATE_CERTS")
TLS_ADVICE = (
    "skewsafe.kubeadm never turns TLS verification off: give the cluster CA instead (certificate-authority-data in "
    "the kubeconfig, or K8S_AUTH_SSL_CA_CERT; on kubeadm clusters /etc/kubernetes/pki/ca.crt)"
)
# Inline secrets a kubeconfig may carry: a file that holds one must not be readable by every user.
SECRET_USER_FIELDS = ("token", "client-key-data", "password")


class KubeconfigError(PluginError, ValueError):
    """A kubeconfig file that cannot be read as one."""


def verify_refusals(env):
    """Refusals for the environment variables that would turn TLS verification off."""
    refusals = []
    for name in VERIFY_VARIABLES:
        value = env.get(name)
        if value is not None and value.strip() != "" and value.strip().lower() not in TRUE_WORDS:
            refusals.append(f"{name}={value} turns TLS verification off; unset it. {TLS_ADVICE}.")
    return refusals


def https_refusal(url, where):
    """A refusal when ``url`` is not https:// (a bearer token would travel in clear text), else None."""
    parts = urlsplit(str(url))
    if parts.scheme == "https" and parts.hostname:
        return None
    return f"{where} is {url!r}, not an https:// URL: the credential would be sent unencrypted or unverified."


def resolve_paths(value, cwd):
    """The kubeconfig files of a ``kubeconfig`` value (one path, or several joined by ':'), absolute against cwd."""
    paths = []
    for part in str(value).split(os.pathsep):
        part = os.path.expanduser(part.strip())
        if part:
            paths.append(os.path.normpath(os.path.join(cwd, part)))
    return paths


def load_file(path):
    """The kubeconfig at ``path`` as a dict, and refusals and warnings about the file itself (mode)."""
    try:
        info = os.stat(path)
    except OSError as exc:
        raise KubeconfigError(f"kubeconfig {path} cannot be read: {exc.strerror}") from exc
    if not stat.S_ISREG(info.st_mode):
        raise KubeconfigError(f"kubeconfig {path} is not a file")
    try:
        with open(path, encoding="utf-8") as handle:
            document = yaml.safe_load(handle)
    except OSError as exc:
        raise KubeconfigError(f"kubeconfig {path} cannot be read: {exc.strerror}") from exc
    except yaml.YAMLError as exc:
        raise KubeconfigError(f"kubeconfig {path} is not YAML: {exc}") from exc
    if document is None:
        document = {}
    if not isinstance(document, dict):
        raise KubeconfigError(f"kubeconfig {path} is not a kubeconfig (a YAML mapping)")
    refusals, warnings = [], []
    if info.st_mode & stat.S_IWOTH:
        # anyone could point the run at another server
        refusals.append(f"kubeconfig {path} is writable by every user (mode {info.st_mode & 0o777:o}): chmod o-w it.")
    if info.st_mode & stat.S_IROTH and _holds_secret(document):
        warnings.append(
            f"kubeconfig {path} holds a secret and is readable by every user (mode {info.st_mode & 0o777:o}): "
            "chmod 600 it."
        )
    return document, refusals, warnings


def _holds_secret(document):
    for entry in document.get("users") or []:
        user = (entry or {}).get("user") or {}
        if any(user.get(field) for field in SECRET_USER_FIELDS):
            return True
    return False


def merge(documents):
    """The view the kubernetes client takes of several files: the first current-context, first entry per name."""
    merged = {"current-context": None, "clusters": {}, "contexts": {}, "users": {}}
    for document in documents:
        if not merged["current-context"] and document.get("current-context"):
            merged["current-context"] = document["current-context"]
        for kind, body in (("clusters", "cluster"), ("contexts", "context"), ("users", "user")):
            for entry in document.get(kind) or []:
                if isinstance(entry, dict) and entry.get("name") not in merged[kind]:
                    merged[kind][entry.get("name")] = entry.get(body) or {}
    return merged


def context_refusals(merged, context_name, where):
    """Refusals for the cluster the selected context points at, and the facts found (context, cluster, server)."""
    facts = {"context": context_name, "cluster": None, "server": None}
    if not context_name:
        return [f"{where} has no current-context and K8S_AUTH_CONTEXT is not set: no cluster to call."], facts
    if context_name not in merged["contexts"]:
        return [f"{where} has no context {context_name!r}."], facts
    cluster_name = merged["contexts"][context_name].get("cluster")
    facts["cluster"] = cluster_name
    if cluster_name not in merged["clusters"]:
        return [f"{where}: context {context_name!r} names cluster {cluster_name!r}, which it does not define."], facts
    cluster = merged["clusters"][cluster_name]
    facts["server"] = cluster.get("server")
    refusals = []
    if cluster.get("insecure-skip-tls-verify") in (True, "true", "True"):
        refusals.append(
            f"{where}: cluster {cluster_name!r} (context {context_name!r}) sets insecure-skip-tls-verify. {TLS_ADVICE}."
        )
    bad = https_refusal(cluster.get("server"), f"{where}: the server of cluster {cluster_name!r}")
    if bad:
        refusals.append(bad)
    return refusals, facts


def assess(kubeconfig, env, cwd, endpoints=()):
    """Facts about the credential the run would use (``warnings`` among them), and every refusal, before any API call.

    ``kubeconfig`` is the run's ``skewsafe_kubeconfig`` (None: K8S_AUTH_KUBECONFIG, a K8S_AUTH_HOST token, or a
    credential the run mints itself); ``env`` the controller's environment; ``endpoints`` the API servers the MVP
    gate calls directly with the same credential.
    """
    refusals, warnings = verify_refusals(env), []
    if env.get("K8S_AUTH_HOST"):
        # kubernetes.core puts it over any kubeconfig's server
        bad = https_refusal(env["K8S_AUTH_HOST"], "K8S_AUTH_HOST")
        if bad:
            refusals.append(bad)
    if kubeconfig:
        source, value, where = "variable", kubeconfig, "skewsafe_kubeconfig"
    elif env.get("K8S_AUTH_KUBECONFIG"):
        source, value, where = "environment", env["K8S_AUTH_KUBECONFIG"], "K8S_AUTH_KUBECONFIG"
    else:
        source = "environment" if env.get("K8S_AUTH_HOST") else "minted"
        value = where = None
    facts = {
        "source": source,
        "kubeconfig": None,
        "context": None,
        "cluster": None,
        "server": env.get("K8S_AUTH_HOST"),
        "warnings": warnings,
    }
    if value is not None:
        paths = resolve_paths(value, cwd)
        facts["kubeconfig"] = os.pathsep.join(paths)
        documents = []
        for path in paths:
            try:
                document, file_refusals, file_warnings = load_file(path)
            except KubeconfigError as exc:
                refusals.append(f"{where}: {exc}.")
                continue
            documents.append(document)
            refusals.extend(file_refusals)
            warnings.extend(file_warnings)
        if documents and len(documents) == len(paths):
            found, context = context_refusals(
                merge(documents), env.get("K8S_AUTH_CONTEXT") or merge(documents)["current-context"], where
            )
            refusals.extend(found)
            facts.update({k: v for k, v in context.items() if k != "server" or not facts["server"]})
    for endpoint in endpoints or ():
        bad = https_refusal(endpoint.get("url"), f"the API server endpoint of {endpoint.get('name')}")
        if bad:
            refusals.append(bad)
    return facts, refusals
