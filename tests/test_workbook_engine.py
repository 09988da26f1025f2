"""Trial 22 F13: the what-if workbook's Engine and prompt-tokens inputs, and Prompt halved.

The user typed context 425, output 212 (TPOT 50 ms, TTFT 2,000 ms) and found no prompt-length cell, no engine cell
(the engine could be changed only on the Assumptions sheet) and a "Context halved" lever that halved the context to
212, leaving "prompts 213 -> none", so it was not simulated and failed TPOT. Now the Inputs have an Engine dropdown
(the Assumptions sheet's engine columns: every formula follows it) and Prompt tokens per request (blank: context -
output), and the lever is Prompt halved: half the prompt, the output kept, the context less what the prompt drops.

LibreOffice recalculates a workbook with the engine switched and the prompt typed, and every probed cell equals
``planner.api`` called with that engine (``workbook_support._options`` passes the Inputs' engine); ``refresh`` and
``planner export`` read both inputs.
"""

from __future__ import annotations

import openpyxl
import pytest
from cli_support import without_libreoffice
from workbook_support import agrees, expected_probe, recalculate_inputs, require_libreoffice, scenario_inputs

from planner.catalog import default_catalog
from planner.engines.profiles import engine_profile
from planner.workbook.build import build_whatif
from planner.workbook.calc import SCENARIOS, calc_rows, scenario_col
from planner.workbook.layout import CALC_SHEET, INPUTS_SHEET, LEVERS_SHEET, LOAD_SHEET, input_row
from planner.workbook.levers import SAME_REQUESTS_LABEL
from planner.workbook.reader import WorkbookError, read_all_inputs, read_inputs
from planner.workbook.writer import write_workbook

#: One worker computes this module's module-scoped fixtures (pyproject: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("test_workbook_engine")

#: The catalog entries the books name (and the models' GQA siblings): a small book recalculates quickly, and its
#: formulas read the Inputs' GPU and model row by row, as in the whole catalog's book.
GPUS = ["H100", "H200", "MI300X"]
MODELS = ["llama2-70b", "deepseek-v3", "llama-3.1-70b", "qwen3-30b-a3b", "llama-3.1-8b"]
BASE = dict(
    gpu="H100 SXM 80GB", model="Llama-2-70B", context=4096, kv_precision=None, weight_precision=None, gpus=4,
    memory_utilization=None, price_per_gpu_hour=None, batch=1, compare_model=None,
)  # fmt: skip
#: The engine switched on Inputs (TensorRT-LLM's free-memory budget and its own kernel rates, LMDeploy's int8 KV
#: cache, SGLang with its memory share typed), and the prompt typed or blank.
BOOKS = {
    "vllm-typed": dict(engine="vllm"),
    "tensorrt-llm-h100": dict(engine="tensorrt-llm"),
    "tensorrt-llm-mla-moe-h200": dict(gpu="H200 SXM 141GB", model="DeepSeek-V3", gpus=8, engine="tensorrt-llm"),
    "tensorrt-llm-on-amd-refused": dict(gpu="MI300X", model="Llama-3.1-70B", gpus=None, engine="tensorrt-llm"),
    "lmdeploy-moe-kv-int8": dict(
        model="Qwen3-30B-A3B", context=8192, kv_precision="int8", gpus=None, batch=16, engine="lmdeploy"
    ),  # fmt: skip
    # SGLang's memory share is its memory_utilization on the Assumptions sheet (not its per-GPU rule): typed, the
    # formulas equal planner's
    "sglang-utilization-typed": dict(
        model="Llama-3.1-8B", context=8192, gpus=None, memory_utilization=0.85, engine="sglang"
    ),  # fmt: skip
    "prompt-typed-tensorrt-llm": dict(context=425, output_tokens=212, prompt_tokens=200, engine="tensorrt-llm"),
    "prompt-blank-trial22": dict(
        context=425, output_tokens=212, peak_requests_per_s=30, tpot_target_ms=50, ttft_target_ms=2000
    ),  # fmt: skip
}
INPUTS = {name: {**BASE, **change} for name, change in BOOKS.items()}


