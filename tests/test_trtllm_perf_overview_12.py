"""TensorRT-LLM's perf overview as of release 1.2 (``trtllm-perf-overview-1.2``, TRT12-*; s157), held out.

Source: NVIDIA/TensorRT-LLM ``docs/source/developer-guide/perf-overview.md`` as the 1.2.0 docs render it
(https://nvidia.github.io/TensorRT-LLM/1.2.0/developer-guide/perf-overview.html): "The reported metric is `Output
Throughput per GPU (tokens/sec/GPU)`", "All performance values are measured in **output tokens per second per GPU**";
runs are ``trtllm-bench ... throughput --dataset $dataset_file --backend pytorch --config $llm_options`` with every
request queued at once, fixed lengths, and no ``max_batch_size`` / ``max_num_tokens`` in any of the page's YAMLs.
trtllm-bench then sets its own (``tensorrt_llm/bench/benchmark/utils/general.py`` ``get_settings`` ->
``bench/build/build.py`` ``get_benchmark_engine_settings`` -> ``bench/build/tuning.py`` ``calc_engine_setting`` and
``finetune_setting``; chunked prefill off, so ``max_num_tokens`` is raised to ISL + max_batch_size), which each
predicted row carries in its notes; ``bench_limits`` below is that arithmetic. Its attention-DP ("DEP") runs pass
``--tp g --ep g`` and the same arithmetic runs with ``tp`` = g (attention DP does not enter it); each attention-DP rank
then schedules up to those limits ("``--max_batch_size``: Max batch size in each rank.", NVIDIA/TensorRT-LLM
``docs/source/blogs/Best_perf_practice_on_DeepSeek-R1_in_TensorRT-LLM.md`` at 01c4ece).
"""

from __future__ import annotations

import csv
import math
import re
from pathlib import Path

import pytest

from planner.accuracy.fit import FIT_SOURCE_GROUPS, held_out_rows
from planner.accuracy.published import (
    load_decode_rows,
    parallelism_of,
    provisional_problem,
    resolve_model_name,
)
from planner.catalog import default_catalog

GROUP = "trtllm-perf-overview-1.2"
ROWS = [r for r in load_decode_rows() if r.source_group == GROUP]
BY_ID = {r.record_id: r for r in ROWS}
LIMITS = re.compile(r"--max_batch_size (\d+) --max_num_tokens (\d+)")


def bench_limits(
    model: str, quant: str | None, tp: int, isl: int, osl: int, memory_gib: float, pp: int = 1
) -> tuple[int, int]:
    """trtllm-bench's max_batch_size and max_num_tokens for a run that sets neither (kv_cache_free_gpu_mem_fraction
    0.90, 1 B of KV per element): requests = 0.90 x (memory x TP x PP - params x bytes per weight) / (KV bytes per token
    x (ISL + OSL)), at most 4,096, divided by PP (``finetune_setting``: "raw_bs = min(kv_cache_max_requests, 4096) /
    pp_size", each micro-batch's), rounded up to 64 / 32s below 256, 128s below 1,024, else 256s; tokens = that x
    (1 + ISL / OSL), rounded up to at least 2,048; then at least ISL + max_batch_size. ``quant`` None (gpt-oss's MXFP4,
    a quantization trtllm-bench does not tune): BuildConfig's 2,048 sequences and 8,192 tokens. An MLA model's
    config.json names no head_dim, so trtllm-bench's ModelConfig takes hidden / heads (DeepSeek-R1: 7,168 / 128 = 56)
    with its 128 ``num_key_value_heads`` (``tensorrt_llm/bench/build/dataclasses.py`` ``set_values_if_none``)."""
    if quant is None:
        bs, tok = 2048, 8192
    else:
        m = default_catalog().model(model)
        head = m.hidden_size // m.num_attention_heads if m.mla is not None else m.head_dim
        per_token_gib = 2 * m.num_layers * max(tp, m.num_kv_heads) * head * 1.0 / 2**30
        weights_gib = m.published_params_total * {"FP4": 0.5, "FP8": 1.0}[quant] / 2**30
        requests = min(0.90 * (memory_gib * tp * pp - weights_gib) / (per_token_gib * (isl + osl)), 4096) / pp
        step = 32 if requests < 256 else 128 if requests < 1024 else 256
        bs = max(64, step * math.ceil(requests / step)) if step == 32 else step * math.ceil(requests / step)
        raw = min(requests * (1 + isl / osl), 32768)
        step = 256 if raw < 4096 else 512 if raw < 8192 else 1024
        tok = max(2048, step * math.ceil(raw / step))
    return bs, max(tok, isl + bs)


