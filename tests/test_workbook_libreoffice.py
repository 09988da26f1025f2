"""The what-if workbook recalculated by a real spreadsheet engine (LibreOffice headless) agrees with the model.

Skipped without soffice; with CI=true a missing soffice fails (see workbook_support.require_libreoffice).
"""

from __future__ import annotations

import io
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import time
import zipfile
from collections.abc import Mapping
from pathlib import Path

import openpyxl
import pytest
from workbook_support import (
    CSV_EVERY_SHEET,
    agrees,
    cheapest_label,
    convert_to_csv_sheets,
    expected_cheapest_label,
    expected_green,
    expected_probe,
    green_scenarios,
    read_csv_sheet,
    recalculate_inputs,
    refused_beside_the_batch,
    require_libreoffice,
    scenario_inputs,
    stored_rate_factors,
    with_inputs,
    with_inputs_xlsx,
)

from planner import __version__
from planner.catalog import default_catalog
from planner.io.libreoffice import LibreOfficeError, convert, without_print_titles
from planner.workbook.build import build_whatif
from planner.workbook.calc import SCENARIOS, calc_rows, scenario_col
from planner.workbook.inputs import GLANCE, LOAD_FED, SERVED_NOTE_ROW, STALE_UNIT, glance_row
from planner.workbook.layout import CATALOG_SHEETS, COST_AT_MAX_BATCH_LABEL, INPUTS_SHEET, LOAD_SHEET, input_row
from planner.workbook.load_sheet import STATUS_CELL
from planner.workbook.update import refresh
from planner.workbook.writer import write_workbook

pytestmark = pytest.mark.libreoffice

BASE = dict(
    gpu="H100 SXM 80GB",
    model="LLaMA-65B",
    context=8192,
    kv_precision=None,
    weight_precision=None,
    gpus=None,
    memory_utilization=None,
    price_per_gpu_hour=None,
    batch=1,
    compare_model=None,
)

#: Hand-picked scenarios: each names what it exercises.
NAMED = {
    "default-mha-65b": {},
    "gqa-70b-fp16-kv": dict(model="Llama-2-70B", kv_precision="fp16"),
    "a100-40gb-small-ampere-class": dict(gpu="A100 SXM 40GB", model="Llama-2-7B", context=4096, batch=8),
    "mla-moe-deepseek-h200": dict(gpu="H200 SXM 141GB", model="DeepSeek-V3", context=32768),
    "mla-moe-deepseek-b200-8": dict(gpu="B200 180GB", model="DeepSeek-V3", gpus=8, batch=32),
    "sliding-moe-mxfp4-gptoss-120b": dict(model="gpt-oss-120b", context=131072),
    "sliding-gptoss-20b-batch-64": dict(model="gpt-oss-20b", context=2048, batch=64),
    "sliding-gemma-l4-int4": dict(gpu="L4", model="Gemma-2-27B", weight_precision="int4", gpus=2),
    "hybrid-5-to-1-gemma3-27b": dict(model="Gemma-3-27B", context=65536),
    "chunked-interleaved-moe-llama4-maverick": dict(model="Llama-4-Maverick", context=131072, gpus=8),
    # MI300X's published RCCL rows (the AllReduce sheet's last block, catalogs/reference/allreduce_published.csv);
    # its prefill's 1.3 GB messages are past the table's 512 MiB (the last segment's rate)
    "published-allreduce-mi300x-8": dict(gpu="MI300X", model="Llama-3.1-70B", context=81920, gpus=8, batch=32),
    # a fully connected mesh: a pair of MI300X reads QuickReduce's 2-GPU RCCL rows (its own block); 4 x MI355X
    # borrows MI300X's 4-GPU rows at 64 / 76.8 the bytes (allreduce_table.NEAREST_TABLE: the same mesh)
    "mesh-pair-mi300x-2": dict(gpu="MI300X", model="Llama-3.1-70B", context=8192, gpus=2, batch=32),
    "mesh-four-mi355x-borrowed": dict(gpu="MI355X", model="Llama-3.1-70B", context=8192, gpus=4, batch=16),
    "rtx4090-kv-fp8": dict(gpu="RTX 4090", model="Llama-3.1-8B", context=16384, kv_precision="fp8"),
    "t4-fp16-only-kv-int8": dict(gpu="T4", model="Qwen3-0.6B", context=4096, kv_precision="int8"),
    "mi300x-405b-fp8": dict(gpu="MI300X", model="Llama-3.1-405B", weight_precision="fp8"),
    "no-catalog-price": dict(gpu="H100 NVL 94GB", model="Llama-3.1-70B", context=4096),
    # a price must be above 0 and at most 10,000 US$ per GPU-hour (planner.units.RENT_ACCEPTED): 0 gave a $0 fleet
    "price-zero-refused": dict(model="Llama-2-70B", context=4096, gpus=4, price_per_gpu_hour=0),
    "price-above-the-most-refused": dict(model="Llama-2-70B", context=4096, gpus=4, price_per_gpu_hour=20000),
    "moe-mixtral-util-price": dict(
        model="Mixtral-8x22B", context=65536, gpus=4, memory_utilization=0.95, price_per_gpu_hour=2.5
    ),
    "does-not-fit-on-given-gpus": dict(gpu="L40S", model="Qwen2.5-72B", gpus=1),
    "does-not-fit-long-context": dict(gpu="A10G", model="Mistral-7B", context=131072, gpus=1),
    "405b-long-context-auto-group": dict(model="Llama-3.1-405B", context=131072),
    "invalid-context-zero": dict(context=0),
    "invalid-context-fraction": dict(context=1500.5),
    "unknown-gpu-name": dict(gpu="H999"),
    "invalid-utilization": dict(memory_utilization=1.5),
    "weight-only-format-as-kv": dict(model="Llama-2-70B", kv_precision="mxfp4"),
    "batch-above-max-batch": dict(model="Llama-2-70B", batch=100000),
    "invalid-batch-zero": dict(model="Llama-2-70B", batch=0),
    "odd-gpu-count-3": dict(model="Llama-2-13B", gpus=3),
    "batch-blank-is-max-batch": dict(model="Qwen3-32B", batch=None),
    "chosen-compare-model": dict(model="Llama-2-13B", compare_model="Qwen3-14B"),
    "h20-no-price-weak-compute": dict(gpu="H20 96GB", model="Qwen3-30B-A3B", batch=16),
    "nvfp4-on-blackwell": dict(gpu="B200 180GB", model="Llama-3.1-70B", weight_precision="nvfp4"),
    "nvfp4-falls-back-on-hopper": dict(model="Llama-3.1-70B", weight_precision="nvfp4"),
    "mxfp4-weights-hopper": dict(model="Qwen3-235B-A22B", weight_precision="mxfp4", gpus=8),
    # weight-only 8-bit (GPTQ-Marlin Int8): 1.015625 B a weight, fp16 math at the Marlin rate (s140) on an A100
    "w8a16-gptq-int8-a100": dict(gpu="A100 SXM 80GB", model="Qwen3-8B", context=4096, weight_precision="w8a16"),
    "tied-embeddings-1b-on-t4": dict(gpu="T4", model="Llama-3.2-1B", context=8192, batch=4),
    "mha-13b-gqa-sibling-a100": dict(gpu="A100 SXM 80GB", model="Llama-2-13B", context=4096),
    # vLLM 0.9+'s large class by device name: 'NVIDIA A800-SXM4-80GB' holds no "a100" (8,192 / 1,024 profiled)
    "a800-large-by-device-name": dict(gpu="A800 SXM 80GB", model="Llama-3.1-8B", context=8192, batch=None),
    # memory holds more than vLLM runs at once (max_num_seqs 1,024 on an H100, 256 on an A100): served, timed and
    # costed at the engine's limit, as planner plan does (deploy.served_batch)
    "engine-caps-max-batch-h100": dict(gpu="H100 SXM 80GB", model="Llama-3.1-8B", context=256, batch=None),
    "engine-caps-max-batch-a100": dict(gpu="A100 SXM 80GB", model="Llama-3.1-8B", context=1024, batch=None),
    # a batch memory holds (1,732) above what vLLM runs at once (1,024): computed as a what-if, with plan's warning
    "batch-above-the-engines-limit": dict(gpu="H100 SXM 80GB", model="Llama-3.1-8B", context=256, batch=1500),
    "explicit-price-and-64-gpus": dict(model="DeepSeek-V3", gpus=64, price_per_gpu_hour=1.75, batch=256),
    "opening-scenario": dict(model="Llama-2-70B", context=4096, gpus=4, compare_model="LLaMA-65B"),
    "two-nodes-and-beyond-trained-context": dict(model="Llama-2-70B", context=8192, gpus=16),
    # the node warning reads the GPU's scale-up domain (planner.deploy.scale_up_gpus): an NVL72 rack's 72 GPUs hold
    # 16 in one NVLink domain (no warning); 16 H100s are two 8-GPU nodes (a warning)
    "gb200-16-one-nvlink-domain": dict(gpu="GB200 NVL72", model="Llama-2-70B", context=4096, gpus=16),
    "h100-16-two-nodes": dict(model="Llama-2-70B", context=4096, gpus=16),
    "more-gpus-lever-has-no-valid-group": dict(gpu="L4", model="Qwen2-7B", context=4096, gpus=4),
    "more-gpus-lever-from-two": dict(gpu="L4", model="Qwen2-7B", context=4096, gpus=2),
    "hybrid-linear-attention-qwen3-next": dict(model="Qwen3-Next-80B-A3B", context=32768, gpus=2, batch=16),
    "float32-state-qwen3.6-rtx-pro": dict(gpu="RTX PRO 6000 Blackwell Server Edition", model="Qwen3.6-27B"),
    "sparse-attention-deepseek-v3.2": dict(model="DeepSeek-V3.2", context=65536, gpus=8, batch=4),
    # vLLM caches DeepSeek-V3.2's fp8 latents as fp8_ds_mla, 656 B a token per layer (trial 21 F2; Calc's kvrec)
    "sparse-attention-fp8-ds-mla-kv": dict(
        gpu="H200 SXM 141GB", model="DeepSeek-V3.2", context=8192, gpus=8, kv_precision="fp8"
    ),
    # the budget block: a blank or text target, no traffic, a target every lever meets
    "budget-blank-tpot-target": dict(model="Llama-2-70B", context=4096, gpus=4, tpot_target_ms=None),
    "budget-text-ttft-target": dict(model="Llama-2-70B", context=4096, gpus=4, ttft_target_ms="fast"),
    "budget-blank-traffic": dict(model="Llama-2-70B", context=4096, gpus=4, peak_requests_per_s=None),
    "budget-every-lever-meets": dict(model="Llama-2-70B", context=4096, gpus=4, tpot_target_ms=1000),
}


