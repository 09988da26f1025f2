"""A length whose high percentile is more than exp(z^2 / 2) times its mean (3.87 at p95) has no lognormal fit (trial 27
F12). A reasoning model's DeepSeek-R1 review, prompts 1,000 / p95 4,000 and outputs 3,000 / p95 12,000 tokens, had
the spread silently capped at s = z: the drawn p95 output was 10,686 (12,000 asked; the same draw for 20,000), a
request ran to the model's 163,840 tokens, decode was timed at 23,444 tokens in flight, past the 16,000-token slot
memory was sized for, and the batch caps fell ~30% while the Assumptions said they were set at 16,000.

The rule now (``planner.serving.load.length_fit``): the lognormal truncated at the slot (high prompt + high output)
whose mean and high percentile are the stated ones, drawn from and timed on alike, within the bound too
(docs/hypotheses/truncate-at-slot.md; a slot too close to the high length for it keeps the untruncated lognormal);
where no truncated lognormal fits either, ``LongTailError`` naming the ratio and what is accepted.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from planner.export import sizing
from planner.export.scenario import Workload
from planner.serving.load import (
    MEASURED_LENGTHS_HINT,
    LongTailError,
    length_fit,
    lognormal_ratio_bound,
    spread_fit_note,
    spread_lengths,
    truncated_ratio_bound,
)

#: The trial's lengths (my/reason.toml): prompt mean / p95, output mean / p95, and the slot memory is sized for
PROMPT, PROMPT_P95, OUTPUT, OUTPUT_P95 = 1000, 4000, 3000, 12000
SLOT = PROMPT_P95 + OUTPUT_P95  # 16,000 tokens
#: The model's context (DeepSeek-R1), the most a request may hold before this change's slot
MODEL_CONTEXT = 163_840


def trial_workload(**changes) -> Workload:
    w = dict(
        peak_requests_per_s=2, average_requests_per_s=1, prompt_tokens_mean=PROMPT, prompt_tokens_high=PROMPT_P95,
        output_tokens_mean=OUTPUT, output_tokens_high=OUTPUT_P95, ttft_target_s=3, tpot_target_s=0.06,
    )  # fmt: skip
    return Workload(**(w | changes))


def test_the_bound_is_exp_half_z_squared():
    """p95: z = 1.6449, exp(1.6449^2 / 2) = exp(1.3528) = 3.868; the trial's 12,000 / 3,000 = 4.00 is past it."""
    assert lognormal_ratio_bound(95) == pytest.approx(3.868, abs=5e-4)
    assert OUTPUT_P95 / OUTPUT > lognormal_ratio_bound(95)


def test_the_long_tail_fit_holds_the_stated_mean_and_p95_by_its_closed_form():
    """Output 3,000 / p95 12,000 in 16,000 tokens (4.00, past the bound): the two-part mixture within the slot
    (``planner.serving.length_mixture``; the lognormal truncated at 16,000 with s = 2.5906, mu = 7.9960 before the
    MoE trial's F5), its shape the truncated fit's at the bound (12,000 / 3.868 = 3,102: s = 2.3107) and its
    mu = 7.7706 solved for the mean (the bisection's root, written out to 4 places): E[o] = 3,000 and the CDF at
    12,000 0.95 to 1e-9 (tests/test_length_mixture.py recomputes both from the closed form); nothing above the slot
    (the 1-quantile is the slot)."""
    fit = length_fit(OUTPUT, OUTPUT_P95, 95, SLOT)
    assert fit.truncated and fit.upper_tokens == SLOT and fit.kind == "two-part mixture"
    assert (round(fit.s, 4), round(fit.mu, 4)) == (2.3107, 7.7706)
    assert fit.mean_tokens == pytest.approx(OUTPUT, rel=1e-9)
    assert fit.quantile_tokens(0.95) == pytest.approx(OUTPUT_P95, rel=1e-9)
    assert fit.quantile_tokens(1.0 - 1e-12) == pytest.approx(SLOT, rel=1e-6)
    prompt = length_fit(PROMPT, PROMPT_P95, 95, SLOT)  # 4.00 too: a mixture, s = 1.3370 (the truncated fit's 1.4082)
    assert round(prompt.s, 4) == 1.3370 and prompt.mean_tokens == pytest.approx(PROMPT, rel=1e-9)


