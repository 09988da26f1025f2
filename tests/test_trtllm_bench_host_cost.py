"""An offline ``trtllm-bench throughput`` run of TensorRT-LLM 1.x at the host cost TensorRT-LLM's loop is published to
expose (issue 21, s158; shipped after ``bench/switch_bootstrap.py trtllm-bench-host-cost``): the figure is the
table's, the rows that take it are the ones that say ``trtllm-bench throughput`` without ``--streaming``, and only a
1.x release takes it, so a served TensorRT-LLM deployment (``planner plan``, the workbook) keeps the 59 us."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from planner.accuracy import predict
from planner.accuracy.published import load_decode_rows, offline_benchmark_of
from planner.engines import profiles

TABLE = Path(__file__).resolve().parents[1] / "catalogs" / "reference" / "host_cost_published.csv"


def test_the_exposed_cost_is_trtllm_pyexec_64_over_its_batch():
    with TABLE.open(encoding="utf-8") as f:
        row = next(r for r in csv.DictReader(f) if r["record_id"] == "TRTLLM-PYEXEC-64")
    assert row["engine"] == "tensorrt-llm" and row["unit"] == "us_per_step" and "580" in row["quote"]
    per_sequence_s = float(row["figure_low"]) * 1e-6 / float(row["batch"])  # 580 us / 64 = 9.0625 us
    assert profiles.TRTLLM_BENCH_EXPOSED_SEQUENCE_COST_S == pytest.approx(per_sequence_s)
    assert float(row["per_seq_us_low"]) == pytest.approx(per_sequence_s * 1e6, abs=1e-3)


def test_offline_benchmark_reads_trtllm_bench_without_streaming():
    assert offline_benchmark_of({"batching": "trtllm-bench throughput, PyTorch backend: all 3000 requests at once"})
    assert not offline_benchmark_of({"batching": "trtllm-bench throughput --streaming --concurrency 64"})
    assert not offline_benchmark_of({"batching": "trtllm-serve; vllm bench serve --request-rate inf"})
    rows = {r.record_id: r for r in load_decode_rows()}
    assert rows["TRT12-069"].offline_benchmark and rows["TRT013-001"].offline_benchmark
    assert not any(r.offline_benchmark for r in rows.values() if r.engine != "tensorrt-llm")


def test_only_offline_tensorrt_llm_1x_rows_take_it():
    rows = {r.record_id: r for r in load_decode_rows()}
    trt12, trt013 = rows["TRT12-069"], rows["TRT013-001"]
    assert predict._profile_for(trt12, None).sequence_overhead_s == pytest.approx(9.0625e-6)
    assert predict._profile_for(trt013, None).sequence_overhead_s == 0.0  # 0.x's C++ executor keeps none
    served = profiles.with_trtllm_bench_host_cost(profiles.TENSORRT_LLM, "tensorrt-llm", "1.2.0", offline=False)
    assert served.sequence_overhead_s == profiles.TENSORRT_LLM_SEQUENCE_OVERHEAD_S
    vllm = profiles.with_trtllm_bench_host_cost(profiles.VLLM, "vllm", "0.11.0", offline=True)
    assert vllm is profiles.VLLM  # another engine's row keeps its profile
    assert profiles.TENSORRT_LLM.sequence_overhead_s == profiles.VLLM_SEQUENCE_OVERHEAD_S  # the served profile's
