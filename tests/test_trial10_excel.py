"""Trial 10 (an SRE sizing a bursty SLO fleet) and trial 11 (a formula auditor): the Excel load functions' burstiness,
the what-if workbook's burstiness input and p95 statement, refresh keeping a workbook's own GPUs and models, the
Prompt halved lever's words, the precision alias on the Error line, and the parity scenario count.

Every expected figure names its source: another surface's output for the same inputs (``planner plan --rate
--burstiness``, ``--replicas 1``, the catalog's aliases, ``planner export``'s refusal of the same file)."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path

import pytest
from cli_support import run

import planner.excel.functions as xf

ROOT = Path(__file__).resolve().parents[1]

#: trial 10's scenario: Llama 3.3 70B on 4 x H100, 1,000 / 300 tokens (context 4,096 on the CLI, as the trial ran it)
HEAD = ("H100", "llama3.3-70b")
PLAN = ("--gpu", "H100", "--model", "llama3.3-70b", "--context", "4096", "--prompt-tokens", "1000")
PLAN += ("--output-tokens", "300")


def plan_json(*args: str) -> dict:
    result = run("plan", *PLAN, *args, "--json")
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def load_args(burstiness) -> tuple:
    """TTFT_P*/TPOT_P*'s arguments at 7.5 requests/s on 4 GPUs, every optional one blank up to burstiness (last)."""
    return (*HEAD, 7.5, 1000.0, 300.0, 4.0, *([None] * 8), burstiness)


class TestLoadFunctionsTakeBurstiness:
    """TTFT_P*/TPOT_P*, REPLICAS and FLEET_GPUS take the incoming traffic's gamma shape as their last argument."""

    def test_burstiness_is_the_last_argument(self):
        """After engine (and speculative_method), so every earlier formula reads as it did; REPLICAS and FLEET_GPUS
        take routing after it (tests/test_routing_surfaces.py), the percentile functions the fleet's replicas and
        routing (tests/test_trial24_excel_fleet_burstiness.py); CAPACITY_RPS takes none (a steady-state completion
        rate does not depend on the arrivals' shape); then the lengths' spread, four arguments appended after them
        (trial 29 F4, tests/test_excel_high_lengths.py)."""
        for name in ("TTFT_P50", "TTFT_P95", "TTFT_P99", "TPOT_P50", "TPOT_P95", "TPOT_P99", "REPLICAS", "FLEET_GPUS"):
            params = list(inspect.signature(getattr(xf, name)).parameters)
            assert params[-7 if name.startswith("T") else -6] == "burstiness", name
        assert "burstiness" not in inspect.signature(xf.CAPACITY_RPS).parameters

    def test_blank_is_the_poisson_figure_to_the_last_digit(self):
        """Omitted, None, "" and 1 give plan --rate 7.5 --replicas 1's Poisson p95 (its --json), exactly."""
        poisson = plan_json("--gpus", "4", "--rate", "7.5", "--replicas", "1")["under_load"]
        want = poisson["ttft_s"]["p95"] * 1e3
        assert xf.TTFT_P95(*HEAD, 7.5, 1000.0, 300.0, 4.0) == want
        for blank in (None, "", 1.0):
            assert xf.TTFT_P95(*load_args(blank)) == want
        assert xf.TPOT_P95(*load_args(None)) == poisson["tpot_s"]["p95"] * 1e3

    def test_a_bursty_replica_is_plans_replica_at_that_shape(self):
        """burstiness 0.5: plan --rate 7.5 --replicas 1 --burstiness 0.5's p95 TTFT and TPOT (one replica takes the
        traffic as it comes): 778 ms against 454 ms for Poisson (docs/excel.md; 797 and 444 ms before the per-layer
        overhead was refitted to 15.7 us)."""
        bursty = plan_json("--gpus", "4", "--rate", "7.5", "--replicas", "1", "--burstiness", "0.5")["under_load"]
        ttft = xf.TTFT_P95(*load_args(0.5))
        assert ttft == pytest.approx(bursty["ttft_s"]["p95"] * 1e3, rel=1e-12)
        assert xf.TPOT_P95(*load_args(0.5)) == pytest.approx(bursty["tpot_s"]["p95"] * 1e3, rel=1e-12)
        poisson = xf.TTFT_P95(*load_args(None))
        assert (round(ttft), round(poisson)) == (778, 454)
        doc = " ".join((ROOT / "docs" / "excel.md").read_text(encoding="utf-8").split())
        said = (
            f'`=TTFT_P95("H100","llama3.3-70b",7.5,1000,300,4,,,,,,,,,0.5)` is {ttft:.0f} ms against {poisson:.0f} ms'
        )
        assert said in doc

    def test_replicas_size_as_plan_burstiness(self):
        """REPLICAS at 60 requests/s, p95 1.5 s / 60 ms: 9 at burstiness 0.5 and 8 blank, the replicas plan --rate 60
        --burstiness 0.5 and plain plan --rate 60 size on 4 GPUs (trial 10 F4: the functions gave 8 for both)."""
        targets = ("--ttft-target", "1.5", "--tpot-target", "60ms", "--gpus", "4", "--rate", "60")
        args = (*HEAD, 60.0, 1000.0, 300.0, 1.5, 0.06, 95.0, 4.0, None, None, None, None, None)
        for shape, cli in ((0.5, ("--burstiness", "0.5")), (None, ())):
            want = plan_json(*targets, *cli)["under_load"]["replicas"]
            assert xf.REPLICAS(*args, shape) == want
        assert xf.REPLICAS(*args, 0.5) == 9 and xf.REPLICAS(*args, None) == 8
        assert xf.REPLICAS(*args) == 8  # a formula written before the argument

    def test_fleet_gpus_takes_the_same_shape(self):
        """FLEET_GPUS with burstiness 0.5 is plan --rate 60 --burstiness 0.5 without --gpus: replicas x its group."""
        got = xf.FLEET_GPUS(*HEAD, 60.0, 1000.0, 300.0, 1.5, 0.06, None, None, None, None, None, None, 0.5)
        p = plan_json("--ttft-target", "1.5", "--tpot-target", "60ms", "--rate", "60", "--burstiness", "0.5")
        assert got == p["under_load"]["replicas"] * p["gpus"]

    def test_a_bad_shape_is_refused_as_plan_refuses_it(self):
        """0 is #NUM! and text #VALUE!, as plan --burstiness 0 refuses a shape that is not above 0."""
        assert xf.TTFT_P95(*load_args(0.0)) == "#NUM!"
        assert xf.TTFT_P95(*load_args("lots")) == "#VALUE!"
        why = xf.PLANNER_WHY("TTFT_P95", *load_args(0.0))
        assert "burstiness 0.0 is not a gamma shape above 0" in why
        assert run("plan", *PLAN, "--rate", "7.5", "--burstiness", "0").exit_code == 2


