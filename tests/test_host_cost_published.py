"""Published host (CPU) costs of serving engines per decode step (catalogs/reference/host_cost_published.csv, issue
21 item 3, s117): vLLM V0 / V1, SGLang, TensorRT-LLM 1.x's PyTorch executor, from the engines' issues and pull
requests, SGLang's v0.4 blog (https://lmsys.org/blog/2024-12-04-sglang-v0-4/) and arXiv 2603.22774. One planner
term reads it: TRTLLM-PYEXEC-64 is an offline trtllm-bench run's host cost (s158,
``planner.engines.profiles.TRTLLM_BENCH_EXPOSED_SEQUENCE_COST_S``). Every row must carry its address and a quote
holding its figures, and each per-sequence figure must be its step figure over its batch, so a transcription or
arithmetic slip fails here."""

from __future__ import annotations

import csv
import re
from datetime import date
from pathlib import Path

import pytest

PATH = Path(__file__).resolve().parents[1] / "catalogs" / "reference" / "host_cost_published.csv"
with PATH.open(encoding="utf-8") as _f:
    ROWS = list(csv.DictReader(_f))
#: us per unit for the units that are a time per decode step (ms_per_token is one step at batch 1)
US_PER_UNIT = {"ms_per_step": 1000.0, "us_per_step": 1.0, "ms_per_token": 1000.0}
RATIO_UNITS = {"throughput_ratio", "ttft_ratio", "percent_of_e2e"}
#: decode tokens/s of one batch without (figure_low) and with (figure_high) an overlapped host loop: the host time
#: the overlap hides is batch/low - batch/high a step, 1e6 x (1/low - 1/high) us a sequence
OVERLAP_PAIR = "tok_s_sync_vs_overlap"
ENGINES = {"vllm", "sglang", "sglang-jax", "tensorrt-llm"}


def _numbers_in(text: str) -> set[float]:
    return {float(m.replace(",", "")) for m in re.findall(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?", text)}


def test_the_file_has_rows_of_each_engine_family():
    assert len(ROWS) >= 15
    assert {r["engine"] for r in ROWS} >= {"vllm", "sglang", "tensorrt-llm"}
    assert len({r["record_id"] for r in ROWS}) == len(ROWS), "record ids repeat"


@pytest.mark.parametrize("row", ROWS, ids=[r["record_id"] for r in ROWS])
def test_every_row_has_a_source_a_quote_and_positive_figures(row):
    assert row["source"].startswith("https://"), row["source"]
    assert row["quote"].strip() and row["measured"].strip() and row["engine_version"].strip()
    assert row["engine"] in ENGINES, row["engine"]
    assert row["unit"] in set(US_PER_UNIT) | RATIO_UNITS | {OVERLAP_PAIR}, row["unit"]
    date.fromisoformat(row["date"])
    low, high = float(row["figure_low"]), float(row["figure_high"])
    assert 0 < low <= high, (low, high)
    if row["batch"]:
        assert int(row["batch"]) >= 1


@pytest.mark.parametrize("row", ROWS, ids=[r["record_id"] for r in ROWS])
def test_figures_are_in_the_quote(row):
    """The quote holds each figure as published (the ms/us the unit names)."""
    quoted = _numbers_in(row["quote"])
    for column in ("figure_low", "figure_high"):
        assert float(row[column]) in quoted, (column, row[column], row["quote"])


@pytest.mark.parametrize("row", ROWS, ids=[r["record_id"] for r in ROWS])
def test_per_sequence_figure_is_the_step_figure_over_the_batch(row):
    """per_seq_us = figure x (us per unit) / batch, to 4 significant figures, wherever a step time and a batch are
    given; for a without/with-overlap throughput pair 1e6 x (1/low - 1/high); blank otherwise (a ratio, or no batch
    stated)."""
    derivable = (row["unit"] in US_PER_UNIT and bool(row["batch"])) or row["unit"] == OVERLAP_PAIR
    for end in ("low", "high"):
        cell = row[f"per_seq_us_{end}"]
        if not derivable:
            assert cell == "", (end, cell)
            continue
        if row["unit"] == OVERLAP_PAIR:
            expected = 1e6 * (1 / float(row["figure_low"]) - 1 / float(row["figure_high"]))
        else:
            expected = float(row[f"figure_{end}"]) * US_PER_UNIT[row["unit"]] / int(row["batch"])
        assert float(cell) > 0
        assert float(cell) == pytest.approx(expected, rel=5e-4), (end, cell, expected)


def test_known_rows_read_as_published():
    """Spot values against their sources: vLLM V1 pre-release 5-6 ms at batch 256 (vllm#10634) is 19.5-23.4 us a
    sequence; TensorRT-LLM's exposed ~580 us/iter at concurrency 64 on B200 (TensorRT-LLM#13957) is 9.06 us."""
    by_id = {r["record_id"]: r for r in ROWS}
    assert float(by_id["VLLM-V1PRE-256"]["per_seq_us_low"]) == pytest.approx(19.53, abs=0.01)
    assert float(by_id["VLLM-V1PRE-256"]["per_seq_us_high"]) == pytest.approx(23.44, abs=0.01)
    assert float(by_id["TRTLLM-PYEXEC-64"]["per_seq_us_low"]) == pytest.approx(9.062, abs=0.001)
    # SGLang PR #5608: 16 running requests at 3053.86 tok/s without overlap, 3458.31 with: 5.239 - 4.627 ms a step
    assert float(by_id["SGLANG-PD-OVERLAP-16"]["per_seq_us_low"]) == pytest.approx(38.30, abs=0.01)
