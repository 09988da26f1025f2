"""Trial 19's findings on the what-if workbook's fleet figures (F2, F3, F11, F12), each checked on the shipped
workbook's description recalculated by LibreOffice with the trial's edits to Inputs (/tmp/out19/tools/run.sh set the
same cells; its findings.md names each edit).

Sources of the expected values: the Levers' own simulated columns of the opening (the Load sheet's rate factors, as
``planner workbook`` stores them), Calc's fleet rows, and the words the sheets write (``planner.workbook.calc`` and
``planner.workbook.inputs``), so a test fails where a cell says otherwise.
"""

from __future__ import annotations

import re

import pytest
from workbook_support import recalculate_inputs, require_libreoffice

from planner.workbook.build import build_whatif
from planner.workbook.calc import NO_FLEET_ASKED, SCENARIOS, STALE_MEETS, UNKNOWN_SHORT, calc_rows, scenario_col
from planner.workbook.inputs import GLANCE, STALE_FLEET, STALE_UNIT, glance_row, why_error_row
from planner.workbook.layout import CALC_SHEET, INPUTS_SHEET, LEVERS_SHEET, LOAD_LEVER_ROWS, LOAD_SHEET
from planner.workbook.load_sheet import STATUS_CELL

pytestmark = [pytest.mark.libreoffice, pytest.mark.xdist_group("test_trial19_workbook")]

#: The trial's edits to the shipped Inputs, by case.
CASES = {
    "opening": {},
    "context_8192": dict(context=8192),  # F2: an ordinary edit: the Load sheet is stale
    "weights_fp8": dict(weight_precision="FP8"),  # F3: the Weights fp8 lever's scenario, typed on Inputs
    "kv_fp8": dict(kv_precision="FP8"),  # F3: the KV cache fp8 lever's
    "compare_only": dict(compare_model="Llama-2-13B"),  # the baseline's own scenario: only the compare model differs
    "peak_blank": dict(peak_requests_per_s=None),  # F11
    "batch_500": dict(batch=500),  # F12
}
CALC = calc_rows(lever_kv="fp8", lever_weights="fp8")


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    """Each case recalculated by LibreOffice (one call)."""
    require_libreoffice()
    return recalculate_inputs(build_whatif(), CASES, tmp_path_factory.mktemp("trial19"))


def _glance(book, key: str, col: str = "B"):
    return book[INPUTS_SHEET][f"{col}{glance_row() + [g[1] for g in GLANCE].index(key) + 1}"].value


def _calc(book, key: str, scenario: str = "base"):
    return book[CALC_SHEET][f"{scenario_col(scenario)}{CALC.row_of[key]}"].value


def _levers_row(book, label: str) -> int:
    return next(i for i, r in enumerate(book[LEVERS_SHEET].iter_rows(max_col=1), 1) if r[0].value == label)


#: The opening's verdict: 4 of 5 arrival draws miss at its 24 replicas, as planner plan --rate warns of the same fleet
#: (``planner.serving.fleet.draws_edge``; trial 30 F4)
OPENING_MEETS = "yes, at the edge: 4 of 5 arrival draws miss the p95 targets; 25 replicas still miss them in 1 of 5"


class TestF2AStaleFleetIsNoNumber:
    """F2: after an edit the fleet and its monthly cost were numbers in currency format beside "STALE: refresh", 18-21%
    under the refreshed figure, and were copied into a budget."""

    def test_current_figures_are_numbers(self, books):
        book = books["opening"]
        assert _glance(book, "fleet_gpus") == 96 and _glance(book, "fleet_usd_month") == pytest.approx(251937.6)
        assert _glance(book, "fleet_gpus", "C") == "GPUs"

    def test_stale_figures_are_words_not_the_old_factors_estimate(self, books):
        """Inputs and Levers read "not known: refresh" (text: not summed) where the context changed: Calc's figure
        rests on the old rate factor, another scenario's queue term (trial 24 F5 found it 4.4x off; "~N est." stays
        only where the peak alone changed: test_workbook_trial24.py); the unit cells say STALE."""
        book = books["context_8192"]
        assert book[LOAD_SHEET][STATUS_CELL].value.startswith("STALE")
        assert isinstance(_calc(book, "fleet_gpus"), (int, float)) and _calc(book, "stale_unknown") == 1
        assert _glance(book, "fleet_gpus") == _glance(book, "fleet_usd_month") == STALE_FLEET
        assert _glance(book, "fleet_gpus", "C") == _glance(book, "fleet_usd_month", "C") == STALE_UNIT
        for label in ("Fleet GPUs", "Fleet cost per month"):
            r = _levers_row(book, label)
            cells = [book[LEVERS_SHEET][f"{scenario_col(k)}{r}"].value for k, _, _ in SCENARIOS]
            assert all(v == STALE_FLEET for v in cells), cells