@pytest.fixture(scope="module")
def spec():
    """The book without a Load sheet: the probes are the formulas' (the fleet at the no-queue rate)."""
    return build_whatif(gpus=GPUS, models=MODELS, load=False)


@pytest.fixture(scope="module")
def books(spec, tmp_path_factory):
    require_libreoffice()
    return recalculate_inputs(spec, INPUTS, tmp_path_factory.mktemp("engine"))


def _levers_row(book, label: str) -> dict[str, object]:
    sheet = book[LEVERS_SHEET]
    row = next(r for r in range(1, 80) if sheet[f"A{r}"].value == label)
    return {header: sheet[f"{scenario_col(key)}{row}"].value for key, header, _ in SCENARIOS}


@pytest.mark.libreoffice
class TestRecalculated:
    @pytest.mark.parametrize("name", sorted(BOOKS))
    def test_every_result_cell_equals_planner_with_the_chosen_engine(self, spec, books, name):
        """Every probed cell (Calc, Results, Levers, Sweeps) equals ``planner.api`` with the Inputs' engine within
        1e-9, or shows its error (TensorRT-LLM on an MI300X: #VALUE!, as deploy.vendor_error)."""
        inputs = INPUTS[name]
        per_scenario = {key: scenario_inputs(inputs, key) for key, _, _ in SCENARIOS}
        wrong = []
        for p in spec.probes:
            got, want = books[name][p.sheet][p.ref].value, expected_probe(inputs, p, per_scenario)
            if not agrees(got, want, p.scale):
                wrong.append(f"{p.sheet}!{p.ref} {p.scenario} {p.quantity}: sheet {got!r}, model {want!r}")
        assert not wrong, f"{len(wrong)} of {len(spec.probes)} cells differ:\n" + "\n".join(wrong[:25])

    def test_the_assumptions_show_the_chosen_engines_profile(self, spec, books):
        """Switched to tensorrt-llm, the Assumptions Values are TensorRT-LLM's profile (its free-memory budget, 32-token
        blocks, KV-cache formats) and its name is what the formulas and the Load sheet read as the engine."""
        trt, sheet = engine_profile("tensorrt-llm"), spec.sheet("Assumptions")
        rows = {c.value: ref[1:] for ref, c in sheet.cells.items() if ref.startswith("A") and isinstance(c.value, str)}
        book = books["tensorrt-llm-h100"]["Assumptions"]
        for field in ("name", "budget_mode", "memory_utilization", "block_size", "prefill_latency_s"):
            assert book[f"B{rows[field]}"].value == getattr(trt, field), field
        first = int(rows["kv_precisions"])
        listed = [book[f"B{first + i}"].value for i in range(len(trt.kv_precisions) + 1)]
        assert listed == [*trt.kv_precisions, None]  # its formats, then blank (vLLM lists one more)
        assert "the tensorrt-llm engine profile" in book["A1"].value
        vllm = books["vllm-typed"]["Assumptions"]
        assert vllm[f"B{rows['budget_mode']}"].value == "total" and vllm[f"B{rows['block_size']}"].value == 16

    def test_prompt_halved_halves_the_prompt_and_keeps_the_output(self, books):
        """Trial 22 F13's inputs (context 425, output 212, prompt blank): the prompt is 425 - 212 = 213, halved to
        INT(213 / 2) = 106 with the 212 output tokens kept, so the lever's context is 425 - 213 + 106 = 318 (it was
        212: no prompt at all). With 200 prompt tokens typed: 200 -> 100, context 425 - 200 + 100 = 325."""
        for name, prompts, context in (
            ("prompt-blank-trial22", (213, 106), 318),
            ("prompt-typed-tensorrt-llm", (200, 100), 325),
        ):
            book = books[name]
            assert _levers_row(book, "Context")["Prompt halved"] == context
            assert _levers_row(book, "Context")["Baseline"] == 425
            assert _levers_row(book, SAME_REQUESTS_LABEL)["Prompt halved"] == (
                f"no: prompts {prompts[0]} -> {prompts[1]} (output kept)"
            )
            row = calc_rows(lever_kv="fp8", lever_weights="fp8").row_of["prompt"]
            calc = book[CALC_SHEET]
            assert (calc[f"C{row}"].value, calc[f"{scenario_col('context_half')}{row}"].value) == prompts
            assert calc[f"{scenario_col('kv_fp8')}{row}"].value == prompts[0]  # the other levers: the same requests


