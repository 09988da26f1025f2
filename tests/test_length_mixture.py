"""A length whose high / mean is past any lognormal's (exp(z^2 / 2): 3.87 at p95) is drawn from a two-part mixture
within the slot (``planner.serving.length_mixture``): the MoE capacity planner's trial F5 asked for chat / agent
traffic, most requests short and a minority very long (mean 1,000, p95 6,000: a ratio of 6, which the lognormal
truncated at the slot the review fitted before reached only where the slot was roomy, and refused past about 5-6).

Each expected value is derived here or in the docstring cited: the mixture's CDF and mean are recomputed in this
file from the two conditioned lognormals' closed forms (``reference_cdf``, ``reference_mean``), not read back from
the module; the sampling tolerances are 4 standard errors of the sample drawn.
"""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import ndtr

from planner.serving.length_mixture import LengthMixture
from planner.serving.load import (
    LengthFit,
    LongTailError,
    length_fit,
    lognormal_ratio_bound,
    long_tail_ratio_bound,
    spread_fit_note,
    spread_lengths,
)

#: F5's example: output mean 1,000, p95 6,000 (a ratio of 6), with a prompt at its mean (2,000 tokens, no spread):
#: the slot memory is sized for is 2,000 + 6,000 = 8,000 tokens
F5_MEAN, F5_HIGH, F5_PROMPT = 1000, 6000, 2000
F5_SLOT = F5_PROMPT + F5_HIGH
#: Phi, scipy's (accurate far into the lower tail: ndtr(-37) = 5.7e-300), not the module's own ln Phi series
PHI = ndtr


def reference_cdf(f: LengthMixture, x: float | np.ndarray) -> float | np.ndarray:
    """The mixture's CDF from its definition: q Phi(y) / Phi(a) up to h, q + (1 - q) (Phi(y) - Phi(a)) / (Phi(b) -
    Phi(a)) past it to T, 1 from T, with y = (ln x - mu) / s, a at h, b at T; the long part written with the upper
    tails Phi(-.), where Phi(.) rounds to 1."""
    q, h, t = 1.0 - f.long_share, f.split_tokens, f.upper_tokens
    x = np.asarray(x, dtype=float)
    y = (np.log(x) - f.mu) / f.s
    a, b = ((math.log(v) - f.mu) / f.s for v in (h, t))
    with np.errstate(divide="ignore", invalid="ignore"):
        body = q * PHI(y) / PHI(a)
        long = q + f.long_share * (PHI(-a) - PHI(-y)) / (PHI(-a) - PHI(-b))
    out = np.where(x <= h, body, np.where(x >= t, 1.0, long))
    return float(out) if out.ndim == 0 else out


def reference_mean(f: LengthMixture) -> float:
    """E[x] = integral of (1 - F(x)) dx over (0, T], by the trapezoid rule on ln x (dx = x d ln x), 20,001 points on
    each side of h; below 1e-6 of h the integrand is at most 1 and adds under 1e-6 h."""
    total = 0.0
    for lo, hi in ((f.split_tokens * 1e-6, f.split_tokens), (f.split_tokens, f.upper_tokens)):
        u = np.linspace(math.log(lo), math.log(hi), 20_001)
        x = np.exp(u)
        g = (1.0 - reference_cdf(f, x)) * x
        total += float(np.sum((g[1:] + g[:-1]) / 2.0 * np.diff(u)))
    return total + f.split_tokens * 1e-6 * 1.0  # the sliver below, at its largest (within the tolerance)


def test_f5_example_is_fitted_exactly():
    """F5's 1,000 / p95 6,000 in its 8,000-token slot: a mixture (6.0 > 3.87), its mean 1,000 and its CDF at 6,000
    0.95 to 1e-9 (the bisection's root), checked against this file's own closed form and quadrature; the fit's
    shape is the one-piece fit's at the bound (mean 6,000 / 3.87 = 1,551 in the same slot)."""
    f = length_fit(F5_MEAN, F5_HIGH, 95, float(F5_SLOT), "output")
    assert isinstance(f, LengthMixture) and f.long_share == pytest.approx(0.05)
    assert f.mean_tokens == pytest.approx(F5_MEAN, rel=1e-9)
    assert reference_cdf(f, F5_HIGH) == pytest.approx(0.95, abs=1e-12)
    assert reference_mean(f) == pytest.approx(F5_MEAN, rel=1e-4)
    at_bound = length_fit(F5_HIGH / lognormal_ratio_bound(95), F5_HIGH, 95, float(F5_SLOT))
    assert isinstance(at_bound, LengthFit) and f.s == at_bound.s
    assert reference_cdf(f, F5_SLOT) == 1.0 and f.quantile_tokens(1 - 1e-12) <= F5_SLOT


