"""Architecture features against vLLM's own start-up logs: KV bytes per token, layer groups, weights.

Every expected value is a published log line, read from catalogs/reference/startup_memory_public.csv (each row
names its address and carries the verbatim line). The planner is given the logged "Available KV cache memory",
so these tests check the architecture rules (what a token costs, how vLLM pages layer groups), not the memory
budget estimate (``planner validate`` checks that).
"""

from __future__ import annotations

import csv
import math
from pathlib import Path

import pytest

from planner import api
from planner.catalog import Model, default_catalog
from planner.engines.architecture import model_facts, param_counts, vllm_kv_cache_groups, vllm_kv_layer_slots
from planner.engines.profiles import engine_profile
from planner.engines.vllm_log import vllm_kv_log

CAT = default_catalog()
GiB = 2**30
REF = Path(__file__).resolve().parents[1] / "catalogs" / "reference" / "startup_memory_public.csv"
with REF.open(encoding="utf-8", newline="") as _f:
    ROWS = {r["record_id"]: r for r in csv.DictReader(_f)}
#: "Available KV cache memory" is printed to 0.01 GiB: the token count it implies is known to 0.005 GiB.
LOG_ROUNDING = 0.005

#: DeepSeek-V2-Lite-Chat's config.json (https://huggingface.co/deepseek-ai/DeepSeek-V2-Lite-Chat/blob/main/config.json),
#: as transcribed in NeMo's deepseek_v2_lite.yaml (27 layers, hidden 2048, MLP 10944, 16 heads, q_lora null,
#: kv_lora 512, qk 128 + rope 64, v 128, first layer dense: moe_layer_freq "([0]*1+[1]*26)", 64 experts of 1408,
#: 2 shared) and candle's deepseek_v2_lite() (vocab 102400); 6 experts per token (the model card).
DSV2_LITE = Model(
    name="DeepSeek-V2-Lite-Chat (test)",
    source="https://huggingface.co/deepseek-ai/DeepSeek-V2-Lite-Chat/blob/main/config.json",
    num_layers=27,
    hidden_size=2048,
    num_attention_heads=16,
    num_kv_heads=16,
    head_dim=192,
    intermediate_size=10944,
    vocab_size=102400,
    tie_word_embeddings=False,
    max_context=163840,
    native_precision="bf16",
    moe={
        "num_experts": 64,
        "experts_per_token": 6,
        "expert_intermediate_size": 1408,
        "num_shared_experts": 2,
        "shared_expert_intermediate_size": 1408,
        "dense_layers": 1,
    },
    mla={"kv_lora_rank": 512, "qk_rope_head_dim": 64, "qk_nope_head_dim": 128, "v_head_dim": 128, "q_lora_rank": None},
    published_params_total=15_700_000_000,
    published_params_source="model card: 15.7B total",
)


def _logged(record_id: str) -> tuple[float, int, float, int]:
    r = ROWS[record_id]
    return (
        float(r["available_kv_cache_memory_gib"]),
        int(r["gpu_kv_cache_tokens"]),
        float(r["max_concurrency_x"]),
        int(r["max_model_len"]),
    )


def _check(record_id: str, model, gpu: str, gpus: int) -> None:
    """Tokens and concurrency vLLM printed lie in what the planner gives for the logged GiB, +/- its rounding.

    max_num_batched_tokens is the vllm profile's default on the logged GPU (8192 on H100; 2048 on A100, which
    vLLM leaves out of its large-GPU defaults).
    """
    gib, tokens, concurrency, length = _logged(record_id)
    g = CAT.gpu(gpu)
    batched = engine_profile("vllm").batching_limits(g.memory_bytes, g.engine_device_name)[0]
    per_token = float(api.memory_plan(gpu, model, 16, gpus=gpus, catalog=CAT).kv_bytes_per_token_per_gpu)
    low, high = (
        vllm_kv_log(model, (gib + d) * GiB, per_token, length, block_size=16, max_num_batched_tokens=batched)
        for d in (-LOG_ROUNDING, LOG_ROUNDING)
    )
    assert low[0] <= tokens <= high[0], (record_id, low[0], tokens, high[0])
    assert round(low[1], 2) <= concurrency <= round(high[1], 2), (record_id, low[1], concurrency, high[1])


