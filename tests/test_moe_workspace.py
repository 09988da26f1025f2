"""vLLM's fused-MoE workspace in the activation peak of its profiling pass (s184, ``planner.model.memory.
moe_workspace_bytes``).

vLLM 0.19.0 (the PyPI wheel) allocates, for every token of a MoE layer's forward pass, ``TritonExperts.workspace_shapes``
(vllm/model_executor/layers/fused_moe/fused_moe.py l.1976-1991): workspace1 (M, topk, max(N / 2, K)) and workspace2
(M, topk, max(N, K)), N the gate-and-up rows per GPU (2w), K the hidden size, in the activation dtype
(``FusedMoEModularKernel._allocate_buffers``, modular_kernel.py l.1009-1070; ``CutlassExpertsFp8`` the same sizes,
cutlass_moe.py l.414-429). Published check: the llm-d-planner v0.19.0 sweep's start-up logs (catalogs/reference/
vllm_startup_extra.csv, XN10 and XN11), whose activation peaks were 0.72 and 0.42 GiB above the dense fit.
"""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from planner.accuracy.predict import load_startup_rows, predict_startup
from planner.engines.profiles import engine_profile
from planner.model.memory import moe_workspace_bytes

MIXTRAL_TP2 = SimpleNamespace(experts_per_token=2, expert_split_width=14336, hidden_size=4096)  # config.json
LIMITS = SimpleNamespace(max_num_batched_tokens=8192)
BF16_EXPERTS = SimpleNamespace(expert_mxfp4=0.0)


def test_mixtral_at_tp2_holds_two_buffers_per_token_and_expert():
    """By hand: w = 14,336 / 2 = 7,168; per token and expert max(7,168, 4,096) + max(14,336, 4,096) = 21,504 bf16
    values; x 2 experts x 8,192 tokens x 2 B = 704,643,072 B (0.66 GiB)."""
    got = moe_workspace_bytes(MIXTRAL_TP2, LIMITS, engine_profile("vllm"), 2, BF16_EXPERTS)
    assert got == 2 * 8192 * 2 * (7168 + 14336) == 704_643_072


def test_no_workspace_for_a_dense_model_mxfp4_experts_or_an_engine_without_the_term():
    dense = SimpleNamespace(experts_per_token=0, expert_split_width=0, hidden_size=4096)
    assert moe_workspace_bytes(dense, LIMITS, engine_profile("vllm"), 1, BF16_EXPERTS) == 0
    mxfp4 = SimpleNamespace(expert_mxfp4=1.0)  # gpt-oss: vLLM's OpenAI Triton kernels keep another shape
    assert moe_workspace_bytes(MIXTRAL_TP2, LIMITS, engine_profile("vllm"), 2, mxfp4) == 0
    for name in ("vllm-0.10", "vllm-fullsort", "sglang", "tensorrt-llm"):  # no MoE log to check a term against
        assert moe_workspace_bytes(MIXTRAL_TP2, LIMITS, engine_profile(name), 2, BF16_EXPERTS) == 0


@pytest.mark.parametrize(("record", "published_gib"), [("XN10", 28.44), ("XN11", 15.41)])
def test_the_two_moe_start_up_logs_are_predicted_within_one_percent(record, published_gib):
    """Mixtral-8x7B on 2 x H100 (XN10) and Qwen3-30B-A3B on one (XN11), vLLM 0.19.0: available KV cache memory
    28.44 and 15.41 GiB as logged. Without the workspace the planner said 29.16 and 15.84 GiB (+2.5%, +2.8%)."""
    row = next(r for r in load_startup_rows() if r.record_id == record)
    assert row.kv_cache_gib == published_gib
    assert predict_startup(row).kv_cache_gib == pytest.approx(published_gib, rel=0.01)


def test_deepseek_v3_at_tp8_reserves_the_workspace_and_dp_ranks_do_not():
    """DeepSeek-V3 (config.json: hidden 7,168, 8 experts per token of width 2,048) on 8 x H200 at vLLM's 8,192-token
    pass: w = 256, per token and expert max(256, 7,168) + max(512, 7,168) = 14,336 values; x 8 x 8,192 x 2 B =
    1,879,048,192 B more reserve a GPU than the same profile without the term. Data-parallel ranks are left without it
    (a rank's experts see the tokens its dispatch gathers, not read here)."""
    from planner import api

    without = engine_profile("vllm").with_(moe_workspace_bytes_per_value=0.0)
    assert without.moe_workspace_bytes_per_value == 0.0
    for layout, extra in (("tp", 2 * 8192 * 8 * 14336), ("dp-ep", 0)):
        kw = dict(gpus=8, parallelism=layout)
        got = api.memory_plan("H200", "deepseek-v3", 8192, **kw).reserve_bytes_per_gpu
        base = api.memory_plan("H200", "deepseek-v3", 8192, engine=without, **kw).reserve_bytes_per_gpu
        assert got - base == pytest.approx(extra)