def _random_scenarios(n: int, seed: int = 20240604) -> dict[str, dict]:
    cat = default_catalog()
    rng = random.Random(seed)
    gpus = [g.name for g in cat.gpus]
    models = [m.name for m in cat.models]
    out = {}
    for i in range(n):
        out[f"random-{i:02d}"] = dict(
            gpu=rng.choice(gpus),
            model=rng.choice(models),
            context=rng.choice([512, 2048, 4096, 8192, 32768, 131072]),
            kv_precision=rng.choice([None, None, "fp8", "int4", "bf16", "int8"]),
            weight_precision=rng.choice([None, None, None, "fp8", "int4"]),
            gpus=rng.choice([None, None, 1, 2, 8]),
            batch=rng.choice([None, 1, 16]),
        )
    return out


SCENARIO_INPUTS = {k: {**BASE, **v} for k, v in {**NAMED, **_random_scenarios(24)}.items()}
#: The warnings the Inputs sheet shows as formulas (planner.workbook.inputs.warnings), by a phrase of each.
WORKBOOK_WARNING_KINDS = ("runs at once", "trained maximum", "GPUs is more than")


#: The shipped workbook recalculated with its print titles, as written (every other book is recalculated without them:
#: workbook_support.recalculate_inputs); test_print_titles_change_no_value compares it with "as-shipped".
PRINT_TITLES_BOOK = "as-shipped-with-print-titles"
#: The recalculated books: every scenario and the workbook as shipped (its inputs unchanged), also with print titles.
PARITY_BOOKS = [*sorted(SCENARIO_INPUTS), "as-shipped", PRINT_TITLES_BOOK]
#: LibreOffice recalculates the books in halves (every other name), one soffice call each; each half is an xdist
#: group (pyproject: --dist loadgroup), so the two workers share the work and each half is recalculated once: ~0.5 s
#: of soffice CPU a book without print titles (~20 s a half), read back through its CSV export
#: (workbook_support.recalculate_inputs).
HALVES = 2


def _half(name: str) -> int:
    """Every other name; the shipped workbook with print titles goes with "as-shipped" (one test reads both)."""
    return PARITY_BOOKS.index("as-shipped" if name == PRINT_TITLES_BOOK else name) % HALVES


