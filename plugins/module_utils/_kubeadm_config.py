# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""The kubeadm configuration model: multi-document files and ClusterConfiguration edits.

Only the ClusterConfiguration document is ever re-serialised; every other
document of a file keeps its exact bytes.
"""

from __future__ import annotations

import re

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _version
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._errors import SkewsafeError
from ansible_collections.skewsafe.kubeadm.plugins.module_utils._extra_args import (
    FEATURE_GATES_ARG,
    ExtraArgs,
    ExtraArgsError,
    apply_to_extra_args,
    parse_feature_gates,
    validate_arg_updates,
    validate_gate_updates,
)

try:
    import yaml

    HAS_YAML = True
except ImportError:  # pragma: no cover - reported by the module
    HAS_YAML = False

KUBEADM_GROUP = "kubeadm.k8s.io"
V1BETA3 = "kubeadm.k8s.io/v1beta3"
V1BETA4 = "kubeadm.k8s.io/v1beta4"
SUPPORTED_API_VERSIONS = (V1BETA3, V1BETA4)
# kubeadm 1.36 removed v1beta3 (kubernetes/kubernetes#136016).
V1BETA3_LAST_MINOR = 35

# kube-apiserver refuses to start when one of these is set while the MVP gate is off
# (pkg/controlplane/apiserver/options/validation.go, validateUnknownVersionInteroperabilityProxyFlags).
# Measured on 1.35.4 (tests/integration/test_mvp_check.py::test_alpha_flag_without_gate), its log:
MVP_PEER_FLAGS = ("peer-ca-file", "peer-advertise-ip", "peer-advertise-port")
MVP_FLAG_WITHOUT_GATE_ERROR = "--peer-ca-file requires UnknownVersionInteroperabilityProxy feature to be turned on"

# Ansible-facing component names -> ClusterConfiguration keys.
COMPONENTS = {
    "api_server": "apiServer",
    "controller_manager": "controllerManager",
    "scheduler": "scheduler",
}

_DOC_START_RE = re.compile(r"(?m)^(?=---(?:[ \t].*)?\r?$)")


class KubeadmConfigError(SkewsafeError, ValueError):
    """The configuration cannot be read or the requested change is not allowed."""


if HAS_YAML:

    class _KubeadmDumper(yaml.SafeDumper):
        """Quote like kubeadm's Go YAML encoder: double quotes where a scalar needs quoting."""

        def choose_scalar_style(self):
            style = super().choose_scalar_style()
            return '"' if style == "'" else style


def dump_yaml(data):
    """YAML in kubeadm's layout: block style, 2-space indent, list items not indented."""
    return yaml.dump(
        data, Dumper=_KubeadmDumper, default_flow_style=False, sort_keys=False, width=10**6, allow_unicode=True
    )


class _Document:
    def __init__(self, text):
        self.text = text
        try:
            self.data = yaml.safe_load(text)
        except yaml.YAMLError as exc:
            raise KubeadmConfigError(f"malformed YAML: {exc}") from exc

    @property
    def kind(self):
        return self.data.get("kind") if isinstance(self.data, dict) else None