def test_the_group_is_held_out_and_read_whole():
    """168 cells of the page (every table, every GPU column, blank cells left out); no fit reads them."""
    assert GROUP not in FIT_SOURCE_GROUPS
    assert len(ROWS) == 168 and [r.record_id for r in ROWS] == [f"TRT12-{i:03d}" for i in range(1, 169)]
    assert {r.record_id for r in held_out_rows(ROWS)} == set(BY_ID)


def test_a_per_gpu_figure_becomes_the_groups_rate():
    """The page's unit is per GPU; the planner compares the group's output rate: H200 TP 2 Llama 3.3 70B FP8 at
    1024/1024 publishes 2,637 per GPU, read as 5,274 for the pair; a TP 1 cell (B200 FP4, 6,943) is unchanged; a DEP4
    cell (H200 Qwen3-235B-A22B FP8, 3,494 per GPU) is 13,976 for its four GPUs, run as four attention ranks."""
    h200, b200, dep4 = BY_ID["TRT12-017"], BY_ID["TRT12-001"], BY_ID["TRT12-138"]
    assert (h200.gpus, h200.throughput_tokens_per_s) == (2, 2 * 2637)
    assert (b200.gpus, b200.throughput_tokens_per_s) == (1, 6943)
    assert (dep4.gpus, dep4.throughput_tokens_per_s) == (4, 4 * 3494)
    assert (dep4.problem, dep4.parallelism, h200.parallelism) == ("", "dp-ep", "tp")


def test_trtllm_bench_limits_worked_by_hand():
    """B200 (178.35 GiB visible), Llama 3.3 70B NVFP4, TP 1, 1024/1024: 0.90 x (178.35 - 70.55e9 x 0.5 B / 2^30 =
    32.85) GiB = 130.95 GiB over 2 x 80 layers x 8 heads x 128 x 1 B x 2,048 tokens = 0.3125 GiB per request: 419
    requests -> 512 sequences; 419 x 2 = 838 tokens -> 2,048 (above 1,024 + 512). DeepSeek-R1-0528 NVFP4 on 4 x B200
    (DEP4), 1024/1024: 0.90 x (4 x 178.35 - 684.53e9 x 0.5 / 2^30 = 318.76) GiB = 355.2 GiB over 2 x 61 x 128 x 56 x
    1 B x 2,048 = 1.668 GiB per request: 213 requests -> 224 sequences (each rank's), 426 tokens -> 2,048."""
    assert bench_limits("Llama-3.3-70B", "FP4", 1, 1024, 1024, 191501854310 / 2**30) == (512, 2048)
    assert (BY_ID["TRT12-001"].max_num_seqs, BY_ID["TRT12-001"].max_num_batched_tokens) == (512, 2048)
    assert bench_limits("DeepSeek-R1", "FP4", 4, 1024, 1024, 191501854310 / 2**30) == (224, 2048)
    assert (BY_ID["TRT12-150"].max_num_seqs, BY_ID["TRT12-150"].max_num_batched_tokens) == (224, 2048)


