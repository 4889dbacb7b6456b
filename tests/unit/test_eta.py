"""The one ETA estimator (kreassign.planning.eta): bytes left / a copy rate over a sliding window, bounded by the
throttle. Issue 33: the panel said ``ETA 0:01:24`` while --progress said ``ETA 7s`` of the same run; the panel's
rate swung 507 -> 261 -> 197 KiB/s under a 500,000 B/s throttle."""

from __future__ import annotations

import pytest

from kreassign.planning.eta import (
    PLAN_RATE_WINDOW_S,
    TRUSTED_SPAN_S,
    CopyRate,
    Eta,
    estimate_eta,
    plan_throttle,
    throttle_shares,
)

MB = 1_000_000


def run_samples(copied_at, seconds: int, step: float = 1.0) -> CopyRate:
    window = CopyRate()
    t = 0.0
    while t <= seconds:
        window.add(t, copied_at(t))
        t += step
    return window


def test_steady_rate_gives_bytes_left_over_the_rate():
    window = run_samples(lambda t: 400_000 * t, 60)
    assert window.rate == pytest.approx(400_000)
    assert window.span_s == pytest.approx(PLAN_RATE_WINDOW_S)
    eta = estimate_eta(8 * MB, window.rate, window.span_s)
    assert eta == Eta(pytest.approx(20.0), pytest.approx(400_000), bound=False)


@pytest.mark.parametrize("now", range(32, 60))
def test_a_rate_that_swings_between_polls_gives_a_steady_eta(now):
    """A throttled copy moves in bursts: 1 MB every 2 s (500 kB/s on average), polled every second, so that
    one interval copies 1 MB and the next nothing. Over the window the rate stays within 10 % of 500 kB/s at
    every poll, and so does the ETA (an average over two polls would swing between 0 and 1 MB/s)."""
    window = run_samples(lambda t: MB * (int(t) // 2), now)
    assert window.rate == pytest.approx(500_000, rel=0.1)
    left = 40 * MB - MB * (now // 2)
    assert estimate_eta(left, window.rate, window.span_s).seconds == pytest.approx(left / 500_000, rel=0.1)


def test_the_throttle_bounds_the_rate_until_a_slower_one_is_measured_long_enough():
    # Kafka's quota lets a burst through at first: measured above the throttle, the throttle is the rate
    assert estimate_eta(5 * MB, 900_000, 10.0, throttle=500_000) == Eta(10.0, 500_000.0, bound=True)
    # one interval of 1 s (--progress): too short to believe a rate below the throttle
    assert estimate_eta(5 * MB, 100_000, 1.0, throttle=500_000) == Eta(10.0, 500_000.0, bound=True)
    # a throttled copy moves in fetches: over the window, 10 % under the throttle is still the throttle's rate
    assert estimate_eta(5 * MB, 450_000, PLAN_RATE_WINDOW_S, throttle=500_000) == Eta(10.0, 500_000.0, bound=True)
    # measured well below it over the window: the copy really is slower (disk, network)
    assert estimate_eta(5 * MB, 250_000, TRUSTED_SPAN_S, throttle=500_000) == Eta(20.0, 250_000, bound=False)


def test_a_stalled_copy_has_no_eta_unless_a_throttle_bounds_it():
    window = run_samples(lambda t: 3 * MB, 20)  # nothing copied for 20 s
    assert window.rate == 0
    assert estimate_eta(3 * MB, window.rate, window.span_s) == Eta(None)
    assert estimate_eta(3 * MB, window.rate, window.span_s, throttle=300_000) == Eta(10.0, 300_000.0, bound=True)


def test_no_samples_no_rate_no_eta():
    window = CopyRate()
    assert (window.rate, window.span_s) == (None, None)
    window.add(5.0, 1000)
    assert (window.rate, window.span_s) == (None, None)  # one sample: no rate yet
    assert estimate_eta(MB, window.rate, window.span_s) == Eta(None)
    assert estimate_eta(None, 500_000, 10.0) == Eta(None)  # sizes unknown
    assert estimate_eta(0, None, None).seconds == 0.0  # nothing left


def test_the_writes_slow_the_copy_down_and_a_copy_slower_than_them_never_ends():
    assert estimate_eta(4 * MB, 500_000, 10.0, write_rate=100_000).seconds == pytest.approx(10.0)
    losing = estimate_eta(4 * MB, 500_000, 10.0, throttle=500_000, write_rate=600_000)
    assert (losing.seconds, losing.losing) == (None, True)


def test_throttle_shares_split_each_rate_among_the_copies_it_binds():
    copies = {
        "a": (3, 500_000.0, 1, 500_000.0),  # into 3, served by 1
        "b": (3, 500_000.0, 2, 500_000.0),  # into 3, served by 2
        "c": (4, None, 1, 500_000.0),  # into 4 (not throttled there), served by 1
        "d": (4, None, 2, None),  # bound by nothing
    }
    shares = throttle_shares(copies)
    assert shares == {"a": 250_000, "b": 250_000, "c": 250_000}
    assert plan_throttle(shares, 3) == 750_000
    assert plan_throttle(shares, 4) is None  # one copy is not throttled: no bound for the plan
    assert plan_throttle({}, 0) is None
