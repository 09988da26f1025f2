"""A speculating run's MTP layers hold the checkpoint's MTP parameters less its stored copies of the input embedding
and output head, which the engines replace by the target's own (``planner.engines.architecture.mtp_held_params``,
catalog ``mtp_shared_params``; h-mtpshare, docs/hypotheses/mtp-shared-embedding-head.md).

Sources of the expected values:

- DeepSeek-R1's config.json (as the catalog entry records it): vocab_size 129280, hidden_size 7168,
  n_routed_experts 256, moe_intermediate_size 2048, num_nextn_predict_layers 1; the MTP module model.layers.61 holds
  13,463,426,304 parameters (the catalog's ``mtp_params``), among them ``embed_tokens`` and ``shared_head.head``,
  129280 x 7168 = 926,679,040 each (bf16 in the fp8 checkpoint).
- vLLM: ``DeepSeekMTP._rewrite_spec_layer_name`` loads ``model.layers.61.embed_tokens`` as the predictor's top-level
  ``embed_tokens`` (``shared_weight_names``, vllm/model_executor/models/deepseek_mtp.py, vllm-project/vllm 03356f8c);
  ``SpecDecodeBaseProposer._maybe_share_embeddings`` deletes it for the target's (an MTP draft, pipeline size 1) and
  ``_maybe_share_lm_head`` every MTP layer's ``shared_head.head`` ("Always share it explicitly",
  vllm/v1/spec_decode/llm_base_proposer.py, vllm-project/vllm 82720b1e; pull request 34385, merged 2026-02-11).
- SGLang: ``DeepseekV3ForCausalLMNextN.load_weights`` skips ``shared_head.head`` and ``embed_tokens`` ("Use shared
  head and embed weights from target model", python/sglang/srt/models/deepseek_nextn.py, sgl-project/sglang
  0114f9c9); ``EAGLEWorker.__init__`` calls ``set_embed_and_head`` with the target's ``get_embed_and_head``
  (python/sglang/srt/speculative/eagle_worker.py, 00559eac).
- GLM-4.5/4.7 and 4.5-Air: the catalog notes count the MTP layer's stored embedding and head copies
  (2 x 151552 x 5120, 2 x 151552 x 4096); GLM-4.6's checkpoint stores none (its safetensors total is that much
  smaller), nor do Qwen3.5's and Qwen3-Next's MTP layers (their notes: layer + fc + norms).
"""

from __future__ import annotations

import pydantic
import pytest

from planner import api
from planner.catalog import default_catalog
from planner.catalog.schema import Model
from planner.engines.architecture import model_facts, mtp_held_params
from planner.serving.speculative import served_model, speculation_for

CAT = default_catalog()
CONTEXT = 8192

R1_MTP = 13_463_426_304
R1_EMBED = 129280 * 7168  # 926,679,040: one of embed_tokens, shared_head.head
R1_HELD = R1_MTP - 2 * R1_EMBED  # 11,610,068,224
R1_ROUTED = 256 * 3 * 7168 * 2048  # 11,274,289,152: the MTP layer's routed experts


def test_the_hand_derived_counts():
    assert R1_EMBED == 926_679_040 and 2 * R1_EMBED == 1_853_358_080
    assert R1_HELD == 11_610_068_224 and R1_ROUTED == 11_274_289_152
    assert (R1_HELD / 8, R1_MTP / 8) == (1_451_258_528, 1_682_928_288)  # tp, 8 GPUs
    busiest = R1_ROUTED * 32 // 256  # ceil(256 / 8) of 256 experts on the busiest rank
    assert ((R1_HELD - R1_ROUTED) + busiest, (R1_MTP - R1_ROUTED) + busiest) == (1_745_065_216, 3_598_423_296)


@pytest.mark.parametrize(
    ("model", "shared"),
    [
        ("DeepSeek-V3", 2 * 129280 * 7168),
        ("DeepSeek-R1", 2 * 129280 * 7168),
        ("DeepSeek-V3.2", 2 * 129280 * 7168),
        ("GLM-4.5", 2 * 151552 * 5120),
        ("GLM-4.7", 2 * 151552 * 5120),
        ("GLM-4.5-Air", 2 * 151552 * 4096),
        ("GLM-4.6", 0),
        ("Qwen3.5-397B-A17B", 0),
        ("Qwen3-Next-80B-A3B", 0),
    ],
)
def test_the_catalog_counts_the_stored_copies_once_each(model, shared):
    m = CAT.model(model)
    assert m.mtp_shared_params == shared
    assert mtp_held_params(m) == m.mtp_params - shared