def book(name: str):
    """``name`` as a parameter whose test runs on the worker that recalculates its half."""
    return pytest.param(name, marks=pytest.mark.xdist_group(f"test_workbook_libreoffice_{_half(name)}"), id=name)


class _Halves(Mapping):
    """The recalculated books by name; a half is recalculated (one soffice call) when one of its books is first read."""

    def __init__(self, spec, tmp_path_factory):
        self.spec, self.tmp_path_factory, self.halves = spec, tmp_path_factory, {}

    def __getitem__(self, name: str):
        h = _half(name)
        if h not in self.halves:
            inputs = {key: SCENARIO_INPUTS.get(key, {}) for key in PARITY_BOOKS if _half(key) == h}
            tmp = self.tmp_path_factory.mktemp(f"parity{h}")
            self.halves[h] = recalculate_inputs(self.spec, inputs, tmp, print_titles=frozenset({PRINT_TITLES_BOOK}))
        return self.halves[h][name]

    def __iter__(self):
        return iter(PARITY_BOOKS)

    def __len__(self) -> int:
        return len(PARITY_BOOKS)


@pytest.fixture(scope="session")  # not "module": a worker that runs this module's tests in two stretches (xdist
def recalculated(tmp_path_factory):  # groups interleave modules) tears a module fixture down and recalculated twice
    require_libreoffice()
    spec = build_whatif()
    return spec, _Halves(spec, tmp_path_factory)


@pytest.fixture(scope="module")
def written_once(tmp_path_factory):
    """The what-if description and its workbook as write_workbook saves it (bytes)."""
    spec = build_whatif()
    return spec, write_workbook(spec, tmp_path_factory.mktemp("once") / "base.xlsx").read_bytes()


def test_every_test_that_reads_a_book_runs_in_its_halfs_group():
    """Each parameter of a test of this module that reads ``recalculated`` names its book first and carries that
    book's xdist group: on another worker it would recalculate a whole half (35 books) again for itself."""
    import inspect

    readers = [
        f
        for cls in (TestParityWithThePythonModel, TestLoadSheetRecalculated)
        for _, f in inspect.getmembers(cls, inspect.isfunction)
        if "recalculated" in inspect.signature(f).parameters
    ]
    assert len(readers) == 11  # eight parity tests, three Load sheet tests
    for f in readers:
        (params,) = [m.args[1] for m in f.pytestmark if m.name == "parametrize"]
        for p in params:
            groups = [m.args[0] for m in p.marks if m.name == "xdist_group"]
            assert groups == [f"test_workbook_libreoffice_{_half(p.values[0])}"], (f.__name__, p.values[0])


class TestPatchedInputs:
    @pytest.mark.parametrize(
        "name",
        [
            "invalid-context-fraction",  # a float context
            "budget-text-ttft-target",  # text in a number cell
            "batch-blank-is-max-batch",  # a blank
            "moe-mixtral-util-price",  # fractions, a price
            "chosen-compare-model",  # text inputs
        ],
    )
    def test_equal_a_copy_written_with_the_inputs(self, written_once, tmp_path, name):
        """The parity books (workbook_support.with_inputs_xlsx: written once, Inputs cells set) have the same parts,
        byte for byte, as write_workbook of with_inputs(spec, inputs), so LibreOffice recalculates the same workbook."""
        spec, base = written_once
        patched = zipfile.ZipFile(io.BytesIO(with_inputs_xlsx(base, spec, SCENARIO_INPUTS[name])))
        written = zipfile.ZipFile(write_workbook(with_inputs(spec, SCENARIO_INPUTS[name]), tmp_path / "w.xlsx"))
        assert patched.namelist() == written.namelist()
        differ = [n for n in written.namelist() if patched.read(n) != written.read(n) and n != "docProps/core.xml"]
        assert differ == []
        assert base != with_inputs_xlsx(base, spec, SCENARIO_INPUTS[name])  # the inputs changed the copy