def _written(tmp_path, spec, **inputs):
    """The book written with these Inputs typed (openpyxl, as a user's save would hold them)."""
    path = write_workbook(spec, tmp_path / "book.xlsx", force=True)
    wb = openpyxl.load_workbook(path)
    for key, value in inputs.items():
        wb[INPUTS_SHEET][f"B{input_row(key)}"].value = value
    wb.save(path)
    return path


class TestRead:
    def test_read_inputs_gives_the_engine_and_the_prompt(self, spec, tmp_path):
        """The Engine as the Assumptions sheet's engine columns name it (any case, as the formulas' MATCH reads it;
        blank: the first, the engine the workbook was written for), the prompt tokens typed (blank: None)."""
        path = _written(tmp_path, spec, engine="TensorRT-LLM", context=425, output_tokens=212, prompt_tokens=200)
        inputs = read_all_inputs(path)
        assert (inputs["engine"], inputs["prompt_tokens"], inputs["output_tokens"]) == ("tensorrt-llm", 200, 212)
        assert read_inputs(path)["engine"] == "tensorrt-llm"
        blank = _written(tmp_path, spec, engine=None)
        assert read_all_inputs(blank)["engine"] == "vllm" and read_all_inputs(blank)["prompt_tokens"] is None

    def test_an_engine_the_workbook_has_no_column_for_is_refused_naming_the_cell(self, spec, tmp_path):
        """An alias `planner plan` takes (trtllm) is no column's name: every formula shows #N/A, so refresh and export
        refuse it in one line naming the cell and the names to choose."""
        path = _written(tmp_path, spec, engine="trtllm")
        with pytest.raises(WorkbookError) as refused:
            read_all_inputs(path)
        said = str(refused.value)
        assert f"Inputs!B{input_row('engine')} (Engine) 'trtllm' is not an engine" in said
        assert "vllm, sglang, tensorrt-llm, lmdeploy" in said

    def test_a_prompt_that_does_not_fit_beside_the_output_is_refused(self, spec, tmp_path):
        """Prompt + output must fit the context each sequence holds (213 + 212 = 425 does; 300 + 212 does not)."""
        assert read_all_inputs(_written(tmp_path, spec, context=425, output_tokens=212, prompt_tokens=213))
        path = _written(tmp_path, spec, context=425, output_tokens=212, prompt_tokens=300)
        with pytest.raises(WorkbookError, match=r"300 plus 212 output tokens is more than the context of 425"):
            read_all_inputs(path)

    def test_a_workbook_written_before_the_inputs_reads_as_before(self, spec, tmp_path):
        """Without the Engine and prompt cells (and the engine columns): the prompt blank, the engine the
        Assumptions sheet's eng_name holds, as refresh and export read such a file before."""
        path = write_workbook(spec, tmp_path / "old.xlsx", force=True)
        wb = openpyxl.load_workbook(path)
        for name in ("in_engine", "in_prompt_tokens", "engine_names", "eng_index"):
            del wb.defined_names[name]
        sheet, ref = next(iter(wb.defined_names["eng_name"].destinations))
        wb[sheet][ref.replace("$", "")].value = "sglang"
        wb.save(path)
        inputs = read_all_inputs(path)
        assert inputs["engine"] == "sglang" and inputs["prompt_tokens"] is None


