"""The what-if workbook's Load sheet: each lever's latency against traffic, computed by planner's serving simulation
(issue 22, build item 3). Its figures are numbers written when the workbook is made or refreshed, not formulas; the
LibreOffice checks (they survive a recalculation, Status turns stale) are in test_workbook_libreoffice.py.
"""

from __future__ import annotations

import dataclasses
import math
import re
import shutil
from pathlib import Path

import openpyxl
import pytest
from workbook_support import scenario_inputs, stored_rate_factors

from planner import api
from planner.accuracy.calibration import resolve_calibration
from planner.catalog import default_catalog
from planner.catalog.loader import Table
from planner.engines.profiles import engine_profile
from planner.errors import InvalidInputError, OutOfRangeError
from planner.serving.benchmark import scheduler_of
from planner.serving.fleet import fewest_replicas
from planner.serving.load import Replica, latency_under_load
from planner.workbook.assumptions import read_engine, simulated_parameters
from planner.workbook.build import build_whatif, select_entries
from planner.workbook.calc import SCENARIOS, calc_rows, scenario_col
from planner.workbook.inputs import default_inputs
from planner.workbook.layout import INPUTS_SHEET, LEVERS_SHEET, LOAD_SHEET, input_row
from planner.workbook.load_figures import LOAD_MULTIPLES, load_figures, load_key, rate_factors
from planner.workbook.load_sheet import (
    AT_ONCE_LABEL,
    ENGINE_ROW_LABEL,
    STATUS_CELL,
    TITLE,
    load_sheet,
)
from planner.workbook.reader import WorkbookError
from planner.workbook.update import refresh_load
from planner.workbook.writer import write_workbook

#: The workbook's opening inputs (inputs.OPENING) with examples/budget-review.toml's workload (layout.BUDGET_DEFAULTS):
#: Llama 2 70B on 4 x H100 at 4,096 tokens a sequence, 40 requests/s of 400 output tokens, p95 targets 1.5 s / 50 ms.
GPU, MODEL, CONTEXT, GPUS = "H100 SXM 80GB", "Llama-2-70B", 4096, 4
PEAK, OUTPUT, TTFT_TARGET_S, TPOT_TARGET_S = 40.0, 400, 1.5, 0.050
NEEDED = "Replicas needed: p95 within targets (Levers' fleet)"


@pytest.fixture(scope="module")
def spec():
    return build_whatif()


@pytest.fixture(scope="module")
def written(spec, tmp_path_factory) -> Path:
    """``spec`` as write_workbook writes it, once for the module (~0.8 s CPU a write): read it only."""
    return write_workbook(spec, tmp_path_factory.mktemp("written") / "book.xlsx")


