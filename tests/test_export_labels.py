"""A user trial of `planner export`: each label says what its figure is, checked in the rendered workbook.

The trial's defects: "Requests per replica" was the decode batch (sequences in flight, not requests per second);
"TPOT if all p95 length" read lower than "TPOT at peak" with nothing saying they are on different bases (and
docs/export.md put it on Options, not Details); the engine's kernel factors read "achieved ... of peak"; a refused
KV format was offered int8 and int4, which vLLM does not cache.
"""

from __future__ import annotations

import csv

import openpyxl
import pytest
from cli_support import SCENARIO, one_line, run

from planner import api
from planner.engines.profiles import engine_profile

#: cli_support.SCENARIO's p95 prompt + p95 output, tokens: 3,000 + 1,200 (the context memory is sized for).
SIZING_CONTEXT_TOKENS = 3000 + 1200
BATCH_LABEL = "Sequences in flight per replica, at most (max batch)"
LOAD_LABEL = "Load vs sized capacity (average)"
DECODE_LABEL = "TPOT, decode step alone: full batch, every sequence at p95 prompt + output (4,200 tokens)"


@pytest.fixture(scope="module")
def outputs(tmp_path_factory):
    """cli_support.SCENARIO (H100, Llama-3.1-70B, rented) exported as xlsx, md and csv."""
    folder = tmp_path_factory.mktemp("labels")
    (folder / "s.toml").write_text(SCENARIO)
    for suffix in ("xlsx", "md", "csv"):
        result = run("export", str(folder / "s.toml"), "-o", str(folder / f"r.{suffix}"))
        assert result.exit_code == 0, result.output
    return folder


@pytest.fixture(scope="module")
def book(outputs):
    return openpyxl.load_workbook(outputs / "r.xlsx")


def header(book, sheet: str) -> list:
    return [c.value for c in book[sheet][1]]


def cell(book, sheet: str, column: str, row: int = 2):
    return book[sheet].cell(row=row, column=header(book, sheet).index(column) + 1).value


def all_text(book) -> str:
    return "\n".join(
        str(v) for ws in book.worksheets for row in ws.iter_rows(values_only=True) for v in row if v is not None
    )


class TestBatchLabel:
    def test_the_batch_is_labelled_sequences_in_flight_per_replica_on_options_and_levers(self, book):
        """The same figure on both sheets: the baseline's batch (107 here, the Levers note's "baseline 107")."""
        assert cell(book, "Options", BATCH_LABEL) == cell(book, "Levers", BATCH_LABEL) == 107

    def test_no_sheet_calls_the_batch_requests_per_replica(self, book, outputs):
        texts = (all_text(book), (outputs / "r.md").read_text())
        assert all("requests per replica" not in t.lower() for t in texts)
        assert f"**{BATCH_LABEL}**" in texts[1]  # the glossary defines it

    def test_the_glossary_says_it_is_not_requests_per_second(self, book):
        terms = {r[0]: r[1] for r in book["Glossary"].iter_rows(min_row=2, values_only=True)}
        assert "not requests per second" in terms[BATCH_LABEL]

    def test_the_csv_keeps_its_machine_key(self, outputs):
        assert "batch_per_replica" in (outputs / "r.csv").read_text().splitlines()[0].split(",")


class TestDecodeStepAlone:
    def test_the_details_label_names_its_batch_and_context(self, book):
        assert DECODE_LABEL in header(book, "Details")
        assert not any("if all" in str(h) for h in header(book, "Details") + header(book, "Options"))

    def test_its_value_is_one_decode_step_at_the_full_batch_and_the_p95_context(self, book):
        """planner.api.tpot at 4,200 tokens (p95 prompt + output), batch = Options' batch, Options' GPUs per replica:
        the basis the label states."""
        batch, gpus = cell(book, "Options", BATCH_LABEL), cell(book, "Options", "GPUs per replica")
        expected_ms = api.tpot("H100", "Llama-3.1-70B", SIZING_CONTEXT_TOKENS, batch=batch, gpus=gpus) * 1e3
        assert cell(book, "Details", DECODE_LABEL) == pytest.approx(expected_ms, rel=1e-9)

    def test_it_reads_lower_than_tpot_at_peak_here_and_the_summary_says_why(self, book):
        """The trial's case: 34.1 ms decode step alone against 37.7 ms at peak (simulated p95, prompts sharing the
        steps); the Summary's reading note for Details says the bases differ."""
        assert cell(book, "Details", DECODE_LABEL) < cell(book, "Options", "TPOT at peak")
        assert "on another basis than TPOT at peak" in all_text(book)