#: The workbook's Inputs for trial 10's scenario (its out/my-wb.xlsx edits), at the traffic's burstiness 0.5.
BURSTY_INPUTS = dict(
    gpu="H100 SXM 80GB", model="Llama-3.3-70B", context=1300, gpus=4, kv_precision=None, weight_precision=None,
    memory_utilization=None, compare_model=None, peak_requests_per_s=60, output_tokens=300, tpot_target_ms=60,
    ttft_target_ms=1500, prefix_hit_rate=None, burstiness=0.5,
)  # fmt: skip


class TestWorkbookBurstiness:
    """The Inputs' "Traffic burstiness" enters the Load sheet's sizing and runs, and a review read from the workbook."""

    def test_the_load_figures_size_as_plan_burstiness(self):
        """Baseline: 9 replicas at 0.5 and 8 at 1, as plan --rate 60 --burstiness 0.5 (prompts 1,000 of the 1,300-token
        context) sizes 9 x 4 and plain plan 8 x 4 (trial 10 F4: the workbook's Levers said 8)."""
        from planner.catalog import default_catalog
        from planner.engines.profiles import engine_profile
        from planner.workbook.load_figures import load_figures

        cat, eng = default_catalog(), engine_profile(None)
        targets = ("--ttft-target", "1.5", "--tpot-target", "60ms", "--gpus", "4", "--rate", "60")
        for shape, cli in ((0.5, ("--burstiness", "0.5")), (1, ())):
            figures = load_figures({**BURSTY_INPUTS, "burstiness": shape}, cat, eng, None)
            base = next(v for v in figures.levers if v.key == "base")
            assert base.prompt_tokens == 1000
            assert base.needed_replicas == plan_json(*targets, *cli)["under_load"]["replicas"]
        assert base.needed_replicas == 8

    def test_a_review_of_the_workbook_carries_the_burstiness(self):
        """planner export of the workbook reads the cell into the scenario's workload.burstiness (blank: 1)."""
        from planner.export.workbook_input import workbook_scenario_data

        assert workbook_scenario_data(BURSTY_INPUTS, "wb")["workload"]["burstiness"] == 0.5
        assert "burstiness" not in workbook_scenario_data({**BURSTY_INPUTS, "burstiness": None}, "wb")["workload"]

    def test_the_load_sheet_says_p95_and_how_requests_arrive(self):
        """The sheet's note says the percentile (the Inputs' latency percentile, blank p95: trial 28 F8) and why; the
        arrivals are the Inputs' shape."""
        from planner.workbook.load_figures import LoadFigures
        from planner.workbook.load_sheet import _note

        note = _note(LoadFigures({"burstiness": 0.5}, "vllm", (), None, None))
        assert "gamma of shape 0.5" in note and "Percentile: p95 (Inputs; blank 95" in note
        assert "planner plan and export" in note and "every request at the Inputs' means" in note
        assert "1,000 Poisson requests" in _note(LoadFigures({"burstiness": 1}, "vllm", (), None, None))