class TestParityWithThePythonModel:
    def test_covers_at_least_50_scenarios_of_every_kind(self):
        """The scenarios include MoE, MLA and sliding-window models, several GPUs and every error kind."""
        cat = default_catalog()
        models = {cat.model(s["model"]) for s in SCENARIO_INPUTS.values() if s["model"] in cat.models}
        assert len(SCENARIO_INPUTS) >= 50
        assert any(m.moe for m in models) and any(m.mla for m in models) and any(m.sliding_window for m in models)
        assert any(m.linear_attention for m in models) and any(m.sparse_attention for m in models)
        assert len({s["gpu"] for s in SCENARIO_INPUTS.values()}) >= 10

    @pytest.mark.parametrize(
        "name",
        [
            book("as-shipped"),
            book("two-nodes-and-beyond-trained-context"),
            book("gqa-70b-fp16-kv"),
            book("batch-above-the-engines-limit"),
            book("gb200-16-one-nvlink-domain"),
            book("h100-16-two-nodes"),
        ],
    )
    def test_inputs_warn_as_planner_plan_does(self, recalculated, name):
        """The Inputs sheet shows `planner plan`'s warnings, word for word and in its order, and none for the opening
        scenario: Llama 2 70B at 8,192 tokens is past its trained 4,096; 16 H100s are two 8-GPU nodes, 16 GB200 NVL72
        GPUs one 72-GPU NVLink domain (no warning: planner.deploy.scale_up_gpus); a batch of
        1,500 Llama 3.1 8B sequences fits one H100 (memory holds 1,732) but is more than vLLM runs at once (1,024)."""
        from planner.report import plan

        spec, books = recalculated
        cells = [ref for ref, c in spec.sheet(INPUTS_SHEET).cells.items() if c.style in ("warn", "warn_text")]
        shown = [books[name][INPUTS_SHEET][ref].value for ref in cells]
        want = []
        if name != "as-shipped":
            s = SCENARIO_INPUTS[name]
            p = plan(
                s["gpu"], s["model"], s["context"], gpus=s["gpus"], batch=s["batch"],
                kv_precision=s["kv_precision"], weight_precision=s["weight_precision"],
            )  # fmt: skip
            # the kinds the sheet shows (planner.workbook.inputs.warnings); plan's others (an all-reduce not
            # measured at that group) are not formulas there
            want = [f"Warning: {w}" for w in p.warnings if any(k in w for k in WORKBOOK_WARNING_KINDS)]
            assert bool(want) == (name != "gb200-16-one-nvlink-domain")  # the case is one that warns, or not
        if name == "h100-16-two-nodes":  # planner.deploy.spans_nodes_warning's wording, 8 GPUs a node
            assert want == [
                "Warning: 16 GPUs is more than one 8-GPU node: tensor parallelism across nodes is slower than modelled"
            ]
        assert [w for w in shown if w] == want

    @pytest.mark.parametrize("name", [book(name) for name in sorted(SCENARIO_INPUTS)])
    def test_no_lever_is_green_that_misses_a_target_or_lacks_a_value(self, recalculated, name):
        """The green scenarios (Calc's green row, which the Levers highlight reads) are those
        workbook_support.expected_green names from the model's own numbers, and the label names one of them."""
        spec, books = recalculated
        current = books[name][LOAD_SHEET][STATUS_CELL].value.startswith("current")  # its simulation holds
        factors = stored_rate_factors(spec)
        inputs = SCENARIO_INPUTS[name]
        want = expected_green(inputs, factors, simulated=current, stale=not current)
        assert green_scenarios(books[name]) == want
        label = cheapest_label(books[name])
        assert label in want if want else label == expected_cheapest_label(inputs, factors, current, not current)
        # nothing is judged where an input is refused (trial 13 F16): Calc's row is plan's refusal
        refused = calc_rows(lever_kv="fp8", lever_weights="fp8").row_of["input_refused"]
        assert books[name]["Calc"][f"C{refused}"].value == int(refused_beside_the_batch(inputs))

    @pytest.mark.parametrize("name", [book(name) for name in sorted(SCENARIO_INPUTS)])
    def test_every_result_cell_equals_the_model(self, recalculated, name):
        """Every probed cell (Calc, Results, Levers, Sweeps) equals the model within 1e-9, or shows its error."""
        spec, books = recalculated
        wb = books[name]
        inputs = {k: v for k, v in SCENARIO_INPUTS[name].items()}
        factors = stored_rate_factors(spec)  # the queue term each column carries (the opening's simulation)
        per_scenario = {key: {**scenario_inputs(inputs, key), "rate_factor": factors[key]} for key, _, _ in SCENARIOS}
        wrong = []
        for p in spec.probes:
            got = wb[p.sheet][p.ref].value
            want = expected_probe(inputs, p, per_scenario)
            if not agrees(got, want, p.scale):
                wrong.append(f"{p.sheet}!{p.ref} {p.scenario} {p.quantity}: sheet {got!r}, model {want!r}")
        assert not wrong, f"{len(wrong)} of {len(spec.probes)} cells differ:\n" + "\n".join(wrong[:25])

    @pytest.mark.parametrize("name", [book(PRINT_TITLES_BOOK)])
    def test_print_titles_change_no_value(self, recalculated, name):
        """The parity books are recalculated without their print titles (planner.io.libreoffice.without_print_titles:
        LibreOffice loads and recalculates the what-if workbook in ~0.45 s CPU without them, ~1.3 s with them); the
        shipped workbook recalculated with them has the same value in every cell of every sheet."""
        spec, books = recalculated
        for sheet in spec.sheets:
            assert books[name][sheet.name].cells == books["as-shipped"][sheet.name].cells, sheet.name
        assert books[name]["Calc"].cells  # read, not two missing sheets

    @pytest.mark.parametrize("name", [book("opening-scenario")])
    def test_default_template_matches_planner_plan(self, recalculated, name):
        """The shipped inputs give `planner plan`'s max batch (Llama 2 70B on 4 x H100 at 4,096 tokens): memory's,
        below vLLM's max_num_seqs on an H100 (plan's engine_batch_limit), which Inputs names beside it."""
        from planner.report import plan

        spec, books = recalculated
        p = plan("H100 SXM 80GB", "Llama-2-70B", 4096, gpus=4, batch=1)
        results = books[name]["Results"]
        values = {results[f"A{r}"].value: results[f"B{r}"].value for r in range(4, 20)}
        assert values["Max batch memory holds"] == int(p.memory.max_batch)
        assert values["Max batch the engine serves"] == p.max_batch == int(p.memory.max_batch)  # 4 x H100: not capped
        assert values["GPUs in the group"] == p.gpus
        note = books[name][INPUTS_SHEET][f"D{glance_row() + SERVED_NOTE_ROW}"].value
        assert note == f"what memory holds (vllm's max_num_seqs: {p.engine_batch_limit:,})"

    @pytest.mark.parametrize("name", [book("engine-caps-max-batch-h100"), book("engine-caps-max-batch-a100")])
    def test_max_batch_figures_are_at_the_batch_the_engine_serves(self, recalculated, name):
        """Llama 3.1 8B on one GPU at a short context: memory holds more sequences than vLLM's max_num_seqs (1,024 on an
        H100, 256 on an A100: engines.profiles' GPU-class defaults), so the Results sheet's decode at max batch is at
        the engine's limit, and the Inputs' TPOT and cost at max batch are those `planner plan` gives for the batch it
        serves (its max_batch, at_batch.step_s and cost_per_mtok_usd: the CLI's "Max batch 1,024 sequences of 256
        tokens (vllm's max_num_seqs; memory holds 1,732)", "Decode at batch 1024" and "Cost at batch 1024")."""
        from planner.report import plan

        spec, books = recalculated
        gpu, context = SCENARIO_INPUTS[name]["gpu"], SCENARIO_INPUTS[name]["context"]
        limit = {"H100 SXM 80GB": 1024, "A100 SXM 80GB": 256}[gpu]
        p = plan(gpu, "Llama-3.1-8B", context)
        assert p.batch_capped and p.max_batch == limit < int(p.memory.max_batch)
        results = books[name]["Results"]
        rows = {results[f"A{r}"].value: r for r in range(4, 60) if results[f"A{r}"].value}
        assert results[f"B{rows['Max batch memory holds']}"].value == int(p.memory.max_batch)
        assert results[f"B{rows['Max batch the engine serves']}"].value == limit
        at_max = [r for label, r in rows.items() if label == "Batch"][-1]  # "Decode at max batch"'s batch
        assert results[f"B{at_max}"].value == limit
        inputs = books[name][INPUTS_SHEET]
        glance = {label: inputs[f"B{glance_row() + i}"].value for i, (label, *_) in enumerate(GLANCE, 1)}
        assert glance["Max batch the engine serves"] == p.max_batch
        assert glance["TPOT at max batch"] == pytest.approx(p.at_batch.step_s * 1000, rel=1e-9)  # shown in ms
        assert glance[COST_AT_MAX_BATCH_LABEL] == pytest.approx(p.cost_per_mtok_usd, rel=1e-9)
        note = inputs[f"D{glance_row() + SERVED_NOTE_ROW}"].value  # as plan words it after its max batch
        assert note == f"vllm's max_num_seqs; memory holds {int(p.memory.max_batch):,}"

    @pytest.mark.parametrize("name", [book("opening-scenario")])
    def test_the_all_reduce_is_the_measured_one(self, recalculated, name):
        """4 x H100 at batch 1 (Llama 2 70B): one all-reduce of 1 x 8,192 x 2 B = 16 KiB is the AllReduce sheet's
        4.904 us (aiconfigurator 0.12.0, h100_sxm vLLM 0.24.0, CUDA graph, 4 GPUs), not the form's; 160 of them."""
        from planner.workbook.calc import calc_rows, scenario_col

        spec, books = recalculated
        c, calc = calc_rows(lever_kv="fp8", lever_weights="fp8"), books[name]["Calc"]  # the levers move no row
        col = scenario_col("base")
        assert calc[f"{col}{c.row_of['d_ar_bytes']}"].value == 16384
        assert calc[f"{col}{c.row_of['d_ar_t']}"].value == pytest.approx(4.904e-6, rel=1e-12)
        assert calc[f"{col}{c.row_of['d_comm']}"].value == pytest.approx(160 * 4.904e-6, rel=1e-12)

    @pytest.mark.parametrize("name", [book("mesh-pair-mi300x-2")])
    def test_a_pair_of_mi300x_reads_its_published_rccl_row(self, recalculated, name):
        """2 x MI300X at batch 32 (Llama 3.1 70B): one all-reduce of 32 x 8,192 x 2 B = 512 KiB is RCCL's 25.97 us on
        a pair (QuickReduce's README, 2025-03-16; no graph run printed, so the eager time stands inside graphs), the
        pair's one link of seven in the group's share (1/7)."""
        from planner.workbook.calc import calc_rows, scenario_col

        spec, books = recalculated
        c, calc = calc_rows(lever_kv="fp8", lever_weights="fp8"), books[name]["Calc"]
        col = scenario_col("base")
        assert calc[f"{col}{c.row_of['d_ar_bytes']}"].value == 524288
        assert calc[f"{col}{c.row_of['d_ar_t']}"].value == pytest.approx(25.97e-6, rel=1e-12)
        assert calc[f"{col}{c.row_of['mesh_share']}"].value == pytest.approx(1 / 7, rel=1e-12)