class KubeadmConfig:
    """A kubeadm config text with exactly one ClusterConfiguration document."""

    def __init__(self, text):
        if not HAS_YAML:  # pragma: no cover
            raise KubeadmConfigError("PyYAML is required to read kubeadm configuration")
        if not isinstance(text, str) or not text.strip():
            raise KubeadmConfigError("the kubeadm configuration is empty")
        chunks = [c for c in _DOC_START_RE.split(text) if c != ""]
        self.documents = [_Document(chunk) for chunk in chunks]
        found = [i for i, doc in enumerate(self.documents) if doc.kind == "ClusterConfiguration"]
        if not found:
            kinds = [doc.kind for doc in self.documents if doc.kind]
            raise KubeadmConfigError(
                f"no ClusterConfiguration document found (documents of kind: {', '.join(kinds) or 'none'})"
            )
        if len(found) > 1:
            raise KubeadmConfigError("more than one ClusterConfiguration document found")
        self.index = found[0]
        self.cluster = self.documents[self.index].data
        api_version = self.cluster.get("apiVersion")
        if api_version not in SUPPORTED_API_VERSIONS:
            raise KubeadmConfigError(
                f"unknown ClusterConfiguration apiVersion {api_version!r}; supported: {', '.join(SUPPORTED_API_VERSIONS)}"
            )
        self.api_version = api_version
        self.original_cluster_text = self.cluster_text()
        # what was read, byte for byte (the backup an operator can restore), and its line endings
        self.original_document_text = self.documents[self.index].text
        self.newline = "\r\n" if "\r\n" in text else "\n"

    @property
    def list_form(self):
        return self.api_version == V1BETA4

    def cluster_text(self):
        """The ClusterConfiguration document alone, normalised."""
        return dump_yaml(self.cluster)

    def component_args(self, component_key):
        section = self.cluster.get(component_key) or {}
        return ExtraArgs(section.get("extraArgs"), self.list_form)

    def absent_args(self, component_key, defaults):
        """The part of ``defaults`` whose names have no entry in the component's extraArgs (an operator's value
        stays, whatever it is)."""
        present = {name for name, _value in self.component_args(component_key).entries}
        return {name: value for name, value in defaults.items() if name not in present}

    def apply(self, updates):
        """Apply ``{component_key: (arg_updates, gate_updates)}``; return changed 'component.arg' names."""
        changed = []
        for component_key, (arg_updates, gate_updates) in updates.items():
            if not arg_updates and not gate_updates:
                continue
            try:
                extra_args = self.component_args(component_key)
                names = apply_to_extra_args(extra_args, arg_updates, gate_updates)
            except ExtraArgsError as exc:
                raise KubeadmConfigError(f"{component_key}: {exc}") from exc
            if not names:
                continue
            section = self.cluster.get(component_key)
            if not isinstance(section, dict):
                section = {}
                self.cluster[component_key] = section
            dumped = extra_args.dump()
            if dumped:
                section["extraArgs"] = dumped
            else:
                section.pop("extraArgs", None)
            changed.extend(f"{component_key}.{name}" for name in names)
        return changed

    def mvp_problem(self, version=None):
        """Why the apiServer MVP settings cannot work on kube-apiserver ``version`` (default: the configuration's
        kubernetesVersion); None when they can. Both halves are needed where MVP is off by default (1.35):

        * a peer flag with the gate off (explicitly, or by default): kube-apiserver refuses to start;
        * the gate on without --peer-ca-file: it starts, but never proxies (the silent gap MVP has).
        """
        version = version or self.cluster.get("kubernetesVersion")
        args = self.component_args("apiServer")
        gates = {}
        try:
            for value in args.values(FEATURE_GATES_ARG):
                gates.update(parse_feature_gates(value))
        except ExtraArgsError as exc:
            return f"apiServer.extraArgs: {exc}"
        default_on = _version.mvp_default_on(version)
        gate = gates.get(_version.MVP_GATE)
        gate_on = default_on if gate is None else gate
        peer_flags = [name for name in MVP_PEER_FLAGS if args.values(name)]
        where = f"kube-apiserver {version}" if default_on is not None else "kube-apiserver"
        if peer_flags and gate_on is False:
            how = "is set to false" if gate is False else f"is off by default on {version} (alpha)"
            return (
                f"apiServer.extraArgs sets {', '.join(peer_flags)} but the {_version.MVP_GATE} feature gate {how}: "
                f"{where} would refuse to start ('{MVP_FLAG_WITHOUT_GATE_ERROR}'). Set feature_gates "
                f"{_version.MVP_GATE}=true together with peer-ca-file, or remove both"
            )
        if gate is True and default_on is False and not args.values("peer-ca-file"):
            return (
                f"apiServer.extraArgs turns the {_version.MVP_GATE} feature gate on without peer-ca-file: {where} "
                "would start but never proxy (the proxy is only built with --peer-ca-file), so resources only newer "
                "servers serve would still be answered 404. Set peer-ca-file (on kubeadm: /etc/kubernetes/pki/ca.crt) "
                "together with the gate, or remove both"
            )
        return None

    def check_writable(self, target_minor):
        """Refuse to write v1beta3 for a kubeadm that no longer reads it."""
        if self.api_version != V1BETA3:
            return
        if target_minor is None:
            target_minor = _version.minor(self.cluster.get("kubernetesVersion"))
        if target_minor is None:
            raise KubeadmConfigError(
                "the ClusterConfiguration is kubeadm.k8s.io/v1beta3 and its target kubeadm version is unknown; "
                "set kubeadm_version, or run 'kubeadm config migrate' to move it to v1beta4"
            )
        if target_minor > V1BETA3_LAST_MINOR:
            raise KubeadmConfigError(
                f"refusing to write kubeadm.k8s.io/v1beta3 for kubeadm 1.{target_minor}: kubeadm 1.36 and later "
                "only read v1beta4. Run 'kubeadm config migrate --old-config <file> --new-config <file>' with "
                "kubeadm 1.35 or older first"
            )

    def _prefix_lines(self):
        """The separator and comment lines that precede the ClusterConfiguration mapping (kept on render)."""
        lines = []
        for line in self.documents[self.index].text.splitlines(keepends=True):
            if line.startswith("---") or line.lstrip().startswith("#") or not line.strip():
                lines.append(line)
            else:
                break
        return lines

    def drops_comments(self):
        """Whether re-serialising the ClusterConfiguration loses comments inside its mapping (PyYAML keeps none)."""
        body = self.documents[self.index].text.splitlines()[len(self._prefix_lines()) :]
        return any(line.lstrip().startswith("#") or " #" in line for line in body)

    def render(self):
        """The whole text with the ClusterConfiguration re-serialised and everything else untouched."""
        prefix = "".join(self._prefix_lines())
        if prefix and not prefix.endswith("\n"):
            prefix += self.newline
        body = dump_yaml(self.cluster)
        if self.newline != "\n":
            body = body.replace("\n", self.newline)
        parts = [d.text for d in self.documents]
        parts[self.index] = prefix + body
        return "".join(parts)