@pytest.mark.parametrize("row", [r for r in ROWS if not r.problem], ids=lambda r: r.record_id)
def test_each_predicted_row_carries_trtllm_benchs_own_limits(row):
    """The limits in the row's notes are ``bench_limits`` of its model, precision, TP, lengths and GPU memory (the
    catalog's engine-visible memory where it has one, else its total), and the reader takes them as the row's."""
    cat = default_catalog()
    gpu = cat.gpu(row.gpu)
    memory_gib = (gpu.engine_visible_memory_bytes or gpu.memory_bytes) / 2**30
    model = resolve_model_name(row.model, cat)
    quant = None if model.startswith("gpt-oss") else {"nvfp4": "FP4", "fp8": "FP8"}[row.weight_precision]
    tp, pp = (1, row.gpus) if row.parallelism == "pp" else (row.gpus, 1)
    expected = bench_limits(model, quant, tp, row.input_len, row.output_len, memory_gib, pp)
    assert (row.max_num_seqs, row.max_num_batched_tokens) == expected
    assert row.max_num_batched_tokens >= row.input_len + row.max_num_seqs  # no prompt waits for a larger budget


def test_rows_not_predicted_say_why():
    """112 figures predicted: 47 TP 1 / TP 2 (B200, GB200, H200 and one RTX PRO 6000), 33 attention-DP runs over 2
    to 8 GPUs (B200, GB200, H200) and 32 pipelines of 2 to 8 RTX PRO 6000 (TP 1 x PP g); kept with their reason: 56
    B300 / GB300 (beta) figures."""
    reasons = [re.sub(r" \(.*| over \d+ GPUs.*", "", r.problem) for r in ROWS]
    assert reasons.count("") == 112
    assert sum(r.parallelism == "dp-ep" for r in ROWS if not r.problem) == 33
    assert sum(r.parallelism == "pp" for r in ROWS if not r.problem) == 32
    assert reasons.count("its source marks the figure provisional") == 56


def test_attention_dp_on_one_gpu_changes_nothing():
    """The GPT-OSS YAML turns attention DP on for every run; on one GPU (GB200 TP1) there is nothing to spread, so
    the run is read as tensor parallel; over 4 GPUs it is four attention ranks with the experts spread (DEP4); experts
    over another number of GPUs than the attention ranks is refused with its reason."""
    yaml = {"batching": "llm_options.yml: enable_attention_dp: true", "tensor_parallel_size": "1"}
    assert parallelism_of(yaml) == "tp"
    assert parallelism_of({**yaml, "tensor_parallel_size": "4", "expert_parallel_size": "4"}) == "dp-ep"
    with pytest.raises(ValueError, match="with no expert_parallel_size"):
        parallelism_of({**yaml, "tensor_parallel_size": "4"})
    with pytest.raises(ValueError, match="experts over 2 is not modelled"):
        parallelism_of({**yaml, "tensor_parallel_size": "4", "expert_parallel_size": "2"})
    assert parallelism_of({"batching": "attention DP enabled", "tensor_parallel_size": "4"}) == "tp"
    assert not BY_ID["TRT12-104"].problem and "enable_attention_dp: true" in _cells("TRT12-104")
    assert BY_ID["TRT12-104"].parallelism == "tp"
    assert provisional_problem({"notes": "a figure"}) == ""


def _cells(record_id: str) -> str:
    path = Path(__file__).resolve().parents[1] / "catalogs" / "reference" / "perf_public.csv"
    with path.open(newline="", encoding="utf-8") as f:
        row = next(r for r in csv.DictReader(f) if r["record_id"] == record_id)
    return " ".join(row.values())