class TestLoadSheetRecalculated:
    """The Load sheet's figures are numbers planner wrote (a queue simulation is not a cell formula): LibreOffice's
    recalculation keeps them, and its Status formula tells current Inputs from changed ones.

    Each test reads one parity book and runs in that book's xdist group, so it reuses its half's recalculation
    (unmarked, a test could land on a worker that recalculates a whole half again for it: 340-380 s each)."""

    @pytest.mark.parametrize("name", [book("as-shipped")])
    def test_figures_survive_recalculation_unchanged(self, recalculated, name):
        spec, books = recalculated
        ws = books[name][LOAD_SHEET]
        figures = {ref: c.value for ref, c in spec.sheet(LOAD_SHEET).cells.items() if isinstance(c.value, float)}
        assert len(figures) > 100  # p50/p95 TTFT/TPOT of six levers at nine traffic levels, less those past capacity
        for ref, value in figures.items():
            assert ws[ref].value == pytest.approx(value, rel=1e-12), ref  # xlsx keeps 15-17 significant digits
        literal = {ref: c.value for ref, c in spec.sheet(LOAD_SHEET).cells.items() if isinstance(c.value, (int, str))}
        for ref, value in literal.items():
            if not (isinstance(value, str) and value.startswith("=")):
                assert ws[ref].value == (value if value != "" else None), ref  # an empty text cell reads blank
        assert ws[STATUS_CELL].value == "current: computed from the Inputs and the Assumptions as they are now"

    @pytest.mark.parametrize("name", [book("opening-scenario")])
    def test_status_stays_current_for_the_inputs_it_was_computed_from(self, recalculated, name):
        """'opening-scenario' sets the inputs the sheet was computed from: Status reads current."""
        _, books = recalculated
        assert books[name][LOAD_SHEET][STATUS_CELL].value.startswith("current")
        fleet = glance_row() + [g[1] for g in GLANCE].index("fleet_gpus") + 1
        assert books[name][INPUTS_SHEET][f"C{fleet}"].value == "GPUs"
        note = books[name][INPUTS_SHEET][f"D{fleet}"].value
        assert note.startswith("replicas x 4 GPUs. No latency margin")  # the GPU count given: no group search

    @pytest.mark.parametrize("name", [book("default-mha-65b")])
    def test_status_turns_stale_when_an_input_changes(self, recalculated, name):
        """'default-mha-65b' (``BASE``) sets another model and context, a blank GPU count and compare model than
        the sheet was computed from: those four rows read 'changed' and Status asks for a refresh."""
        _, books = recalculated
        ws = books[name][LOAD_SHEET]
        assert ws[STATUS_CELL].value.startswith("STALE: Inputs changed after these figures were computed")
        # the Inputs' fleet and its cost rest on that sheet: their unit cells say so (a trial read a stale fleet there)
        for key in LOAD_FED:
            row = glance_row() + [g[1] for g in GLANCE].index(key) + 1
            assert books[name][INPUTS_SHEET][f"C{row}"].value == STALE_UNIT, key
        changed = {ws[f"A{r}"].value for r in range(7, 20) if ws[f"D{r}"].value == "changed"}
        assert changed == {
            "Model",
            "Context per sequence (tokens)",
            "GPU count (tensor parallel) (GPUs)",
            "Compare with model",
        }


class TestLoadSheetFollowsTheAssumptions:
    def test_status_turns_stale_when_an_engine_parameter_is_edited(self, tmp_path):
        """Memory utilization 0.9 -> 0.5 on the Assumptions sheet (trial 6 F6): recalculated, memory holds 15
        sequences where the baseline was simulated at 39, so the Load sheet's Status reads stale and names the
        Assumptions, its memory_utilization row reads "changed", and the Inputs' fleet is marked (its unit cell)."""
        require_libreoffice()
        from planner.workbook.load_sheet import STALE_ENGINE

        path = write_workbook(build_whatif(), tmp_path / "copy.xlsx")
        wb = openpyxl.load_workbook(path)
        sheet, ref = next(iter(wb.defined_names["eng_memory_utilization"].destinations))
        wb[sheet][ref.replace("$", "")] = 0.5
        wb.save(path)
        copy_ = tmp_path / "no-print-titles" / path.name
        copy_.parent.mkdir()
        copy_.write_bytes(without_print_titles(path.read_bytes()))
        (csvs,) = convert_to_csv_sheets(copy_, [INPUTS_SHEET, LOAD_SHEET], tmp_path / "recalc")
        values = {sheet: read_csv_sheet(csv) for sheet, csv in csvs.items()}
        load = values[LOAD_SHEET]
        assert load[STATUS_CELL] == STALE_ENGINE
        row = next(int(k[1:]) for k, v in load.items() if k[0] == "A" and v == "memory_utilization")
        assert (load[f"B{row}"], load[f"C{row}"], load[f"D{row}"]) == (0.9, 0.5, "changed")
        for key in LOAD_FED:
            assert values[INPUTS_SHEET][f"C{glance_row() + [g[1] for g in GLANCE].index(key) + 1}"] == STALE_UNIT