@pytest.fixture
def copy(written, tmp_path) -> Path:
    """A test's own copy of ``written`` (the same bytes), to change as it likes."""
    path = tmp_path / "copy.xlsx"
    shutil.copyfile(written, path)
    return path


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
        used = {sheet.cells[f"A{r}"].value: sheet.cells[f"B{r}"].value for r in range(7, 23)}
        assert used["GPU"] == GPU and used["Model"] == MODEL and used["Context per sequence (tokens)"] == CONTEXT
        assert used["Peak traffic (requests/s)"] == PEAK and used["TTFT target (time to first token) (ms)"] == 1500
        assert used["Engine (Assumptions)"] == "vllm" and used["Prompt share in the prefix cache (share)"] is None
        assert used["Traffic burstiness (gamma shape)"] == 1  # Poisson (tests/test_trial10_excel.py)
        assert used["Prompt tokens per request (tokens)"] is None  # blank: context - output (trial 22 F13)
        assert sheet.cells["C7"].value == '=IF(in_gpu="","",in_gpu)'
        # a name in any case, as the lookups match it (trial 13 F12: tests/test_trial13_workbook.py); a number only by
        # a number (D9: the context)
        assert sheet.cells["D7"].value == '=IF(EXACT(UPPER(""&B7),UPPER(""&C7)),"yes","changed")'
        assert sheet.cells["D9"].value.startswith("=IF(AND(ISNUMBER(B9)=ISNUMBER(C9),")
        # and the latency percentile and high lengths' block beside it (F-I, trial 28 F8: tests/test_workbook_percentile)
        assert sheet.cells[STATUS_CELL].value.startswith(
            '=IF((COUNTIF(D7:D23,"changed")+COUNTIF(I7:I10,"changed"))=0,"current'
        )
        assert sheet.cells["A23"].value == ENGINE_ROW_LABEL  # the engine parameters' row (test below)

    def test_lists_the_engine_parameters_it_was_simulated_with(self, spec):
        """The foot of the sheet lists each engine parameter the runs used, as the Assumptions sheet holds it (vLLM's
        memory utilization 0.9, its four KV-cache formats one a row), beside a formula over that cell now: the row
        the Computed-from block's engine row counts, so that an edited Assumptions cell turns Status stale (trial 6
        F6: memory utilization 0.9 -> 0.5 left the sheet "current" at a simulated batch memory no longer holds)."""
        sheet = spec.sheet(LOAD_SHEET)
        rows = _rows(sheet)
        r = rows["memory_utilization"]
        assert sheet.cells[f"B{r}"].value == 0.9 == engine_profile(None).memory_utilization
        assert sheet.cells[f"C{r}"].value == '=IF(eng_memory_utilization="","",eng_memory_utilization)'
        assert sheet.cells[f"C{rows['kv_precisions (4)']}"].value.startswith('=IF(INDEX(eng_kv_precisions,4)=""')
        first, last = rows["budget_mode"], rows["sparse_mla_prefill_max_heads"]
        assert sheet.cells["D23"].value == f'=IF(COUNTIF(D{first}:D{last},"changed")=0,"yes","changed")'
        # one row per parameter; the table's second part repeats the subtitle and header (tests/test_trial13_print.py)
        params = [
            r
            for r in range(first, last + 1)
            if str(getattr(sheet.cells.get(f"D{r}"), "value", "")).startswith("=IF(IF(")
        ]
        assert len(params) == len(simulated_parameters(engine_profile(None)))

    def test_figures_are_numbers_not_formulas(self, spec):
        """A queue simulation is not a cell formula: every figure cell holds a number (or is blank)."""
        for key in ("TTFT p50", "TTFT p95", "TPOT p50", "TPOT p95"):
            for row in _block(spec.sheet(LOAD_SHEET), key).values():
                assert all(v is None or isinstance(v, float) for v in row.values()), key

    def test_four_line_charts_one_line_per_lever_and_the_target_dashed(self, spec):
        charts = spec.sheet(LOAD_SHEET).charts
        assert [c.title for c in charts] == [
            f"{q} against traffic (ms)" for q in ("TTFT p50", "TTFT p95", "TPOT p50", "TPOT p95")
        ]
        for c in charts:
            assert len(c.series) == len(SCENARIOS) + 1 and c.series[-1].title == "Target" and c.series[-1].dash