class TestGemma3LocalGlobal:
    """Gemma 3: 5 sliding-window (1024) layers per global layer; vLLM 0.19.0 on one H100, max_model_len 8192."""

    def test_vllm_pads_the_sliding_layers_to_whole_groups(self):
        """Gemma-3-27B: 10 global + 52 sliding layers -> groups of 10, 1 + 6 groups = 70 layer slots (vLLM's
        design doc, 'Case 3'); 12B: 8 + 40 -> 48, no padding; 4B: 5 + 29 -> 35."""
        assert vllm_kv_cache_groups(CAT.model("gemma-3-27b")) == (10, 1, 6)
        assert [vllm_kv_layer_slots(CAT.model(n)) for n in ("gemma-3-27b", "gemma-3-12b", "gemma-3-4b")] == [70, 48, 35]

    @pytest.mark.parametrize(
        ("record_id", "model"), [("LP19-009", "gemma-3-27b"), ("LP19-008", "gemma-3-12b"), ("LP19-010", "gemma-3-4b")]
    )
    def test_kv_tokens_and_concurrency_match_the_log(self, record_id, model):
        """LP19-009: 19.53 GiB -> 36,560 tokens, 4.46x; LP19-008: 47.72 GiB -> 130,304, 15.88x; LP19-010:
        62.51 GiB -> 468,144, 57.05x (jgchn/llm-d-planner results_raw.csv @30ec05f)."""
        _check(record_id, CAT.model(model), "H100", 1)

    def test_the_padding_is_what_the_log_shows(self):
        """Without vLLM's padding (62 layers' worth per token) 19.53 GiB would hold ~41,280 tokens, 13% more than
        the 36,560 logged: the padding is the engine's behaviour, not a rounding."""
        m = CAT.model("gemma-3-27b")
        per_token = float(api.memory_plan("H100", m, 16, catalog=CAT).kv_bytes_per_token_per_gpu)
        unpadded = 19.53 * GiB / per_token
        assert unpadded / 36560 == pytest.approx(70 / 62, rel=0.002)


class TestHybridPaddingInMaxBatch:
    """``max_batch`` and the log matcher share one rule (``planner.model.memory.padded_kv_layer_tokens``): vLLM
    0.33.0 pages equal-size layer groups, padded (``vllm/v1/core/kv_cache_planning.py`` lines 521-540), and a
    sliding group holds ceil(min(W - 1 + s, L) / b) + 1 blocks (``vllm/v1/kv_cache_interface.py`` line 944)."""

    def test_gemma3_27b_sequence_takes_seventy_layer_slots(self):
        """Gemma-3-27B at 8,192 tokens, decoding (s = 1): 10 layers x 16 x (512 + 6 x 65) = 144,320 layer-token slots
        of 8,192 B (2 x 16 KV heads x 128 x 2 B), where the layers alone take 10 x 8,192 + 52 x 1,024 = 135,168."""
        plan = api.memory_plan("H100", "gemma-3-27b", 8192, gpus=1, catalog=CAT)
        assert plan.kv_bytes_per_sequence == 10 * 16 * (512 + 6 * 65) * 8192
        assert 144_320 / 135_168 == pytest.approx(1.068, abs=0.001)  # max batch was this much high

    def test_logged_pool_holds_as_many_decoding_sequences_as_max_batch_says(self):
        """LP19-009 (vLLM 0.19.0, one H100): 36,560 tokens = 2,285 blocks per group x 7 groups = 15,995 blocks.
        The logged concurrency at a prefill chunk of 8,192 is 15,995 / (512 + 6 x 513) = 4.46 (the log: 4.46x);
        sequences decoding at 8,192 take 512 + 6 x 65 blocks each: 17 fit, as ``memory_plan`` counts them for the
        logged 19.53 GiB (18 without the padding)."""
        blocks = 36_560 // 16 * 7
        assert round(blocks / (512 + 6 * 513), 2) == 4.46
        per_sequence = float(api.memory_plan("H100", "gemma-3-27b", 8192, gpus=1, catalog=CAT).kv_bytes_per_sequence)
        logged = 19.53 * GiB
        assert math.floor(logged / per_sequence) == blocks // (512 + 6 * 65) == 17
        assert math.floor(logged / (8192 * 135_168)) == 18

    def test_engines_without_the_hybrid_manager_count_layers_alone(self):
        """TensorRT-LLM and the ideal engine: 10 x 8,192 + 52 x 1,024 layer tokens x 8,192 B."""
        plan = api.memory_plan("H100", "gemma-3-27b", 8192, gpus=1, engine="ideal", catalog=CAT)
        assert plan.kv_bytes_per_sequence == 135_168 * 8192

    def test_group_size_follows_the_one_and_a_half_rule(self):
        """12 sliding + 13 full layers (gpt-oss-20b with an EAGLE layer, the source's example): 13 < 1.5 x 12, so
        groups of 13, not 12 (which would pad the full type to 24)."""
        from dataclasses import replace

        from planner.model.memory import kv_cache_groups

        f = replace(model_facts(CAT.model("gpt-oss-20b")), full_attention_layers=13, sliding_window_layers=12)
        assert kv_cache_groups(f) == (13, 1.0, 1.0)
        assert [int(x) for x in kv_cache_groups(model_facts(CAT.model("gemma-3-27b")))] == [10, 1, 6]


