"""The h-worst rule (docs/hypotheses/worst-rows.md; off by default): a DeepSeek Sparse Attention model on an engine and
GPU without a measured sparse-attention kernel has no basis (``planner.accuracy.basis``)."""

from __future__ import annotations

import pytest

from planner.accuracy import basis
from planner.accuracy import predict as acc
from planner.accuracy.calibration import residual_range
from planner.catalog import default_catalog


@pytest.fixture(scope="module")
def cat():
    return default_catalog()


@pytest.mark.parametrize(
    ("engine", "gpu", "gap"),
    [
        ("vllm", "H200 SXM 141GB", False),  # vLLM's FLASHMLA_SPARSE, measured on H100 and H200
        ("tensorrt-llm", "H100 SXM 80GB", False),  # TensorRT-LLM's DSA attention, measured on H100 and H200
        ("sglang", "H200 SXM 141GB", True),  # SGLang's profile names no sparse MLA kernel
        ("vllm", "B200 180GB", True),  # no table off Hopper
    ],
)
def test_gap_follows_the_measured_kernels(cat, engine, gpu, gap):
    text = basis.sparse_attention_gap(gpu, engine, cat.model("deepseek-v3.2"), cat)
    assert bool(text) is gap
    if gap:
        assert engine in text and "dsa_decode_aic.csv" in text


def test_no_gap_without_sparse_attention(cat):
    assert basis.sparse_attention_gap("H200 SXM 141GB", "sglang", cat.model("deepseek-r1"), cat) == ""


def _row(record_id: str):
    return next(r for r in acc.load_decode_rows() if r.record_id == record_id)


def test_rows_refused_only_with_the_switch(cat, monkeypatch):
    sglang, vllm = _row("GPUSTACK-017"), _row("GPUSTACK-016")  # DeepSeek-V3.2 on 8 x H200: SGLang, vLLM
    assert acc.release_refusal(sglang, cat) == ""
    monkeypatch.setattr(basis, "UNMEASURED_SPARSE_ATTENTION", True)
    assert "no measured sparse-attention (DSA) kernel" in acc.release_refusal(sglang, cat)
    assert acc.release_refusal(vllm, cat) == ""


def test_range_says_it_does_not_bound_the_configuration(monkeypatch):
    off = residual_range("H200", "sglang", gpus=8, model="deepseek-v3.2")
    assert "sparse-attention" not in off.note
    monkeypatch.setattr(basis, "UNMEASURED_SPARSE_ATTENTION", True)
    on = residual_range("H200", "sglang", gpus=8, model="deepseek-v3.2")
    assert "no measured sparse-attention (DSA) kernel of engine sglang" in on.widened
    assert on.low <= off.low and on.high >= off.high
    assert "sparse-attention" not in residual_range("H200", "vllm", gpus=8, model="deepseek-v3.2").widened