class TestFiguresArePlannersPythonApi:
    def test_baseline_at_the_peak_equals_latency_under_load(self, spec):
        """The Baseline column at 1x the peak is ``latency_under_load`` of one of the replicas the simulation needs
        (``fewest_replicas``, p95 within the targets), each taking 40 requests/s / replicas, prompts of 4,096 - 400
        tokens, on the replica ``planner plan --rate`` simulates: no ``max_num_seqs`` given, the engine's own (1,024
        on an H100), the KV cache admitting what it holds of the 3,696-token prompts (129; trial 28 F7:
        what memory holds at the whole context, 117, before; the closed form's TPOT-best batch, 39, before s197)."""
        batch = int(api.memory_plan(GPU, MODEL, CONTEXT, gpus=GPUS).max_batch)
        prompt = CONTEXT - OUTPUT
        replica = Replica(GPU, MODEL, GPUS)
        at_once = replica.setup(prompt, OUTPUT).cap
        assert (batch, at_once) == (117, 129)
        needed = fewest_replicas(
            replica, prompt, OUTPUT, PEAK, percentile=95, ttft_target_s=TTFT_TARGET_S, tpot_target_s=TPOT_TARGET_S
        ).replicas
        run = latency_under_load(replica, prompt, OUTPUT, rate_per_s=PEAK / needed)
        sheet = spec.sheet(LOAD_SHEET)
        rows = _rows(sheet)
        assert sheet.cells[f"C{rows['Max batch (memory)']}"].value == batch
        assert sheet.cells[f"C{rows[AT_ONCE_LABEL]}"].value == at_once
        assert sheet.cells[f"C{rows[NEEDED]}"].value == needed
        for block, want in (
            ("TTFT p50", run.ttft_s.p50),
            ("TTFT p95", run.ttft_s.p95),
            ("TPOT p50", run.tpot_s.p50),
            ("TPOT p95", run.tpot_s.p95),
        ):
            assert _block(sheet, block)[1.0]["base"] == want * 1e3, block
        # sized on its p95, the fleet meets both targets at the peak
        assert run.ttft_s.p95 <= TTFT_TARGET_S and run.tpot_s.p95 <= TPOT_TARGET_S

    def test_the_levers_fleet_formula_gives_the_simulated_fleet(self, spec):
        """With no queue (``api.peak_fleet`` at rate factor 1) the baseline would be 18 replicas; the simulation needs
        more. Calc stores each lever's rate factor, and ``api.peak_fleet`` with it (what the Levers formula
        computes) gives exactly the replicas the simulation needs, for every lever."""
        sheet = spec.sheet(LOAD_SHEET)
        rows = _rows(sheet)
        factors = stored_rate_factors(spec)
        no_queue = api.peak_fleet(GPU, MODEL, CONTEXT, peak_requests_per_s=PEAK, output_tokens=OUTPUT, gpus=GPUS)
        assert sheet.cells[f"C{rows['Replicas for the peak with no queue']}"].value == no_queue.replicas == 18
        inputs = default_inputs(default_catalog(), *select_entries(default_catalog(), None, None))
        for key, _, _ in SCENARIOS:
            col = scenario_col(key)
            needed = sheet.cells[f"{col}{rows[NEEDED]}"].value
            s = scenario_inputs(inputs, key)
            fleet = api.peak_fleet(
                s["gpu"], s["model"], s["context"], peak_requests_per_s=PEAK, output_tokens=OUTPUT, gpus=s["gpus"],
                kv_precision=s["kv_precision"], weight_precision=s["weight_precision"], rate_factor=factors[key],
            )  # fmt: skip
            assert factors[key] != 1.0 and fleet.replicas == needed, key
        assert sheet.cells[f"C{rows[NEEDED]}"].value > 18

    def test_the_high_percentile_is_never_below_the_median(self, spec):
        sheet = spec.sheet(LOAD_SHEET)
        for metric in ("TTFT", "TPOT"):
            p50, p95 = _block(sheet, f"{metric} p50"), _block(sheet, f"{metric} p95")
            for mult in LOAD_MULTIPLES:
                for key, value in p50[mult].items():
                    assert (value is None) == (p95[mult][key] is None)
                    assert value is None or p95[mult][key] >= value


class TestPeakFleetRateFactor:
    def test_the_rate_factor_scales_the_rate_per_replica(self):
        """``api.peak_fleet``'s queue term multiplies the no-queue rate: half the factor, half the requests/s per
        replica, and the replicas ceil(40 / that) (18 with no queue for the opening baseline since s189's asynchronous
        vLLM host loop; 19 before it; 18 with the latency + bandwidth all-reduce fit)."""
        kw = dict(peak_requests_per_s=PEAK, output_tokens=OUTPUT, gpus=GPUS)
        one, half = (api.peak_fleet(GPU, MODEL, CONTEXT, rate_factor=f, **kw) for f in (1.0, 0.5))
        assert half.rate_per_replica_s == pytest.approx(one.rate_per_replica_s / 2, rel=1e-15)
        assert (one.replicas, half.replicas) == (18, math.ceil(PEAK / half.rate_per_replica_s))

    @pytest.mark.parametrize(
        ("factor", "error", "message"),
        [
            (0, OutOfRangeError, "rate_factor must be above 0 and finite (1: no queue); got 0"),
            (math.inf, OutOfRangeError, "rate_factor must be above 0 and finite (1: no queue); got inf"),
            ("0.7", InvalidInputError, "rate_factor must be a number; got '0.7'"),
        ],
    )
    def test_a_bad_rate_factor_is_one_line(self, factor, error, message):
        with pytest.raises(error) as exc:
            api.peak_fleet(GPU, MODEL, CONTEXT, peak_requests_per_s=PEAK, output_tokens=OUTPUT, rate_factor=factor)
        assert str(exc.value) == message