class TestLoadVsSizedCapacity:
    """Trial 22 F15: "Utilization (average)" read 40% on a 2,880-GPU fleet 180 times the one sized on the prediction,
    and a committee reads utilization as GPU busy time. The figure (average traffic over what the deployed replicas
    carry within the targets) is named for what it is, on every sheet and in the Markdown; its value is unchanged."""

    def test_options_and_summary_name_it_load_vs_sized_capacity_with_the_csv_figure(self, book, outputs):
        """The same figure under the new name on Options and Summary as the csv's ``utilization_average`` (the
        machine key kept), between 0 and 1."""
        with (outputs / "r.csv").open(newline="") as f:
            load = float(next(csv.DictReader(f))["utilization_average"])  # the first option, as Options' row 2
        assert 0 < load < 1
        assert cell(book, "Options", LOAD_LABEL) == pytest.approx(load, abs=5e-5)  # the csv's 4 decimals
        summary = {c.value: book["Summary"].cell(row=c.row, column=2).value for c in book["Summary"]["A"]}
        assert summary[LOAD_LABEL] == pytest.approx(load, abs=5e-5)

    def test_nothing_calls_it_utilization_and_the_glossary_says_it_is_not_busy_time(self, book, outputs):
        md = (outputs / "r.md").read_text()
        texts = (all_text(book), md)
        assert all("Utilization (average)" not in t and "Utilization at average" not in t for t in texts)
        assert all(" utilized" not in t for t in texts)  # the Summary's reason: "it is at 29% of its sized capacity"
        assert f"| {LOAD_LABEL} |" in md and f"**{LOAD_LABEL}**" in md  # the options table and the glossary
        terms = {r[0]: r[1] for r in book["Glossary"].iter_rows(min_row=2, values_only=True)}
        assert "not how busy its GPUs are" in terms[LOAD_LABEL]


class TestKernelFactors:
    def test_assumptions_call_them_factors_on_the_measured_kernels(self, book):
        """planner.engines.profiles' vllm profile: bandwidth_efficiency and prefill_flop_efficiency, 1.0 each,
        multiply the measured kernels' bandwidth and FLOP/s (planner.model.operators)."""
        rows = {r[0]: r[1:3] for r in book["Assumptions"].iter_rows(min_row=2, values_only=True)}
        vllm = engine_profile("vllm")
        assert rows["engine vllm: factor on the measured kernels' bandwidth (kernel time / this)"] == (
            vllm.bandwidth_efficiency,
            "x (1: kernels as measured)",
        )
        assert rows["engine vllm: factor on the measured kernels' FLOP/s in prefill (kernel time / this)"] == (
            vllm.prefill_flop_efficiency,
            "x (1: kernels as measured)",
        )

    def test_nothing_reads_achieved_or_of_peak(self, book, outputs):
        for text in (all_text(book), (outputs / "r.md").read_text()):
            assert "of peak" not in text and "achieved" not in text.lower()


class TestRefusedKvFormat:
    @pytest.mark.parametrize(
        "lines, said",
        [  # planner.engines.profiles: vLLM caches fp16, bf16, fp32, fp8; LMDeploy fp16, bf16, int8, int4
            (
                'gpu = "H100"\nkv_precision = "nvfp4"',
                "option #1 (H100, Llama-3.1-70B, KV nvfp4, cloud).kv_precision: 'nvfp4' is not a KV-cache format; "
                "accepted: fp32, bf16, fp16, fp8 (line",
            ),
            (
                'gpu = "H100"\nengine = "lmdeploy"\nkv_precision = "nvfp4"',
                "kv_precision: 'nvfp4' is not a KV-cache format; accepted: bf16, fp16, int8, int4 (line",
            ),
            (
                'model = "Llama-3.1-70B"\n[levers]\nkv_precision = "mxfp4"',
                "levers.kv_precision: 'mxfp4' is not a KV-cache format; accepted: fp32, bf16, fp16, fp8 (line",
            ),
        ],
    )
    def test_offered_only_the_formats_its_engine_caches(self, tmp_path, lines, said):
        f = tmp_path / "s.toml"
        old = lines.split("\n", 1)[0]  # the scenario's line that the lines replace
        f.write_text(SCENARIO.replace(old, lines))
        line = one_line(run("export", str(f), "-o", str(tmp_path / "r.md")), 2)
        assert said in line
        assert not (tmp_path / "r.md").exists()
