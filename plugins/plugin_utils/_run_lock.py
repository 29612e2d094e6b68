# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection.
"""One run per cluster: a coordination.k8s.io Lease the run holds from its first change to its end. Pure decisions.

The holder is one ansible-playbook process (``holderIdentity``: ``<user>@<host>/<pid>-<start>``); who it is for a
person (host, user, AWX job, start time, playbook) goes into an annotation, so that a second run can name it. Time is
judged on the API server's clock (the ``Date`` of the answer that carried the Lease), never the controller's: a
controller whose clock is off neither steals a live lock nor waits on a dead one.
"""

from __future__ import annotations

import datetime
import json
import subprocess
import sys
import time
from pathlib import Path

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._errors import PluginError

HOLDER_ANNOTATION = "skewsafe.kubeadm/holder"
DEFAULT_NAME = "skewsafe-kubeadm-upgrade"


class LockHeld(PluginError):
    """Another run holds the lock; the message names it."""


def parse_time(text):
    """An RFC 3339 time (a Lease's MicroTime) or an HTTP date as an aware datetime; None when absent."""
    if not text:
        return None
    if isinstance(text, datetime.datetime):
        return text if text.tzinfo else text.replace(tzinfo=datetime.timezone.utc)
    text = str(text)
    try:
        return datetime.datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        from email.utils import parsedate_to_datetime

        return parsedate_to_datetime(text)