class TestTheSimulatedBatchIsOneTheEngineServes:
    #: Llama 3.1 8B on one H100 at 512 tokens (256 prompt + 256 output): with KV in fp8, and on 2 GPUs, memory holds
    #: more sequences than vLLM runs at once (its max_num_seqs on an H100, 1,024: engines.profiles)
    INPUTS = dict(
        gpu=GPU, model="Llama-3.1-8B", gpus=1, compare_model=None, context=512, kv_precision=None,
        weight_precision=None, memory_utilization=None, output_tokens=256, peak_requests_per_s=PEAK,
        ttft_target_ms=None, tpot_target_ms=None,
    )  # fmt: skip

    @pytest.mark.parametrize("tpot_target_ms", [None, 200.0])
    def test_each_lever_simulates_the_engines_own_limit_as_plan(self, tpot_target_ms):
        """Each lever's simulated max_num_seqs is the engine's own limit, `planner plan`'s (``engine_batch_limit``)
        and the one its ``--rate`` replica runs (``replica_of``: none given), with a TPOT target or without; the most
        at once is that replica's (``Replica.setup``'s cap: the limit, or what the KV cache holds at the request's
        length), never above the limit (trial 28 F7: the memory's max batch at the whole context, before)."""
        from planner.report import plan, replica_of

        ttft_target_ms = None if tpot_target_ms is None else 2000.0  # targets come in pairs (Load: fewest_replicas)
        inputs = {**self.INPUTS, "tpot_target_ms": tpot_target_ms, "ttft_target_ms": ttft_target_ms}
        levers = [
            v for v in load_figures(inputs, default_catalog(), engine_profile(None), None).levers if v.batch_limit
        ]
        capped = 0
        for v in levers:
            s = v.inputs
            p = plan(
                s["gpu"], s["model"], s["context"], gpus=s["gpus"], kv_precision=s["kv_precision"],
                weight_precision=s["weight_precision"],
            )  # fmt: skip
            assert v.max_batch == int(p.memory.max_batch), v.key
            assert v.batch_limit == p.engine_batch_limit == 1024, v.key  # vLLM's on an H100, target or none
            assert v.at_once == replica_of(p).setup(v.prompt_tokens, v.output_tokens).cap <= v.batch_limit, v.key
            capped += p.batch_capped
        assert capped >= 2 and len(levers) >= 4  # "More GPUs" and "KV cache fp8" hold more than 1,024