def test_the_docs_state_the_attention_dp_runs_held_out_figures():
    """docs/model.md and the README state the 33 attention-DP figures' held-out error as ``predict_decode_rows``
    gives it now (each run's output rate against the published one)."""
    import statistics

    from doc_support import stated

    from planner.accuracy.predict import predict_decode_rows

    dep = [r for r in ROWS if r.parallelism == "dp-ep" and not r.problem]
    rates = predict_decode_rows(dep).throughput_tokens_per_s
    errors = [float(p) / r.throughput_tokens_per_s - 1.0 for r, p in zip(dep, rates, strict=True)]
    median, worst = statistics.median(abs(e) for e in errors), max(abs(e) for e in errors)
    signed = statistics.median(errors)
    figures = (len(dep), round(100 * median), round(100 * worst), round(100 * signed))
    model = stated(
        "docs/model.md",
        r"TensorRT-LLM 1\.2's (\d+) attention-DP max-throughput runs .*?read (\d+)% median / (\d+)% worst, signed ([+-]\d+)%",
    )
    readme = stated(
        "README.md", r"TensorRT-LLM 1\.2's (\d+) attention-DP max-throughput runs read (\d+)% median / (\d+)% worst, "
        r"signed ([+-]\d+)%",
    )  # fmt: skip
    assert tuple(int(x) for x in model) == tuple(int(x) for x in readme) == figures
    by: dict[tuple[str, str], list[float]] = {}
    for r, e in zip(dep, errors, strict=True):
        by.setdefault((resolve_model_name(r.model, default_catalog()), r.gpu.split()[0]), []).append(e)
    signed_by = {k: round(100 * statistics.median(v)) for k, v in by.items()}
    per_model = stated(
        "docs/model.md",
        r"medians: gpt-oss-120b ([+-]\d+)% \(B200\) and ([+-]\d+)% \(H200\), Qwen3-235B-A22B ([+-]\d+)% \(B200\), ([+-]\d+)% "
        r"\(H200\), ([+-]\d+)% \(GB200\), DeepSeek-R1-0528 ([+-]\d+)% \(H200 FP8\), ([+-]\d+)% \(B200 NVFP4\), "
        r"([+-]\d+)% \(GB200 NVFP4\)",
    )
    keys = [
        ("gpt-oss-120b", "B200"),
        ("gpt-oss-120b", "H200"),
        ("Qwen3-235B-A22B", "B200"),
        ("Qwen3-235B-A22B", "H200"),
    ]
    keys += [("Qwen3-235B-A22B", "GB200"), ("DeepSeek-R1", "H200"), ("DeepSeek-R1", "B200"), ("DeepSeek-R1", "GB200")]
    assert tuple(int(x) for x in per_model) == tuple(signed_by[k] for k in keys)


def test_the_docs_state_the_pipeline_runs_held_out_figures():
    """docs/model.md and ``planner plan``'s pipeline note state the 32 RTX PRO 6000 pipeline figures' held-out error
    as ``predict_decode_rows`` gives it now."""
    import statistics

    from doc_support import stated

    from planner.accuracy.predict import predict_decode_rows
    from planner.report import PIPELINE_NOTE

    pp = [r for r in ROWS if r.parallelism == "pp" and not r.problem]
    rates = predict_decode_rows(pp).throughput_tokens_per_s
    errors = [float(p) / r.throughput_tokens_per_s - 1.0 for r, p in zip(pp, rates, strict=True)]
    figures = (
        len(pp),
        round(100 * statistics.median(abs(e) for e in errors)),
        round(100 * max(abs(e) for e in errors)),
        round(-100 * statistics.median(errors)),
    )
    model = stated(
        "docs/model.md",
        r"TensorRT-LLM 1\.2's (\d+) pipeline runs .*?read (\d+)% median / (\d+)% worst on the output rate, signed -(\d+)%",
    )
    note = re.search(r"1\.2's (\d+) pipeline runs .*?read (\d+)% median / (\d+)% worst", PIPELINE_NOTE).groups()
    readme = stated("README.md", r"TensorRT-LLM 1\.2's (\d+) pipeline runs read (\d+)% median / (\d+)% worst")
    assert model == figures and tuple(int(x) for x in note) == readme == figures[:3]
