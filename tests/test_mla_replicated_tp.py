"""Tensors an MLA model's tensor-parallel ranks hold whole (trial 31, F11): the fused q_a + kv_a down-projection is
built unsplit by vLLM (``DeepSeekV2FusedQkvAProjLinear``: ``disable_tp=True``, vllm/model_executor/models/
deepseek_v2.py) and SGLang (``fused_qkv_a_proj_with_mqa = ReplicatedLinear(...)``, python/sglang/srt/models/
deepseek_v2.py), so each GPU holds weights / g + that matrix's other (g - 1) / g.

DeepSeek-V3's config.json (deepseek-ai/DeepSeek-V3, as the catalog entry records it): hidden_size 7168,
q_lora_rank 1536, kv_lora_rank 512, qk_rope_head_dim 64, num_hidden_layers 61; fp8 weights, 1 B per parameter.
"""

from __future__ import annotations

import pytest

from planner import api
from planner.catalog import default_catalog
from planner.deploy import weight_bytes_per_gpu
from planner.engines.architecture import model_facts
from planner.engines.profiles import engine_profile

CAT = default_catalog()
REPLICATED = 61 * 7168 * (1536 + 512 + 64)  # 923,467,776 parameters


def test_replicated_params_of_deepseek_v3():
    """61 layers x 7168 x 2112 = 923,467,776; none for a model without MLA (Llama-3.1-8B)."""
    m = CAT.model("DeepSeek-V3")
    assert (m.hidden_size, m.mla.q_lora_rank, m.mla.kv_lora_rank, m.mla.qk_rope_head_dim) == (7168, 1536, 512, 64)
    assert model_facts(m).params_replicated_tp == REPLICATED == 923_467_776
    assert model_facts(CAT.model("Llama-3.1-8B")).params_replicated_tp == 0


@pytest.mark.parametrize("gpus", [8, 16])
def test_tp_weights_per_gpu_hold_the_replicated_projection(gpus):
    """DeepSeek-V3 fp8 under TP: weights per GPU = whole / g + 923,467,776 x 1 B x (1 - 1/g): on 8 GPUs
    672.99 GB / 8 + 0.808 GB = 84.93 GB (the trial's 84.12 GB was whole / 8 exactly); on 16, + 0.866 GB."""
    plan = api.memory_plan("H200", "DeepSeek-V3", 32768, gpus=gpus, kv_precision="fp8")
    extra = REPLICATED * 1.0 * (1 - 1 / gpus)
    assert float(plan.replicated_weight_bytes_per_gpu) == pytest.approx(extra, abs=1e-3)
    per_gpu = weight_bytes_per_gpu(plan, engine_profile("vllm"), 0.9, "tp")
    assert per_gpu == pytest.approx(float(plan.weight_bytes) / gpus + extra, rel=1e-12)
    # the KV budget is what is left of 0.9 of the visible memory after those weights and the reserve
    left = float(plan.visible_bytes_per_gpu) * 0.9 - per_gpu - float(plan.reserve_bytes_per_gpu)
    assert float(plan.kv_budget_bytes_per_gpu) == pytest.approx(left, rel=1e-9)


def test_dp_ep_ranks_already_hold_attention_whole():
    """Under dp-ep each rank holds the attention whole already: no replicated share is added on top."""
    plan = api.memory_plan("H200", "DeepSeek-V3", 32768, gpus=8, kv_precision="fp8", parallelism="dp-ep")
    assert float(plan.replicated_weight_bytes_per_gpu) == 0.0
