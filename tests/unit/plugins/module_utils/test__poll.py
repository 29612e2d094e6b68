from __future__ import annotations

from conftest import FakeClock as Clock

from ansible_collections.skewsafe.kubeadm.plugins.module_utils._poll import poll


def test_ends_after_threshold_passing_rounds_in_a_row():
    clock, answers = Clock(), iter([True, False, True, True, False])
    ended = poll(lambda attempt, elapsed: next(answers), 2, 60, 5, clock=clock, sleep=clock.sleep)
    assert (ended.attempts, ended.streak, ended.done, ended.elapsed) == (4, 2, True, 15.0)


def test_a_round_that_would_end_after_the_timeout_is_not_started():
    clock = Clock()
    seen = []
    ended = poll(lambda attempt, elapsed: seen.append(elapsed()) or False, 1, 12, 5, clock=clock, sleep=clock.sleep)
    assert seen == [0.0, 5.0, 10.0] and not ended.done and ended.attempts == 3


def test_a_round_may_give_up_early():
    clock = Clock()
    ended = poll(lambda attempt, elapsed: (False, attempt == 2), 1, 600, 5, clock=clock, sleep=clock.sleep)
    assert (ended.attempts, ended.done) == (2, False)
