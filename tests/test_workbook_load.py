"""The what-if workbook's Load sheet: each lever's latency against traffic, computed by planner's serving simulation
(issue 22, build item 3). Its figures are numbers written when the workbook is made or refreshed, not formulas; the
LibreOffice checks (they survive a recalculation, Status turns stale) are in test_workbook_libreoffice.py.
"""

from __future__ import annotations

import openpyxl
import pytest

from planner import api
from planner.accuracy.calibration import resolve_calibration
from planner.catalog import default_catalog
from planner.engines.profiles import engine_profile
from planner.serving.fleet import fewest_replicas
from planner.serving.load import Replica, latency_under_load
from planner.workbook.build import build_whatif, select_entries
from planner.workbook.calc import SCENARIOS, scenario_col
from planner.workbook.inputs import default_inputs
from planner.workbook.layout import INPUTS_SHEET, LEVERS_SHEET, LOAD_SHEET, input_row
from planner.workbook.load_figures import LOAD_MULTIPLES, load_figures, scheduler_of
from planner.workbook.load_sheet import STATUS_CELL, TITLE, load_sheet
from planner.workbook.reader import WorkbookError
from planner.workbook.update import refresh_load
from planner.workbook.writer import write_workbook

#: The workbook's opening inputs (inputs.OPENING) with examples/budget-review.toml's workload (layout.BUDGET_DEFAULTS):
#: Llama 2 70B on 4 x H100 at 4,096 tokens a sequence, 40 requests/s of 400 output tokens, p99 targets 1.5 s / 50 ms.
GPU, MODEL, CONTEXT, GPUS = "H100 SXM 80GB", "Llama-2-70B", 4096, 4
PEAK, OUTPUT, TTFT_TARGET_S, TPOT_TARGET_S = 40.0, 400, 1.5, 0.050


@pytest.fixture(scope="module")
def spec():
    return build_whatif()


def _rows(sheet) -> dict[str, int]:
    """Column A's text -> its row."""
    return {c.value: int(ref[1:]) for ref, c in sheet.cells.items() if ref[0] == "A" and ref[1:].isdigit()}


def _block(sheet, title_start: str) -> dict[float, dict[str, float | None]]:
    """A figure table of the sheet: multiple of the peak -> {scenario key: ms or None}."""
    top = next(r for text, r in _rows(sheet).items() if isinstance(text, str) and text.startswith(title_start))
    out = {}
    for i, mult in enumerate(LOAD_MULTIPLES):
        r = top + 2 + i
        assert sheet.cells[f"B{r}"].value == mult
        out[mult] = {k: getattr(sheet.cells.get(f"{scenario_col(k)}{r}"), "value", None) for k, _, _ in SCENARIOS}
    return out


