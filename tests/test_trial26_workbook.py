"""Trial 26's findings on the what-if workbook's Inputs (an FP&A analyst in LibreOffice Calc; /work/trial26-findings.md):

- F16: the headline fleet and its monthly cost are "before spares, whole nodes and latency margin", while
  ``planner export`` of the same file budgeted 3x more (12 GPUs against 4); the headline money cell is the one a user
  copies into a budget. Inputs now carry a second pair of rows, "Budget (planner export: margin, spare)" and its
  cost, computed by planner with the review's own sizing when the Load sheet is, "not known: refresh"
  once the Inputs change.
- F8: "Cost at max batch ... US$/M out tok" was read beside the review's cost per token (10x apart); the label now
  says, as ``planner plan`` does, that it is decode only, at full batch, 100% busy, not a budget rate.

Sources of the expected values: ``planner export``'s own functions on the same file (``scenario_from_workbook``,
``build_review``, ``sized_in_layouts``), ``planner plan``'s wording (``planner.cli.plan``), the words the sheets write
(``planner.workbook.inputs``), and the price x 730 h rule of ``planner.export.sizing.HOURS_PER_MONTH``; every figure is
read from the workbook as LibreOffice recalculates it.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import openpyxl
import pytest
from workbook_support import (
    BookValues,
    convert_to_csv_sheets,
    recalculate_inputs,
    require_libreoffice,
    with_inputs_xlsx,
)

from planner.catalog import default_catalog
from planner.export.review import build_review, sized_in_layouts
from planner.export.sizing import HOURS_PER_MONTH
from planner.export.workbook_input import scenario_from_workbook
from planner.workbook.budget_fleet import budget_fleet
from planner.workbook.build import build_whatif
from planner.workbook.calc import NO_FLEET_ASKED
from planner.workbook.inputs import (
    ESTIMATE_SUFFIX,
    GLANCE,
    STALE_FLEET,
    STALE_UNIT,
    default_inputs,
    glance_row,
)
from planner.workbook.layout import (
    BUY_OR_RENT_NOTE,
    COST_AT_MAX_BATCH_LABEL,
    INPUTS_SHEET,
    REVIEW_FLEET_LABEL,
    input_row,
)
from planner.workbook.update import refresh
from planner.workbook.writer import write_workbook

pytestmark = [pytest.mark.libreoffice, pytest.mark.xdist_group("test_trial26_workbook")]

#: A small workbook on the opening scenario (Llama 2 70B on 4 x H100, 40 requests/s of 400 output tokens, TPOT 50 ms,
#: TTFT 1,500 ms): its Inputs are ``default_inputs``'.
GPUS, MODELS = ["H100"], ["llama2-70b"]
#: Edits to Inputs, by case: the price alone (not an input the sizing reads), a context (the Load sheet stale), the
#: peak alone (the peak fleet an estimate, the budget not), no peak traffic.
CASES = {
    "opening": {},
    "price_2": dict(price_per_gpu_hour=2.0),
    "context_2048": dict(context=2048),
    "peak_only": dict(peak_requests_per_s=60),
    "peak_blank": dict(peak_requests_per_s=None),
}


@pytest.fixture(scope="module")
def spec():
    return build_whatif(gpus=GPUS, models=MODELS)


@pytest.fixture(scope="module")
def books(spec, tmp_path_factory):
    require_libreoffice()
    return recalculate_inputs(spec, CASES, tmp_path_factory.mktemp("trial26"))


@pytest.fixture(scope="module")
def shipped(spec, tmp_path_factory):
    """The workbook as ``planner workbook`` writes it, and ``planner export``'s review of that file."""
    path = write_workbook(spec, tmp_path_factory.mktemp("trial26-file") / "book.xlsx", force=True)
    catalog = default_catalog()
    return path, build_review(scenario_from_workbook(path, catalog), catalog, source=str(path), date="2026-12-07")


def _row(key: str) -> int:
    return glance_row() + [g[1] for g in GLANCE].index(key) + 1


def _glance(book, key: str, col: str = "B"):
    return book[INPUTS_SHEET][f"{col}{_row(key)}"].value


