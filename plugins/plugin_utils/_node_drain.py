# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection.
"""Drain a Node through the Eviction API, and wait until what it evicted is available again.

Written here rather than through kubernetes.core.k8s_drain, which checks emptyDir before the owner (so it evicts a
DaemonSet's Pod that mounts one: CSI node plugins, log and CNI agents) and retries refused evictions for a fixed time.
The rules are kubectl drain's (plugin_utils/_drain.py); this module does the reads, the evictions and the waits.
"""

from __future__ import annotations

import time

from ansible_collections.skewsafe.kubeadm.plugins.module_utils import _client
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _drain as rules
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._errors import PluginError


class DrainError(PluginError):
    """The drain cannot finish; ``fields`` say what is left and why."""

    def __init__(self, msg, **fields):
        super().__init__(msg)
        self.fields = fields


class Apis:
    """The three typed APIs a drain needs and the client's serializer (one ApiClient)."""

    def __init__(self, api_client):
        self.core = _client.k8s_client.CoreV1Api(api_client)
        self.apps = _client.k8s_client.AppsV1Api(api_client)
        self.policy = _client.k8s_client.PolicyV1Api(api_client)
        self.to_dict = api_client.sanitize_for_serialization


def _read_workload(apis, workload, timeout):
    """The workload as a dict, or None when it is gone."""
    read = {
        "ReplicaSet": apis.apps.read_namespaced_replica_set,
        "StatefulSet": apis.apps.read_namespaced_stateful_set,
        "ReplicationController": apis.core.read_namespaced_replication_controller,
        "PodDisruptionBudget": apis.policy.read_namespaced_pod_disruption_budget,
    }[workload["kind"]]
    try:
        return apis.to_dict(read(workload["name"], workload["namespace"], _request_timeout=timeout))
    except _client.ApiException as exc:
        if exc.status == 404:
            return None
        raise


def _missing_daemonsets(apis, pods, timeout):
    missing = set()
    for pod in pods:
        owner = rules.controller(pod)
        if owner and owner.get("kind") == "DaemonSet":
            namespace = pod["metadata"]["namespace"]
            try:
                apis.apps.read_namespaced_daemon_set(owner["name"], namespace, _request_timeout=timeout)
            except _client.ApiException as exc:
                if exc.status != 404:
                    raise
                missing.add(f"{namespace}/{owner['name']}")
    return missing


def _workloads(apis, pods, timeout):
    """Each workload of the Pods to evict once, then each PodDisruptionBudget covering them, with whether it was
    whole (a budget: allowed a disruption) before the drain."""
    seen, out = set(), []
    for pod in pods:
        workload = rules.workload_of(pod)
        if workload is None or tuple(workload.values()) in seen:
            continue
        seen.add(tuple(workload.values()))
        obj = _read_workload(apis, workload, timeout)
        out.append(dict(workload, available_before=bool(obj) and rules.available(obj, workload["kind"])))
    if pods:
        pdbs = apis.to_dict(apis.policy.list_pod_disruption_budget_for_all_namespaces(_request_timeout=timeout))
        for pdb in rules.covering_budgets(pods, pdbs["items"]):
            meta = pdb["metadata"]
            out.append(
                {
                    "kind": "PodDisruptionBudget",
                    "namespace": meta["namespace"],
                    "name": meta["name"],
                    "available_before": rules.available(pdb, "PodDisruptionBudget"),
                }
            )
    return out


def _blockers(apis, node, timeout):
    """The PDBs that allow no disruption and cover a Pod still on the node (for the message)."""
    try:
        pods = apis.to_dict(
            apis.core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node}", _request_timeout=timeout)
        )["items"]
        pdbs = apis.to_dict(apis.policy.list_pod_disruption_budget_for_all_namespaces(_request_timeout=timeout))
    except (_client.ApiException, *_client.TRANSPORT_ERRORS):
        return []
    return rules.blockers(pods, pdbs["items"])


def _evict(apis, pod, grace_period, timeout):
    """True once the API accepted the eviction or the Pod is gone; False when a PDB refuses it now (429)."""
    meta = pod["metadata"]
    options = _client.k8s_client.V1DeleteOptions(
        grace_period_seconds=grace_period, preconditions=_client.k8s_client.V1Preconditions(uid=meta["uid"])
    )
    body = _client.k8s_client.V1Eviction(
        metadata=_client.k8s_client.V1ObjectMeta(name=meta["name"], namespace=meta["namespace"]),
        delete_options=options,
    )
    try:
        apis.core.create_namespaced_pod_eviction(meta["name"], meta["namespace"], body, _request_timeout=timeout)
    except _client.ApiException as exc:
        if exc.status == 429:
            return False
        # 404: gone; 409: the uid precondition failed, a new Pod of that name (never on a cordoned node but a
        # DaemonSet's, which is not evicted)
        if exc.status in (404, 409):
            return True
        raise DrainError(
            f"eviction of Pod {rules.pod_key(pod)} failed: {_client.api_error_message(exc)}", pod=rules.pod_key(pod)
        ) from exc
    return True


