"""TensorRT-LLM 0.13's runtime buffers and decoder, allocated before the KV cache reads the free memory (issue 21,
s151; switch ``trtllm-013-decoder-buffers``, shipped)."""

from __future__ import annotations

import pytest

from planner import api
from planner.engines import profiles

GiB = 2**30


def test_rate_is_the_cited_start_up_log():
    """NVIDIA/TensorRT-LLM issue 1188 (2024-11-21): Qwen2.5-Coder-0.5B at max_batch_size 2,048, vocabulary 151,936:
    runtime buffers 2.66 GB + decoder 5.76 GB (GiB) = 29.05 B per sequence x vocabulary entry; the same log's KV line
    (395,776 tokens of 24 layers x 2 x 2 KV heads x 64 x 2 B) is its 4.53 GiB."""
    assert profiles.TRTLLM_013_DECODER_BYTES_PER_SEQ_VOCAB == pytest.approx(29.05, abs=0.01)
    assert 395_776 * 24 * 2 * 2 * 64 * 2 / GiB == pytest.approx(4.53, abs=0.005)


def _budget(engine) -> float:
    plan = api.memory_plan("H100", "llama3.1-70b", 2176, weight_precision="fp8", gpus=1, engine=engine)
    return float(plan.kv_budget_bytes_per_gpu)


def test_h100_70b_fp8_engine_keeps_its_decoder_out_of_the_cache():
    """The perf-overview's H100 Llama-3.1-70B FP8 TP 1 engine (2,048 sequences, s141): 0.9 x 2,048 x 128,256 x
    (29.05 - 4) B = 5.92 GB less KV cache than with the logits alone (4 B), 9.81 -> 3.89 GB per GPU."""
    base = profiles.ENGINES["tensorrt-llm-0"]
    built = profiles.with_trtllm_bench_build(base, "TensorRT-LLM", "0.13.0", "Llama-3.1-70B", 1, 2176)
    logits_only = built.with_(activation_bytes_per_seq_vocab=4.0)
    on, off = _budget(built), _budget(logits_only)
    assert off / 1e9 == pytest.approx(9.81, abs=0.01)
    assert on / 1e9 == pytest.approx(3.89, abs=0.01)
    assert (off - on) == pytest.approx(0.9 * 2048 * 128_256 * (29.05 - 4.0), rel=1e-3)


def test_a_plan_and_other_releases_do_not_move():
    """A user's ``tensorrt-llm-0`` plan keeps the logits' 4 B (the workbook's budget with it); 0.12 rows and 0.13 rows
    without a build limit read keep the profile."""
    base = profiles.ENGINES["tensorrt-llm-0"]
    assert base.activation_bytes_per_seq_vocab == 4.0
    assert profiles.with_trtllm_bench_build(base, "TensorRT-LLM", "0.12.0", "Llama-3.1-70B", 1, 2176) is base
    assert profiles.with_trtllm_bench_build(base, "TensorRT-LLM", "0.13.0", "Llama-3.1-405B", 8, 2176) is base
