"""A length with a known slot is fitted truncated at it for every high / mean above 1 (docs/hypotheses/
truncate-at-slot.md): the fit holds the stated mean and percentile exactly, is continuous across exp(z^2 / 2) (3.87 at
p95, where main switched from the untruncated lognormal to the truncated one), and falls back to the untruncated
lognormal only where the slot is too close to the high length for any truncated lognormal to reach the ratio."""

from __future__ import annotations

import math

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from planner.serving.load import (
    LongTailError,
    _truncated_fit_at,
    length_fit,
    lognormal_ratio_bound,
    lognormal_spread,
    truncated_ratio_bound,
)

P95_BOUND = lognormal_ratio_bound(95)  # exp(1.6449^2 / 2) = 3.868


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    high=st.floats(min_value=50.0, max_value=50_000.0),
    slot_over_high=st.floats(min_value=1.05, max_value=200.0),
    where=st.floats(min_value=0.0, max_value=1.0),
    percentile=st.sampled_from([90.0, 95.0, 99.0]),
)
def test_the_truncated_fit_holds_the_stated_mean_and_percentile(high, slot_over_high, where, percentile):
    """Every ratio from 1.01 to the truncated bound: the fit is truncated at the slot, its mean is the stated one and
    its percentile the stated high length (relative 1e-6), nothing past the slot."""
    slot = high * slot_over_high
    bound = truncated_ratio_bound(high, percentile, slot)
    if bound <= 1.0101:
        return
    ratio = 1.01 + where * (bound - 1.01) * 0.999
    mean = high / ratio
    fit = length_fit(mean, high, percentile, slot)
    assert fit.truncated and fit.upper_tokens == slot
    assert fit.mean_tokens == pytest.approx(mean, rel=1e-6)
    assert fit.quantile_tokens(percentile / 100.0) == pytest.approx(high, rel=1e-6)
    assert fit.quantile_tokens(1.0 - 1e-12) <= slot * (1 + 1e-9)


@pytest.mark.parametrize("slot", [4200.0, 15_600.0, 40_000.0, 300_000.0])
def test_the_fit_is_continuous_across_the_lognormal_bound(slot):
    """Just below and just above 3.868 (h / m +- 1e-6 of it) the fit's mu and s differ by < 1e-3: one family on both
    sides (main: 3,000 / p95 11,600 in 15,600 tokens fitted s = 1.617 with 20,516 tokens in flight, 11,620 s = 2.25
    with 3,746)."""
    high = 3000.0 if slot < 10_000 else 11_600.0  # T / h >= 1.34: a truncated bound past 3.87
    below, above = (length_fit(high / (P95_BOUND + d), high, 95, slot) for d in (-1e-6, 1e-6))
    assert below.truncated and above.truncated
    assert abs(below.s - above.s) < 1e-3 and abs(below.mu - above.mu) < 1e-3
    assert below.half_second_moment_tokens == pytest.approx(above.half_second_moment_tokens, rel=1e-3)


def test_the_context_in_flight_is_continuous_where_main_jumped():
    """3,000 / p95 11,600 (3.867) in a 15,600-token slot: 3,736 tokens of E[o^2] / 2E[o] (main: 20,516, the untruncated
    tail), and 11,620 (3.873) 3,744, past the bound the two-part mixture of the bound's shape (3,746 with the
    truncated fit before the MoE trial's F5): 8 tokens apart, not 16,770."""
    at, past = (length_fit(3000, h, 95, 15_600).half_second_moment_tokens for h in (11_600, 11_620))
    assert (round(at), round(past)) == (3736, 3744)


def test_a_long_slot_fits_the_root_continuous_with_the_untruncated_lognormal():
    """T / h = 100 (100 / p95 300 in 30,000 tokens): the truncated mean over s falls to a least value near s = z and
    rises past it (h / mean 1.16 at s = 10), so the bound is the peak, 3.879 (just over the untruncated 3.868), and the
    fit is the small-s root: s = 0.9319, the untruncated lognormal's to 4 places (0.1% of it is past the slot)."""
    assert truncated_ratio_bound(300, 95, 30_000) == pytest.approx(3.879, abs=1e-3)
    assert 300 / _truncated_fit_at(10.0, 300, 95, 30_000).mean_tokens == pytest.approx(1.155, abs=1e-3)
    fit = length_fit(100, 300, 95, 30_000)
    assert fit.truncated and round(fit.s, 4) == round(lognormal_spread(100, 300, 95), 4) == 0.9319


@pytest.mark.parametrize("slot_over_high", [1.05, 1.4, 2.0, 4.0, 10.0, 30.0, 100.0, 1000.0])
def test_the_truncated_mean_has_one_least_value(slot_over_high):
    """The peak search assumes h / mean over s in (0, 10] rises to one peak and falls past it (or rises all the way):
    on a grid of 400 spreads it never falls and then rises again."""
    h = 1000.0
    r = [h / _truncated_fit_at(0.025 * (i + 1), h, 95, h * slot_over_high).mean_tokens for i in range(400)]
    falls = [b < a - 1e-12 for a, b in zip(r, r[1:], strict=False)]
    first = falls.index(True) if True in falls else len(falls)
    assert not any(b > a + 1e-12 for a, b in zip(r[first:], r[first + 1 :], strict=False))
    assert truncated_ratio_bound(h, 95, h * slot_over_high) >= max(r) * (1 - 1e-9)


def test_a_slot_close_to_the_high_length_falls_back_to_the_lognormal():
    """8,000 / p95 10,000 prompts with 10 / p95 30 outputs: a 10,030-token slot (T / h = 1.003), whose truncated
    lognormals reach h / m of 1.055 only, not 1.25: the untruncated lognormal (s = 0.1418) as with no slot. Past the
    lognormal's 3.87 the two-part mixture holds even there (2,000 / p95 10,000: 5.00, s = z, the fit's at the bound);
    past its reach (19.97 here), refused, naming it."""
    assert truncated_ratio_bound(10_000, 95, 10_030) == pytest.approx(1.0552, abs=1e-4)
    fit = length_fit(8000, 10_000, 95, 10_030)
    assert not fit.truncated and fit == length_fit(8000, 10_000, 95)
    assert round(fit.s, 4) == 0.1418
    assert length_fit(2000, 10_000, 95, 10_030).kind == "two-part mixture"
    with pytest.raises(LongTailError, match=r"above the 19\.97 a two-part mixture .* the 10,030-token slot"):
        length_fit(500, 10_000, 95, 10_030)


@pytest.mark.parametrize(("mean", "high"), [(1000.0, 1000.0), (1000.0, 999.0)])
def test_no_spread_is_a_point(mean, high):
    assert length_fit(mean, high, 95, 4200) == length_fit(mean, high, 95) and length_fit(mean, high, 95, 4200).s == 0


def test_no_slot_keeps_the_untruncated_lognormal():
    """No slot known: s = z - sqrt(z^2 - 2 ln(h / m)), the README's 400 / p95 1,200: 0.9319, untruncated."""
    fit = length_fit(400, 1200, 95)
    assert not fit.truncated and fit.s == pytest.approx(0.931889, rel=1e-5) and math.isinf(fit.upper_tokens)