class TestContextHalvedWords:
    """Trial 10 F10: the lever's words say what it does to the prompts; trial 22 F13: it halves the prompt and keeps the
    output (halving the context had left a 425-token context with 212 output tokens no prompt at all)."""

    def test_the_words_follow_the_load_sheets_prompts(self):
        """1,300 tokens with 300 output: the Load sheet's prompts (lever_inputs: context - output) 1,000 and 500, the
        lever's context 800 (1,300 less the 500 tokens the prompt drops)."""
        from planner.catalog import default_catalog
        from planner.engines.profiles import engine_profile
        from planner.workbook.levers import context_halved_words
        from planner.workbook.load_figures import lever_inputs

        cat, eng = default_catalog(), engine_profile(None)
        base, half = (lever_inputs(BURSTY_INPUTS, k, cat, eng) for k in ("base", "context_half"))
        assert (base["context"], base["prompt_tokens"], half["context"], half["prompt_tokens"]) == (
            1300,
            1000,
            800,
            500,
        )
        assert context_halved_words(1300, 300) == "no: prompts 1,000 -> 500 (output kept)"
        assert context_halved_words(500, 300) == "no: prompts 200 -> 100 (output kept)"
        assert context_halved_words(425, 212) == "no: prompts 213 -> 106 (output kept)"  # trial 22 F13


def _parity_scenarios() -> int:
    import test_workbook_libreoffice as parity

    return len(parity.SCENARIO_INPUTS)


class TestParityCount:
    """Trial 11 F10: the Explain sheet said 50+ where the docs said 82; all say the parity test's count."""

    def test_explain_readme_and_docs_state_the_tests_count(self):
        from planner.workbook.explain import PARITY_SCENARIOS

        n = _parity_scenarios()
        assert PARITY_SCENARIOS == n
        readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
        docs = " ".join((ROOT / "docs" / "workbooks.md").read_text(encoding="utf-8").split())
        assert f"over {n} scenarios" in readme and f"for {n} scenarios" in docs

    def test_docs_say_refresh_stores_values(self):
        """Trial 10 F8: docs/workbooks.md said "refresh does not store values"; update.refresh calls
        with_stored_values."""
        docs = (ROOT / "docs" / "workbooks.md").read_text(encoding="utf-8")
        assert "does not store values" not in docs
        assert "with_stored_values" in inspect.getsource(__import__("planner.workbook.update").workbook.update.refresh)


# -- LibreOffice: the formulas added, recalculated ----------------------------------------------------------------


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    from workbook_support import recalculate_inputs, require_libreoffice

    from planner.workbook.build import build_whatif

    require_libreoffice()
    spec = build_whatif(load=False)
    cases = {
        "trial10": {k: v for k, v in BURSTY_INPUTS.items() if k not in ("gpu", "model")}
        | {"gpu": "H100 SXM 80GB", "model": "Llama-3.3-70B"},
        "fp4": {"model": "Llama-3.1-8B", "context": 8192, "gpus": 1, "weight_precision": "fp4"},
        "kv_alias": {"kv_precision": "float8"},
        "unknown": {"weight_precision": "fp3"},
        "shape_zero": {"burstiness": 0},
        "no_output": {"output_tokens": None},
    }
    return spec, recalculate_inputs(spec, cases, tmp_path_factory.mktemp("trial10"))