class TestSameFleetAsTheReview:
    def test_readme_example_what_if_fleet_is_the_exports_rule_at_its_own_batch(self):
        """examples/budget-review.toml's baseline ("H100, rented"): ``planner export`` keeps 4 x H100 SXM 80GB
        replicas and needs 9 serving replicas (10 with the scenario's one spare: 40 GPUs, five 8-GPU nodes) for 40 x 1.5
        = 60 requests/s at p95 TTFT and TPOT within its targets, at batch 107: the most whose slots each hold a
        high-percentile sequence (3,000 + 1,200 tokens). The what-if workbook given the same scenario (that GPU and
        group, prompt 800 + output 400 = a 1,200-token context, 60 requests/s, those targets; it has no spare) sizes its
        Levers fleet as ``planner plan --rate`` does: the engine's own max_num_seqs (1,024), its KV cache holding what
        its 800-token prompts admit (563 at once; trial 28 F7: memory's max batch at the whole context, here
        also 1,200 tokens, before; the closed form's TPOT-best 141 before s197) and it needs 9 (8 before
        s202's +25% margin tightened the review's goals, which the workbook is given here). Where the TPOT
        target sets the batch the two agree (11 and 11 before s189's asynchronous vLLM host loop made TPOT the looser
        limit here; 12 with a +14% margin, before the served rows were simulated as the load path simulates them)."""
        from planner.export.evaluate import evaluate
        from planner.export.scenario import load_scenario

        scenario = load_scenario(Path(__file__).parents[1] / "examples" / "budget-review.toml")
        option = next(o for o in scenario.option if o.name == scenario.baseline)
        cat = default_catalog()
        # every request at the mean lengths, as the workbook's requests are (the review's default spread needs 11)
        w = scenario.workload.model_copy(update={"sizing_lengths": "means"})
        review = evaluate(option, w, cat, scenario.traffic_change)
        serving = int(review.fleet.replicas_needed) - option.spare_replicas
        gpus = int(review.replica.gpus)
        assert (review.gpu.name, gpus, serving, int(review.fleet.gpus)) == ("H100 SXM 80GB", 4, 9, 40)
        memory_cap = api.max_batch(review.gpu.name, review.model.name, w.sizing_context_tokens, gpus=gpus)
        # the slots (max_num_seqs) are what memory holds at the high lengths; the closed form's batch is the TPOT goal's
        # under the +25% margin (s202's MIN_SOURCES rule: 50 ms / 1.25 = 40 ms), 95 at the 1,225 tokens in flight of the
        # output's fit truncated at the 4,200-token slot (docs/hypotheses/truncate-at-slot.md; 94 at the untruncated 1,277)
        assert w.inflight_context_tokens == 1225
        assert int(review.batch_per_replica) == memory_cap == 107 and int(review.replica.batch) == 95
        inputs = dict(
            gpu=review.gpu.name, model=review.model.name, gpus=gpus, compare_model=None,
            context=int(w.prompt_tokens_mean + w.output_tokens_mean), kv_precision=None, weight_precision=None,
            memory_utilization=None, output_tokens=int(w.output_tokens_mean),
            peak_requests_per_s=review.peak_rate_per_s, ttft_target_ms=review.ttft_goal_s * 1e3,
            tpot_target_ms=review.tpot_goal_s * 1e3,
        )  # fmt: skip
        base = next(v for v in load_figures(inputs, cat, engine_profile(None), None).levers if v.key == "base")
        fleet = api.peak_fleet(
            review.gpu.name, review.model.name, inputs["context"], peak_requests_per_s=review.peak_rate_per_s,
            output_tokens=inputs["output_tokens"], gpus=gpus, rate_factor=base.rate_factor,
        )  # fmt: skip
        assert (base.inputs["gpu"], base.inputs["gpus"], base.batch_limit, base.at_once, base.needed_replicas) == (
            review.gpu.name, gpus, 1024, Replica(review.gpu.name, review.model.name, gpus).setup(800, 400).cap, 9,
        )  # fmt: skip
        assert base.at_once == 563  # the KV cache over 800-token prompts: 375 x 1,200 / 800 (vLLM admits on prompts)
        assert (fleet.replicas, fleet.gpus) == (base.needed_replicas, base.needed_replicas * gpus)


class TestPrefixCacheInput:
    """The Inputs' "Prompt share in the prefix cache" (issue 22: a hit rate as an input): every Load run computes only
    the rest of each prompt, so the fleet it sizes (and the Levers' fleet through the rate factor) never grows, and a
    review read from the workbook carries the share."""

    INPUTS = dict(
        gpu=GPU, model=MODEL, gpus=GPUS, compare_model=None, context=CONTEXT, kv_precision=None,
        weight_precision=None, memory_utilization=None, output_tokens=OUTPUT, peak_requests_per_s=PEAK,
        ttft_target_ms=TTFT_TARGET_S * 1e3, tpot_target_ms=TPOT_TARGET_S * 1e3,
    )  # fmt: skip

    def test_the_runs_compute_the_uncached_share(self):
        cat = default_catalog()

        def base(**more):
            figures = load_figures({**self.INPUTS, **more}, cat, engine_profile(None), None)
            return next(v for v in figures.levers if v.key == "base")

        # Llama 2 70B on 4 x H100, 40 requests/s of 3,696 / 400 tokens, half of each prompt cached (s182: 26 -> 19
        # replicas; p50 TTFT at the lightest load 309 -> 180 ms though each replica takes more)
        plain, cached = base(), base(prefix_hit_rate=0.5)
        assert cached.needed_replicas < plain.needed_replicas
        assert cached.runs[0].ttft_s.p50 < plain.runs[0].ttft_s.p50
        from doc_support import stated

        assert stated("docs/workbooks.md", r"at 0\.5 the baseline needs (\d+) replicas") == (cached.needed_replicas,)
        assert base(prefix_hit_rate=None).runs == plain.runs  # blank: nothing cached

    def test_a_review_of_the_workbook_takes_the_share(self):
        from planner.export.workbook_input import workbook_scenario_data

        got = workbook_scenario_data({**self.INPUTS, "prefix_hit_rate": 0.25}, "book.xlsx")["workload"]
        assert got["prefix_hit_rate"] == 0.25
        assert "prefix_hit_rate" not in workbook_scenario_data(self.INPUTS, "book.xlsx")["workload"]