class TestTheSheetSaysWhereItsFiguresComeFrom:
    def test_follows_levers_and_is_labelled_computed_by_planner(self, spec):
        """The Load sheet sits after Levers; its title, its note and a cell note say the figures come from planner's
        queue simulation, are not recalculated by Excel, and how to compute them again."""
        names = [s.name for s in spec.sheets]
        assert names.index(LOAD_SHEET) == names.index(LEVERS_SHEET) + 1
        sheet = spec.sheet(LOAD_SHEET)
        title = sheet.cells["A1"]
        assert title.value == TITLE and "computed by planner's queue simulation (not by Excel)" in title.value
        for text in (title.comment, sheet.cells["A2"].value):
            assert "not recalculate" in text and "planner workbook refresh" in text and "Inputs" in text

    def test_lists_the_inputs_it_was_computed_from_and_checks_them_with_formulas(self, spec):
        """Column B holds the Inputs used (the opening ones); C and D are formulas over the Inputs now; Status
        counts the changed ones."""
        sheet = spec.sheet(LOAD_SHEET)
        used = {sheet.cells[f"A{r}"].value: sheet.cells[f"B{r}"].value for r in range(7, 20)}
        assert used["GPU"] == GPU and used["Model"] == MODEL and used["Context per sequence (tokens)"] == CONTEXT
        assert used["Peak traffic (requests/s)"] == PEAK and used["TTFT target (time to first token) (ms)"] == 1500
        assert used["Engine (Assumptions)"] == "vllm"
        assert sheet.cells["C7"].value == '=IF(in_gpu="","",in_gpu)'
        assert sheet.cells["D7"].value == '=IF(EXACT(""&B7,""&C7),"yes","changed")'
        assert sheet.cells[STATUS_CELL].value.startswith('=IF(COUNTIF(D7:D19,"changed")=0,"current')

    def test_figures_are_numbers_not_formulas(self, spec):
        """A queue simulation is not a cell formula: every figure cell holds a number (or is blank)."""
        for key in ("TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99"):
            for row in _block(spec.sheet(LOAD_SHEET), key).values():
                assert all(v is None or isinstance(v, float) for v in row.values()), key

    def test_four_line_charts_one_line_per_lever_and_the_target_dashed(self, spec):
        charts = spec.sheet(LOAD_SHEET).charts
        assert [c.title for c in charts] == [
            f"{q} against traffic (ms)" for q in ("TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99")
        ]
        for c in charts:
            assert len(c.series) == len(SCENARIOS) + 1 and c.series[-1].title == "Target" and c.series[-1].dash


class TestFiguresArePlannersPythonApi:
    def test_baseline_at_the_peak_equals_latency_under_load(self, spec):
        """The Baseline column at 1x the peak is ``latency_under_load`` of one of the replicas the simulation needs
        (``fewest_replicas``, p99 within the targets), each taking 40 requests/s / replicas, prompts of 4,096 - 400
        tokens, ``max_num_seqs`` = the max batch the Levers sheet runs at (``api.memory_plan``)."""
        batch = int(api.memory_plan(GPU, MODEL, CONTEXT, gpus=GPUS).max_batch)
        replica = Replica(GPU, MODEL, GPUS, max_num_seqs=batch)
        prompt = CONTEXT - OUTPUT
        needed = fewest_replicas(
            replica, prompt, OUTPUT, PEAK, percentile=99, ttft_target_s=TTFT_TARGET_S, tpot_target_s=TPOT_TARGET_S
        ).replicas
        run = latency_under_load(replica, prompt, OUTPUT, rate_per_s=PEAK / needed)
        sheet = spec.sheet(LOAD_SHEET)
        rows = _rows(sheet)
        batch_row = rows["Max batch (the engine's max_num_seqs here)"]
        needed_row = rows["Replicas the simulation needs (p99 within targets)"]
        assert sheet.cells[f"C{batch_row}"].value == batch
        assert sheet.cells[f"C{needed_row}"].value == needed
        for block, want in (
            ("TTFT p50", run.ttft_s.p50),
            ("TTFT p99", run.ttft_s.p99),
            ("TPOT p50", run.tpot_s.p50),
            ("TPOT p99", run.tpot_s.p99),
        ):
            assert _block(sheet, block)[1.0]["base"] == want * 1e3, block
        # sized on its p99, the fleet meets both targets at the peak
        assert run.ttft_s.p99 <= TTFT_TARGET_S and run.tpot_s.p99 <= TPOT_TARGET_S

    def test_levers_fleet_is_short_of_the_simulated_one_for_long_prompts(self, spec):
        """The Levers sheet sizes each replica by its requests' share of the steps at max batch plus one prefill each,
        with no queue (``api.peak_fleet``: 16 replicas for the baseline); the simulation's p99 targets need more
        replicas for every lever."""
        sheet = spec.sheet(LOAD_SHEET)
        rows = _rows(sheet)
        levers_row = rows["Replicas for the peak, Levers sheet (no queue)"]
        needed_row = rows["Replicas the simulation needs (p99 within targets)"]
        fleet = api.peak_fleet(GPU, MODEL, CONTEXT, peak_requests_per_s=PEAK, output_tokens=OUTPUT, gpus=GPUS)
        assert sheet.cells[f"C{levers_row}"].value == fleet.replicas == 16
        for key, _, _ in SCENARIOS:
            col = scenario_col(key)
            assert sheet.cells[f"{col}{needed_row}"].value > sheet.cells[f"{col}{levers_row}"].value, key

    def test_the_high_percentile_is_never_below_the_median(self, spec):
        sheet = spec.sheet(LOAD_SHEET)
        for metric in ("TTFT", "TPOT"):
            p50, p99 = _block(sheet, f"{metric} p50"), _block(sheet, f"{metric} p99")
            for mult in LOAD_MULTIPLES:
                for key, value in p50[mult].items():
                    assert (value is None) == (p99[mult][key] is None)
                    assert value is None or p99[mult][key] >= value


