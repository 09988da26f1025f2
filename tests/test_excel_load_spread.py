"""PLANNER_WHY of the percentile functions (TTFT_P50 ... TPOT_P99) gives the same percentile over the rate's arrival
draws (``planner.serving.fleet.sampling_spread``, the draws REPLICAS' edge warning runs: ``draws_edge``), in the words
of ``fleet.spread_note``; the cell itself runs one draw, as before.

The case is trial 30 F4's fleet (tests/test_excel_trial30.py): 3 requests/s of 4,000 / 500 tokens on H100 x 4
llama3.3-70b, p95 targets 2 s / 50 ms, which REPLICAS sizes at 2 replicas and whose PLANNER_WHY warns that 4 of 5
arrival draws miss the p95 targets. One of those replicas, 1.5 requests/s (replicas 2), has TPOT_P95 48.6 ms, plan's
"TPOT 48.6 ms against 50 ms"; its WHY now shows the draws reaching past the 50 ms target.
"""

from __future__ import annotations

import pytest

import planner.excel.functions as xf
from planner.serving import fleet
from planner.serving.fleet import SamplingSpread, spread_note

#: One replica of trial 30 F4's 2: its share of 3 requests/s, replicas 2 (``LOAD_PARAMS``' 16th argument).
ONE_OF_TWO = ("H100", "llama3.3-70b", 1.5, 4000, 500, 4, *([None] * 9), 2)
WORDS = "over 5 arrival draws of this traffic (seeds 0-4; the figure shown is seed 0's draw): another sample of the "
WORDS += "same traffic lands about this far either way"


@pytest.fixture(scope="module")
def tpot_why() -> str:
    return xf.PLANNER_WHY("TPOT_P95", *ONE_OF_TWO)


def test_spread_note_words():
    spread = SamplingSpread(99.0, (0, 1, 2, 3, 4), (1.04, 1.31), (0.0486, 0.0611), 0)
    assert spread_note(spread, "ttft") == f"sampling spread: p99 TTFT 1.04 s to 1.31 s {WORDS}"
    assert spread_note(spread, "tpot") == f"sampling spread: p99 TPOT 48.6 ms to 61.1 ms {WORDS}"


def test_the_edge_fleets_tpot_why_shows_draws_past_the_target(tpot_why):
    """The cell: 48.6 ms (trial 30's plan, "TPOT 48.6 ms against 50 ms"); over the 5 draws 48.6 to 61.1 ms (this
    computation, ``sampling_spread`` at seeds 0-4): past the 50 ms target in the draws REPLICAS' warning counts."""
    assert xf.TPOT_P95(*ONE_OF_TWO) == pytest.approx(48.6, abs=0.05)
    assert tpot_why == f"ok; sampling spread: p95 TPOT 48.6 ms to 61.1 ms {WORDS}"
    warning = xf.PLANNER_WHY("REPLICAS", "H100", "llama3.3-70b", 3, 4000, 500, 2, 0.05, 95, 4)
    assert "4 of 5 arrival draws of this traffic miss the p95 targets at 2 replicas" in warning


def test_the_cell_runs_one_draw(monkeypatch, tpot_why):
    """The draws run in PLANNER_WHY only: the cell's number does not call ``sampling_spread``."""
    before = xf.TTFT_P95(*ONE_OF_TWO)

    def refused(*args, **kwargs):
        raise AssertionError("the cell ran the arrival draws")

    monkeypatch.setattr(fleet, "sampling_spread", refused)
    assert xf.TTFT_P95(*ONE_OF_TWO) == before
    assert xf.PLANNER_WHY("TTFT_P95", *ONE_OF_TWO) == "ok"  # (the note's failure leaves the reason alone)


def test_a_refused_cell_keeps_its_reason():
    """One output token has no TPOT: the cell's own reason, no spread."""
    why = xf.PLANNER_WHY("TPOT_P95", "H100", "llama3.1-8b", 1, 800, 1)
    assert why == "one output token has no time per output token after the first; give output_tokens of 2 or more"