class TestTheSimulatedEngine:
    def test_each_engine_family_gets_its_scheduler(self):
        """A release profile simulates with its family's scheduler (SGLang's retraction, TensorRT-LLM's policy);
        an engine without one (lmdeploy, ideal) with vLLM's."""
        want = {"vllm-0.10": "vllm", "sglang-0.5.1": "sglang", "tensorrt-llm-0": "tensorrt-llm", "lmdeploy": "vllm"}
        assert {name: scheduler_of(engine_profile(name)) for name in want} == want


class TestComputedOncePerProcess:
    def test_the_same_inputs_are_not_simulated_again(self, monkeypatch):
        """``load_figures`` keeps what it computed (``_MEMO``): the same inputs again, or read back from a file as
        40.0 where 40 was written, give the same scenarios without simulating, with the caller's own ``inputs``; a
        context typed 4096.0 (copied into each scenario's inputs), another peak, or a cleared memo simulate. (Each
        scenario stubbed: the memo is under test, not the simulation.)"""
        import planner.workbook.load_figures as lf

        calls = []

        def stub(key, header, inputs, *rest, **options):
            calls.append(key)
            return lf.LeverLoad(key, header, {"context": inputs["context"]})

        monkeypatch.setattr(lf, "_lever", stub)
        monkeypatch.setattr(lf, "_MEMO", lf.OrderedDict())
        cat, eng, cal = default_catalog(), engine_profile(None), resolve_calibration(None)
        inputs = default_inputs(cat, *select_entries(cat, None, None))
        assert isinstance(inputs["peak_requests_per_s"], int) and inputs["context"] == 4096
        first = lf.load_figures(inputs, cat, eng, cal)
        assert len(calls) == len(SCENARIOS)
        again = lf.load_figures(dict(inputs), cat, eng, cal)
        read_back = lf.load_figures({**inputs, "peak_requests_per_s": 40.0}, cat, eng, cal)
        assert len(calls) == len(SCENARIOS)
        assert again.levers is first.levers and read_back.levers is first.levers
        assert repr(read_back.inputs["peak_requests_per_s"]) == "40.0" and again.inputs == first.inputs
        typed = lf.load_figures({**inputs, "context": 4096.0}, cat, eng, cal)
        assert len(calls) == 2 * len(SCENARIOS) and repr(typed.levers[0].inputs["context"]) == "4096.0"
        lf.load_figures({**inputs, "peak_requests_per_s": 41}, cat, eng, cal)
        assert len(calls) == 3 * len(SCENARIOS)
        lf.clear_memo()
        lf.load_figures(inputs, cat, eng, cal)
        assert len(calls) == 4 * len(SCENARIOS)


class TestWithoutTraffic:
    def test_blank_peak_traffic_is_not_computed_and_says_why(self):
        """No peak traffic on Inputs: nothing is simulated; the sheet says so instead of showing figures."""
        inputs = dict(gpu=GPU, model=MODEL, context=CONTEXT, gpus=GPUS, peak_requests_per_s=None, output_tokens=400)
        f = load_figures(inputs, default_catalog(), engine_profile(None), resolve_calibration(None))
        assert f.note == "not computed: no peak traffic on Inputs (a number above 0)"
        assert all(lever.runs == () for lever in f.levers)
        sheet = load_sheet(f)
        assert f.note in [c.value for c in sheet.cells.values()]
        assert all(v is None for row in _block(sheet, "TTFT p95").values() for v in row.values())


