"""The API benchmark's ideal time counts the Retry-After waits (issue #13, item 6)."""

from __future__ import annotations

import pytest

from bench.bench_api import ideal_wall


def test_ideal_without_429s_is_the_calls_spread_over_the_slots():
    # Three 1 s calls on two slots: two at 0-1 s, the third at 1-2 s.
    assert ideal_wall([0, 0, 0], latency=1.0, retry_after=0.5, slots=2) == 2.0
    assert ideal_wall([0] * 500, latency=0.1, retry_after=0.2, slots=32) == pytest.approx(1.6)


def test_ideal_counts_the_retry_after_waits():
    # Request 0 is refused at 0 s, waits 0.5 s, finds both slots busy until 1 s, is refused
    # again at 1 s, waits until 1.5 s and is answered at 2.5 s; the others run 0-1 s.
    assert ideal_wall([2, 0, 0], latency=1.0, retry_after=0.5, slots=2) == 2.5
    # One refusal fits in the gap: request 0 retries at 0.5 s, gets a slot at 1 s, done at 2 s.
    assert ideal_wall([1, 0, 0], latency=1.0, retry_after=0.5, slots=2) == 2.0
    # One slot: request 1 uses it (0-1 s) while request 0 waits; request 0 then runs 1-2 s.
    assert ideal_wall([1, 0], latency=1.0, retry_after=0.5, slots=1) == 2.0
    assert ideal_wall([1], latency=1.0, retry_after=3.0, slots=1) == 4.0