def test_r1_holds_its_mtp_module_less_the_shared_tensors():
    m = CAT.model("DeepSeek-R1")
    assert mtp_held_params(m) == R1_HELD
    loaded = model_facts(m.model_copy(update={"mtp_loaded": True}))
    plain = model_facts(m)
    assert plain.params_not_loaded - loaded.params_not_loaded == R1_HELD
    # the draft as the plan prints it: the parameters the MTP layer holds
    assert speculation_for("DeepSeek-R1", 1, 1.8, catalog=CAT, method="mtp").draft_params == R1_HELD


@pytest.fixture(scope="module")
def r1_plans():
    """DeepSeek-R1 fp8 on 8 x H200 at 8,192 tokens (bf16 KV): without MTP, with MTP as the engines hold it, and with
    the stored copies counted as held (the count before this change), per engine and parallelism."""
    m = CAT.model("DeepSeek-R1")
    spec = speculation_for("DeepSeek-R1", 1, 1.8, catalog=CAT, method="mtp")
    shared = served_model("DeepSeek-R1", spec, CAT)
    unshared = shared.model_copy(update={"mtp_shared_params": 0})
    out = {}
    for engine in ("vllm", "sglang"):
        for par in ("tp", "dp-ep"):
            opts = dict(gpus=8, parallelism=par, engine=engine)
            out[engine, par] = tuple(api.memory_plan("H200", x, CONTEXT, **opts) for x in (m, shared, unshared))
    return out


@pytest.mark.parametrize("engine", ["vllm", "sglang"])
@pytest.mark.parametrize(
    ("par", "per_gpu_after", "per_gpu_before"),
    [
        # tensor parallel: every MTP weight split over the 8 GPUs, at fp8's 1 B per parameter
        #   after:  11,610,068,224 / 8 = 1,451,258,528 B;  before: 13,463,426,304 / 8 = 1,682,928,288 B
        ("tp", 1_451_258_528, 1_682_928_288),
        # dp-ep: the non-expert part whole on each rank, ceil(256 / 8) / 256 of the routed experts
        #   after:  (11,610,068,224 - 11,274,289,152) + 11,274,289,152 x 32 / 256 = 335,779,072 + 1,409,286,144
        #         = 1,745,065,216 B;  before: 2,189,137,152 + 1,409,286,144 = 3,598,423,296 B (1.85 GB more a rank)
        ("dp-ep", 1_745_065_216, 3_598_423_296),
    ],
)
def test_per_gpu_weight_bytes_of_the_mtp_layer(r1_plans, engine, par, per_gpu_after, per_gpu_before):
    plain, shared, unshared = r1_plans[engine, par]
    # the reserve is the same: the KV budget per GPU drops by the MTP weights each GPU holds
    assert float(shared.reserve_bytes_per_gpu) == float(plain.reserve_bytes_per_gpu)
    after = float(plain.kv_budget_bytes_per_gpu) - float(shared.kv_budget_bytes_per_gpu)
    before = float(plain.kv_budget_bytes_per_gpu) - float(unshared.kv_budget_bytes_per_gpu)
    assert after == pytest.approx(per_gpu_after, rel=1e-9)
    assert before == pytest.approx(per_gpu_before, rel=1e-9)
    # so the group caches more tokens than with the copies held
    assert float(shared.kv_cache_tokens) > float(unshared.kv_cache_tokens)
    assert float(shared.weight_bytes) - float(plain.weight_bytes) == pytest.approx(R1_HELD * 1.0, rel=1e-12)


def test_the_schema_refuses_a_share_that_is_not_whole_copies():
    data = CAT.model("DeepSeek-R1").model_dump()
    with pytest.raises(pydantic.ValidationError, match="whole number"):
        Model.model_validate({**data, "mtp_shared_params": R1_EMBED + 1})
    with pytest.raises(pydantic.ValidationError, match="exceeds mtp_params"):
        Model.model_validate({**data, "mtp_shared_params": 16 * R1_EMBED})
