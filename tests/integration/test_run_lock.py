"""One run per cluster (skewsafe.kubeadm.run_lock) against a real kube-apiserver: the Lease API's own semantics.

Each ansible-playbook process is one run. A second run stops while the first holds the lock and names it; the
first run's detached renewer keeps the lock alive past its lease duration while its ansible-playbook lives and
stops with it; then the lock expires and the next run takes it over, saying whose it was. Times are the API
server's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
import yaml
from conftest import LAB_PAIR, only_pairs

DURATION = 15
# The lock the second run must find held: long enough that the second module run, however loaded the machine, comes
# before it expires (CI, 2026-12-07 at load 70: two module runs took longer than 15 s, and the second took over).
HELD_DURATION = 60


@pytest.fixture(scope="module")
def server(harness_factory, pair):
    return harness_factory([("cp-1", pair.new)])


def lock(ansible_module, harness, **args):
    args = {"kubeconfig": str(harness.kubeconfig), "duration": DURATION, "renew": False, "wait": 0, **args}
    return ansible_module("skewsafe.kubeadm.run_lock", {k: v for k, v in args.items() if v is not None})


def read_lease(harness):
    resp = harness.request(
        "cp-1", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/skewsafe-kubeadm-upgrade"
    )
    return resp.json() if resp.status == 200 else None


def delete_lease(harness):
    harness.request(
        "cp-1", "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/skewsafe-kubeadm-upgrade", method="DELETE"
    )


def holding_playbook(harness, tmp_path, seconds):
    """A run that takes the lock (renewed by its detached renewer) and then works for ``seconds``."""
    play = tmp_path / "hold.yml"
    play.write_text(
        yaml.safe_dump(
            [
                {
                    "hosts": "localhost",
                    "connection": "local",
                    "gather_facts": False,
                    "tasks": [
                        {
                            "skewsafe.kubeadm.run_lock": {
                                "kubeconfig": str(harness.kubeconfig),
                                "duration": DURATION,
                                "playbook": "upgrade",
                            },
                            "register": "taken",
                        },
                        {
                            "ansible.builtin.copy": {
                                "content": "{{ taken | to_json }}",
                                "dest": str(tmp_path / "taken.json"),
                                "mode": "0600",
                            }
                        },
                        {"ansible.builtin.pause": {"seconds": seconds}},
                    ],
                }
            ]
        )
    )
    cmd = ["ansible-playbook", "-i", "localhost,", str(play), "-e", f"ansible_python_interpreter={sys.executable}"]
    return subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=dict(os.environ))


@only_pairs([LAB_PAIR], "the lab's versions (the Lease API does not depend on them)")
def test_a_second_run_stops_and_names_the_first_then_takes_over_once_it_expired(server, ansible_module, pair):
    delete_lease(server)
    first = lock(ansible_module, server, playbook="mvp_enable", duration=HELD_DURATION)
    assert not first.get("failed") and first["action"] == "create", first
    second = lock(ansible_module, server, wait=0)
    assert second["failed"], second
    assert "another run holds this cluster's upgrade lock (Lease kube-system/skewsafe-kubeadm-upgrade)" in second["msg"]
    assert "playbook mvp_enable" in second["msg"] and "Nothing was changed" in second["msg"], second["msg"]
    print(f"\nsecond run, seconds after the first: {second['msg']}")
    time.sleep(HELD_DURATION + 2)  # nobody renews the first (renew=false): it expires
    third = lock(ansible_module, server)
    assert not third.get("failed") and third["action"] == "take_over", third
    assert "playbook mvp_enable" in third["taken_over_from"] and third["expired_for"] >= 0, third
    print(f"after expiry: took over from {third['taken_over_from']} (expired {third['expired_for']} s)")
    lease = read_lease(server)
    assert lease["spec"]["holderIdentity"] == third["holder"] and lease["spec"]["leaseTransitions"] == 1
    delete_lease(server)


@only_pairs([LAB_PAIR], "the lab's versions (the Lease API does not depend on them)")
def test_the_holder_renews_while_it_runs_and_a_killed_holder_is_taken_over_after_expiry(
    server, ansible_module, pair, tmp_path
):
    delete_lease(server)
    holder = holding_playbook(server, tmp_path, seconds=120)
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "taken.json").exists():
            assert time.monotonic() < deadline and holder.poll() is None, (
                holder.stdout.read() if holder.poll() is not None else "no lock taken in 60 s"
            )
            time.sleep(0.5)
        taken = json.loads((tmp_path / "taken.json").read_text())
        assert taken["action"] == "create" and taken["renewer_pid"], taken
        first_renew = read_lease(server)["spec"]["renewTime"]
        time.sleep(2 * DURATION + 2)  # twice the lease duration: alive only because the renewer renews it
        lease = read_lease(server)
        assert lease["spec"]["holderIdentity"] == taken["holder"] and lease["spec"]["renewTime"] != first_renew, lease
        # the default wait watches the lock: the holder renews it, so the second run stops and names it
        started = time.monotonic()
        refused = lock(ansible_module, server, wait=None)
        assert refused["failed"] and "another run holds" in refused["msg"], refused
        print(f"\nsecond run against a live holder stopped after {time.monotonic() - started:.0f} s: {refused['msg']}")
        holder.kill()  # a killed run: ansible-playbook ends without releasing anything
        holder.wait(timeout=30)
        killed_at = time.monotonic()
        attempt = lock(ansible_module, server, wait=None)  # a rerun right after the kill: it waits, then takes over
        waited = time.monotonic() - killed_at
        assert not attempt.get("failed") and attempt["action"] == "take_over", attempt
        assert waited >= DURATION - 10 and attempt["waited"] > 0, (attempt, waited)
        print(f"killed holder taken over by the rerun {waited:.0f} s after the kill (lease duration {DURATION} s)")
    finally:
        if holder.poll() is None:
            holder.kill()
        delete_lease(server)