class TestF3ALeverSimulatedTheInputsScenario:
    """F3: typing the Weights fp8 lever's scenario on Inputs gave 88 GPUs (STALE) beside the lever's simulated 76."""

    @pytest.mark.parametrize("case,lever", [("weights_fp8", "weights_fp8"), ("kv_fp8", "kv_fp8")])
    def test_the_baseline_takes_that_levers_run(self, books, case, lever):
        opening, book = books["opening"], books[case]
        assert book[LOAD_SHEET][STATUS_CELL].value.startswith("STALE")
        assert _calc(book, "sim_lever") == [k for k, _, _ in SCENARIOS].index(lever) + 1
        assert _glance(book, "fleet_gpus") == _calc(opening, "fleet_gpus", lever)  # 76 and 92 GPUs
        assert _glance(book, "fleet_usd_month") == pytest.approx(_calc(opening, "fleet_usd_month", lever))
        assert _glance(book, "fleet_gpus", "C") == "GPUs"
        # the lever's own verdict, its edge words too (Calc's edge_used: INDEX by sim_lever; trial 30 F4)
        assert _glance(book, "meets_text") == _calc(opening, "meets_text", lever)
        assert _glance(book, "meets_text").startswith("yes, at the edge: ")
        sized = book[LEVERS_SHEET][f"C{_levers_row(book, 'Fleet sized by')}"].value
        header = dict((k, h) for k, h, _ in SCENARIOS)[lever]
        assert sized == f"simulated p95 under load (the {header} lever's run)"
        # the other levers are for the old baseline: not judged, and so no cheapest fleet is named
        cheapest = book[LEVERS_SHEET][f"C{_levers_row(book, 'Cheapest fleet that meets the targets')}"].value
        assert cheapest == UNKNOWN_SHORT[STALE_MEETS]

    def test_the_compare_model_alone_leaves_the_baseline_current(self, books):
        book = books["compare_only"]
        assert book[LOAD_SHEET][STATUS_CELL].value.startswith("STALE")
        assert _calc(book, "sim_lever") == 1
        assert _glance(book, "fleet_gpus") == 96 and _glance(book, "meets_text") == OPENING_MEETS

    def test_an_edit_no_lever_ran_matches_none(self, books):
        assert _calc(books["context_8192"], "sim_lever") in ("", None)

    def test_the_load_sheet_rows_calc_reads_are_its_lever_table(self, books):
        """``layout.LOAD_LEVER_ROWS`` are the rows the Load sheet writes each lever's model, context, precisions and
        group in."""
        load = books["opening"][LOAD_SHEET]
        labels = {k: load[f"A{r}"].value for k, r in LOAD_LEVER_ROWS.items()}
        assert labels == {
            "model": "Model",
            "context": "Context",
            "kv_precision": "KV-cache precision",
            "weight_precision": "Weight precision",
            "gpus": "GPUs per replica",
            "prompt_tokens": "Prompt tokens per request (typed, or context - output)",  # trial 22 F13
        }


class TestF11NoPeakTrafficIsNoError:
    """F11: a blank peak traffic gave #N/A and "run planner workbook refresh" instead of "no peak traffic given"."""

    def test_the_fleet_says_no_peak_traffic(self, books):
        book = books["peak_blank"]
        assert _glance(book, "fleet_gpus") == _glance(book, "fleet_usd_month") == "no peak traffic given"
        assert _glance(book, "meets_text") == NO_FLEET_ASKED["rps"]
        assert _glance(book, "fleet_gpus", "C") == "GPUs"
        assert not re.search("refresh", str(_glance(book, "meets_text")))


