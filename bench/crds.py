"""Many small CustomResourceDefinitions, to see what a large discovery document costs mvp_check."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._discovery import ACCEPT_V2_NOPEER, parse_aggregated

SUFFIX = ".bench.skewsafe.test"
CRD_PATH = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"


def definition(i: int, groups: int) -> dict:
    """CRD number ``i``; spread over ``groups`` API groups as operators' CRDs are."""
    group, plural = f"g{i % groups}{SUFFIX}", f"widgets{i}"
    schema = {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"{plural}.{group}"},
        "spec": {
            "group": group,
            "scope": "Namespaced",
            "names": {"plural": plural, "singular": f"widget{i}", "kind": f"Widget{i}", "listKind": f"Widget{i}List"},
            "versions": [{"name": "v1", "served": True, "storage": True, "schema": schema}],
        },
    }


def create(harness, count: int, groups: int = 50, workers: int = 8) -> float:
    """POST ``count`` CRDs through the first server; an existing one (409) is fine. Returns seconds."""
    started = time.monotonic()
    name = harness.first.name

    def post(i: int) -> None:
        resp = harness.request(name, CRD_PATH, method="POST", body=definition(i, groups), timeout=60)
        if resp.status not in (201, 409):
            raise RuntimeError(f"creating CRD {i}: {resp.status} {resp.body[:200]!r}")

    with ThreadPoolExecutor(workers) as pool:
        list(pool.map(post, range(count)))
    return time.monotonic() - started


def served_count(harness, name: str) -> int:
    resp = harness.request(name, "/apis", {"Accept": ACCEPT_V2_NOPEER}, timeout=30)
    return sum(1 for g, _v, _r in parse_aggregated(resp.json()) if g.endswith(SUFFIX)) if resp.status == 200 else 0


def wait_served(harness, count: int, timeout: float = 600) -> float:
    """Until every server serves all ``count`` CRDs itself. Returns seconds."""
    started = time.monotonic()
    pending = set(harness.servers)
    while pending:
        pending = {name for name in pending if served_count(harness, name) < count}
        if pending and time.monotonic() - started > timeout:
            raise RuntimeError(f"{sorted(pending)} did not serve {count} CRDs within {timeout:.0f} s")
        if pending:
            time.sleep(2)
    return time.monotonic() - started
