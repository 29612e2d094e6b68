# Copyright (c) skewsafe.kubeadm contributors
# GNU General Public License v3.0+ (see COPYING or https://www.gnu.org/licenses/gpl-3.0.txt)
# SPDX-License-Identifier: GPL-3.0-or-later
#
# PRIVATE to the skewsafe.kubeadm collection: no stability guarantee for outside importers.
"""The one poll loop of the collection's waits (mvp_check, control_plane_health): rounds until ``threshold``
passing rounds in a row, the time is up, or a round says waiting cannot help."""

from __future__ import annotations

import time


class Poll:
    """How a poll ended: ``attempts``, the passing ``streak`` at the end, ``elapsed`` seconds, and ``done``."""

    def __init__(self, attempts, streak, elapsed, done):
        self.attempts, self.streak, self.elapsed, self.done = attempts, streak, elapsed, done


def _now():
    return time.monotonic()


def _sleep(seconds):
    time.sleep(seconds)


def poll(round_fn, threshold, timeout, interval, clock=None, sleep=None):
    """Call ``round_fn(attempt, elapsed)`` (``elapsed``: a function of the seconds since the start) until
    ``threshold`` rounds in a row pass, or another round would end after ``timeout`` seconds.

    ``round_fn`` returns whether the round passed, or ``(passed, give_up)`` to end the wait early. The clock and
    sleep are injected (tests); unset, they are looked up when called, so a test's patch of ``time`` applies.
    """
    clock, sleep = clock or _now, sleep or _sleep
    started = clock()
    threshold = max(1, threshold)
    attempts = streak = 0
    while True:
        attempts += 1
        answer = round_fn(attempts, lambda: clock() - started)
        passed, give_up = answer if isinstance(answer, tuple) else (answer, False)
        streak = streak + 1 if passed else 0
        elapsed = clock() - started
        if streak >= threshold or give_up or elapsed + interval > timeout:
            return Poll(attempts, streak, elapsed, streak >= threshold)
        sleep(interval)