#: Llama 3.1 8B on one H100 at 2,048 tokens, 256 output and 1,000 prompt tokens, TensorRT-LLM chosen on Inputs.
TYPED = dict(
    gpu="H100 SXM 80GB", model="Llama-3.1-8B", context=2048, gpus=1, batch=None, compare_model=None,
    engine="tensorrt-llm", peak_requests_per_s=50, output_tokens=256, prompt_tokens=1000, tpot_target_ms=50,
    ttft_target_ms=2000,
)  # fmt: skip


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory):
    """The small book with ``TYPED`` on Inputs, refreshed without LibreOffice (no stored values: these checks read the
    Load sheet's numbers and the stored rate factors)."""
    from planner.workbook.update import refresh

    mp = pytest.MonkeyPatch()
    try:
        without_libreoffice(mp)
        tmp = tmp_path_factory.mktemp("refresh")
        spec = build_whatif(gpus=["H100"], models=["llama-3.1-8b"], load=False)
        path = _written(tmp, spec, **TYPED)
        refresh(path, force=True)
    finally:
        mp.undo()
    return path


class TestRefreshAndExport:
    """``TYPED``: refresh simulates its engine and prompt, export reviews them."""

    def test_refresh_simulates_the_chosen_engine_and_the_typed_prompt(self, refreshed):
        """The Load sheet says tensorrt-llm and lists the prompt it sent (1,000; Prompt halved: 500 with the same 256
        output tokens, its context 2,048 - 1,000 + 500 = 1,548), and Calc's stored rate factors are those planner's
        simulation gives for TensorRT-LLM and these prompts (``load_figures`` called directly): the lever's fleet is
        simulated like the others', not "no queue (not simulated)" as trial 22 found it."""
        from planner.accuracy.calibration import resolve_calibration
        from planner.workbook.load_figures import load_figures, rate_factors

        wb = openpyxl.load_workbook(refreshed)
        load = wb[LOAD_SHEET]
        cells = {str(load[f"A{r}"].value): r for r in range(1, load.max_row + 1) if load[f"A{r}"].value}
        assert load[f"B{cells['Engine (Assumptions)']}"].value == "tensorrt-llm"
        assert load[f"B{cells['Prompt tokens per request (tokens)']}"].value == 1000
        prompt_row = cells["Prompt tokens per request (typed, or context - output)"]
        context_row = next(r for label, r in cells.items() if label == "Context" and r > prompt_row - 8)
        half = scenario_col("context_half")
        assert (load[f"C{prompt_row}"].value, load[f"{half}{prompt_row}"].value) == (1000, 500)
        assert (load[f"C{context_row}"].value, load[f"{half}{context_row}"].value) == (2048, 1548)
        inputs = read_all_inputs(refreshed)
        figures = load_figures(inputs, default_catalog(), engine_profile("tensorrt-llm"), resolve_calibration(None))
        assert figures.engine == "tensorrt-llm"
        want = rate_factors(figures)
        assert want["context_half"] is not None and want["base"] is not None
        row = calc_rows(lever_kv="fp8", lever_weights="fp8").row_of["rate_factor"]
        calc = wb[CALC_SHEET]
        for key, _, _ in SCENARIOS:
            assert (
                calc[f"{scenario_col(key)}{row}"].value == pytest.approx(want[key], rel=1e-12)
                if want[key]
                else (calc[f"{scenario_col(key)}{row}"].value is None)
            ), key

    def test_export_reviews_the_chosen_engine_and_the_typed_prompt(self, refreshed, tmp_path):
        """`planner export` of the book: the option on tensorrt-llm, every request 1,000 prompt and 256 output tokens
        (blank prompt: 2,048 - 256 = 1,792, as before)."""
        from planner.export.workbook_input import scenario_from_workbook

        scenario = scenario_from_workbook(refreshed)
        (option,) = scenario.option
        w = scenario.workload
        assert engine_profile(option.engine).name == "tensorrt-llm"
        assert (w.prompt_tokens_high, w.prompt_tokens_mean, w.output_tokens_high) == (1000, 1000, 256)
        wb = openpyxl.load_workbook(refreshed)
        wb[INPUTS_SHEET][f"B{input_row('prompt_tokens')}"].value = None
        wb[INPUTS_SHEET][f"B{input_row('engine')}"].value = None
        wb.save(tmp_path / "blank.xlsx")
        scenario = scenario_from_workbook(tmp_path / "blank.xlsx")
        assert engine_profile(scenario.option[0].engine).name == "vllm"
        assert scenario.workload.prompt_tokens_high == 2048 - 256