class TestF12ABatchRefusedLeavesTheFleetJudged:
    """F12: a batch above the max batch marked the fleet's verdict "not known" beside a current fleet sized at max
    batch: the fleet and its verdict now agree."""

    def test_the_error_line_names_the_batch_and_the_fleet_stands(self, books):
        book = books["batch_500"]
        assert book[INPUTS_SHEET][f"D{why_error_row()}"].value.startswith("Error: batch 500 is more than")
        assert _glance(book, "fleet_gpus") == 96
        assert _glance(book, "meets_text") == OPENING_MEETS


class TestF4ThePriceIsOnThePrintedPage:
    """F4: no printed page stated the $/GPU-hour used, and the GPUs sheet and plan rounded 3.595 to $3.60, so 96 x
    $3.60 x 730 did not reproduce the $251,937.60 printed."""

    def test_inputs_state_the_price_and_the_monthly_formula(self, books):
        book = books["opening"]
        price = _calc(book, "price")
        assert price == pytest.approx(3.595)
        cost_note = _glance(book, "m_cost", "D")
        assert cost_note.startswith(
            "US$ per million output tokens, decode only, at $3.595 per GPU-hour (on-demand, catalog: median of 4 quotes"
        )
        assert _glance(book, "fleet_usd_month", "D") == "rented: = 96 GPUs x $3.595 per GPU-hour x 730 h a month"
        assert 96 * price * 730 == pytest.approx(_glance(book, "fleet_usd_month"))

    def test_results_state_the_price_beside_the_cost(self, books):
        results = books["opening"]["Results"]
        r = next(
            i
            for i, row in enumerate(results.iter_rows(max_col=1), 1)
            if row[0].value == "Cost per million output tokens"
        )
        assert "at $3.595 per GPU-hour" in results[f"D{r}"].value

    def test_a_fleet_not_known_gives_its_formula_without_a_count(self, books):
        """Where Inputs other than the peak changed the cost reads "not known: refresh", and its formula in words
        carries no count either (trial 29 F13: "rented: ~ 152 GPUs x ..." beside it, the refreshed fleet 64; the
        "~" estimate stays where the peak alone changed, tests/test_workbook_trial24.py)."""
        assert (
            _glance(books["context_8192"], "fleet_usd_month", "D") == "fleet GPUs x price per GPU-hour x 730 h a month"
        )

    def test_plan_prints_the_price_to_its_last_digit(self):
        from planner.units import fmt_usd_per_gpu_hour

        assert [fmt_usd_per_gpu_hour(x) for x in (3.595, 3.6, 2.5, 1234.5)] == ["$3.595", "$3.60", "$2.50", "$1,234.50"]


class TestF7TheFp8LeverCarriesTheQualityCaveat:
    """F7: the Levers sheet named fp8 weights the cheapest fleet that "serves the same requests" with no word on
    quality, where the budget review asks for a sign-off before the saving is booked."""

    def test_beside_the_cheapest_fleet_the_reviews_words(self, books):
        from planner.export.quality import lever_quality_text

        book = books["opening"]
        r = _levers_row(book, "Quality: Weights fp8")
        want = lever_quality_text("Weights fp8", "Llama-2-70B", "fp8", "fp16")
        assert book[LEVERS_SHEET][f"C{r}"].value == want
        assert "sign-off by the model owner on an evaluation of your own traffic before this saving is booked" in want

    def test_a_published_delta_is_quoted(self):
        from planner.catalog import default_catalog
        from planner.workbook.catalog_sheets import fp8_quality

        cat = default_catalog()
        assert "RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8 scores 84.29 against 84.40" in fp8_quality(
            cat, cat.model("llama3.1-70b")
        )
        assert fp8_quality(cat, cat.model("deepseek-v3")) == ""  # published in fp8: the lever changes nothing