class TestRefreshKeepsUserData:
    def test_refresh_adds_a_new_gpu_and_keeps_inputs_sheets_and_edits(self, tmp_path):
        """After refresh: a new catalog GPU is listed and usable; edited inputs, an added sheet and an
        edited assumption are intact, and the charts are still there."""
        require_libreoffice()
        path = write_workbook(build_whatif(), tmp_path / "copy.xlsx")
        wb = openpyxl.load_workbook(path)
        wb[INPUTS_SHEET][f"B{input_row('model')}"] = "Llama-2-70B"
        wb[INPUTS_SHEET][f"B{input_row('context')}"] = 4096
        wb[INPUTS_SHEET]["F20"] = "my note"
        mine = wb.create_sheet("My scenarios")
        mine["A1"], mine["B1"] = "budget", "=Results!B5*2"
        wb.save(path)
        extra = tmp_path / "catalog"
        extra.mkdir()
        (extra / "new.toml").write_text(NEW_GPU_TOML, encoding="utf-8")
        cat = default_catalog(extra)
        refresh(path, cat)
        wb = openpyxl.load_workbook(path)
        assert wb[INPUTS_SHEET][f"B{input_row('model')}"].value == "Llama-2-70B"
        assert wb[INPUTS_SHEET][f"B{input_row('context')}"].value == 4096
        assert wb[INPUTS_SHEET]["F20"].value == "my note"
        assert wb["My scenarios"]["B1"].value == "=Results!B5*2"
        assert [n for n in wb.sheetnames if n in CATALOG_SHEETS] == list(CATALOG_SHEETS)
        gpu_names = [c.value for c in wb["GPUs"]["A"][1:] if c.value]
        assert "Z100 Test 96GB" in gpu_names
        assert len(wb["Charts"]._charts) == 4
        # the new GPU works in the recalculated copy
        wb[INPUTS_SHEET][f"B{input_row('gpu')}"] = "Z100 Test 96GB"
        wb.save(path)
        copy_ = (
            tmp_path / "no-print-titles" / path.name
        )  # ~0.85 s CPU less (planner.io.libreoffice.without_print_titles)
        copy_.parent.mkdir()
        copy_.write_bytes(without_print_titles(path.read_bytes()))
        (csvs,) = convert_to_csv_sheets(copy_, [INPUTS_SHEET, "My scenarios", LOAD_SHEET], tmp_path / "recalc")
        values = {sheet: read_csv_sheet(csv) for sheet, csv in csvs.items()}  # (~2 s CPU less than xlsx + openpyxl)
        assert isinstance(values[INPUTS_SHEET][f"B{glance_row() + 2}"], (int, float))  # max batch
        assert values["My scenarios"].get("B1") is not None
        # the Load sheet was computed for the GPU refresh saw; after the GPU changed its Status says so
        assert values[LOAD_SHEET][STATUS_CELL].startswith("STALE: Inputs changed")
        assert values[LOAD_SHEET]["D7"] == "changed"  # the GPU row

    def test_a_workbook_saved_by_libreoffice_refreshes_as_written(self, tmp_path):
        """Saved through LibreOffice (its TRUE / FALSE cells become ``=TRUE()`` / ``=FALSE()`` formulas with results 1
        / 0), the workbook refreshes as the one planner wrote: the Load sheet simulated for its Inputs, the same rate
        factors, nothing "not computed". Refresh read each switch as "must be TRUE or FALSE; got 1", printed
        "refreshed" and left a fleet 25% short (trial 19 F1)."""
        require_libreoffice()
        spec = build_whatif()
        path = write_workbook(spec, tmp_path / "book.xlsx")
        (saved,) = convert(path, "xlsx", tmp_path / "saved")
        assert "TRUE()" in zipfile.ZipFile(saved).read("xl/worksheets/sheet7.xml").decode()  # Assumptions
        w = refresh(saved, output=tmp_path / "refreshed.xlsx")
        assert w.load_not_simulated == ""
        wb = openpyxl.load_workbook(w.path)
        texts = [c.value for row in wb[LOAD_SHEET].iter_rows() for c in row if isinstance(c.value, str)]
        assert not any("not computed" in t for t in texts)
        row = calc_rows(lever_kv="fp8", lever_weights="fp8").row_of["rate_factor"]
        factors = {k: wb["Calc"][f"{col}{row}"].value for k, _, _ in SCENARIOS for col in [scenario_col(k)]}
        assert factors == pytest.approx(stored_rate_factors(spec), rel=1e-12)  # LibreOffice saves 15 digits


NEW_GPU_TOML = """
[[gpu]]
name = "Z100 Test 96GB"
vendor = "other"
architecture = "Test"
memory_bytes = 103079215104
hbm_bandwidth_bytes_per_s = 4.0e12
peak_flop_per_s = { fp16 = 1000e12, bf16 = 1000e12, fp8 = 2000e12 }
interconnect_bytes_per_s = 400e9
tdp_w = 700
source = "test entry"
[[gpu.prices]]
kind = "on-demand"
usd_per_gpu_hour = 2.0
provider = "test"
date = "2026-01"
source = "test price"
"""


def _word_box_heights(pdf: Path) -> list[tuple[list[str], float]]:
    """Each page's words and the median height of their boxes (pdftotext -bbox), in points: the body text's size
    times the font's box per point."""
    html = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    out = []
    for page in html.split("<page ")[1:]:
        words = re.findall(r'yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">([^<]*)</word>', page)
        out.append(([w for _, _, w in words], statistics.median(float(b) - float(a) for a, b, _ in words)))
    return out