@pytest.fixture(scope="module")
def f5_draw():
    """100,000 requests of F5's lengths as the simulation draws them (``spread_lengths``, seeded)."""
    return np.array(spread_lengths(F5_PROMPT, F5_PROMPT, F5_MEAN, F5_HIGH, 95, 100_000))


def test_a_large_draw_holds_the_mean_and_the_p95(f5_draw):
    """The drawn output mean within 4 standard errors (sd / sqrt(n), sd from the fit's E[x^2] - m^2: 1,749 tokens,
    so 4 x 5.5 = 22.1 tokens) plus the half token rounding moves it; the share at most 6,000 within 4 binomial
    standard errors of 0.95 (sqrt(0.95 x 0.05 / 100,000) = 0.00069). Prompts all at their mean (no spread)."""
    f = length_fit(F5_MEAN, F5_HIGH, 95, float(F5_SLOT), "output")
    sd = math.sqrt(f.moment(2) - f.mean_tokens**2)
    out, n = f5_draw[:, 1], len(f5_draw)
    assert 1700 < sd < 1800
    assert abs(out.mean() - F5_MEAN) < 4 * sd / math.sqrt(n) + 0.5
    assert abs((out <= F5_HIGH).mean() - 0.95) < 4 * math.sqrt(0.95 * 0.05 / n)
    assert set(f5_draw[:, 0].tolist()) == {F5_PROMPT}


def test_no_drawn_request_is_longer_than_the_slot(f5_draw):
    """Every drawn output at most the slot, and with both lengths past the bound (prompts 1,000 / p95 5,000,
    outputs 1,000 / p95 6,000: an 11,000-token slot) every request's prompt + output too."""
    assert f5_draw[:, 1].max() <= F5_SLOT
    both = np.array(spread_lengths(1000, 5000, 1000, 6000, 95, 20_000))
    assert all(isinstance(length_fit(m, h, 95, 11000.0), LengthMixture) for m, h in ((1000, 5000), (1000, 6000)))
    assert both.sum(axis=1).max() <= 11000 and both.min() >= 1


BOUND_95 = lognormal_ratio_bound(95)


@settings(max_examples=30, deadline=None)
@given(
    ratio=st.floats(BOUND_95 * (1 + 1e-9), 18.5),
    high=st.integers(100, 200_000),
    room=st.floats(1.05, 20.0),
)
def test_the_solved_mixture_reproduces_mean_and_p95(ratio, high, room):
    """Any p95 / mean from just past 3.87 to 18.5 (Markov's 1 / (1 - 0.95) = 20 is out of any distribution's reach;
    the mixture's is 18.8 to 19.7 with its shape, ``test_past_the_mixtures_reach_is_refused``) in any slot 1.05 to 20 x the high length:
    the solved mixture's CDF at h is 0.95 and its mean the stated one, by this file's closed form and quadrature
    (1e-4: the quadrature's), and its CDF is 1 at the slot."""
    slot = high * room
    f = length_fit(high / ratio, float(high), 95, slot)
    assert isinstance(f, LengthMixture)
    assert reference_cdf(f, high) == pytest.approx(0.95, abs=1e-9)
    assert f.mean_tokens == pytest.approx(high / ratio, rel=1e-9)
    assert reference_mean(f) == pytest.approx(high / ratio, rel=1e-4, abs=high * 2e-6)
    assert reference_cdf(f, slot) == 1.0


@settings(max_examples=15, deadline=None)
@given(percentile=st.sampled_from([90.0, 99.0]), share=st.floats(0.0, 1.0), room=st.floats(1.2, 10.0))
def test_other_percentiles_are_fitted_too(percentile, share, room):
    """p90 (past 2.27, Markov's 10) and p99 (past 14.9, Markov's 100): any ratio between the bound and 90% of Markov's
    has a mixture whose CDF at h is q and whose mean is the stated one."""
    lo, hi = lognormal_ratio_bound(percentile), 0.9 * 100 / (100 - percentile)
    ratio = lo * (1 + 1e-9) + share * (hi - lo * (1 + 1e-9))
    f = length_fit(10_000 / ratio, 10_000.0, percentile, 10_000 * room)
    assert isinstance(f, LengthMixture)
    assert reference_cdf(f, 10_000) == pytest.approx(percentile / 100, abs=1e-9)
    assert reference_mean(f) == pytest.approx(10_000 / ratio, rel=1e-4, abs=0.02)