class TestTheSimulatedEngine:
    def test_each_engine_family_gets_its_scheduler(self):
        """A release profile simulates with its family's scheduler (SGLang's retraction, TensorRT-LLM's policy);
        an engine without one (lmdeploy, ideal) with vLLM's."""
        want = {"vllm-0.10": "vllm", "sglang-0.5.1": "sglang", "tensorrt-llm-0": "tensorrt-llm", "lmdeploy": "vllm"}
        assert {name: scheduler_of(engine_profile(name)) for name in want} == want


class TestWithoutTraffic:
    def test_blank_peak_traffic_is_not_computed_and_says_why(self):
        """No peak traffic on Inputs: nothing is simulated; the sheet says so instead of showing figures."""
        inputs = dict(gpu=GPU, model=MODEL, context=CONTEXT, gpus=GPUS, peak_requests_per_s=None, output_tokens=400)
        f = load_figures(inputs, default_catalog(), engine_profile(None), resolve_calibration(None))
        assert f.note == "not computed: no peak traffic on Inputs (a number above 0)"
        assert all(lever.runs == () for lever in f.levers)
        sheet = load_sheet(f)
        assert f.note in [c.value for c in sheet.cells.values()]
        assert all(v is None for row in _block(sheet, "TTFT p99").values() for v in row.values())


class TestRefreshComputesTheSheetAgain:
    def test_refresh_load_simulates_the_workbooks_inputs(self, spec, tmp_path):
        """``refresh`` rewrites the Load sheet from the file's Inputs (here 10 requests/s instead of 40), in place;
        figures equal ``load_figures`` of those inputs. Called without LibreOffice (refresh itself stores values)."""
        path = write_workbook(spec, tmp_path / "copy.xlsx")
        wb = openpyxl.load_workbook(path)
        wb[INPUTS_SHEET][f"B{input_row('peak_requests_per_s')}"] = 10
        wb.save(path)
        wb = openpyxl.load_workbook(path, rich_text=True)
        cat, eng, cal = default_catalog(), engine_profile(None), resolve_calibration(None)
        refresh_load(wb, path, cat, eng, cal)
        assert wb.sheetnames.index(LOAD_SHEET) == wb.sheetnames.index(LEVERS_SHEET) + 1
        ws = wb[LOAD_SHEET]
        assert len(ws._charts) == 4
        used = {ws[f"A{r}"].value: ws[f"B{r}"].value for r in range(7, 20)}
        assert used["Peak traffic (requests/s)"] == 10
        inputs = {**default_inputs(cat, *select_entries(cat, None, None)), "peak_requests_per_s": 10}
        want = load_sheet(load_figures(inputs, cat, eng, cal))
        for ref, cell in want.cells.items():
            assert ws[ref].value == cell.value, ref

    def test_a_sheet_named_load_that_planner_did_not_write_is_refused(self, spec, tmp_path):
        path = write_workbook(spec, tmp_path / "copy.xlsx")
        wb = openpyxl.load_workbook(path)
        wb[LOAD_SHEET]["A1"] = "my own load tests"
        with pytest.raises(WorkbookError, match="'Load' was not written by planner"):
            refresh_load(wb, path, default_catalog(), engine_profile(None), resolve_calibration(None))
