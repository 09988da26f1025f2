"""``planner plan --json`` and the long-tail fit (trial 27 F12; docs/model.md, the ``--prompt-tokens-high`` item):
the truncated fit's warning in ``warnings`` and ``under_load.length_fit``, and a refusal as a JSON error object."""

from __future__ import annotations

import json
import math

import pytest
from cli_support import run

from planner.cli.plan import error_as_dict
from planner.serving.load import LongTailError

#: A small deployment at a low rate (one replica): only the lengths matter here
BASE = ["plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "16384", "--gpus", "1", "--rate", "0.5",
        "--prompt-tokens", "1500", "--prompt-tokens-high", "4000"]  # fmt: skip
#: Trial 27 F12's output lengths: 3,000 / p95 12,000 tokens, 4.00 x the mean, past any lognormal's 3.87, in a
#: 4,000 + 12,000 = 16,000-token slot
LONG_TAIL = ["--output-tokens", "3000", "--output-tokens-high", "12000"]
#: 600 / p95 12,000 output tokens: 20.00 x the mean, Markov's 1 / (1 - 0.95): past any distribution's reach, and
#: past the 18.82 the two-part mixture within 16,000 reaches (``planner.serving.load.long_tail_ratio_bound``; the
#: 1,000 / p95 12,000 refused here before the MoE trial's F5, 12.00, past the truncated lognormal's 4.82, fits now)
TOO_LONG = ["--output-tokens", "600", "--output-tokens-high", "12000"]


@pytest.fixture(scope="module")
def long_tail_runs():
    """The trial's lengths under --json and as text (each a sizing run, a few seconds)."""
    return run(*BASE, *LONG_TAIL, "--json"), run(*BASE, *LONG_TAIL)


@pytest.fixture(scope="module")
def refused_run():
    return run(*BASE, *TOO_LONG, "--json")


def test_json_states_the_long_tail_fit(long_tail_runs):
    """Exit 0; ``under_load.length_fit.output`` is the two-part mixture within the 16,000-token slot with s = 2.3107
    and mu = 7.7706, its long share 0.05 split at 12,000 (tests/test_long_tail.py, trial 27 F12's lengths; the
    lognormal truncated at the slot before the MoE trial's F5, s = 2.5906, mu = 7.9960); the prompt's 1,500 / 4,000 (2.67,
    within 3.87) truncated at the same slot too (a known slot truncates every fit: docs/hypotheses/truncate-at-slot.md)."""
    r, _ = long_tail_runs
    assert r.exit_code == 0, r.output
    fit = json.loads(r.stdout)["under_load"]["length_fit"]
    assert fit["slot_tokens"] == 16000
    assert fit["lognormal_ratio_bound"] == pytest.approx(math.exp(1.6448536269514722**2 / 2))  # exp(z^2 / 2) at p95
    out = fit["output"]
    assert (out["mean_tokens"], out["high_tokens"], out["high_over_mean"]) == (3000, 12000, 4.0)
    assert out["truncated"] is True and out["truncated_at_tokens"] == 16000
    assert out["distribution"] == "two-part mixture" and out["split_tokens"] == 12000
    assert out["long_share"] == pytest.approx(0.05)
    assert (out["s"], out["mu"]) == (pytest.approx(2.3107, abs=5e-5), pytest.approx(7.7706, abs=5e-5))
    assert fit["prompt"]["truncated"] is True and fit["prompt"]["truncated_at_tokens"] == 16000
    assert fit["prompt"]["distribution"] == "truncated lognormal"


def test_json_warnings_carry_the_text_outputs_long_tail_warning(long_tail_runs):
    """The long-tail sentence the text prints under its lengths line (``warning: output: the p95 of ... x the
    mean ... (detail: ... two-part mixture ...)``, trial 34 F8's plain words first) is one of --json's ``warnings``,
    word for word."""
    r, text = long_tail_runs
    assert text.exit_code == 0, text.output
    said = [line.strip().removeprefix("warning: ") for line in text.stdout.splitlines() if "two-part mixture" in line]
    assert len(said) == 1 and said[0].startswith("output: the p95 of 12,000 tokens is 4.00 x the mean of 3,000")
    assert said[0] in json.loads(r.stdout)["warnings"]


def test_json_refuses_a_tail_nothing_fits_as_an_error_object(refused_run):
    """600 / p95 12,000 output tokens: exit 2 (bad input, as without --json), stdout one JSON object naming
    ``LongTailError``, the output length, its 20.00 ratio and the 16,000-token slot; the usual stderr line too."""
    r = refused_run
    assert r.exit_code == 2
    err = json.loads(r.stdout)["error"]
    assert err["kind"] == "LongTailError" and err["exit_code"] == 2 and err["length"] == "output"
    assert (err["mean_tokens"], err["high_tokens"], err["high_over_mean"]) == (600, 12000, 20.0)
    assert err["slot_tokens"] == 16000 and "above the 18.82 a two-part mixture" in err["message"]
    assert r.stderr.strip() == f"planner: error: {err['message']}"


def test_text_refusal_prints_nothing_on_stdout():
    """Without --json the refusal is the stderr line alone (``planner.cli.fail``), exit 2."""
    r = run(*BASE, *TOO_LONG)
    assert r.exit_code == 2 and r.stdout == "" and "has no lognormal fit" in r.stderr


def test_error_object_of_a_long_tail_with_no_slot_has_a_null_slot():
    """A ``LongTailError`` with no slot (``length_fit`` given none: 3,000 / p95 12,000 past 3.87) says
    ``slot_tokens`` null (JSON has no Infinity) and its length unnamed as null."""
    err = error_as_dict(LongTailError(3000, 12000, 95.0))["error"]
    assert err["slot_tokens"] is None and err["length"] is None and err["exit_code"] == 2
    assert err["high_over_mean"] == 4.0
    json.dumps(err, allow_nan=False)  # valid JSON


def test_json_refuses_other_bad_input_as_an_error_object_too():
    """Any refusal ``plan`` makes once its options are read is the same JSON object: --output-tokens-high below
    --output-tokens (``_check_high_lengths``), ``InvalidInputError``, exit 2."""
    r = run(*BASE, "--output-tokens", "3000", "--output-tokens-high", "2000", "--json")
    assert r.exit_code == 2
    err = json.loads(r.stdout)["error"]
    assert err["kind"] == "InvalidInputError" and "is below --output-tokens" in err["message"]
