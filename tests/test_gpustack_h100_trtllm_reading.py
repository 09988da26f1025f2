"""gpustack's Qwen3-32B H100 page, read as it ran (issue 22, h-trth100: docs/hypotheses/trtllm-h100-reading.md).

Source: docs/performance-lab/qwen3-32b/h100.md at gpustack/gpustack 47277d79f4a5bae12a2d25e9ecbed2a2177a5f2d (the
rows' ``source`` addresses). Section "2. Quantization in TensorRT-LLM" (l.182) prints an SGLang serving script
(l.187, ``python3 -m sglang.launch_server --model-path Qwen/Qwen3-32B-FP8``) above a result block that the page's own
"Summary of Optimization Options" (l.254-256) places between its TensorRT-LLM blocks: Quantization +50.6% over the
trtllm-serve bf16 block's 2659.50 tok/s (l.164), Enable Chunked Prefill +7.0% under the trtllm-serve FP8 block's
4284.68 (l.235); its 201376 generated tokens (l.196) are that FP8 block's (l.230). GPUSTACK-233 is that block.
"""

from __future__ import annotations

import csv
import re

import pytest

from planner.accuracy.published import load_decode_rows, reference_dir


@pytest.fixture(scope="module")
def raw():
    with (reference_dir() / "perf_public.csv").open(newline="") as f:
        return {r["record_id"]: r for r in csv.DictReader(f) if r["record_id"] in {"GPUSTACK-231", "GPUSTACK-232",
                                                                                  "GPUSTACK-233", "GPUSTACK-234"}}  # fmt: skip


def _quoted(row: dict[str, str], label: str) -> float:
    return float(re.search(re.escape(label) + r": ([\d.]+)", row["quote"]).group(1))


def test_the_quantization_block_is_trtllm_serve(raw):
    """The page's summary gains chain the three TensorRT-LLM blocks (bf16 -> FP8 -> FP8 chunked) and the copied
    SGLang script's engine cannot sit in that chain: SGLang's own bf16 block on the page is 1690.84 tok/s (l.131)."""
    total = {k: _quoted(r, "Total Token throughput (tok/s)") for k, r in raw.items()}
    assert raw["GPUSTACK-232"]["engine"] == raw["GPUSTACK-234"]["engine"] == "TensorRT-LLM"
    assert round(total["GPUSTACK-233"] / total["GPUSTACK-232"] - 1, 3) == 0.506  # "Quantization +50.6%", l.255
    assert round(total["GPUSTACK-234"] / total["GPUSTACK-233"] - 1, 3) == 0.070  # "Enable Chunked Prefill +7.0%"
    assert total["GPUSTACK-231"] == 1690.84 and raw["GPUSTACK-231"]["engine"] == "SGLang"
    # the same engine, checkpoint and ShareGPT prompts generated the same tokens (SGLang bf16: 201826, l.126)
    generated = {k: _quoted(r, "Total generated tokens") for k, r in raw.items()}
    assert generated["GPUSTACK-233"] == generated["GPUSTACK-234"] == 201376
    assert generated["GPUSTACK-231"] == 201826


def test_the_row_reads_as_trtllm_serve_fp8_without_chunking():
    """Read as ``trtllm-serve Qwen/Qwen3-32B-FP8`` at the page's TensorRT-LLM release: the default graphs, no chunked
    prefill (section 3 adds ``--enable_chunked_prefill``), the checkpoint's FP8."""
    rows = {r.record_id: r for r in load_decode_rows() if r.record_id in {"GPUSTACK-233", "GPUSTACK-234"}}
    row = rows["GPUSTACK-233"]
    assert row.engine == "tensorrt-llm" and row.engine_version.startswith("v1.2.0rc1")
    assert row.trtllm_default_graphs and row.chunked_prefill is None
    assert rows["GPUSTACK-234"].chunked_prefill is True
    assert row.model == rows["GPUSTACK-234"].model
