"""Trial 24 F5: the what-if workbook's stale fleet estimate was 4.4x off after an ordinary edit.

The trial's workbook (``planner workbook --gpus H100,H200,B200,MI300X --models llama3.3-70b,qwen3-235b-a22b,
gpt-oss-120b``) opens on Llama-3.3-70B on H100 SXM 80GB, bf16, 4,096 tokens, the GPU count blank (2 a replica). The
trial typed context 2,400, weights fp8, 2 GPUs, prompt 2,000 and a TPOT target of 60 ms, and recalculated in
LibreOffice: the Inputs read "~148 est." GPUs and "~$388,404 est." (STALE), the opening's queue term (Calc's rate
factor 0.218) applied to another scenario, where ``planner workbook refresh`` (and ``planner plan --gpus 2 --rate
40``) put it at 17 x 2 = 34 GPUs (factor 0.93). Another scenario's queue term is no estimate of this one's, and a
no-queue factor of 1 is no lower bound either (the simulated factor exceeds 1 with loose targets: 1.07 to 1.21 on the
default workbook's levers at TTFT 20 s, TPOT 200 ms), so the sheets now read "not known: refresh" there
(``inputs.STALE_FLEET``), as "Meets the latency targets" reads "not known". Where only the peak traffic changed, each
replica serves what was simulated, so the old factor still sizes the fleet up to the rounding: "~N est." stays
(trial 23's test_a_stale_estimate_compares_the_same_groups; Calc's stale_unknown row).

Expected values: the refreshed fleet from planner's own simulation (``load_figures``, what ``refresh`` stores), the
stale figure from Calc's fleet row (the formula on the opening's rate factor), the words from ``planner.workbook``.
"""

from __future__ import annotations

import math

import pytest
from workbook_support import recalculate_inputs, require_libreoffice

from planner.accuracy.calibration import resolve_calibration
from planner.catalog import default_catalog
from planner.engines.profiles import engine_profile
from planner.workbook.build import build_whatif, select_entries
from planner.workbook.calc import SCENARIOS, calc_rows, scenario_col
from planner.workbook.inputs import ESTIMATE_SUFFIX, GLANCE, STALE_FLEET, STALE_UNIT, default_inputs, glance_row
from planner.workbook.layout import CALC_SHEET, INPUTS_SHEET, LEVERS_SHEET, LOAD_SHEET
from planner.workbook.load_figures import load_figures
from planner.workbook.load_sheet import STATUS_CELL

pytestmark = [pytest.mark.libreoffice, pytest.mark.xdist_group("test_workbook_trial24")]

GPUS = ["H100", "H200", "B200", "MI300X"]
MODELS = ["llama3.3-70b", "qwen3-235b-a22b", "gpt-oss-120b"]
#: The trial's edits to Inputs (F5: B6 context, B8 weights, B9 GPUs, B17 prompt, B18 TPOT target).
EDIT = dict(context=2400, weight_precision="fp8", gpus=2, prompt_tokens=2000, tpot_target_ms=60)
CASES = {"trial": EDIT, "peak_only": dict(peak_requests_per_s=60)}
CALC = calc_rows(lever_kv="fp8", lever_weights="fp8")


@pytest.fixture(scope="module")
def spec():
    return build_whatif(gpus=GPUS, models=MODELS)


@pytest.fixture(scope="module")
def books(spec, tmp_path_factory):
    require_libreoffice()
    return recalculate_inputs(spec, CASES, tmp_path_factory.mktemp("trial24"))


def _glance(book, key: str, col: str = "B"):
    return book[INPUTS_SHEET][f"{col}{glance_row() + [g[1] for g in GLANCE].index(key) + 1}"].value


def _calc(book, key: str, scenario: str = "base"):
    return book[CALC_SHEET][f"{scenario_col(scenario)}{CALC.row_of[key]}"].value


def _levers_row(book, label: str) -> int:
    return next(i for i, r in enumerate(book[LEVERS_SHEET].iter_rows(max_col=1), 1) if r[0].value == label)


def _refreshed_gpus(edit: dict) -> int:
    """The fleet ``planner workbook refresh`` stores for the edited Inputs: the needed replicas x the group."""
    cat = default_catalog()
    engine = engine_profile(None)
    opening = {**default_inputs(cat, *select_entries(cat, GPUS, MODELS), engine.name), **edit}
    base = load_figures(opening, cat, engine, resolve_calibration(None)).levers[0]
    return base.needed_replicas * edit["gpus"]


class TestF5StaleFleetAfterAnOrdinaryEdit:
    def test_the_edit_leaves_the_load_sheet_stale_on_the_openings_queue_term(self, books):
        book = books["trial"]
        assert book[LOAD_SHEET][STATUS_CELL].value.startswith("STALE")
        assert _calc(book, "stale") == 1 and _calc(book, "stale_unknown") == 1
        # the opening's factor (the trial's Calc!C305), still what Calc's formula sizes on
        assert _calc(book, "rate_used") == pytest.approx(0.218, abs=0.001)

    def test_calcs_old_factor_figure_is_several_times_the_refreshed_fleet(self, books):
        """Why no number is shown: Calc's figure on the old factor (the trial's 148) against the refreshed 34."""
        stale, refreshed = _calc(books["trial"], "fleet_gpus"), _refreshed_gpus(EDIT)
        assert refreshed == 34  # 17 x 2: the trial's refreshed workbook and planner plan --gpus 2 --rate 40
        assert stale == 148 and stale / refreshed > 4

    def test_inputs_and_levers_read_not_known_not_the_old_factors_figure(self, books):
        book = books["trial"]
        assert _glance(book, "fleet_gpus") == _glance(book, "fleet_usd_month") == STALE_FLEET
        assert _glance(book, "fleet_gpus", "C") == STALE_UNIT
        for label in ("Requests/s one replica takes", "Replicas for the peak", "Fleet GPUs", "Fleet cost per month"):
            r = _levers_row(book, label)
            cells = [book[LEVERS_SHEET][f"{scenario_col(k)}{r}"].value for k, _, _ in SCENARIOS]
            assert cells[0] == STALE_FLEET, cells
            assert not any(isinstance(v, (int, float)) or (isinstance(v, str) and v.endswith(ESTIMATE_SUFFIX))
                           for v in cells), cells  # fmt: skip

    def test_only_the_peak_changed_keeps_the_estimate(self, books):
        """Each replica serves what was simulated: the old factor at the new peak, ceil(60 / (factor x no-queue
        rate)) replicas, Calc's figure, as words."""
        book = books["peak_only"]
        assert _calc(book, "stale") == 1 and _calc(book, "stale_unknown") == 0
        col = "base" if _calc(book, "headline") == 1 else "more_gpus"  # the headline's group (GPU count blank)
        gpus = _calc(book, "fleet_gpus", col)
        replicas = math.ceil(60 / _calc(book, "rate_repl", col) - 1e-9)
        assert gpus == replicas * _calc(book, "n", col)
        assert _glance(book, "fleet_gpus") == f"~{gpus:,.0f}{ESTIMATE_SUFFIX}"
        r = _levers_row(book, "Replicas for the peak")  # a number, marked STALE in its unit cell
        assert book[LEVERS_SHEET][f"{scenario_col('base')}{r}"].value == _calc(book, "replicas")
