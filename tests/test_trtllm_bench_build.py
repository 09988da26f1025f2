"""TensorRT-LLM 0.13's ``trtllm-bench`` engines (issue 21, s141): the build limits are ``benchmark_config.yml``'s
(NVIDIA/TensorRT-LLM 8fcf9fc) by model, TP and ISL + OSL, the run chunks its context, and a 0.13 perf-overview row is
simulated with the engine's limits."""

from __future__ import annotations

from dataclasses import replace

import pytest

from planner.accuracy import predict
from planner.engines import profiles


@pytest.mark.parametrize(
    "model, tp, seq, limits",
    [
        ("Llama-3.1-8B", 1, 256, (2048, 8192)),  # meta-llama/Meta-Llama-3-8B tp1_pp1 general
        ("Llama-3.1-70B", 1, 4096, (2048, 2048)),  # Meta-Llama-3-70B tp1_pp1 general
        ("Llama-3.1-70B", 2, 2176, (256, 1024)),  # tp2_pp1 general
        ("Llama-3.1-70B", 2, 4096, (2048, 1024)),  # tp2_pp1 "4096:" (2048/2048 requests)
        ("Llama-3.1-70B", 4, 4096, (2048, 1024)),  # tp4_pp1 general
        ("Llama-3.1-70B", 8, 22000, (8192, 16384)),  # tp8_pp1 general
        ("Mixtral-8x7B", 2, 256, (2048, 3072)),  # mistralai/Mixtral-8x7B-v0.1 tp2_pp1 general
        ("Mixtral-8x7B", 4, 256, (8192, 8192)),  # tp4_pp1 general
        ("Mixtral-8x7B", 8, 256, None),  # no tp8 entry read
        ("Llama-3.1-405B", 8, 256, None),  # no entry read
    ],
)
def test_build_limits_are_the_config_files(model, tp, seq, limits):
    assert profiles.trtllm_bench_build_limits("TensorRT-LLM", "0.13.0", model, tp, seq) == limits


def test_only_release_0_13_is_read():
    base = profiles.ENGINES["tensorrt-llm-0"]
    assert profiles.trtllm_bench_build_limits("TensorRT-LLM", "0.12.0", "Llama-3.1-8B", 1, 256) is None
    assert profiles.trtllm_bench_build_limits("TensorRT-LLM", "1.0", "Llama-3.1-8B", 1, 256) is None
    assert profiles.trtllm_bench_build_limits("vllm", "0.13.0", "Llama-3.1-8B", 1, 256) is None
    assert profiles.with_trtllm_bench_build(base, "TensorRT-LLM", "0.12.0", "Llama-3.1-8B", 1, 256) is base
    assert profiles.trtllm_bench_chunked_context("TensorRT-LLM", "1.0") is None


def test_the_engine_limits_and_chunked_context():
    base = profiles.ENGINES["tensorrt-llm-0"]
    built = profiles.with_trtllm_bench_build(base, "TensorRT-LLM", "0.13.0", "Llama-3.1-70B", 8, 256)
    assert (built.max_num_seqs, built.max_num_batched_tokens) == (8192, 16384)
    # one copy per change, as the facts caches need
    assert built is profiles.with_trtllm_bench_build(base, "TensorRT-LLM", "0.13.0", "Llama-3.1-70B", 8, 2176)
    assert profiles.trtllm_bench_chunked_context("TensorRT-LLM", "0.13.0") is True


def _row(record_id: str):
    return next(r for r in predict.load_decode_rows() if r.record_id == record_id)


def test_h200_8b_row_runs_past_256_sequences():
    """TRT013-001 (H200, Llama-3.1-8B FP8, TP 1, 128/128, 30,000 requests at once): the profile's 256 sequences bound
    the simulated batch although the cache holds ~7,500; the engine's 2,048 take their place, and the row's prompts
    chunk (``enable_chunked_context``). The same run read as another release keeps 256 and runs >10% slower."""
    row = _row("TRT013-001")
    assert row.gpus == 1 and (row.input_len, row.output_len) == (128, 128)
    eng = predict._profile_for(row, None)
    assert (eng.max_num_seqs, eng.max_num_batched_tokens) == (2048, 8192)
    assert predict._chunked_prefill(row) is True
    assert predict._chunked_prefill(replace(row, chunked_prefill=False)) is False  # a row's own setting stands
    other = replace(row, engine_version="0.12.0")
    assert predict._profile_for(other, None).max_num_seqs == 256
    assert (
        predict.predict_decode(row).throughput_tokens_per_s
        > 1.1 * predict.predict_decode(other).throughput_tokens_per_s
    )


def test_a_static_0_13_row_is_predicted_not_refused():
    """The release's chunked context is a serving run's (``trtllm-bench throughput``); a static batch of TensorRT-LLM
    0.13 (a user's own measurement in ``planner validate``) prefills its prompts together and was refused with
    "a static batch prefills its prompts together; use kind='serving' with chunked_prefill", an option it never set
    (s150's review of s141). It is predicted, with the engine's build limits, as a static row of 0.12 is."""
    static = replace(_row("TRT013-001"), kind="static", num_prompts=None, batch=64)
    assert predict._chunked_prefill(static) is None
    assert predict.why_not_predicted(static) == ""
    assert predict.predict_decode(static).tpot_s > 0


def test_accuracy_doc_says_a_plan_keeps_the_profile():
    """docs/accuracy.md's engine limits name the 0.13 reading and that a plan does not get it (s150's review of
    s141: the limits were said in the code only, where a user planning a ``tensorrt-llm-0`` engine would not look)."""
    from doc_support import stated

    from planner.catalog import default_catalog
    from planner.serving.simulate import chunked_prefill_default

    seqs, tokens = stated("docs/accuracy.md", r"Llama-3\.1-8B at TP 1: (\d+) sequences, (\d+) tokens")
    assert profiles.trtllm_bench_build_limits("TensorRT-LLM", "0.13.0", "Llama-3.1-8B", 1, 256) == (seqs, tokens)
    kept_tokens, kept_seqs = stated(
        "docs/accuracy.md", r"a `tensorrt-llm-0` prediction .*? keeps (\d+) and (\d+) and whole prompts"
    )
    h100 = default_catalog().gpu("H100 SXM 80GB")
    limits = profiles.engine_profile("tensorrt-llm-0").batching_limits(h100.memory_bytes, h100.engine_device_name)
    assert limits == (kept_tokens, kept_seqs)
    assert chunked_prefill_default("tensorrt-llm") is False