def _gone(apis, pod, timeout):
    meta = pod["metadata"]
    try:
        now = apis.to_dict(apis.core.read_namespaced_pod(meta["name"], meta["namespace"], _request_timeout=timeout))
    except _client.ApiException as exc:
        if exc.status == 404:
            return True
        raise
    return now["metadata"]["uid"] != meta["uid"]


def drain(apis, params, check_mode, clock=time.monotonic, sleep=time.sleep):
    """Evict what kubectl drain evicts, retry what a PDB refuses until the deadline, wait until every Pod is gone.

    Returns the result fields; raises DrainError (nothing evicted when a Pod is refused).
    """
    node, timeout = params["name"], params["request_timeout"]
    deadline = clock() + params["timeout"]
    pods = apis.to_dict(
        apis.core.list_pod_for_all_namespaces(field_selector=f"spec.nodeName={node}", _request_timeout=timeout)
    )["items"]
    plan = rules.classify(
        pods, params["force"], params["delete_emptydir_data"], _missing_daemonsets(apis, pods, timeout)
    )
    fields = {
        "evicted": sorted(rules.pod_key(p) for p in plan["evict"]),
        "left": plan["left"],
        "refused": plan["refused"],
        "workloads": _workloads(apis, plan["evict"], timeout),
    }
    if plan["refused"]:
        listed = "; ".join(f"{r['pod']} ({r['why']})" for r in plan["refused"])
        raise DrainError(
            f"the drain of {node} would stop at {len(plan['refused'])} Pod(s), so nothing was evicted: {listed}."
            " Give them a controller, or allow it (force: Pods without a controller; delete_emptydir_data: emptyDir"
            " data)",
            **fields,
        )
    if check_mode:
        return dict(fields, changed=bool(plan["evict"]))
    waiting = list(plan["terminating"])

    def evict_some(pending):
        refused = [pod for pod in pending if not _evict(apis, pod, params["grace_period"], timeout)]
        waiting.extend(pod for pod in pending if pod not in refused)
        return refused

    def still_refused(pending):
        names = [rules.pod_key(p) for p in pending]
        return DrainError(
            f"the drain of {node} ran out of its {params['timeout']} s: evictions of {len(pending)} Pod(s) still"
            f" refused by a PodDisruptionBudget: {', '.join(names)}",
            **dict(fields, remaining=names, blockers=_blockers(apis, node, timeout)),
        )

    def still_terminating(pending):
        names = [rules.pod_key(p) for p in pending]
        return DrainError(
            f"the drain of {node} ran out of its {params['timeout']} s: {len(pending)} evicted Pod(s) still"
            f" terminating: {', '.join(names)}",
            **dict(fields, remaining=names, blockers=[]),
        )

    wait_out(list(plan["evict"]), evict_some, params["retry_delay"], deadline, still_refused, clock, sleep)
    wait_out(
        waiting,
        lambda left: [p for p in left if not _gone(apis, p, timeout)],
        params["poll"],
        deadline,
        still_terminating,
        clock,
        sleep,
    )
    return dict(fields, changed=bool(plan["evict"]))


def wait_out(pending, advance, interval, deadline, timed_out, clock=time.monotonic, sleep=time.sleep):
    """The one wait of a drain: ``pending = advance(pending)`` every ``interval`` seconds until it is empty; raises
    ``timed_out(pending)`` when the next round would end after ``deadline`` (a ``clock()`` time)."""
    pending = advance(pending) if pending else pending
    while pending:
        if clock() + interval > deadline:
            raise timed_out(pending)
        sleep(interval)
        pending = advance(pending)


def settle(apis, params, clock=time.monotonic, sleep=time.sleep):
    """Wait until each workload that was whole before the drain is whole again (a gone one counts as settled).

    Workloads that were not whole before the drain are not waited for: the run did not break them.
    """
    timeout = params["request_timeout"]
    deadline = clock() + params["timeout"]
    workloads = params["workloads"] or []
    waiting = [w for w in workloads if w.get("available_before")]
    not_waited = [f"{w['kind']}/{w['namespace']}/{w['name']}" for w in workloads if not w.get("available_before")]
    started = clock()

    def not_settled(left):
        names = [f"{w['kind']}/{w['namespace']}/{w['name']}" for w in left]
        return DrainError(
            f"{len(left)} workload(s) the drain evicted are not whole again after {params['timeout']} s:"
            f" {', '.join(names)}; the next node is not touched until they are",
            not_settled=names,
            not_waited=not_waited,
        )

    wait_out(
        waiting,
        lambda left: [w for w in left if not _whole_or_gone(apis, w, timeout)],
        params["poll"],
        deadline,
        not_settled,
        clock,
        sleep,
    )
    return {
        "changed": False,
        "settled": [f"{w['kind']}/{w['namespace']}/{w['name']}" for w in workloads if w.get("available_before")],
        "not_waited": not_waited,
        "waited_seconds": round(clock() - started, 1),
    }


def _whole_or_gone(apis, workload, timeout):
    obj = _read_workload(apis, workload, timeout)
    return obj is None or rules.available(obj, workload["kind"])