def _lowest_words(pdf: Path) -> list[tuple[str, float]]:
    """Each page's sheet (the header's first word) and how far down its lowest word of the body (the header and
    footer, the top and bottom 8%, left out) ends, as a share of the page's height (pdftotext -bbox)."""
    html = subprocess.run(["pdftotext", "-bbox", str(pdf), "-"], capture_output=True, text=True, check=True).stdout
    out = []
    for page in html.split("<page ")[1:]:
        height = float(re.search(r'height="([\d.]+)"', page).group(1))
        words = re.findall(r'yMin="([\d.]+)" xMax="[\d.]+" yMax="([\d.]+)">([^<]*)</word>', page)
        body = [float(b) for a, b, _ in words if 0.08 * height < float(a) < 0.92 * height]
        out.append((words[0][2] if words else "", max(body, default=0.0) / height))
    return out


class TestRenderedPages:
    def test_every_sheet_renders_to_pdf_and_png(self, tmp_path):
        """soffice --convert-to pdf and pdftoppm give at least one page per sheet (the pictures a reviewer looks at),
        none blank and no cell printed as ###."""
        require_libreoffice()
        if shutil.which("pdftoppm") is None:
            pytest.skip("pdftoppm (poppler-utils) not installed")
        path = write_workbook(build_whatif(), tmp_path / "capacity-what-if.xlsx")
        pdf = convert(path, "pdf", tmp_path / "pdf")[0]
        subprocess.run(["pdftoppm", "-r", "40", "-png", str(pdf), str(tmp_path / "page")], check=True)
        pages = sorted(tmp_path.glob("page-*.png"))
        sheets = openpyxl.load_workbook(path).sheetnames
        # Results runs over two pages, Assumptions over three (its engine fields: s184's fused-MoE workspace pushed its
        # last rows onto a third), Load over four (inputs and levers, its four charts, its four tables, the engine
        # parameters the figures were simulated with: page breaks of its own). Five sheets too wide for one page at 8 pt print at 73% over several pages across
        # (planner.workbook.printing): Calc over 26 (two across, thirteen down: its operator block, one row per kernel,
        # the budget fleet, linear-attention, sparse-attention and mesh-share rows, the datasheet floors of the ranges
        # and why the targets are not judged: trial 13 F5, F11, F16; which lever ran the Inputs' scenario and whether
        # the fleet is stale: trial 19 F3; the budget fleet planner export of the file gives: trial 26 F16), Models over 15 (five across,
        # three down), GPUs over seven (seven across: s201's first-party quotes made the price columns wider), AllReduce over four (the measured table: two across, two down),
        # Ranges over four (two across; its factors and coverage: a page break of their own). Fit to one page wide they took
        # 6, 1, 1, 2 and 2 pages, at 2.2-5.5 pt. s211's two workstation GPUs (RTX PRO 6000 WS, RTX 6000 Ada) pushed the
        # GPUs sheet's last rows onto a second page down (seven across: 11 pages; Models 12, Ranges 6): 77 in all, four
        # of GPUs' pages two rows and the note alone, Models' third pages down a third full. Since s212 a block of rows
        # whose last page down would hold under 40% of a page shares the last two pages evenly
        # (planner.workbook.printing.no_near_empty_page): GPUs' 830 pt of rows are over one page at 73% (717 pt), so
        # two even pages down in each group of columns, and its name column at most 24 characters (the two RTX PRO
        # 6000 names wrap; 43 before, on every page across) makes six groups, not seven: 12 pages, 78 in all. Models
        # stays 12 (three pages down of four groups, the last two even).
        assert len(sheets) <= len(pages) <= len(sheets) + 64
        boxes = _word_box_heights(pdf)
        # the first GPUs page prints at exactly 73%: its words' boxes give an 11-pt word's box at 100%
        gpus = openpyxl.load_workbook(path)["GPUs"]
        assert not gpus.sheet_properties.pageSetUpPr.fitToPage and gpus.page_setup.scale == 73
        first_gpus = next(i for i, (words, _) in enumerate(boxes) if words[:2] == ["GPUs", "GPU"])  # header, table
        box_11pt = boxes[first_gpus][1] / 0.73
        for i, (words, box) in enumerate(boxes, 1):
            # 8 pt or more in Excel; LibreOffice without Calibri (DejaVu Sans, 7 pt a character of width, not 5.25)
            # prints a sheet fit to width at 3/4 of that: 6 pt. Fit to width, GPUs and Models printed at 2.2 pt.
            assert 11 * box / box_11pt >= 6.0, f"page {i} ({' '.join(words[:4])}): {11 * box / box_11pt:.1f} pt"
        # no page of a table printed at a fixed scale holds only a few rows: its lowest word is below 45% of the
        # page's height (the 77-page book's GPUs pages of two rows and the note: 23-31%; Models' thirds: 29-35%)
        for i, (sheet, lowest) in enumerate(_lowest_words(pdf), 1):
            if sheet in ("GPUs", "Models", "AllReduce", "Calc"):
                assert lowest >= 0.45, f"page {i} ({sheet}) ends at {lowest:.0%} of the page: a few rows alone"
        for i in range(1, len(pages) + 1):  # no blank page: each has its sheet's title or table header
            text = subprocess.run(
                ["pdftotext", "-f", str(i), "-l", str(i), str(pdf), "-"], capture_output=True, text=True, check=True
            ).stdout
            assert text.strip(), f"page {i} is blank"
            # every page names its sheet (header), the planner, the date printed and its number (footer): trial 19 F8
            assert text.split()[0] in sheets, f"page {i} has no sheet name in its header"
            assert f"planner {__version__}, what-if workbook, printed " in text and f"page {i} of {len(pages)}" in text
            # a number too wide for its column prints as ### (the AllReduce sheet's 54,410 us and 1,073,741,824 B did)
            assert "###" not in text, f"page {i} prints a cell as ###"


#: A book of every kind of computed cell the parity tests read: a number, a whole number, text that looks like a
#: number, text with a comma, quote and line break, an empty-text formula, errors with and without an Excel name, a
#: boolean, a percentage, a number past 15 digits; openpyxl saves each formula without a value.
KINDS_OF_CELL = {
    "A1": "=5/2",
    "A2": "=4096*1",
    "A3": '="4096"',
    "A4": '="say ""hi"", then"&CHAR(10)&"bye"',
    "A5": '=""',
    "A6": "=1/0",
    "A7": "=NA()",
    "A8": "=1>0",
    "A9": "=1/8",
    "A10": "=13125000000000000*1",
    "A11": "=1/3",
    "B2": "=A1*1e-300",
    "B3": "=SQRT(-1)",  # Err:502, invalid argument
    "B4": "=SUM(1;2)",  # Err:508, a missing pair (";" is no separator in an xlsx formula)
    "B5": "=B5+1",  # Err:522, circular reference
    "B6": "=IRR(A1:A2)",  # Err:523, no convergence
}
KINDS_SHEETS = ["Calc sheet", "Other"]

