"""The per-MoE-layer step time: the formula on a hand-worked case, and its value re-derived from the shipped
kernel latencies (``planner.engines.kernel_floor``)."""

from __future__ import annotations

import pytest

from planner import api
from planner.engines import kernel_floor
from planner.engines.profiles import engine_profile
from planner.model import step_overhead_s
from planner.model.facts import EngineFacts, ModelFacts, field_names


def _facts(cls, **values):
    return cls(**{name: values.get(name, 0.0) for name in field_names(cls)})


def test_step_overhead_by_hand():
    """61 layers of which 58 MoE (DeepSeek-V3's config.json: num_hidden_layers 61, first_k_dense_replace 3):
    1.2 ms + 61 x 0 + 58 x 34 us = 1.2 ms + 1.972 ms = 3.172 ms."""
    model = _facts(ModelFacts, num_layers=61.0, moe_layers=58.0)
    limits = _facts(EngineFacts, step_overhead_s=1.2e-3, moe_layer_overhead_s=34e-6)
    assert step_overhead_s(model, limits) == pytest.approx(3.172e-3, rel=1e-12)
    dense = _facts(ModelFacts, num_layers=61.0, moe_layers=0.0)
    assert step_overhead_s(dense, limits) == pytest.approx(1.2e-3, rel=1e-12)


@pytest.mark.parametrize("quantity", ["tpot", "ttft"])
def test_each_moe_layer_adds_its_time_to_a_step(quantity):
    """Mixtral-8x7B: 32 layers, every one MoE (its config.json: num_hidden_layers 32, num_local_experts 8), so the
    term adds 32 x 34 us = 1.088 ms to a decode step and to a prefill; Llama-3.1-8B (dense) gets nothing."""
    with_term = engine_profile("vllm")
    without = with_term.with_(moe_layer_overhead_s=0.0)
    assert with_term.moe_layer_overhead_s == 34e-6
    f = getattr(api, quantity)
    for model, added_s in (("Mixtral-8x7B", 32 * 34e-6), ("Llama-3.1-8B", 0.0)):
        args = ("H100 SXM 80GB", model, 1024)
        gap = f(*args, engine=with_term, gpus=2) - f(*args, engine=without, gpus=2)
        assert gap == pytest.approx(added_s, abs=1e-12), model


def test_kernel_bytes_by_hand():
    """gpt-oss-120b's MoE shape (config.json: hidden 2880, intermediate 2880, 4 of 128 experts per token), 4 tokens,
    mxfp4 (4 bits + an 8-bit scale per 32 values): 16 experts x 3 x 2880 x 2880 x 0.53125 B = 211,507,200 B."""
    row = dict(op="moe", tokens="4", topk="4", hidden_size="2880", inter_size="2880", tp_size="1", dtype="w4a16_mxfp4")
    assert kernel_floor.kernel_bytes(row) == 211_507_200
    assert kernel_floor.kernel_bytes(dict(op="gemm", n="4096", k="1024")) == 4096 * 1024 * 2


def test_floor_is_the_intercept_of_latency_against_bytes():
    """Latencies made as 40 us + bytes at the full H100 SXM bandwidth (3.35 TB/s, its datasheet) give back 40 us."""
    rows = [
        dict(op="gemm", gpu="H100 SXM 80GB", kernel_source="k", n=str(n), k="4096")
        | {"latency_ms": str((40e-6 + n * 4096 * 2 / 3.35e12) * 1e3)}
        for n in (1024, 4096, 16384)
    ]
    assert kernel_floor.floors_s(rows, "gemm")[("H100 SXM 80GB", "k")] == pytest.approx(40e-6, rel=1e-9)


def test_shipped_value_is_the_kernel_derivation():
    """planner.engines.profiles ships moe_layer_overhead_s rounded to the us from the aiconfigurator 0.12.0 measurements of
    vLLM 0.24.0 kernels in catalogs/reference/kernel_latency_aic.csv (the fitted rows' only MoE model cannot
    identify it: Mixtral at batch 8 reads nearly every expert)."""
    derived = kernel_floor.moe_layer_overhead_from_kernels()
    assert derived == pytest.approx(33.6e-6, abs=0.1e-6)
    assert engine_profile("vllm").moe_layer_overhead_s == pytest.approx(derived, abs=0.5e-6)