def test_past_the_mixtures_reach_is_refused():
    """At 20 x the mean (the mixture reaches 18.8 here: a = (ln h - mu) / s is searched up to 37; Markov: P(x > h) <= m / h, so a p95 of 20 x the mean needs every long request at h and
    every other at 0 tokens) no fit: ``LongTailError`` naming the mixture's reach and Markov's bound."""
    reach = long_tail_ratio_bound(6000, 95, 8000.0)  # about 1 / (0.05 (1 + s / 37)): 18.8 at this s = 2.31
    assert 18.5 < reach < 20.0
    with pytest.raises(LongTailError, match=r"two-part mixture .* reaches at this p95 .*Markov's inequality"):
        length_fit(300, 6000, 95, 8000.0, "output")
    with pytest.raises(LongTailError, match=r"has no lognormal fit"):  # no slot: nothing to hold the long requests
        length_fit(1000, 6000, 95)


#: ``spread_lengths`` of these (prompt mean, prompt p95, output mean, output p95, percentile), each within the
#: lognormal's reach (ratios 1 to 3.8 at p95, 14 at p99, 2.2 at p90: untruncated, truncated at the slot, and a slot
#: too close to the high length), 2,000 requests capped at 131,072 tokens, as JSON: its SHA-256 on main at 987e03e2,
#: before the mixture (this test's own expression, run there)
WITHIN_BOUND = [(800, 3000, 400, 1200, 95), (1000, 3800, 3000, 11000, 95), (100, 100, 1000, 3800, 95),
                (2000, 7000, 300, 1100, 95), (500, 1000, 200, 2800, 99), (1000, 2000, 500, 1100, 90)]  # fmt: skip
WITHIN_BOUND_SHA256 = "dfdaecd8729b5777237e96728a906a47efa4a96d33bf0c27d58c8fae076d9101"


def test_within_the_bound_the_draws_are_byte_identical():
    drawn = [spread_lengths(*c[:4], c[4], 2000, 131072) for c in WITHIN_BOUND]
    assert hashlib.sha256(json.dumps(drawn).encode()).hexdigest() == WITHIN_BOUND_SHA256
    assert not any(isinstance(length_fit(m, h, c[4], float(c[1] + c[3])), LengthMixture)
                   for c in WITHIN_BOUND for m, h in ((c[0], c[1]), (c[2], c[3])))  # fmt: skip


def test_the_mixture_is_continuous_at_the_bound():
    """Just past the bound the mixture is the one-piece fit at it (the shape is that fit's, and at the bound the
    mixture with mu solved is that truncated lognormal): 3,000 / p95 11,600 and 11,605 in their slots (prompts
    p95 3,800) read 1,000 + E[o^2] / (2 E[o]) = 4,745 and 4,747 tokens in flight (test_long_tail's figures for the
    truncated fit, which the mixture keeps)."""
    at, past = (length_fit(3000, h, 95, float(3800 + h)) for h in (11600, 11605))
    assert isinstance(at, LengthFit) and isinstance(past, LengthMixture)
    assert (round(1000 + at.half_second_moment_tokens), round(1000 + past.half_second_moment_tokens)) == (4745, 4747)


def test_the_warnings_name_the_mixture():
    """plan --rate's warning and the review's (``spread_fit_note``, both surfaces' one sentence) name the two-part
    mixture, its shares, and the slot; plan --json's length_fit says "two-part mixture" with the long share."""
    from planner.cli.plan import length_fits_as_dict
    from planner.export.scenario import Workload

    note = spread_fit_note(F5_PROMPT, F5_PROMPT, F5_MEAN, F5_HIGH, 95)
    assert note.startswith(  # plain words first (trial 34 F8), then the mixture's detail
        "output: the p95 of 6,000 tokens is 6.00 x the mean of 1,000, a longer tail than usual request lengths have "
        "(at most 3.87 x the mean at p95); it is sized as stated, with 5% of requests long, between 6,000 and 8,000 "
        "tokens (mean "
    )
    assert (
        "so drawn from a two-part mixture within the 8,000-token slot: 95% of requests from a lognormal body " in note
    )
    assert "up to 6,000 tokens (median " in note and "5% from a long-request component (s = " in note
    assert "lognormal truncated" not in note
    fits = length_fits_as_dict(F5_PROMPT, F5_PROMPT, F5_MEAN, F5_HIGH, 95)
    assert fits["output"]["distribution"] == "two-part mixture"
    assert fits["output"]["long_share"] == pytest.approx(0.05) and fits["output"]["split_tokens"] == F5_HIGH
    assert fits["prompt"]["distribution"] == "lognormal"
    review = Workload(
        peak_requests_per_s=2, average_requests_per_s=1, prompt_tokens_mean=F5_PROMPT, prompt_tokens_high=F5_PROMPT,
        output_tokens_mean=F5_MEAN, output_tokens_high=F5_HIGH, ttft_target_s=3, tpot_target_s=0.06,
    )  # fmt: skip
    assert review.spread_fit_note.startswith(note)