class TestF16BudgetFleetIsTheReviews:
    """F16: the workbook's fleet was a third of the review's; the budget rows are the review's fleet and cost."""

    def test_the_budget_rows_are_planner_exports_recommendation(self, books, shipped):
        """``planner export`` of the file as written: its recommended fleet (124 GPUs, $325,419.40 a month at the
        catalog's $3.595 on the day this was written) is what the budget rows show, and more than the peak fleet's 96
        (its +25% margin and a spare replica)."""
        _, review = shipped
        book = books["opening"]
        assert _glance(book, "review_gpus") == review.recommended.gpus
        assert _glance(book, "review_usd_month") == pytest.approx(review.recommended.monthly_usd, rel=1e-12)
        assert _glance(book, "review_gpus") > _glance(book, "fleet_gpus")
        assert _glance(book, "review_gpus", "C") == "GPUs" and _glance(book, "review_usd_month", "C") == "US$ a month"
        assert book[INPUTS_SHEET][f"A{_row('review_gpus')}"].value == REVIEW_FLEET_LABEL
        assert all(words in REVIEW_FLEET_LABEL for words in ("Budget", "planner export", "margin", "spare"))

    def test_the_note_says_what_the_fleet_is(self, books, shipped):
        _, review = shipped
        note = _glance(books["opening"], "review_gpus", "D")
        r = review.recommended
        assert note == (
            f"planner export's sizing: {int(r.fleet.replicas)} replicas of {int(r.replica.gpus)} GPUs incl. "
            f"{r.option.spare_replicas} spare, +{r.margin:.0%} latency margin"
        ), note
        cost_note = _glance(books["opening"], "review_usd_month", "D")
        assert cost_note == f"rented: = {r.gpus:,} GPUs x $3.595 per GPU-hour x 730 h a month", cost_note

    def test_the_peak_fleets_note_says_it_is_not_a_budget(self, books):
        assert "not a budget; the budget fleet is below" in _glance(books["opening"], "fleet_gpus", "D")

    def test_a_price_typed_reprices_the_budget_by_formula(self, books):
        """The price per GPU-hour is no input of the Load sheet (its Status stays current) and moves no fleet: the
        cost is the formula budget GPUs x price x 730 h (``HOURS_PER_MONTH``)."""
        opening, book = books["opening"], books["price_2"]
        gpus = _glance(book, "review_gpus")
        assert gpus == _glance(opening, "review_gpus")
        assert _glance(book, "review_usd_month") == pytest.approx(gpus * 2.0 * HOURS_PER_MONTH, rel=1e-12)

    def test_the_price_moves_no_budget_fleet(self):
        """The rule the formula rests on (``budget_fleet``'s docstring): the review's fleet at another price is the
        same GPUs (every group is priced per GPU alike)."""
        catalog = default_catalog()
        gpus, models = [catalog.gpu("H100")], [catalog.model("llama2-70b")]
        inputs = default_inputs(catalog, gpus, models)
        assert budget_fleet({**inputs, "price_per_gpu_hour": 2.0}, catalog).gpus == budget_fleet(inputs, catalog).gpus

    def test_where_the_review_sizes_none_the_row_says_why(self):
        """A TPOT target no deployment meets (1.5 ms): no figure, the review's shortfall in its words."""
        catalog = default_catalog()
        inputs = default_inputs(catalog, [catalog.gpu("H100")], [catalog.model("llama2-70b")])
        fleet = budget_fleet({**inputs, "tpot_target_ms": 1.5}, catalog)
        assert fleet.gpus is None
        assert fleet.words.startswith("none meets the targets: best TPOT") and "> target 1.5 ms" in fleet.words

    def test_after_an_edit_the_budget_is_not_known(self, books):
        """As the peak fleet reads after an edit: no number, the unit cell STALE."""
        book = books["context_2048"]
        assert _glance(book, "review_gpus") == _glance(book, "review_usd_month") == STALE_FLEET
        assert _glance(book, "review_gpus", "C") == _glance(book, "review_usd_month", "C") == STALE_UNIT
        assert "until planner workbook refresh" in _glance(book, "review_gpus", "D")

    def test_the_peak_alone_changed_gives_no_budget_estimate(self, books):
        """The peak fleet shows "~N est." there (the old queue term at the new peak); the review's margin and spare
        are not a rescaling, so the budget reads "not known"."""
        book = books["peak_only"]
        assert str(_glance(book, "fleet_gpus")).endswith(ESTIMATE_SUFFIX)
        assert _glance(book, "review_gpus") == _glance(book, "review_usd_month") == STALE_FLEET

    def test_no_peak_traffic_asks_for_no_budget(self, books):
        book = books["peak_blank"]
        words = NO_FLEET_ASKED["rps"].split(" (")[0]
        assert _glance(book, "review_gpus") == _glance(book, "review_usd_month") == _glance(book, "fleet_gpus") == words