def micro_time(moment):
    return moment.astimezone(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def holder_identity(who):
    return f"{who['user']}@{who['host']}/{who['run']}"


def describe(annotations, spec):
    """'ops on ctl-1 (AWX job 42), playbook upgrade, started 2026-12-04T10:00:00Z' from a Lease's holder record."""
    try:
        who = json.loads((annotations or {}).get(HOLDER_ANNOTATION) or "{}")
    except ValueError:
        who = {}
    if not who:
        return spec.get("holderIdentity") or "an unknown holder"
    text = f"{who.get('user', '?')} on {who.get('host', '?')}"
    if who.get("awx_job"):
        text += f" (AWX job {who['awx_job']})"
    return text + f", playbook {who.get('playbook', '?')}, started {who.get('started', '?')}"


def lease_body(who, now, duration, previous=None):
    """The Lease this run writes (a create, or an update over ``previous`` with its resourceVersion)."""
    spec = {
        "holderIdentity": holder_identity(who),
        "leaseDurationSeconds": int(duration),
        "renewTime": micro_time(now),
        "acquireTime": micro_time(now),
    }
    metadata = {"annotations": {HOLDER_ANNOTATION: json.dumps(who, sort_keys=True)}}
    if previous:
        meta = previous.get("metadata") or {}
        metadata.update(
            name=meta.get("name"), namespace=meta.get("namespace"), resourceVersion=meta.get("resourceVersion")
        )
        old = previous.get("spec") or {}
        if old.get("holderIdentity") == spec["holderIdentity"]:
            spec["acquireTime"] = old.get("acquireTime") or spec["acquireTime"]
            spec["leaseTransitions"] = old.get("leaseTransitions") or 0
        else:
            spec["leaseTransitions"] = (old.get("leaseTransitions") or 0) + 1
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": metadata, "spec": spec}


def decide(lease, who, server_now):
    """What to do about the Lease as read (None: absent), at the API server's ``server_now``.

    Returns ``(action, facts)``: ``create``, ``renew`` (ours), ``take_over`` (another holder's, expired: its run
    died), or raises LockHeld naming the live holder and when its lock expires.
    """
    if lease is None:
        return "create", {"previous": None}
    spec = lease.get("spec") or {}
    meta = lease.get("metadata") or {}
    if spec.get("holderIdentity") == holder_identity(who):
        return "renew", {"previous": None}
    renewed = parse_time(spec.get("renewTime")) or parse_time(spec.get("acquireTime"))
    duration = int(spec.get("leaseDurationSeconds") or 0)
    holder = describe(meta.get("annotations"), spec)
    if not spec.get("holderIdentity") or renewed is None:
        return "take_over", {"previous": holder, "expired_for": None}
    expires = renewed + datetime.timedelta(seconds=duration)
    if expires <= server_now:
        return "take_over", {"previous": holder, "expired_for": round((server_now - expires).total_seconds(), 1)}
    age = round((server_now - renewed).total_seconds(), 1)
    left = round((expires - server_now).total_seconds(), 1)
    raise LockHeld(
        f"another run holds this cluster's upgrade lock (Lease {meta.get('namespace')}/{meta.get('name')}): {holder}; "
        f"renewed {age} s ago by the API server's clock, it expires in {left} s unless renewed. Nothing was changed. "
        "Wait for that run to end; if it died (its renewals stop with it), run again after the lease has expired."
    )


# ---------------------------------------------------------------- against the API

CONFLICT_RETRIES = 5


class Conflict(Exception):
    """A conditional write lost a race (409)."""


class LockError(PluginError):
    """The API answered something other than what a Lease store expects."""


def server_now(headers):
    """The API server's time from an answer's Date header (HTTP dates have whole seconds)."""
    value = (headers or {}).get("Date") or (headers or {}).get("date")
    moment = parse_time(value) if value else None
    if moment is None:
        raise LockError("the API server's answer has no Date header: its clock cannot be read")
    return moment


class LeaseStore:
    """One Lease through raw JSON requests (the typed kubernetes client turns a MicroTime with no microseconds into
    a time the API server refuses, and hides the Date header).

    ``client``: module_utils._apiserver_http.ApiServerClient; ``host``: the API server URL.
    """

    def __init__(self, client, host, name, namespace):
        self.client, self.host, self.name, self.namespace = client, host, name, namespace
        self.path = f"/apis/coordination.k8s.io/v1/namespaces/{namespace}/leases"

    def _call(self, method, path, body=None, ok=(200,)):
        resp = self.client.request(method, self.host, path, body=body)
        if resp.status is None:
            raise LockError(f"{method} {path}: {resp.error}")
        if resp.status == 409:
            raise Conflict(path)
        if resp.status not in ok:
            try:
                message = resp.json().get("message")
            except ValueError:
                message = resp.text()[:200]
            raise LockError(f"{method} {path}: {resp.status} {message}")
        return resp

    def read(self):
        """(the Lease or None, the API server's time)."""
        resp = self._call("GET", f"{self.path}/{self.name}", ok=(200, 404))
        return (resp.json() if resp.status == 200 else None), server_now(resp.headers)

    def write(self, body, existing):
        body = {**body, "metadata": {**body["metadata"], "name": self.name, "namespace": self.namespace}}
        if existing:
            self._call("PUT", f"{self.path}/{self.name}", body)
        else:
            self._call("POST", self.path, body, ok=(201,))

    def delete(self, resource_version):
        preconditions = {"resourceVersion": resource_version}
        body = {"apiVersion": "v1", "kind": "DeleteOptions", "preconditions": preconditions}
        try:
            resp = self._call("DELETE", f"{self.path}/{self.name}", body, ok=(200, 202, 404))
        except Conflict:
            return False
        return resp.status != 404


def acquire(store, who, duration, write=True, wait=0.0, sleep=time.sleep, clock=time.monotonic):
    """Take or renew the lock: ``(action, facts)``. A write that loses a race (409) reads again and decides again.

    A lock another run holds is watched for up to ``wait`` seconds: if its holder renews it twice meanwhile, the
    holder is alive and LockHeld names it (once is not proof: a renewer may finish one renewal it had begun when its
    run was killed); if it expires unrenewed (its run was killed or failed and its renewer stopped with it), it is
    taken over. Without ``wait`` (or past it) LockHeld is raised.
    """
    started, renewals, conflicts = clock(), [], 0
    while True:
        lease, now = store.read()
        try:
            action, facts = decide(lease, who, now)
        except LockHeld:
            renewed = (lease.get("spec") or {}).get("renewTime")
            if not renewals or renewals[-1] != renewed:
                renewals.append(renewed)
            if len(renewals) > 2 or clock() - started + 5 > wait:
                raise
            sleep(5)
            continue
        if not write:
            return action, {**facts, "waited": round(clock() - started, 1)}
        try:
            store.write(lease_body(who, now, duration, previous=lease), existing=lease is not None)
        except Conflict:
            conflicts += 1
            if conflicts >= CONFLICT_RETRIES:
                raise LockHeld(
                    f"the Lease {store.namespace}/{store.name} changed under each of {CONFLICT_RETRIES} writes; run again"
                ) from None
            continue
        return action, {**facts, "waited": round(clock() - started, 1)}


def release(store, who):
    """Delete the Lease if this run holds it (conditional on its resourceVersion); True when deleted."""
    lease, _now = store.read()
    if lease is None or (lease.get("spec") or {}).get("holderIdentity") != holder_identity(who):
        return False
    return store.delete(lease["metadata"]["resourceVersion"])


def open_store(auth, name, namespace, timeout):
    from ansible_collections.skewsafe.kubeadm.plugins.module_utils._apiserver_http import ApiServerClient, Credentials

    creds = Credentials.from_params(auth)
    return LeaseStore(ApiServerClient(creds, timeout=timeout), creds.host, name, namespace)


# The renewer: a detached process that renews the Lease while the ansible-playbook process lives, and stops with it
# (the Lease then expires: a killed run is taken over after leaseDurationSeconds). Parameters come on stdin as JSON.
RENEWER = r"""
import json, os, sys, time
params = json.load(sys.stdin)
sys.path.insert(0, params["collections_root"])
from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _run_lock as lock
lock.renew_while_alive(params)
"""


def renew_while_alive(params):
    from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils._admin_credential import process_alive

    period = max(1.0, params["duration"] / 3.0)

    def alive():
        return process_alive(params["pid"], params["pid_start"])

    while True:
        slept = 0.0
        while slept < period:
            if not alive():
                return
            time.sleep(1.0)
            slept += 1.0
        try:
            store = open_store(params["auth"], params["name"], params["namespace"], 10)
            lease, _now = store.read()
            if lease is None or (lease.get("spec") or {}).get("holderIdentity") != holder_identity(params["who"]):
                return  # released by the run, or taken over: nothing of ours to renew
            acquire(store, params["who"], params["duration"])
        except Exception:  # a failed renewal is tried again next period; the Lease tells the rest
            continue


def start_renewer(params):
    """Start the detached renewer (see RENEWER); its pid."""
    # the directory that holds ansible_collections/ as this process imported it (not resolved: it may be a symlink)
    here = str(Path(__file__).absolute())
    params = {**params, "collections_root": here[: here.rindex("/ansible_collections/")]}
    proc = subprocess.Popen(
        [sys.executable, "-c", RENEWER],
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
    )
    proc.stdin.write(json.dumps(params).encode())
    proc.stdin.close()
    return proc.pid