def test_the_long_tail_fit_holds_the_stated_mean_and_p95_of_a_drawn_sample():
    """10,000 requests drawn (seeded): each length's mean within 4 standard errors of the stated one, sqrt(Var) /
    sqrt(10,000) with Var = E[x^2] - E[x]^2 of the fit (output, the mixture's: sqrt(3,000 x 2 x 3,873.6 - 3,000^2)
    = 3,782, so 37.8 tokens, 1.3%; the cap of prompt + output at the slot takes ~0.9% off the output's mean and p95), its p95
    within 3% of the stated one, no request past the slot. Before: p95 10,686 and a request of 163,840 tokens (the
    trial's plan --rate line)."""
    n = 10_000
    drawn = np.asarray(spread_lengths(PROMPT, PROMPT_P95, OUTPUT, OUTPUT_P95, 95, n, MODEL_CONTEXT), dtype=float)
    for col, (mean, high) in enumerate(((PROMPT, PROMPT_P95), (OUTPUT, OUTPUT_P95))):
        fit = length_fit(mean, high, 95, SLOT)
        sd = math.sqrt(fit.moment(2) - fit.moment(1) ** 2)
        assert abs(drawn[:, col].mean() - mean) < 4 * sd / math.sqrt(n)
        assert np.percentile(drawn[:, col], 95) == pytest.approx(high, rel=0.03)
    assert drawn.sum(axis=1).max() == SLOT  # prompt + output capped at the slot (1.3% of requests are cut to it)
    assert (drawn[:1000] == np.asarray(spread_lengths(PROMPT, PROMPT_P95, OUTPUT, OUTPUT_P95, 95, 1000)))[
        :, 0
    ].all()  # seeded: the first 1,000 prompts of a longer draw are the 1,000-request draw's


def test_feasible_ratios_are_truncated_at_the_slot_too():
    """Ratios within 3.87 are fitted truncated at the slot as well (docs/hypotheses/truncate-at-slot.md; main kept the
    untruncated lognormal and its draw there): the README example's 800 / p95 3,000 prompts (3.75) and 400 / 1,200
    outputs (3.0) in a 4,200-token slot, s = 1.8061 and 0.9229 (untruncated 1.3958 and 0.9319), each fit's mean and
    p95 the stated ones by the closed form; the context in flight 800 + E[o^2] / 2E[o] = 800 + 425.28 = 1,225.28 tokens
    (untruncated 1,276.63); 1,000 requests drawn within the slot, means and p95s within sampling error (the prompts'
    mean's standard error sqrt(Var) / sqrt(1,000) = 28 tokens). Trial 27's feasible rerun, 1,000 / 3,800 and 3,000 /
    11,000 (3.67), in 14,800 tokens: no request past the slot (main: 95,145 tokens, the untruncated tail's)."""
    for mean, high, s in ((800, 3000, 1.8061), (400, 1200, 0.9229)):
        fit = length_fit(mean, high, 95, 3000 + 1200)
        assert fit.truncated and round(fit.s, 4) == s
        assert (fit.mean_tokens, fit.quantile_tokens(0.95)) == pytest.approx((mean, high), rel=1e-9)
    assert sizing.inflight_context_tokens(800, 400, 1200, 95, slot_tokens=4200) == pytest.approx(1225.28, abs=0.01)
    readme = np.asarray(spread_lengths(800, 3000, 400, 1200, 95, 1000, 131072))
    assert readme.sum(axis=1).max() <= 4200
    sd = math.sqrt(length_fit(800, 3000, 95, 4200).moment(2) - 800**2)
    assert abs(readme[:, 0].mean() - 800) < 4 * sd / math.sqrt(1000)
    assert np.percentile(readme, 95, axis=0) == pytest.approx([3000, 1200], rel=0.05)
    rerun = np.asarray(spread_lengths(1000, 3800, 3000, 11000, 95, 1000, MODEL_CONTEXT))
    assert int(rerun.sum(axis=1).max()) <= 3800 + 11000


def test_different_p95s_past_the_bound_draw_differently():
    """Trial 27: p95 12,000 and 20,000 over a 3,000 mean drew the same outputs (both capped at s = z). Now each is its
    own fit. With prompts 6,000 / p95 20,000 (3.33) the slots are 32,000 and 40,000 tokens; both outputs (4.00 and
    6.67) are past the bound, so each is a two-part mixture (``planner.serving.length_mixture``) of the shape of the
    truncated fit at the bound in its slot: s = 1.33 (12,000 in 32,000) and 1.39 (20,000 in 40,000; the truncated
    fits before the MoE trial's F5 had 1.40 and 6.59): outputs of which the share at most each stated p95 is 0.95
    within sampling error (the sample p95 itself is far from it in 1,000 draws: the body's density just below h is
    small). The prompts are
    truncated at each slot (s = 1.200 in 32,000, 1.102 in 40,000), so they differ as well, each within its slot."""
    long_prompt = (6000, 20000)
    at_12k = np.asarray(spread_lengths(*long_prompt, OUTPUT, 12000, 95, 1000))
    at_20k = np.asarray(spread_lengths(*long_prompt, OUTPUT, 20000, 95, 1000))
    assert (round(length_fit(OUTPUT, 12000, 95, 32000).s, 2), round(length_fit(OUTPUT, 20000, 95, 40000).s, 2)) == (
        1.33,
        1.39,
    )
    assert (round(length_fit(*long_prompt, 95, 32000).s, 3), round(length_fit(*long_prompt, 95, 40000).s, 3)) == (
        1.200,
        1.102,
    )
    assert at_12k.sum(axis=1).max() <= 32000 and at_20k.sum(axis=1).max() <= 40000
    assert not (at_12k[:, 1] == at_20k[:, 1]).all()
    for drawn, high in ((at_12k, 12000), (at_20k, 20000)):  # the share at most each p95 within 4 binomial standard
        assert abs((drawn[:, 1] <= high).mean() - 0.95) < 4 * math.sqrt(0.95 * 0.05 / 1000)  # errors (0.028)