#: One process converts the same book twice with planner.io.libreoffice: to xlsx (its first soffice call, whose
#: profile becomes the template), then to CSV (a copy of the template); it prints the template after each call
#: and how often the template's settings name OOXMLRecalcMode.
_TWO_CONVERSIONS = """
import sys
from pathlib import Path
import planner.io.libreoffice as lo
d = Path(sys.argv[1])
lo.convert(d / "t.xlsx", "xlsx", d / "x")
print(lo._template)
lo.convert(d / "t.xlsx", sys.argv[2], d / "c", outputs=[Path(p) for p in sys.argv[3:]])
print(lo._template)
print((lo._template / "user" / "registrymodifications.xcu").read_text().count("OOXMLRecalcMode"))
"""


@pytest.fixture(scope="module")
def converted_twice(tmp_path_factory):
    """``KINDS_OF_CELL`` converted by one process to xlsx, then to CSV (``_TWO_CONVERSIONS``): the xlsx's values
    (openpyxl data_only), the CSV of each sheet by name, and what the process printed. Two soffice calls serve
    TestProfileTemplate and TestCsvValues (four before: ~3 s of LibreOffice CPU)."""
    require_libreoffice()
    d = tmp_path_factory.mktemp("twice")
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = KINDS_SHEETS[0]
    for ref, formula in KINDS_OF_CELL.items():
        ws[ref] = formula
    ws["A9"].number_format = "0.0%"
    wb.create_sheet(KINDS_SHEETS[1])["C3"] = "=-'Calc sheet'!A2"
    wb.save(d / "t.xlsx")
    csvs = {s: d / "c" / f"t-{s}.csv" for s in KINDS_SHEETS}
    r = subprocess.run(
        [sys.executable, "-c", _TWO_CONVERSIONS, str(d), CSV_EVERY_SHEET, *map(str, csvs.values())],
        capture_output=True,
        text=True,
        check=True,
    )
    return openpyxl.load_workbook(d / "x" / "t.xlsx", data_only=True), csvs, r.stdout.splitlines()


class TestProfileTemplate:
    def test_later_calls_copy_the_first_profile_and_still_recalculate(self, converted_twice):
        """planner.io.libreoffice keeps the profile of a process's first conversion and copies it for later ones:
        the copy keeps OOXMLRecalcMode 0 (a formula openpyxl saved without a value is computed both times), and
        the template goes when the process exits."""
        xlsx, csvs, (first, second, recalc_mode) = converted_twice
        assert xlsx[KINDS_SHEETS[0]]["A1"].value == 2.5 == read_csv_sheet(csvs[KINDS_SHEETS[0]])["A1"]
        assert second == first and Path(first).name.startswith("planner-loprofile-")
        assert recalc_mode == "1"
        assert not Path(first).exists()


class TestCsvValues:
    """The parity books are read through LibreOffice's CSV export (workbook_support.read_csv_sheet), not its
    xlsx: the values must be those openpyxl reads from the xlsx, type included."""

    def test_reads_each_kind_of_field(self, tmp_path):
        """Quoted text (commas, doubled quotes, a line break; "" blank), numbers, percentages, booleans, blanks."""
        path = tmp_path / "b-Sheet.csv"
        path.write_text('"a, ""b""\nc",4096,"4096",,1.5E-05\n"",TRUE,12.5%,1.3125E+16,-2,"Err:502"\n', encoding="utf-8")
        assert read_csv_sheet(path) == {
            "A1": 'a, "b"\nc',
            "B1": 4096,
            "C1": "4096",
            "E1": 1.5e-05,
            "B2": True,
            "C2": 0.125,
            "D2": 13125000000000000,
            "E2": -2,
            "F2": "#VALUE!",  # LibreOffice's invalid argument, as its xlsx names it
        }
        assert [type(v) for v in read_csv_sheet(path).values()] == [str, int, str, float, bool, float, int, int, str]
        for bad, says in (("1,12 May", "b-Sheet.csv: '12 May' is neither text"), ('"Err:511"', "error Err:511 has no")):
            path.write_text(bad + "\n", encoding="utf-8")
            with pytest.raises(LibreOfficeError, match=says):
                read_csv_sheet(path)

    def test_a_recalculated_book_reads_as_its_xlsx_does(self, converted_twice):
        """Every kind of computed cell the parity tests read (``KINDS_OF_CELL``) has the value and type openpyxl reads
        from LibreOffice's xlsx of the same book."""
        xlsx, csvs, _ = converted_twice
        for sheet, path in csvs.items():
            want = {c.coordinate: c.value for row in xlsx[sheet].iter_rows() for c in row if c.value is not None}
            got = read_csv_sheet(path)
            assert got.keys() == want.keys(), sheet
            for ref, value in want.items():
                assert type(got[ref]) is type(value), (ref, got[ref], value)
                assert got[ref] == pytest.approx(value, rel=1e-14) if isinstance(value, float) else got[ref] == value
        calc = read_csv_sheet(csvs["Calc sheet"])
        assert calc["A6"] == "#DIV/0!" and read_csv_sheet(csvs["Other"])["C3"] == -4096
        assert [calc[f"B{r}"] for r in range(3, 7)] == ["#VALUE!", "#VALUE!", "#VALUE!", "#N/A"]


class TestTimeout:
    def test_a_conversion_past_its_time_fails_in_one_line_and_leaves_no_soffice_running(self, tmp_path):
        """convert stops soffice's whole process group at its timeout: killing only the launcher (before) left
        soffice.bin converting on, using a CPU after the test had failed. Ten copies of the what-if workbook
        take ~13 s CPU, well past the 4 s allowed (by then soffice.bin runs). Nothing is left in the working folder."""
        require_libreoffice()
        if shutil.which("pgrep") is None:
            pytest.skip("pgrep (procps) not installed")
        src = Path(__file__).resolve().parents[1] / "workbooks" / "capacity-what-if.xlsx"
        books = [shutil.copy(src, tmp_path / f"b{i}.xlsx") for i in range(10)]
        outdir = tmp_path / "out"
        here = set(os.listdir())
        with pytest.raises(LibreOfficeError, match=r"^LibreOffice did not finish converting within 4 s$"):
            convert(books, "xlsx", outdir, timeout_s=4)
        time.sleep(2)  # before, the orphaned soffice.bin showed up a moment after the launcher was killed
        running = subprocess.run(["pgrep", "-f", f"outdir {outdir}"], capture_output=True, text=True).stdout
        assert running == ""
        assert "pkcs11.txt" not in set(os.listdir()) - here  # (NSS's, left in the working folder before)
