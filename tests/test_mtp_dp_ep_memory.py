"""A speculating data-parallel-attention + expert-parallel replica's MTP layer (trial 31, F1): its routed experts are
spread over the ranks as every MoE layer's, its other parts whole on each rank; and the simulated replica takes the
memory share the user gave (``planner plan --memory-utilization``), not the engine's default.

Sources: DeepSeek-R1's config.json (deepseek-ai/DeepSeek-R1, as the catalog entry records it): hidden_size 7168,
moe_intermediate_size 2048, n_routed_experts 256, num_nextn_predict_layers 1; the MTP module's 13,463,426,304
parameters (the catalog's ``mtp_params``: model.layers.61 of the safetensors). vLLM's ``DeepSeekMultiTokenPredictorLayer``
builds ``mtp_block = DeepseekV2DecoderLayer(vllm_config, prefix)`` (vllm/model_executor/models/deepseek_mtp.py) and
SGLang's ``DeepseekModelNextN`` a ``DeepseekV2DecoderLayer`` whose experts load through ``EPMoE`` under expert
parallelism (python/sglang/srt/models/deepseek_nextn.py): the target's parallel config, experts spread as the others.
"""

from __future__ import annotations

import pytest

from planner import api
from planner.catalog import default_catalog
from planner.engines.architecture import model_facts
from planner.report import plan, replica_of
from planner.serving.speculative import served_model, speculation_for

CAT = default_catalog()
CONTEXT = 32768  # the trial's --context 32k


@pytest.fixture(scope="module")
def r1_mtp():
    """DeepSeek-R1 as a run speculating with its MTP layer serves it (3 draft tokens, acceptance 2.6: the trial's)."""
    return served_model("DeepSeek-R1", speculation_for("DeepSeek-R1", 3, 2.6, catalog=CAT, method="mtp"), CAT)


def test_mtp_routed_experts_are_one_moe_layers():
    """The MTP layer's routed experts: 256 experts x 3 matrices (gate, up, down) x 7168 x 2048 = 11,274,289,152."""
    facts = model_facts(CAT.model("DeepSeek-R1").model_copy(update={"mtp_loaded": True}))
    assert facts.draft_routed_expert_params == 256 * 3 * 7168 * 2048 == 11_274_289_152
    assert model_facts(CAT.model("DeepSeek-R1")).draft_routed_expert_params == 0.0  # not loaded: nothing


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
def test_dp_ep_rank_holds_its_share_of_the_mtp_experts(r1_mtp, engine):
    """DeepSeek-R1 fp8 on 8 x H200, dp-ep: each rank holds the MTP module's non-expert part whole and 1/8 of its
    routed experts, at fp8's 1 B per parameter; the module's stored copies of the embedding and output head
    (2 x 129280 x 7168 = 1,853,358,080) are the target's own on every rank (``mtp_held_params``):

        non-expert part = 13,463,426,304 - 1,853,358,080 - 11,274,289,152 = 335,779,072
        routed share    = 11,274,289,152 x ceil(256 / 8) / 256 = 1,409,286,144
        per rank        = 335,779,072 + 1,409,286,144 = 1,745,065,216 B (1.75 GB)

    so the KV budget per GPU drops by exactly that (the reserve is the same), not by the whole 13,463,426,304 B the
    trial saw (weights 114.28 GB/GPU against 100.82 without MTP), nor by 3,598,423,296 B with the copies held."""
    m = CAT.model("DeepSeek-R1")
    mtp = m.mtp_params
    assert mtp == 13_463_426_304 and m.mtp_shared_params == 2 * 129280 * 7168
    per_rank = (mtp - 2 * 129280 * 7168 - 256 * 3 * 7168 * 2048) + 256 * 3 * 7168 * 2048 * 32 // 256
    assert per_rank == 1_745_065_216
    opts = dict(gpus=8, parallelism="dp-ep", engine=engine, kv_precision="fp8")
    plain = api.memory_plan("H200", "DeepSeek-R1", CONTEXT, **opts)
    drafting = api.memory_plan("H200", r1_mtp, CONTEXT, **opts)
    assert float(drafting.reserve_bytes_per_gpu) == float(plain.reserve_bytes_per_gpu)
    drop = float(plain.kv_budget_bytes_per_gpu) - float(drafting.kv_budget_bytes_per_gpu)
    assert drop == pytest.approx(per_rank, rel=1e-9)
    # the whole model as loaded counts the module once, less the embedding and head it shares with the target
    held = mtp - 2 * 129280 * 7168
    assert float(drafting.weight_bytes) - float(plain.weight_bytes) == pytest.approx(held * 1.0, rel=1e-12)