def build_default_args(params, option_name="api_server_default_args"):
    """Validate ``{name: value}`` to set only where apiServer.extraArgs has no entry of that name."""
    try:
        defaults = validate_arg_updates(params.get(option_name), option_name)
    except ExtraArgsError as exc:
        raise KubeadmConfigError(str(exc)) from exc
    overlap = sorted(set(defaults) & set(params.get("api_server_extra_args") or {}))
    if overlap:
        raise KubeadmConfigError(f"{option_name}: {', '.join(overlap)} also given in api_server_extra_args")
    for name, value in defaults.items():
        if value is None:
            raise KubeadmConfigError(
                f"{option_name}: {name!r} has no value (removing belongs in api_server_extra_args)"
            )
        if name == FEATURE_GATES_ARG:
            raise KubeadmConfigError(f"{option_name}: feature gates go in feature_gates")
    return defaults


def build_updates(params):
    """Map module params to ``{component_key: (arg_updates, gate_updates)}`` after validation."""
    updates = {}
    try:
        for prefix, component_key in COMPONENTS.items():
            args_option = f"{prefix}_extra_args"
            gates_option = "feature_gates" if prefix == "api_server" else f"{prefix}_feature_gates"
            arg_updates = validate_arg_updates(params.get(args_option), args_option)
            gate_updates = validate_gate_updates(params.get(gates_option), gates_option)
            if FEATURE_GATES_ARG in arg_updates and gate_updates:
                raise ExtraArgsError(
                    f"give feature gates either in {gates_option} or as 'feature-gates' in {args_option}, not both"
                )
            updates[component_key] = (arg_updates, gate_updates)
    except ExtraArgsError as exc:
        raise KubeadmConfigError(str(exc)) from exc
    return updates