class TestRefreshComputesTheSheetAgain:
    def test_refresh_load_simulates_the_workbooks_inputs(self, copy):
        """``refresh`` rewrites the Load sheet from the file's Inputs (here 10 requests/s instead of 40), in place;
        figures equal ``load_figures`` of those inputs. Called without LibreOffice (refresh itself stores values)."""
        path = copy
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

    def test_refresh_simulates_with_the_memory_utilization_edited_on_assumptions(self, copy):
        """Memory utilization 0.9 -> 0.5 on the Assumptions sheet (``eng_memory_utilization``, a yellow input):
        ``refresh`` simulates with 0.5, the engine the formulas use, not the profile's 0.9 (trial 6 F6). The
        baseline's sequences at once are then at most the 17 prompts 0.5 leaves memory for (``api.memory_plan``; 15
        whole contexts, 117 at 0.9), the sheet lists 0.5 as used, and its figures are ``load_figures`` with that engine."""
        path = copy
        wb = openpyxl.load_workbook(path)
        sheet, ref = next(iter(wb.defined_names["eng_memory_utilization"].destinations))
        wb[sheet][ref.replace("$", "")] = 0.5
        wb.save(path)
        cat, eng, cal = default_catalog(), engine_profile(None), resolve_calibration(None)
        wb = openpyxl.load_workbook(path, rich_text=True)
        assert refresh_load(wb, path, cat, eng, cal) is True
        holds = int(api.memory_plan(GPU, MODEL, CONTEXT, gpus=GPUS, memory_utilization=0.5).max_batch)
        # the KV cache admits requests on their prompts (vLLM's paged cache): 17 of 3,696 tokens
        prompts = int(api.memory_plan(GPU, MODEL, CONTEXT - OUTPUT, gpus=GPUS, memory_utilization=0.5).max_batch)
        assert (holds, prompts) == (15, 17)
        ws, rows = wb[LOAD_SHEET], {c.value: c.row for c in wb[LOAD_SHEET]["A"] if c.value}
        assert ws[f"B{rows['memory_utilization']}"].value == 0.5
        assert ws[f"{scenario_col('base')}{rows[AT_ONCE_LABEL]}"].value <= prompts
        inputs = default_inputs(cat, *select_entries(cat, None, None))
        want = load_sheet(load_figures(inputs, cat, dataclasses.replace(eng, memory_utilization=0.5), cal))
        for ref, cell in want.cells.items():
            assert ws[ref].value == cell.value, ref

    def test_an_assumption_of_the_wrong_kind_is_refused_naming_the_cell(self, copy):
        """Text where the engine needs a number: a WorkbookError naming the cell, nothing simulated or written (a
        "not computed" Load sheet under "refreshed" kept the old fleet: trial 19 F1)."""
        path = copy
        wb = openpyxl.load_workbook(path, rich_text=True)
        sheet, ref = next(iter(wb.defined_names["eng_memory_utilization"].destinations))
        wb[sheet][ref.replace("$", "")] = "half"
        cell = f"{sheet}!{ref.replace('$', '')}"
        with pytest.raises(WorkbookError, match=re.escape(f"{cell} (memory_utilization) must be a number; got 'half'")):
            refresh_load(wb, path, default_catalog(), engine_profile(None), resolve_calibration(None))

    @pytest.mark.parametrize("spelled", ["libreoffice", "numbers"])
    def test_true_and_false_as_libreoffice_saves_them_are_the_same_engine(self, copy, spelled):
        """LibreOffice saves a TRUE / FALSE cell as the formula ``=TRUE()`` / ``=FALSE()`` (its result 1 / 0); a
        switch read as 1 or 0 is what the formulas read as TRUE and FALSE. Either way the Assumptions sheet gives the
        engine it was written from: the Load sheet is current (``refresh_load`` False, nothing simulated), where
        refresh used to refuse every switch ("must be TRUE or FALSE; got 1") and leave the Load sheet unsimulated
        (trial 19 F1)."""
        path = copy
        wb = openpyxl.load_workbook(path)
        eng = engine_profile(None)
        switches = [name for name, item, value in simulated_parameters(eng) if item is None and isinstance(value, bool)]
        assert len(switches) >= 4
        for name in switches:
            sheet, ref = next(iter(wb.defined_names[f"eng_{name}"].destinations))
            value = getattr(eng, name)
            if spelled == "libreoffice":
                wb[sheet][ref.replace("$", "")] = "=TRUE()" if value else "=FALSE()"
            else:
                wb[sheet][ref.replace("$", "")] = int(value)
        wb.save(path)
        wb = openpyxl.load_workbook(path, rich_text=True)
        assert read_engine(wb, path, eng) == eng
        assert refresh_load(wb, path, default_catalog(), eng, resolve_calibration(None)) is False

    def test_unchanged_inputs_are_not_simulated_again(self, spec, copy, monkeypatch):
        """A file whose Inputs, catalog, engine and planner are those its Load sheet was computed from (the key in
        its ``LOAD_KEY_PROPERTY``) keeps its Load sheet and Calc's rate factors: ``refresh_load`` returns False
        without simulating (about 3-8 s saved). Changing one input simulates again and writes the new rate factors."""
        import planner.workbook.load_figures as lf

        path = copy
        cat, eng, cal = default_catalog(), engine_profile(None), resolve_calibration(None)
        simulated = []
        real = lf.load_figures
        monkeypatch.setattr(lf, "load_figures", lambda *a: simulated.append(a) or real(*a))
        wb = openpyxl.load_workbook(path, rich_text=True)
        before = {ref: c.value for row in wb[LOAD_SHEET].iter_rows() for c in row for ref in [c.coordinate]}
        assert refresh_load(wb, path, cat, eng, cal) is False and simulated == []
        assert {c.coordinate: c.value for row in wb[LOAD_SHEET].iter_rows() for c in row} == before
        wb[INPUTS_SHEET][f"B{input_row('peak_requests_per_s')}"] = 80
        assert refresh_load(wb, path, cat, eng, cal) is True and len(simulated) == 1
        want = rate_factors(real(simulated[0][0], cat, eng, cal))
        row = calc_rows(lever_kv="fp8", lever_weights="fp8").row_of["rate_factor"]
        assert {k: wb["Calc"][f"{scenario_col(k)}{row}"].value for k, _, _ in SCENARIOS} == want
        assert want != stored_rate_factors(spec)  # 80 requests/s: other whole numbers of replicas

    def test_the_load_key_changes_with_each_thing_the_figures_depend_on(self):
        """``load_key``: equal for an input read back as a float (4096.0), different for another input, engine,
        calibration, or a catalog with one number changed."""
        cat, eng = default_catalog(), engine_profile(None)
        inputs = default_inputs(cat, *select_entries(cat, None, None))
        key = load_key(inputs, cat, eng, None)
        assert load_key({**inputs, "context": 4096.0}, cat, eng, None) == key
        assert load_key({**inputs, "ttft_target_ms": 1000}, cat, eng, None) != key
        assert load_key(inputs, cat, engine_profile("sglang"), None) != key
        assert load_key(inputs, cat, eng, "a calibration") != key
        gpus = tuple(g.model_copy(update={"tdp_w": g.tdp_w + 1}) if g.name == GPU else g for g in cat.gpus.entries)
        changed = dataclasses.replace(cat, gpus=Table("gpu", gpus))  # one figure of the H100 entry differs
        assert load_key(inputs, changed, eng, None) != key

    def test_a_sheet_named_load_that_planner_did_not_write_is_refused(self, copy):
        path = copy
        wb = openpyxl.load_workbook(path)
        wb[LOAD_SHEET]["A1"] = "my own load tests"
        with pytest.raises(WorkbookError, match="'Load' was not written by planner"):
            refresh_load(wb, path, default_catalog(), engine_profile(None), resolve_calibration(None))
