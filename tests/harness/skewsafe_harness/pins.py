"""Version pins (hack/versions.env) and where the built upstream binaries live."""

from __future__ import annotations

import os
from pathlib import Path

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _version

REPO = Path(__file__).resolve().parents[3]
VERSIONS_ENV = REPO / "hack" / "versions.env"


class HarnessError(RuntimeError):
    """The harness cannot run; the message says what is missing or went wrong."""


def cache_dir() -> Path:
    return Path(os.environ.get("SKEWSAFE_CACHE") or Path.home() / ".cache" / "skewsafe")


def pins() -> dict[str, str]:
    values = {}
    for line in VERSIONS_ENV.read_text().splitlines():
        line = line.strip()
        if line and not line.startswith("#") and "=" in line:
            key, _sep, value = line.partition("=")
            values[key.strip()] = value.strip().strip('"')
    return values


def old_version() -> str:
    return pins()["K8S_OLD_VERSION"]


def new_version() -> str:
    return pins()["K8S_NEW_VERSION"]


def harness_versions() -> list[str]:
    """K8S_HARNESS_VERSIONS: every version the harness runs, oldest first, one per minor, minors adjacent."""
    try:
        versions = pins()["K8S_HARNESS_VERSIONS"].split()
    except KeyError:
        raise HarnessError(f"no K8S_HARNESS_VERSIONS in {VERSIONS_ENV}") from None
    minors = [minor(v) for v in versions]
    if len(versions) < 2 or minors != list(range(minors[0], minors[0] + len(minors))):
        raise HarnessError(
            f"K8S_HARNESS_VERSIONS in {VERSIONS_ENV} must list two or more versions of adjacent minors, "
            f"oldest first: {versions}"
        )
    pair = [old_version(), new_version()]
    if not any(versions[i : i + 2] == pair for i in range(len(versions) - 1)):
        raise HarnessError(f"K8S_OLD_VERSION and K8S_NEW_VERSION {pair} must be adjacent in K8S_HARNESS_VERSIONS")
    return versions


def harness_pairs() -> list[tuple[str, str]]:
    """(old, new) for each adjacent pair of K8S_HARNESS_VERSIONS: the integration tier runs each."""
    versions = harness_versions()
    return list(zip(versions, versions[1:]))


def harness_trio() -> tuple[str, str, str]:
    """Three versions at once: K8S_PATCH_FROM_VERSION, K8S_OLD_VERSION and K8S_NEW_VERSION (an older patch of the old
    minor, the old version, the new one). The tier harness-extra runs it (make test-lab, not make test: the older patch
    needs its own build, hack/build-upstream.sh K8S_PATCH_FROM_VERSION)."""
    values = pins()
    try:
        patch, old, new = values["K8S_PATCH_FROM_VERSION"], values["K8S_OLD_VERSION"], values["K8S_NEW_VERSION"]
    except KeyError as exc:
        raise HarnessError(f"no {exc.args[0]} in {VERSIONS_ENV}") from None
    triples = [_version.triple(v) for v in (patch, old, new)]
    if (
        None in triples
        or triples[0][:2] != triples[1][:2]
        or not triples[0] < triples[1]
        or minor(new) != minor(old) + 1
    ):
        raise HarnessError(
            f"the harness trio needs K8S_PATCH_FROM_VERSION an older patch of K8S_OLD_VERSION's minor and "
            f"K8S_NEW_VERSION the next minor, in {VERSIONS_ENV}: {patch}, {old}, {new}"
        )
    return patch, old, new


def apiserver_args(version: str) -> dict[str, str]:
    """kube-apiserver extra args the harness gives every server of this version's minor
    (K8S_HARNESS_APISERVER_ARGS_1_<minor>: space-separated name=value); empty when none are pinned."""
    text = pins().get(f"K8S_HARNESS_APISERVER_ARGS_1_{minor(version)}", "")
    args = {}
    for item in text.split():
        name, sep, value = item.partition("=")
        if not sep or not name:
            raise HarnessError(f"K8S_HARNESS_APISERVER_ARGS_1_{minor(version)}: {item!r} is not name=value")
        args[name] = value
    return args


def minor(version: str) -> int:
    value = _version.minor(version)
    if value is None:
        raise HarnessError(f"{version!r} is not a Kubernetes 1.x version")
    return value


def etcd_version(k8s_version: str) -> str:
    key = f"ETCD_VERSION_1_{minor(k8s_version)}"
    try:
        return pins()[key]
    except KeyError:
        raise HarnessError(f"no {key} in {VERSIONS_ENV}") from None


def k8s_bin(version: str, name: str) -> Path:
    path = cache_dir() / "k8s" / f"v{version.lstrip('v')}" / "bin" / name
    if not os.access(path, os.X_OK):
        raise HarnessError(f"missing upstream binary {path}: run 'make k8s-bins' (hack/build-upstream.sh {version})")
    return path


def etcd_bin(k8s_version: str, name: str = "etcd") -> Path:
    path = cache_dir() / "etcd" / f"v{etcd_version(k8s_version)}" / "bin" / name
    if not os.access(path, os.X_OK):
        raise HarnessError(
            f"missing upstream binary {path}: run 'make k8s-bins' (hack/build-upstream.sh {k8s_version})"
        )
    return path