def test_tensor_parallel_splits_the_mtp_module_as_before(r1_mtp):
    """Under tensor parallelism every weight is split over the group: the budget drops by the held MTP parameters
    (13,463,426,304 less the shared embedding and head, 2 x 129280 x 7168) / 8 = 11,610,068,224 / 8 B."""
    opts = dict(gpus=8, engine="vllm", kv_precision="fp8")
    plain = api.memory_plan("H200", "DeepSeek-R1", CONTEXT, **opts)
    drafting = api.memory_plan("H200", r1_mtp, CONTEXT, **opts)
    drop = float(plain.kv_budget_bytes_per_gpu) - float(drafting.kv_budget_bytes_per_gpu)
    assert drop == pytest.approx((13_463_426_304 - 2 * 129280 * 7168) / 8, rel=1e-9)


def test_sglang_dp_attention_with_mtp_fits_on_8_h200(r1_mtp):
    """SGLang documents DeepSeek DP attention + EAGLE/MTP on one 8 x H200 node (docs.sglang.io basic_usage/deepseek_v32,
    "Example usage with DP Attention": --tp 8 --dp 8 --enable-dp-attention --speculative-algorithm EAGLE ...). At its
    default mem_fraction_static (0.757 on an H200 at DP 8, ``planner.engines.sglang``) DeepSeek-R1 with its MTP layer
    at 32K tokens now fits: the trial's refusal ("short by 24.2 GB") came from the whole MTP module on every rank."""
    drafting = api.memory_plan(
        "H200", r1_mtp, CONTEXT, gpus=8, parallelism="dp-ep", engine="sglang", kv_precision="fp8"
    )
    assert float(drafting.kv_budget_bytes_per_gpu) > 0
    assert float(drafting.max_batch) >= 8  # one 32K sequence on each of the 8 attention ranks at least


def test_replica_takes_the_memory_share_given(r1_mtp):
    """With --memory-utilization the simulated replica's memory plan is the plan's own (0.85 of each GPU), not SGLang's
    default rule (0.757 on an H200 at DP 8): the trial's refusal stayed "short by 23.1 GB" at 0.85 and 0.95 alike.
    (SGLang's own rule, used only where --mem-fraction-static is not given, also reserves 2 GiB more for EAGLE/MTP
    drafts: ``server_args.py`` ``_handle_gpu_memory_settings``, ``reserved_mem += 2 * 1024``; a given fraction
    replaces the rule.)"""
    opts = dict(gpus=8, parallelism="dp-ep", engine="sglang", kv_precision="fp8")
    p = plan("H200", r1_mtp, CONTEXT, memory_utilization=0.85, catalog=CAT, **opts)
    assert p.memory_utilization == 0.85
    given = replica_of(p, CAT, memory_utilization=0.85)
    default = replica_of(p, CAT)
    mem_opts = dict(gpus=8, parallelism="dp-ep", kv_precision="fp8")
    as_given = api.memory_plan("H200", r1_mtp, CONTEXT, engine=given.engine, **mem_opts)
    assert float(as_given.kv_budget_bytes_per_gpu) == pytest.approx(float(p.memory.kv_budget_bytes_per_gpu), rel=1e-12)
    at_default = api.memory_plan("H200", r1_mtp, CONTEXT, engine=default.engine, **mem_opts)
    visible = float(p.memory.visible_bytes_per_gpu)
    budget_gap = float(as_given.kv_budget_bytes_per_gpu) - float(at_default.kv_budget_bytes_per_gpu)
    assert budget_gap == pytest.approx(visible * (0.85 - 0.757), rel=1e-9)
