"""The what-if workbook names the input it refuses (s155): an input that passes its cell's own check (a GPU count of
3, a batch above what fits) turned every result #NUM! with nothing saying which input or what is accepted.

LibreOffice recalculates the shipped workbook with one input changed; Inputs' "why" cell beside the results must give
the reason, worded as the CLI's refusal, and stay empty when every result computes.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from workbook_support import page_body, recalculate_inputs, require_libreoffice

from planner.workbook.build import build_whatif
from planner.workbook.calc import INPUT_REFUSED_MEETS, SCENARIOS
from planner.workbook.inputs import GLANCE, glance_row, why_error_row
from planner.workbook.layout import COST_AT_MAX_BATCH_LABEL, EXPLAIN_SHEET, INPUTS_SHEET

pytestmark = pytest.mark.libreoffice

#: Inputs the baseline refuses (on the shipped opening: Llama-2-70B, 4,096 tokens, 4 x H100), each with its reason.
CASES = {
    "opening": ({}, None),
    "gpu_count": ({"gpus": 3}, "Error: 3 GPUs is not a tensor-parallel group the engine runs for this model"),
    "too_few": ({"gpus": 1}, "Error: the weights and one sequence of the context do not fit on 1 GPU:"),
    "batch": ({"batch": 100000}, "Error: batch 100000 is more than the max batch that fits (117)"),
    "utilization": ({"memory_utilization": 90}, "Error: memory utilization: give a fraction above 0 and at most 1"),
    "kv": ({"kv_precision": "mxfp4"}, "Error: KV-cache precision mxfp4 is not a format the engine caches"),
    "gpu": (
        {"gpu": "H10"},
        "Error: GPU 'H10' is neither a name nor an alias on the GPUs sheet, which the formulas look up: pick one "
        "from the list",
    ),
    # trial 6 F10, trial 19 F10: "H200" is the catalog's alias of "H200 SXM 141GB" (`planner plan` takes it), read
    # through the GPUs sheet's alias table as that GPU (tests/test_workbook_aliases.py)
    "gpu_alias": ({"gpu": "H200"}, None),
    "model_alias": ({"model": "llama2-70b"}, None),
    # a spelling the catalog takes (case, spaces, hyphens and underscores ignored) but no listed alias: refused
    "model_spelling": (
        {"model": "llama_2_70b"},
        "Error: model 'llama_2_70b' is neither a name nor an alias on the Models sheet, which the formulas look up",
    ),
    "context": ({"context": 0}, "Error: context: give a whole number of tokens from 1 to 16,777,216"),
    # text where a number belongs (#VALUE!) is said so, in `planner export`'s words for the same cell (TEXT_CASES)
    "context_text": (
        {"context": "lots"},
        "Error: Inputs!B6 (Context per sequence) must be a number (tokens); got 'lots'",
    ),
    # trial 6 F4: "8k" shows #VALUE! in every result (the formulas' ISNUMBER): refused here and by export
    "context_8k": ({"context": "8k"}, "Error: Inputs!B6 (Context per sequence) must be a number (tokens); got '8k'"),
    # trial 6 F5: "four" was blamed on the tensor-parallel group
    "gpus_text": (
        {"gpus": "four"},
        "Error: Inputs!B9 (GPU count (tensor parallel)) must be a number (GPUs); got 'four'",
    ),
    "price_text": (
        {"price_per_gpu_hour": "$2.50"},
        "Error: Inputs!B12 (Price per GPU-hour) must be a number (US$); got '$2.50'",
    ),
    # vLLM caches fp16, bf16, fp32 or fp8 (EngineProfile.kv_precisions): int4 is a KV-cache format it refuses, and the
    # line points at the list (those formats), not at a format of its own ("fp8 or blank")
    "kv_int4": (
        {"kv_precision": "int4"},
        "Error: KV-cache precision int4 is not a format the engine caches (Assumptions: kv_precisions): pick one "
        "from the list, or leave it blank",
    ),
    # a price must be above 0 and at most 10,000 US$ per GPU-hour (planner.units.RENT_ACCEPTED, as the cell's own
    # check and `planner plan --price` word it): 0 gave a $0 fleet with no error, and the line said "US$ 0 or more"
    "price_zero": (
        {"price_per_gpu_hour": 0},
        "Error: price per GPU-hour: give a price above 0 and at most 10,000 US$ per GPU-hour",
    ),
    "no_price": (
        {"gpu": "H100 NVL 94GB"},
        "Error: the catalog has no rental price (per GPU-hour) for this GPU: give a price per GPU-hour",
    ),  # trial 18 F15: one wording, "no rental price"
    # the T4 has no fp8 tensor cores and vLLM loads fp8 from SM 8.0 (catalogs/gpus.toml weight_precisions_source):
    # refused as `planner plan` refuses it, naming the formats it runs
    "t4_fp8": (
        {"gpu": "T4", "weight_precision": "fp8"},
        "Error: T4 does not run weights in fp8: it runs fp32, fp16, int8, int4, w8a16 (GPUs sheet: weight formats)",
    ),
    # a bf16 model as published runs in fp16 there (vLLM's --dtype auto below SM 8.0): not refused
    "t4_bf16_as_published": ({"gpu": "T4", "model": "Qwen3-0.6B"}, None),
    # a bf16 KV cache asked for on a T4 (no bf16: T4 datasheet; vLLM refuses bf16 below SM 8.0,
    # CudaPlatformBase.supported_dtypes) is refused as `planner plan -k bf16` refuses it (deploy.kv_precision_error)
    "t4_bf16_kv": (
        {"gpu": "T4", "model": "Qwen3-0.6B", "kv_precision": "bf16"},
        "Error: T4 has no bf16 to cache the KV in: it runs fp32, fp16, int8, int4, w8a16 (GPUs sheet: weight formats); "
        "pick fp16",
    ),
    # an fp8 cache there: vLLM 0.24 keeps none below SM 8.0 (vllm-project/vllm issue 47549; deploy.FP8_KV_SOURCE)
    "t4_fp8_kv": (
        {"gpu": "T4", "model": "Qwen3-0.6B", "kv_precision": "fp8"},
        "Error: T4 keeps no fp8 KV cache: vLLM 0.24's attention backends need SM 8.0 for one; pick fp16",
    ),
    "t4_fp16_kv": ({"gpu": "T4", "model": "Qwen3-0.6B", "kv_precision": "fp16"}, None),
    # the budget inputs, refused as `planner export` of the file refuses them (trial 2, F9: a peak of -3 gave #NUM!
    # fleet cells, an empty Error line and "yes"; F8: targets typed in seconds read as 0.05 ms and 1.5 ms, no hint)
    "peak_negative": (
        {"peak_requests_per_s": -3},
        "Error: Inputs!B15 (Peak traffic) must be above 0 requests/s; got -3",
    ),
    "targets_in_seconds": (
        {"tpot_target_ms": 0.05, "ttft_target_ms": 1.5},
        "Error: Inputs!B18 (TPOT target (time per output token)) 0.05 ms looks like seconds typed as milliseconds; "
        "write 50 for 0.05 s (this cell takes milliseconds)",
    ),
    "ttft_in_seconds": (
        {"ttft_target_ms": 1.5},
        "Error: Inputs!B19 (TTFT target (time to first token)) 1.5 ms looks like seconds typed as milliseconds; "
        "write 1500 for 1.5 s (this cell takes milliseconds)",
    ),
    "ttft_text": ({"ttft_target_ms": "fast"}, "Error: Inputs!B19 (TTFT target (time to first token)) must be a number"),
    "output_fraction": (
        {"output_tokens": 2.5},
        "Error: Inputs!B16 (Output tokens per request) must be a whole number of tokens from 1 to 16,777,216; got 2.5",
    ),
    "share_one": (
        {"prefix_hit_rate": 1},
        "Error: Inputs!B20 (Prompt share in the prefix cache) must be 0 or more and below 1; got 1",
    ),
    # tight but plausible targets in milliseconds pass, and are shown as typed ("1.25 ms", "15.5 ms")
    "tight_targets": ({"tpot_target_ms": 1.25, "ttft_target_ms": 15.5}, None),
    # trial 22 F13: prompt tokens typed (blank: context - output) must fit the context beside the output tokens
    "prompt_fits": ({"context": 425, "output_tokens": 212, "prompt_tokens": 213}, None),
    "prompt_too_long": (
        {"context": 425, "output_tokens": 212, "prompt_tokens": 300},
        "Error: Inputs!B17 (Prompt tokens per request) 300 plus 212 output tokens is more than the context of 425 "
        "tokens each sequence holds: give at most 213 prompt tokens, a longer context, or leave it blank (context - "
        "output)",
    ),
    # the engine chosen on Inputs: TensorRT-LLM runs on NVIDIA GPUs only (deploy.vendor_error); a name the Assumptions
    # sheet has no column for (an alias `planner plan` takes) shows #N/A everywhere, and the line says why
    "engine_switched": ({"engine": "tensorrt-llm"}, None),
    "engine_on_amd": (
        {"gpu": "MI300X", "engine": "tensorrt-llm"},
        "Error: engine tensorrt-llm runs on NVIDIA GPUs only; MI300X is AMD's: choose vllm or sglang there (Inputs: "
        "Engine)",
    ),
    "engine_not_listed": (
        {"engine": "trtllm"},
        "Error: engine 'trtllm' is not one the Assumptions sheet holds a column for: pick one from the list",
    ),
}
#: The cases whose Error line names a budget input: `planner export` of the same file refuses it in the same words.
BUDGET_CASES = (
    "peak_negative", "targets_in_seconds", "ttft_in_seconds", "ttft_text", "output_fraction", "share_one",
    "prompt_too_long",
)  # fmt: skip

#: The Explain sheet's "Errors" row puts each case under the error value it shows: (case, its words there, the
#: "at a glance" result that shows the error).
EXPLAINED = (
    ("gpu", "a GPU, model or precision name not in the catalog", "Max batch memory holds"),
    ("no_price", "no price for a GPU the catalog has no price for", COST_AT_MAX_BATCH_LABEL),
    ("context_text", "text where a number belongs", "Max batch memory holds"),
    ("context", "a context of 0", "Max batch memory holds"),
    ("utilization", "a utilization above 1", "Max batch memory holds"),
    ("price_zero", "a price of 0 or less", COST_AT_MAX_BATCH_LABEL),
    ("kv", "a weight-only format such as mxfp4", "Max batch memory holds"),
    ("kv_int4", "int4 on vllm", "Max batch memory holds"),
    ("too_few", "the weights plus the sequences asked for that do not fit", "Max batch memory holds"),
    ("gpu_count", "a GPU count the engine refuses", "Max batch memory holds"),
)


@pytest.fixture(scope="module")
def spec():
    """Without the Load sheet: every case changes an Input it was simulated for, so with it each verdict would read
    "not known: the Load sheet is stale" (trial 13 F11, tests/test_trial13_workbook.py) where these cases check the
    words of the no-queue verdict and of a refusal."""
    return build_whatif(load=False)


@pytest.fixture(scope="module")
def books(spec, tmp_path_factory):
    require_libreoffice()
    inputs = {key: changes for key, (changes, _) in CASES.items()}
    return recalculate_inputs(spec, inputs, tmp_path_factory.mktemp("why"))


@pytest.mark.parametrize("key", list(CASES))
def test_the_refused_input_is_named(books, key):
    why = books[key][INPUTS_SHEET][f"D{why_error_row()}"].value
    said = CASES[key][1]
    if said is None:
        assert why in (None, ""), why
    else:
        assert why is not None and why.startswith(said), why


@pytest.mark.parametrize("key,words,result", EXPLAINED)
def test_explain_names_each_case_under_the_error_it_shows(spec, books, key, words, result):
    """The Explain sheet's legend of error values is true of the workbook: each case it names shows that error
    (it put a context of 0, a utilization above 1 and mxfp4 for the KV cache under #VALUE!, where they show #NUM!, as
    the Inputs legend and docs/workbooks.md say)."""
    explain = spec.sheet(EXPLAIN_SHEET).cells
    (row,) = [ref[1:] for ref, cell in explain.items() if ref.startswith("A") and cell.value == "Errors"]
    text = explain[f"B{row}"].value
    if text.startswith("=INDEX("):  # its words per engine (by_engine): the shipped workbook's, vllm's, first
        text = explain[f"D{row}"].value
    parts = re.split(r"(#N/A|#VALUE!|#NUM!): ", text)[1:]
    under = dict(zip(parts[::2], parts[1::2], strict=True))
    assert set(under) == {"#N/A", "#VALUE!", "#NUM!"}
    shown = books[key][INPUTS_SHEET][f"B{glance_row() + [g[0] for g in GLANCE].index(result) + 1}"].value
    assert shown in under, (key, shown)
    assert words in under[shown], (key, shown, under[shown])


def _pages(pdf: Path) -> list[str]:
    """Each page's text in drawing order (``pdftotext -raw``), whitespace made single spaces: text a cell clips (a row
    too short for its wrapped lines) is not drawn, so not there."""
    text = subprocess.run(["pdftotext", "-raw", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    return [page_body(" ".join(page.split())) for page in text.split("\f")]


def _title_height(pdf: Path) -> float:
    """The printed height of the Inputs title's first word, points: it shrinks when something widens the page (every
    sheet prints one page wide)."""
    box = subprocess.run(
        ["pdftotext", "-bbox", "-f", "1", "-l", "1", str(pdf), "-"], capture_output=True, text=True, check=True
    ).stdout
    # the title's, below the page header's "LLM inference what-if workbook" (a fixed size, whatever the scale)
    boxes = re.findall(r'yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">LLM<', box)
    low, high = max(boxes, key=lambda b: float(b[0]))
    return float(high) - float(low)


def test_a_refused_gpu_count_prints_whole_at_the_pages_scale(spec, books, tmp_path):
    """Inputs B9 = 3 (Llama 2 70B's heads do not split over 3 GPUs): the Error line, one unwrapped line, ran past column D
    and widened the printed page (the whole sheet printed smaller), the "Meets the latency targets" answer beside
    the results was right-aligned and cut by its label, and the Levers' answers were cut at their second line. Each
    prints whole, and the Inputs page at the scale of the opening inputs' page."""
    import shutil

    from workbook_support import with_inputs

    from planner.io.libreoffice import convert
    from planner.workbook.writer import write_workbook

    if shutil.which("pdftotext") is None:
        pytest.skip("pdftotext (poppler-utils) not installed")
    paths = [
        write_workbook(with_inputs(spec, CASES[key][0]), tmp_path / f"{key}.xlsx") for key in ("opening", "gpu_count")
    ]
    opening, refused = convert(paths, "pdf", tmp_path / "pdf")
    pages = _pages(refused)
    inputs_page = pages[0]
    levers_page = next(p for p in pages if p.startswith("Levers:"))
    shown = books["gpu_count"][INPUTS_SHEET]
    why = shown[f"D{why_error_row()}"].value
    meets = shown[f"B{glance_row() + [g[1] for g in GLANCE].index('meets_text') + 1}"].value
    # nothing is judged beside a refused input (trial 13 F16: tests/test_trial13_workbook.py)
    assert why.startswith(CASES["gpu_count"][1]) and meets == INPUT_REFUSED_MEETS
    assert why in inputs_page and meets in inputs_page
    assert levers_page.count(meets) == len(SCENARIOS)  # each lever's answer is the baseline's: the group is refused
    assert _title_height(refused) == pytest.approx(_title_height(opening), rel=0.01)


def _meets(book) -> str:
    return book[INPUTS_SHEET][f"B{glance_row() + [g[1] for g in GLANCE].index('meets_text') + 1}"].value


@pytest.mark.parametrize("key", BUDGET_CASES)
def test_a_refused_budget_input_is_refused_by_export_in_the_same_words(spec, books, key, tmp_path):
    """The Error line is `planner export`'s refusal of the same file, without its path, and "Meets the latency
    targets" does not say yes beside it (a peak of -3 read "yes" while the fleet cells showed #NUM!)."""
    from workbook_support import with_inputs

    from planner.errors import PlannerError
    from planner.export.workbook_input import scenario_from_workbook
    from planner.workbook.calc import REFUSED_MEETS
    from planner.workbook.writer import write_workbook

    path = write_workbook(with_inputs(spec, CASES[key][0]), tmp_path / "book.xlsx")
    with pytest.raises(PlannerError) as refused:
        scenario_from_workbook(path)
    message = str(refused.value)
    assert message.startswith(f"{path}: ")
    assert books[key][INPUTS_SHEET][f"D{why_error_row()}"].value == "Error: " + message.removeprefix(f"{path}: ")
    assert _meets(books[key]) == REFUSED_MEETS


#: Text in a number's Inputs cell that `planner export` refuses in the Error line's words ("8k" in other words: the
#: reader names the number to type, ``reader.text_message``).
TEXT_CASES = ("context_text", "gpus_text", "price_text")


@pytest.mark.parametrize("key", TEXT_CASES)
def test_text_in_a_number_cell_is_refused_by_export_in_the_same_words(spec, books, key, tmp_path):
    """The Error line for text where a number belongs is `planner export`'s refusal of the same file, without its
    path (trial 6 F5: export said "must be a number (GPUs); got 'four'" where the line blamed the group)."""
    from workbook_support import with_inputs

    from planner.errors import PlannerError
    from planner.export.workbook_input import scenario_from_workbook
    from planner.workbook.writer import write_workbook

    path = write_workbook(with_inputs(spec, CASES[key][0]), tmp_path / "book.xlsx")
    with pytest.raises(PlannerError) as refused:
        scenario_from_workbook(path)
    said = books[key][INPUTS_SHEET][f"D{why_error_row()}"].value
    assert said == "Error: " + str(refused.value).removeprefix(f"{path}: ")


def test_targets_are_shown_as_typed(books):
    """A target above the floor is compared as typed: 1.25 ms was shown as "1.3 ms" and 15.5 ms as "16 ms" (0.05 and
    1.5, typed in seconds, as "0.1 ms" and "2 ms"); no Error line beside them. The figures are the opening's at max
    batch (117) and its 4,096-token prompt, as ``planner.api`` gives them (TTFT 306 ms; 307 before a prefill counted
    the output head once per prompt)."""
    from planner import api

    opening = ("H100 SXM 80GB", "Llama-2-70B", 4096)
    tpot = api.tpot(*opening, batch=api.max_batch(*opening, gpus=4), gpus=4) * 1e3
    ttft = api.prefill(*opening, gpus=4).ttft_s * 1e3
    assert (f"{tpot:.1f}", f"{ttft:.0f}") == ("35.2", "306")
    assert _meets(books["tight_targets"]) == f"no: TPOT {tpot:.1f} ms > 1.25 ms, TTFT {ttft:.0f} ms > 15.5 ms"