def test_no_fit_is_refused_naming_the_ratio_and_what_is_accepted():
    """Trial 27's B200 run, outputs 3,000 / p95 20,000 (6.67) with prompts at p95 2,000 in a 22,000-token slot, had
    no truncated lognormal (at most h / T (a + 1) / a, a = ln(1 / 0.95) / ln(T / h) = 0.538: 2.60, 2.58 within
    s <= 10) and was refused; the two-part mixture fits it (MoE trial F5). Refused now only past the mixture's reach,
    just under Markov's 1 / (1 - 0.95) = 20 (19.71 for 60,000 in 62,000 tokens): 3,000 / p95 60,000 (20.00), with
    the ratio, the bound, and what is accepted (a mean of at least 60,000 / 19.71 = 3,044 tokens, or a p95 of at
    most 19.71 x 3,000 = 59,139)."""
    assert truncated_ratio_bound(20000, 95, 22000) == pytest.approx(2.58, abs=0.005)
    assert length_fit(OUTPUT, 20000, 95, 22000.0).kind == "two-part mixture"
    with pytest.raises(LongTailError) as refused:
        spread_lengths(PROMPT, 2000, OUTPUT, 60000, 95, 1000, MODEL_CONTEXT)
    said = str(refused.value)
    assert said.startswith("output length's p95 / mean = 60,000 / 3,000 = 20.00 has no lognormal fit")
    assert "above any lognormal's 3.87" in said and "above the 19.71 a two-part mixture" in said
    assert "Markov's inequality" in said
    assert said.endswith(
        "give a mean of at least 3,044 tokens at this p95, or a p95 of at most 59,139 tokens (19.71 x the mean); "
        + MEASURED_LENGTHS_HINT
    )
    with pytest.raises(ValueError, match=r"output_tokens_high / output_tokens_mean: output length's p95 / mean"):
        trial_workload(prompt_tokens_high=2000, output_tokens_high=60000)  # the review refuses its scenario


def test_every_surface_says_the_long_tail_fit():
    """The note plan --rate prints under its lengths line and the review puts in Warnings and the Assumptions row
    "Context the group screening's TPOT curve is taken at": the ratio, the bound, the slot and the two-part mixture
    (its shares, the body's median, the long requests' mean, s), for each length past it."""
    note = spread_fit_note(PROMPT, PROMPT_P95, OUTPUT, OUTPUT_P95, 95)
    assert note == (  # plain words first (trial 34 F8), the same figures: ratio, bound, shares, slot, mixture
        "prompt: the p95 of 4,000 tokens is 4.00 x the mean of 1,000, a longer tail than usual request lengths have "
        "(at most 3.87 x the mean at p95); it is sized as stated, with 5% of requests long, between 4,000 and 16,000 "
        "tokens (mean 6,765); if the p95 was a guess, check it, as the memory each request is sized for is the p95 "
        "prompt + p95 output (16,000 tokens) (detail: beyond any lognormal's p95 / mean, so drawn from a two-part "
        "mixture within the 16,000-token slot: 95% of requests from a lognormal body up to 4,000 tokens (median 398), "
        "5% from a long-request component (s = 1.337 both), whose mean and p95 are the stated ones); output: the p95 "
        "of 12,000 tokens is 4.00 x the mean of 3,000, a longer tail than usual request lengths have (at most 3.87 x "
        "the mean at p95); it is sized as stated, with 5% of requests long, between 12,000 and 16,000 tokens (mean "
        "13,873); if the p95 was a guess, check it, as the memory each request is sized for is the p95 prompt + p95 "
        "output (16,000 tokens) (detail: beyond any lognormal's p95 / mean, so drawn from a two-part mixture within "
        "the 16,000-token slot: 95% of requests from a lognormal body up to 12,000 tokens (median 1,165), 5% from a "
        "long-request component (s = 2.311 both), whose mean and p95 are the stated ones); no request is longer than "
        "16,000 tokens"
    )
    assert trial_workload().spread_fit_note == note
    assert spread_fit_note(800, 3000, 400, 1200, 95) == ""  # the README example: nothing to say