@pytest.fixture(scope="module")
def refreshed(spec, tmp_path_factory):
    """The file with its context edited to 2,048 tokens (Load sheet stale), refreshed, recalculated by LibreOffice."""
    require_libreoffice()
    tmp = tmp_path_factory.mktemp("trial26-refresh")
    base = write_workbook(spec, tmp / "base.xlsx", force=True).read_bytes()
    path = tmp / "edited.xlsx"
    path.write_bytes(with_inputs_xlsx(base, spec, CASES["context_2048"]))
    refresh(path)
    sheets = openpyxl.load_workbook(path, read_only=True).sheetnames
    return path, BookValues(convert_to_csv_sheets([path], sheets, tmp / "recalculated", timeout_s=1800)[0])


class TestF16RefreshComputesTheBudget:
    def test_refresh_writes_the_reviews_fleet_for_the_new_inputs(self, refreshed):
        """After ``planner workbook refresh`` the budget rows are current again and are the fleet ``planner export``
        sizes from the refreshed file (its reader, ``scenario_from_workbook``, and its sizing, ``sized_in_layouts``)."""
        path, book = refreshed
        catalog = default_catalog()
        scenario = scenario_from_workbook(path, catalog)
        result, _ = sized_in_layouts(scenario.option[0], scenario, catalog)
        assert result.meets
        assert _glance(book, "review_gpus") == result.gpus
        assert _glance(book, "review_usd_month") == pytest.approx(result.monthly_usd, rel=1e-12)
        assert _glance(book, "review_gpus", "C") == "GPUs"


class TestF8CostAtMaxBatchSaysWhatItIs:
    """F8: three "$ per M output tokens" across surfaces; the workbook's is decode alone at full batch."""

    def test_the_label_says_decode_only_full_batch_busy_not_a_budget_rate(self, books):
        label = books["opening"][INPUTS_SHEET][f"A{_row('m_cost')}"].value
        assert label == COST_AT_MAX_BATCH_LABEL
        for words in ("decode only", "full batch", "100% busy", "not a budget rate"):
            assert words in label, words

    def test_plan_words_its_cost_so(self):
        """``planner plan``'s row: "... per million output tokens, decode only, 100% busy; prompt processing not
        included" (planner.cli.plan)."""
        from planner.cli import plan

        assert "per million output tokens, decode only, 100% busy" in inspect.getsource(plan)


class TestF7TheWorkbookSaysItPricesARental:
    """F7: no purchase price, amortization or cost of capital on Inputs, and an export of the workbook prices a rental
    too; the price's note and the docs send buy vs rent to a scenario TOML (the block of buy inputs is not built)."""

    def test_the_price_note_says_so(self, books):
        note = books["opening"][INPUTS_SHEET][f"D{input_row('price_per_gpu_hour')}"].value
        assert note == BUY_OR_RENT_NOTE
        assert "catalog's rent" in note and "Buy vs rent: planner export of a scenario TOML" in note

    def test_an_export_of_the_workbook_rents(self, shipped):
        """What the note says of the export: the workbook's option is priced as a rental (``cloud``)."""
        _, review = shipped
        assert review.recommended.option.pricing == "cloud"

    def test_the_docs_say_so(self):
        root = Path(__file__).resolve().parents[1] / "docs"
        assert "for buy vs rent run `planner export` on a scenario TOML" in (root / "workbooks.md").read_text()
        assert "for buy vs rent, write a scenario TOML" in (root / "export.md").read_text()
