# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
"""Version, repository, endpoint, preflight and report filters for the roles (documented in the .yml files beside)."""

from __future__ import annotations

from ansible.errors import AnsibleFilterError

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _version
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _mvp_enable, _preflight, _report
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _upgrade_plan as plan

# The upstream package repository (one repository per minor below it); a mirror with the same layout may replace it.
# Pre-releases are published in a channel of their own (kubernetes/release pkg/obs: ChannelTypePrerelease, the OBS
# project isv:kubernetes:core:prerelease:v1.NN).
UPSTREAM_PACKAGE_REPO = "https://pkgs.k8s.io/core:/stable:"
UPSTREAM_PRERELEASE_PACKAGE_REPO = "https://pkgs.k8s.io/core:/prerelease:"
PACKAGE_KINDS = ("deb", "rpm")


def _wrap(func):
    def filter_func(*args, **kwargs):
        try:
            return func(*args, **kwargs)
        except (plan.PlanError, ValueError) as exc:
            raise AnsibleFilterError(str(exc)) from exc

    filter_func.__name__ = func.__name__
    filter_func.__doc__ = func.__doc__
    return filter_func


def preflight_assessment(data):
    return _preflight.assess(data)


def upgrade_report(
    nodes,
    target,
    cluster_version=None,
    etcd_backup=None,
    started=None,
    finished=None,
    hosts=None,
    host_records=None,
    check_mode=False,
    failures=None,
    reach=None,
    compared=None,
):
    not_reached = _report.without_record(hosts or [], host_records or [], target)
    return _report.build(
        nodes,
        target,
        cluster_version,
        etcd_backup,
        started,
        finished,
        not_reached,
        check_mode,
        failures=failures or [],
        hosts=hosts or [],
        unreachable=_report.unreachable_hosts(reach),
        compared=compared,
    )


def upgrade_report_markdown(report):
    return _report.markdown(report)


def apiserver_endpoint(host_vars, port=6443):
    """``{name, url}`` of a control-plane host's API server, plus what identifies it in the cluster when known.

    ``url`` is how the controller reaches it (inventory address); ``node_name`` (``skewsafe_node_name`` or the
    ``nodename`` fact), ``hostname`` (the fact: identity leases carry the OS host name) and ``advertise_address``
    (``skewsafe_apiserver_advertise_address``) let mvp_check match it to its lease whatever the inventory calls it.
    """
    name = host_vars["inventory_hostname"]
    address = host_vars.get("skewsafe_apiserver_address") or host_vars.get("ansible_host") or name
    if ":" in str(address) and not str(address).startswith("["):
        address = f"[{address}]"
    endpoint = {"name": name, "url": f"https://{address}:{host_vars.get('skewsafe_apiserver_port') or port}"}
    facts = host_vars.get("ansible_facts") or {}
    identity = {
        # as the node_name lookup: the kubelet registers the host name lower-cased
        "node_name": host_vars.get("skewsafe_node_name") or (facts.get("nodename") or "").lower() or None,
        "hostname": facts.get("nodename"),
        "advertise_address": host_vars.get("skewsafe_apiserver_advertise_address"),
    }
    endpoint.update({k: str(v) for k, v in identity.items() if v})
    return endpoint


def kube_minor(version):
    return plan.parse(version)[1]


def package_repo_url(version, kind, base_url=None):
    """``<base_url>/v1.NN/<kind>/``: the package repository of the version's minor (upstream without base_url)."""
    if kind not in PACKAGE_KINDS:
        raise ValueError(f"kind must be one of {', '.join(PACKAGE_KINDS)}, not {kind!r}")
    parsed = plan.parse(version)
    upstream = UPSTREAM_PRERELEASE_PACKAGE_REPO if _version.is_prerelease(version) else UPSTREAM_PACKAGE_REPO
    return f"{base_url or upstream}/v1.{parsed[1]}/{kind}/"


def package_version(version):
    """The upstream version of the kubeadm, kubelet and kubectl packages: '1.37.2', or '1.38.0~beta.0' for a
    pre-release (kubernetes/release pkg/obs/specs RPMVersion: '-' becomes '~', which sorts before the release in
    both dpkg and rpm). The deb adds a revision ('-1.1'), the rpm a release."""
    return plan.fmt(plan.parse(version)).replace("-", "~")


def upgrade_path_hops(path, versions):
    return plan.path_hops(path, versions)


def mvp_feature_gates(version):
    return _version.mvp_feature_gates(version)


def mvp_enable_step(observed):
    return _mvp_enable.step(observed)


def stacked_etcd_servers(pods):
    return _mvp_enable.etcd_servers(pods)


class FilterModule:
    def filters(self):
        return {
            name: _wrap(func)
            for name, func in {
                "kube_minor": kube_minor,
                "package_repo_url": package_repo_url,
                "package_version": package_version,
                "mvp_feature_gates": mvp_feature_gates,
                "mvp_enable_step": mvp_enable_step,
                "stacked_etcd_servers": stacked_etcd_servers,
                "upgrade_path_hops": upgrade_path_hops,
                "apiserver_endpoint": apiserver_endpoint,
                "preflight_assessment": preflight_assessment,
                "upgrade_report": upgrade_report,
                "upgrade_report_markdown": upgrade_report_markdown,
            }.items()
        }