@pytest.mark.libreoffice
class TestRecalculated:
    """The cells this change adds, as LibreOffice computes them, equal the Python that states the same rule."""

    @staticmethod
    def _levers_row(book, label: str) -> dict:
        from planner.workbook.calc import SCENARIOS, scenario_col

        sheet = book["Levers"]
        row = next(r for r in range(1, 200) if sheet[f"A{r}"].value == label)
        return {h: sheet[f"{scenario_col(k)}{row}"].value for k, h, _ in SCENARIOS}

    def test_context_halved_says_what_it_serves(self, books):
        """Levers' "Serves the same requests" is context_halved_words of the Inputs (1,300 and 300: 1,000 -> 500);
        without output tokens, the whole sequence's tokens."""
        from planner.workbook.levers import SAME_REQUESTS_LABEL, context_halved_words

        _, b = books
        row = self._levers_row(b["trial10"], SAME_REQUESTS_LABEL)
        assert row["Prompt halved"] == context_halved_words(1300, 300)
        # the compare model blank: Llama 3.3 70B's own GQA sibling is itself, a lever that changes nothing (trial 13
        # F13: it said "no: another model")
        assert row["Compare model"] == "no change" and row["Baseline"] == "yes"
        blank = self._levers_row(b["no_output"], SAME_REQUESTS_LABEL)["Prompt halved"]
        assert blank == context_halved_words(4096, None) == "no: prompt + output 4,096 -> 2,048"

    def test_a_precision_alias_is_read_as_its_precision(self, books):
        """Trial 11 F7: "fp4" is the catalog's alias of nvfp4 (plan -w fp4 prints "weights nvfp4"): the Error line
        said "fp4 is not in the catalog"; the formulas now read it as nvfp4 (Calc's PRECISION_OF; its figures:
        tests/test_unread_columns_more.py), a KV alias alike, so the line is blank; a name that is no alias says
        pick one from the list."""
        from planner.catalog import default_catalog
        from planner.workbook.inputs import why_error_row

        cat = default_catalog()
        assert cat.precision("fp4").name == "nvfp4" and cat.precision("float8").name == "fp8"
        result = run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "8192", "-w", "fp4")
        assert result.exit_code == 0 and "nvfp4" in result.output
        _, b = books
        line = {k: b[k]["Inputs"][f"D{why_error_row()}"].value for k in ("fp4", "kv_alias", "unknown")}
        assert line["fp4"] in (None, "") and line["kv_alias"] in (None, "")
        assert line["unknown"] == (
            "Error: weight precision 'fp3' is neither a name nor an alias on the Precisions sheet: pick one from the "
            "list"
        )

    def test_a_refused_burstiness_is_exports_refusal(self, books, tmp_path):
        """Burstiness 0: the Error line is planner export's refusal of the same file (a scenario's gt=0 bound)."""
        from workbook_support import with_inputs

        from planner.errors import PlannerError
        from planner.export.workbook_input import scenario_from_workbook
        from planner.workbook.inputs import why_error_row
        from planner.workbook.writer import write_workbook

        spec, b = books
        path = write_workbook(with_inputs(spec, {"burstiness": 0}), tmp_path / "book.xlsx")
        with pytest.raises(PlannerError) as refused:
            scenario_from_workbook(path)
        message = str(refused.value).removeprefix(f"{path}: ")
        assert re.search(r"Traffic burstiness\) must be above 0 and at most 100", message)
        assert b["shape_zero"]["Inputs"][f"D{why_error_row()}"].value == "Error: " + message


@pytest.mark.libreoffice
def test_refresh_keeps_the_workbooks_own_gpus_and_models(tmp_path):
    """Trial 10 F8: a workbook made with --gpus H100,H200 --models llama3.3-70b,qwen3-32b (2 GPUs, 2 models, as
    `planner workbook` says) is refreshed with the same 2 and 2, and refresh says so; --gpus all --models all lists
    the whole catalog (the counts `planner workbook` without options writes)."""
    from workbook_support import require_libreoffice

    from planner.catalog import default_catalog

    require_libreoffice()
    made = run("workbook", "-o", str(tmp_path), "--gpus", "H100,H200", "--models", "llama3.3-70b,qwen3-32b")
    assert made.exit_code == 0 and "(2 GPUs, 2 models)" in made.output
    path = tmp_path / "capacity-what-if.xlsx"
    again = run("workbook", "refresh", str(path))
    assert again.exit_code == 0, again.output
    assert "(2 GPUs, 2 models): the GPUs and models the workbook was made with" in again.output
    assert "--gpus all --models all" in again.output
    whole = run("workbook", "refresh", str(path), "--gpus", "all", "--models", "all")
    cat = default_catalog()
    assert f"({len(cat.gpus)} GPUs, {len(cat.models)} models)" in whole.output
    assert "made with" not in whole.output
