"""One run per cluster: what a run does about the upgrade Lease as it finds it (plugin_utils/_run_lock)."""

from __future__ import annotations

import datetime
import json

import pytest
from conftest import FakeClock

from ansible_collections.skewsafe.kubeadm.plugins.plugin_utils import _run_lock as lock

NOW = datetime.datetime(2026, 12, 4, 12, 0, 0, tzinfo=datetime.timezone.utc)
ME = {"run": "100-5", "pid": 100, "user": "ops", "host": "ctl-1", "awx_job": "", "playbook": "upgrade", "started": "t0"}
OTHER = {**ME, "run": "200-9", "host": "ctl-2", "awx_job": "42", "started": "2026-12-04T11:58:00Z"}


def lease(who, renewed_ago, duration=90):
    return lock.lease_body(who, NOW - datetime.timedelta(seconds=renewed_ago), duration) | {
        "metadata": {
            "name": lock.DEFAULT_NAME,
            "namespace": "kube-system",
            "resourceVersion": "7",
            "annotations": {lock.HOLDER_ANNOTATION: json.dumps(who)},
        }
    }


def test_no_lease_is_created_and_ours_is_renewed():
    assert lock.decide(None, ME, NOW) == ("create", {"previous": None})
    assert lock.decide(lease(ME, 30), ME, NOW)[0] == "renew"


def test_a_live_lock_of_another_run_stops_this_one_naming_it_by_the_servers_clock():
    with pytest.raises(lock.LockHeld) as held:
        lock.decide(lease(OTHER, 30), ME, NOW)
    message = str(held.value)
    assert "ops on ctl-2 (AWX job 42), playbook upgrade, started 2026-12-04T11:58:00Z" in message
    assert "renewed 30.0 s ago by the API server's clock, it expires in 60.0 s" in message
    assert "Nothing was changed" in message


def test_an_expired_lock_is_taken_over_and_says_whose_it_was():
    action, facts = lock.decide(lease(OTHER, 100), ME, NOW)
    assert action == "take_over" and facts["expired_for"] == 10.0
    assert facts["previous"].startswith("ops on ctl-2 (AWX job 42)")


def test_the_controllers_clock_plays_no_part():
    """A lock renewed 30 s ago by the server's clock is live whatever the controller's clock says."""
    fresh = lease(OTHER, 30)
    with pytest.raises(lock.LockHeld):
        lock.decide(fresh, ME, NOW)  # NOW is the server's Date; nothing reads datetime.now()


def test_the_body_keeps_acquire_time_on_renewal_and_counts_transitions():
    mine = lease(ME, 30)
    mine["spec"]["leaseTransitions"] = 2
    renewed = lock.lease_body(ME, NOW, 90, previous=mine)
    assert renewed["spec"]["acquireTime"] == mine["spec"]["acquireTime"]
    assert renewed["spec"]["renewTime"] == "2026-12-04T12:00:00.000000Z"
    assert renewed["spec"]["leaseTransitions"] == 2 and renewed["metadata"]["resourceVersion"] == "7"
    taken = lock.lease_body(ME, NOW, 90, previous=lease(OTHER, 100))
    assert taken["spec"]["leaseTransitions"] == 1 and taken["spec"]["holderIdentity"] == "ops@ctl-1/100-5"


def test_server_time_comes_from_the_date_header():
    assert lock.server_now({"Date": "Fri, 04 Dec 2026 12:00:00 GMT"}) == NOW
    with pytest.raises(lock.LockError, match="no Date header"):
        lock.server_now({})


def test_a_lease_without_a_holder_is_free():
    empty = lease(OTHER, 10)
    empty["spec"]["holderIdentity"] = None
    assert lock.decide(empty, ME, NOW)[0] == "take_over"


class FakeStore:
    """Answers with the Leases given, one per read (the last repeats); the server's clock advances 5 s per read."""

    namespace, name = "kube-system", lock.DEFAULT_NAME

    def __init__(self, leases):
        self.leases, self.reads, self.written = list(leases), 0, []

    def read(self):
        lease = self.leases[min(self.reads, len(self.leases) - 1)]
        self.reads += 1
        return lease, NOW + datetime.timedelta(seconds=5 * self.reads)

    def write(self, body, existing):
        self.written.append((body, existing))


def test_a_holder_that_renews_twice_while_watched_is_alive_and_stops_this_run():
    alive = [lease(OTHER, 10), lease(OTHER, 2), lease(OTHER, 1)]  # renewTime moves twice: a live renewer
    clock = FakeClock()
    with pytest.raises(lock.LockHeld):
        lock.acquire(FakeStore(alive), ME, 45, wait=60, sleep=clock.sleep, clock=clock)
    assert clock.now == 10.0  # no need to wait for the expiry


def test_one_last_renewal_after_the_holder_died_is_no_proof_it_lives():
    """The renewer of a killed run may finish the renewal it had begun: then it stops, and the lock expires."""
    last = lease(OTHER, 30, duration=45)
    once_more = lease(OTHER, 0, duration=45)
    store, clock = FakeStore([last, once_more]), FakeClock()
    action, facts = lock.acquire(store, ME, 45, wait=70, sleep=clock.sleep, clock=clock)
    assert action == "take_over" and facts["waited"] > 0


def test_a_holder_that_stopped_renewing_is_taken_over_when_it_expires():
    dead = lease(OTHER, 30, duration=45)  # the same Lease at every read: nobody renews it
    store, clock = FakeStore([dead]), FakeClock()
    action, facts = lock.acquire(store, ME, 45, wait=60, sleep=clock.sleep, clock=clock)
    assert action == "take_over" and facts["waited"] == clock.now > 0
    body, existing = store.written[0]
    assert existing and body["spec"]["holderIdentity"] == "ops@ctl-1/100-5"


def test_without_wait_a_held_lock_stops_the_run_at_once_and_check_mode_writes_nothing():
    with pytest.raises(lock.LockHeld):
        lock.acquire(FakeStore([lease(OTHER, 1)]), ME, 45, wait=0)
    store = FakeStore([None])
    assert lock.acquire(store, ME, 45, write=False)[0] == "create" and store.written == []
