"""The published measurements in catalogs/reference/ are sourced, parse, and cover what issue 10 asks for.

Coverage goals are issue 10's "Data" item: at least 150 measurements, at least 5 GPU types, tensor parallel
1/2/4/8, MoE models, at least 3 engines, and the four kinds of measurement (batch-1 latency, serving at a
concurrency or rate, static batch, vLLM start-up memory). Each measured figure must be readable in the row's
verbatim quote, so a transcription slip fails here.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

REF = Path(__file__).resolve().parents[1] / "catalogs" / "reference"
PERF = REF / "perf_public.csv"
STARTUP_FILES = [*sorted(REF.glob("vllm_startup_*.csv")), REF / "startup_memory_public.csv"]

KINDS = {"latency_batch1", "static_batch", "serving_concurrency", "serving_rate", "max_throughput"}
MEASURES = (
    "output_throughput_tok_s",
    "total_throughput_tok_s",
    "request_throughput_req_s",
    "tpot_ms",
    "ttft_ms",
    "itl_ms",
    "e2e_latency_ms",
)
#: Mixture-of-experts checkpoints (each model card describes experts): Mixtral, Qwen3 MoE, DeepSeek-V3/R1, gpt-oss.
MOE = re.compile(r"mixtral|qwen3-30b-a3b|qwen3-235b-a22b|deepseek-(v3|r1)|gpt-oss|a\d+b", re.I)
GPU_TYPES = re.compile(r"\b(GH200|GB200|A100|H100|H200|H20|B200|L40S|L4|MI300X|MI325X|MI355X|A10G)\b")
#: A figure is stored as published, or converted to ms from seconds (x1000) or nanoseconds (MLPerf logs, x1e-6).
UNIT_SCALES = (1, 1000, 1e-6)
GITHUB_BLOB = re.compile(r"^https://github\.com/[^/]+/[^/]+/blob/([^/]+)/")


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


PERF_ROWS = _rows(PERF)
STARTUP_ROWS = [r for p in STARTUP_FILES for r in _rows(p)]
ALL_ROWS = PERF_ROWS + STARTUP_ROWS


def _number(text: str) -> float:
    return float(text.replace(",", ""))


def _numbers_in(text: str) -> set[float]:
    """Numbers in a quote, read both with thousands separators ("26,150") and with commas as separators (CSV)."""
    grouped = re.findall(r"\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?", text)
    plain = re.findall(r"\d+(?:\.\d+)?", text)
    return {_number(m) for m in grouped + plain}


def _failures(check, rows):
    """Record ids whose row fails ``check`` (an assertion), with the message."""
    bad = []
    for row in rows:
        try:
            check(row)
        except (AssertionError, ValueError, KeyError) as e:
            bad.append(f"{row.get('record_id')}: {type(e).__name__} {e}")
    return bad


def _address_and_quote(row):
    assert row["source"].startswith("https://"), row["source"]
    assert row["quote"].strip()
    blob = GITHUB_BLOB.match(row["source"])
    if blob:
        ref = blob.group(1)
        assert re.fullmatch(r"[0-9a-f]{40}", ref) or (re.fullmatch(r"v\d[\w.]*", ref) and "tag" in row["notes"]), ref


def _fields_parse(row):
    assert row["kind"] in KINDS
    assert row["engine"] and row["gpu"] and row["model"] and row["source_group"]
    gpus, tp = int(row["num_gpus"]), int(row["tensor_parallel_size"])
    assert gpus >= tp >= 1
    for col in ("pipeline_parallel_size", "expert_parallel_size"):
        if row[col]:
            assert int(row[col]) >= 1
    if row["kind"] in ("latency_batch1", "static_batch", "serving_concurrency"):
        assert int(row["batch_size_or_concurrency"]) >= 1
    if row["kind"] == "serving_rate":
        assert _number(row["request_rate"]) > 0
    if not row["dataset"] or "random" in row["dataset"]:  # fixed lengths; named datasets (ShareGPT) vary
        assert int(row["input_len"]) >= 1 and int(row["output_len"]) >= 1
    measured = [c for c in MEASURES if row[c]]
    assert measured
    for c in measured:
        assert _number(row[c]) > 0
    if row["output_throughput_tok_s"]:
        assert row["throughput_unit"]


def _figures_in_quote(row):
    quoted = _numbers_in(row["quote"])
    for c in MEASURES:
        if row[c]:
            v = _number(row[c])
            assert any(abs(v - scale * q) <= 1e-6 * max(1, v) for q in quoted for scale in UNIT_SCALES), c


def test_every_row_has_an_address_and_a_quote():
    """A web address, pinned at a commit (or at a release tag the notes justify) when it is a GitHub file."""
    assert not _failures(_address_and_quote, ALL_ROWS)


def test_perf_row_fields_parse():
    """Kind, engine, GPU, parallelism and lengths parse; at least one measured figure, each positive."""
    assert not _failures(_fields_parse, PERF_ROWS)


def test_measured_figures_are_in_the_quote():
    """Each figure equals a number in the quote, or that number converted to ms from s or ns (UNIT_SCALES)."""
    assert not _failures(_figures_in_quote, PERF_ROWS)


def test_a_transcription_slip_is_caught():
    """The quote check fails on a figure the quote does not hold (TRT061-001 quotes 26,150; 26,151 is wrong)."""
    row = next(r for r in PERF_ROWS if r["record_id"] == "TRT061-001")
    assert not _failures(_figures_in_quote, [row])
    assert _failures(_figures_in_quote, [{**row, "output_throughput_tok_s": "26151"}])


def _startup_fields_parse(row):
    assert row["engine"] and row["model"] and row["gpu"]
    assert int(row["tensor_parallel_size"]) >= 1
    assert _number(row["available_kv_cache_memory_gib"]) > 0
    for col in ("gpu_kv_cache_tokens", "max_concurrency_x", "model_weights_memory_gib"):
        if row.get(col):
            assert _number(row[col]) > 0


def test_startup_rows_parse_and_their_figures_are_quoted():
    """KV cache GiB (and tokens, concurrency, weights where given) parse and appear in the quote."""
    rows = _rows(REF / "startup_memory_public.csv")
    assert not _failures(_startup_fields_parse, rows)

    def quoted(row):
        numbers = _numbers_in(row["quote"])
        for col in ("available_kv_cache_memory_gib", "gpu_kv_cache_tokens", "max_concurrency_x"):
            if row[col] or col == "available_kv_cache_memory_gib":
                assert _number(row[col]) in numbers, col

    assert not _failures(quoted, rows)


def test_record_ids_are_unique_across_reference_files():
    decode = _rows(REF / "decode_public.csv")
    ids = [r["record_id"] for r in ALL_ROWS + decode]
    assert len(ids) == len(set(ids))


def test_coverage_goals_of_issue_10():
    """>= 150 measurement rows, >= 5 GPU types, TP 1/2/4/8, MoE, >= 3 engines, every kind of measurement."""
    assert len(PERF_ROWS) + len(STARTUP_ROWS) >= 150
    gpu_types = {m.group(1) for r in ALL_ROWS if (m := GPU_TYPES.search(r["gpu"]))}
    assert len(gpu_types) >= 5 and {"A100", "H100", "H200", "L40S"} <= gpu_types, gpu_types
    assert {1, 2, 4, 8} <= {int(r["tensor_parallel_size"]) for r in PERF_ROWS}
    assert any(MOE.search(r["model"]) for r in PERF_ROWS)
    engines = {r["engine"].split(" ")[0] for r in PERF_ROWS}
    assert {"vLLM", "SGLang", "TensorRT-LLM", "LMDeploy"} <= engines, engines
    assert {"latency_batch1", "static_batch", "max_throughput"} <= {r["kind"] for r in PERF_ROWS}
    assert {"serving_concurrency", "serving_rate"} & {r["kind"] for r in PERF_ROWS}