class TestGptOssSlidingWindowAndMxfp4:
    """gpt-oss-120b: 18 sliding-window (128) + 18 full layers, 8 KV heads of 64; vLLM 0.10.1.1, 4 x A100 80GB."""

    def test_kv_tokens_and_concurrency_match_the_log(self):
        """DL22S-003: 'Available KV cache memory: 45.32 GiB | GPU KV cache size: 2,640,144 tokens | Maximum
        concurrency for 16,384 tokens per request: 284.25x' (dennislee22/vLLM-benchmarking log @b474d1e). Tokens
        / 16,384 would be 161x: the sliding layers hold at most window - 1 + 2048 batched tokens per request."""
        _check("DL22S-003", CAT.model("gpt-oss-120b"), "A100", 4)

    def test_experts_stay_mxfp4(self):
        """The planner's weights keep the experts at MXFP4 (4.25 bits): 65.25 GB in all (the experts' biases at bf16), 15.19 GiB per GPU of 4.
        vLLM loaded 17.2217 GiB per GPU on A100 (DL22S-003), 13% more: on GPUs without FP4 it repacks the
        experts for its Marlin kernel (the log warns 'Weight-only FP4 compression will be used leveraging the
        Marlin kernel', vllm-project/vllm#23278), padding the hidden size to 256 and the expert width per GPU to 128
        (``Mxfp4MoEMethod.create_weights``). The memory plan counts the hidden padding (16.14 GiB per GPU,
        ``planner.model.memory.loaded_expert_padding_bytes``); the width's (720 -> 768 per GPU) is a known gap."""
        weights = float(api.weight_bytes("gpt-oss-120b", catalog=CAT))
        bf16 = float(api.weight_bytes("gpt-oss-120b", precision="bf16", catalog=CAT))
        assert weights / 4 / GiB == pytest.approx(15.19, abs=0.01)
        assert weights < 0.3 * bf16  # experts (the bulk) at 4.25 bits, not 16
        assert float(ROWS["DL22S-003"]["model_weights_memory_gib"]) / (weights / 4 / GiB) == pytest.approx(
            1.13, abs=0.01
        )
        loaded = float(
            api.memory_plan("A100", "gpt-oss-120b", 1024, gpus=4, engine="vllm-0.10", catalog=CAT).weight_bytes
        )
        assert loaded / 4 / GiB == pytest.approx(16.14, abs=0.01)


class TestMlaWithSharedExpertsAndADenseLayer:
    """DeepSeek-V2-Lite-Chat: MLA (kv_lora 512 + rope 64 per layer), 2 shared experts, first layer dense; the
    same rules as DeepSeek-V3/R1 and Kimi K2 in the catalog. vLLM 0.19.0 on one H100, max_model_len 8192."""

    def test_one_token_costs_the_latent_and_rope_key_of_every_layer(self):
        """27 x (512 + 64) x 2 B = 31,104 B; LP19-002: 43.61 GiB -> 1,505,552 tokens, 183.78x."""
        assert api.kv_bytes_per_token(DSV2_LITE, catalog=CAT) == 27 * 576 * 2
        _check("LP19-002", DSV2_LITE, "H100", 1)

    def test_mla_latent_is_replicated_on_every_gpu_of_a_group(self):
        """vLLM caches the one latent 'head' on every GPU (num_kv_heads 1): per GPU the whole 31,104 B at TP 8."""
        per_gpu = float(api.memory_plan("H100", DSV2_LITE, 16, gpus=8, catalog=CAT).kv_bytes_per_token_per_gpu)
        assert per_gpu == 27 * 576 * 2

    def test_weights_match_the_log(self):
        """LP19-002: 'weights_memory_gib' 29.43 (vLLM's 'Model loading took'); the planner's bf16 count of
        the config (1 dense + 26 MoE layers, 2 shared experts each) is within 1% of it."""
        total, _ = param_counts(DSV2_LITE)
        assert float(api.weight_bytes(DSV2_LITE, catalog=CAT)) == total * 2
        assert total * 2 / GiB == pytest.approx(float(ROWS["LP19-002"]["model_weights_memory_gib"]), rel=0.01)
        assert math.isclose(total, 15.7e9, rel_tol=0.01)  # model card: 15.7B