def test_the_decode_context_and_the_batch_cap_hold_the_slot():
    """Trial 27's review: decode timed at 1,000 + E[o^2] / (2 E[o]) = 1,000 + 3,873.6 = 4,874 tokens (the two-part
    mixture's; 4,921 with the truncated fit before the MoE trial's F5; was 23,444,
    s = z: 1,000 + 3,000 x exp(2.7055) / 2 = 23,444), within the 16,000-token slot, so each replica's batch cap is
    what memory holds at the slot, as the Assumptions row says. Where an untruncated output's tail still runs past
    the slot (100 / p95 100 prompt, 1,000 / p95 3,800 output, 3.8: s = 1.4563, 100 + 1,000 x exp(2.1209) / 2 =
    4,269 > 3,900) the cap is what memory holds at 4,269 tokens, and the row says that instead."""
    from planner.export.assumptions import _cap_words

    w = trial_workload()
    assert (w.sizing_context_tokens, w.inflight_context_tokens, w.batch_cap_context_tokens) == (16000, 4874, 16000)
    assert (
        _cap_words(w) == "what memory holds when every sequence may reach the p95 prompt + p95 output (16,000 tokens)"
    )
    short = trial_workload(
        prompt_tokens_mean=100, prompt_tokens_high=100, output_tokens_mean=1000, output_tokens_high=3800
    )
    assert (short.sizing_context_tokens, short.batch_cap_context_tokens) == (3900, 4269)
    assert _cap_words(short).startswith(
        "what memory holds when every sequence is at the mean context a decode step reads (4,269 tokens"
    )


def test_the_context_in_flight_is_continuous_at_the_bound():
    """Output 3,000 / p95 11,600 (3.867) with prompts 1,000 / p95 3,800: truncated at its 15,400-token slot like 11,605
    (3.868, past the bound) in 15,405: 1,000 + E[o^2] / 2E[o] = 4,745 and 4,747 tokens, both within the slot (main
    kept the untruncated s = 1.6173 at 11,600: 1,000 + 3,000 x exp(1.6173^2) / 2 = 21,516, past the slot, warned
    about, a jump of 16,769 tokens for 5 of p95; docs/hypotheses/truncate-at-slot.md). Only the length past the bound
    is said (its ratio needs the slot). A context in flight past the slot is left only where the slot is too close to
    the high output for any truncated fit (100 / p95 100 prompt, 1,000 / p95 3,800 output in 3,900 tokens: the
    untruncated lognormal, 4,269 tokens), and that is warned about."""
    at, past = (trial_workload(prompt_tokens_high=3800, output_tokens_high=h) for h in (11600, 11605))
    assert (at.inflight_context_tokens, past.inflight_context_tokens) == (4745, 4747)
    assert (at.batch_cap_context_tokens, past.batch_cap_context_tokens) == (15400, 15405)
    assert at.spread_fit_note == "" and past.spread_fit_note.startswith(
        "output: the p95 of 11,605 tokens is 3.87 x the mean of 3,000"
    )
    short = trial_workload(
        prompt_tokens_mean=100, prompt_tokens_high=100, output_tokens_mean=1000, output_tokens_high=3800
    )
    assert short.spread_fit_note == (
        "the output's lognormal (p95 / mean 3.80, within any lognormal's reach) has a tail so long that the mean "
        "context a decode step reads, 4,269 tokens, is past the 3,900-token slot: decode is timed there and each "
        "replica's batch cap is what memory holds there, and drawn requests run past the slot to the model's context "
        "(a lognormal is not truncated)"
    )


def test_an_untruncated_length_beside_a_truncated_one_keeps_its_mean():
    """Trial 28 F16: 1,500 / p95 5,800 prompts (3.87: in the 7,000-token slot no truncated lognormal reaches it,
    so the untruncated fit) with 300 / p95 1,200 outputs (truncated at the slot). Each request was cut at the slot,
    which drew the prompts' mean at 1,108, 26% short; now only lengths whose fits are truncated are held to the slot,
    and 200,000 draws give the stated means within their sampling error (the prompts' cv 2.5: 0.6%, so 2%)."""
    drawn = np.array(spread_lengths(1500, 5800, 300, 1200, 95, 200_000, 131_072))
    assert drawn[:, 0].mean() == pytest.approx(1500, rel=0.02)
    assert drawn[:, 1].mean() == pytest.approx(300, rel=0.02)
    assert np.percentile(drawn[:, 0], 95) == pytest.approx(5800, rel=0.02)
