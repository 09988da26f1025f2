"""Architecture features of the 2026 catalog, each checked against a value derived by hand from the model's
config.json (the address is in each catalog entry's ``source``; the arithmetic is in each docstring).

Features: MoE with shared experts and dense/MoE interleaving (Llama 4 Maverick), leading dense layers
(GLM-4.5), MLA (Kimi K2), hybrid local/global attention (Gemma 3), chunked attention (Llama 4).
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from planner import api
from planner.catalog import Model, default_catalog
from planner.catalog.hf import model_from_hf_config
from planner.engines.architecture import model_facts, param_breakdown

CAT = default_catalog()

# meta-llama/Llama-4-Maverick-17B-128E-Instruct config.json text_config (the fields that shape the decoder);
# copy vendored in ai-dynamo/aiconfigurator, aic-core/src/aiconfigurator_core/model_configs/.
MAVERICK_TEXT_CONFIG = {
    "model_type": "llama4",
    "text_config": {
        "model_type": "llama4_text",
        "attention_bias": False,
        "attention_chunk_size": 8192,
        "head_dim": 128,
        "hidden_size": 5120,
        "interleave_moe_layer_step": 2,
        "intermediate_size": 8192,
        "intermediate_size_mlp": 16384,
        "max_position_embeddings": 1048576,
        "num_attention_heads": 40,
        "num_experts_per_tok": 1,
        "num_hidden_layers": 48,
        "num_key_value_heads": 8,
        "num_local_experts": 128,
        "torch_dtype": "bfloat16",
        "use_qk_norm": False,
        "vocab_size": 202048,
    },
    "tie_word_embeddings": False,
}


class TestInterleavedMoe:
    """Llama 4 Maverick: interleave_moe_layer_step 2, one shared expert per MoE layer, dense MLPs between."""

    def test_every_second_layer_is_moe(self):
        """HF Llama4TextConfig: moe_layers = range(step - 1, layers, step) = 1, 3, ..., 47: 24 of 48."""
        m = CAT.model("llama-4-maverick")
        assert m.moe.layer_step == 2 and m.moe_layers == 24

    def test_weights_read_per_decode_step(self):
        """Streamed every step (all but routed experts, vision tower and input embedding), from the config:

        attention 48 x (2 x 5120 x 5120 + 2 x 5120 x 1024) = 3,019,898,880; dense MLPs 24 x 3 x 5120 x 16384
        = 6,039,797,760; shared experts 24 x 3 x 5120 x 8192 = 3,019,898,880; routers 24 x 5120 x 128 =
        15,728,640; norms 48 x 2 x 5120 + 5120 = 496,640; lm_head 202048 x 5120 = 1,034,485,760.
        Sum 13,130,306,560; one token adds one routed expert in each of 24 layers (3 x 5120 x 8192).
        """
        f = model_facts(CAT.model("llama-4-maverick"))
        assert f.params_read_per_step == 13_130_306_560
        assert f.moe_layers * f.params_per_expert_layer == 24 * 3 * 5120 * 8192
        assert f.params_active - 202048 * 5120 == 13_130_306_560 + 24 * 125_829_120

    def test_the_config_imports_to_the_published_total(self):
        """Decoder from config.json + the 871,932,416-parameter vision tower = 401,583,781,376 (exact total)."""
        imported, _ = model_from_hf_config(MAVERICK_TEXT_CONFIG, "maverick")
        assert imported.moe.layer_step == 2 and imported.moe.num_shared_experts == 1
        assert imported.intermediate_size == 16384 and imported.chunked_attention_layers == 36
        assert param_breakdown(imported).total + 871_932_416 == CAT.model("llama-4-maverick").published_params_total


class TestLeadingDenseLayersAndSharedExperts:
    def test_glm_4_5(self):
        """GLM-4.5 config: 92 layers, first_k_dense_replace 3, n_shared_experts 1 of width 1536.

        MoE layers 89; shared experts 89 x 3 x 5120 x 1536 = 2,099,773,440; dense MLPs 3 x 3 x 5120 x 12288.
        """
        b = param_breakdown(CAT.model("glm-4.5"))
        assert CAT.model("glm-4.5").moe_layers == 89
        assert b.shared_experts == 89 * 3 * 5120 * 1536 == 2_099_773_440
        assert b.dense_mlp == 3 * 3 * 5120 * 12288


class TestMla:
    def test_kimi_k2_caches_the_latent(self):
        """Kimi-K2 config: kv_lora_rank 512 + qk_rope_head_dim 64 per layer, 61 layers: 61 x 576 x 2 B = 70,272 B.

        A GQA cache of its 64 heads x (128 + 64) would be 61 x 2 x 64 x 192 x 2 B = 2,998,272 B per token.
        """
        assert api.kv_bytes_per_token("kimi-k2", kv_precision="bf16") == 70_272


class TestHybridLocalGlobal:
    """Gemma 3 27B: sliding_window 1024, sliding_window_pattern 6 (5 local : 1 global), 62 layers."""

    def test_layers_split_five_to_one(self):
        """Global layers are 5, 11, ..., 59 (every sixth): 10 global, 52 local."""
        f = model_facts(CAT.model("gemma-3-27b"))
        assert (f.full_attention_layers, f.sliding_window_layers, f.sliding_window) == (10, 52, 1024)

    def test_kv_bytes_at_32k(self):
        """(10 x 32768 + 52 x 1024) layer-tokens x 2 x 16 KV heads x 128 x 2 B = 3,120,562,176 B.

        All 62 layers at full length would hold 62 x 32768 x 8192 B = 16,642,998,272 B.
        """
        assert api.kv_bytes("gemma-3-27b", 32768, kv_precision="bf16") == 3_120_562_176

    def test_below_the_window_every_layer_holds_every_token(self):
        """1,024 tokens: 62 x 1024 x 8192 B = 520,093,696 B."""
        assert api.kv_bytes("gemma-3-27b", 1024, kv_precision="bf16") == 520_093_696


class TestChunkedAttention:
    """Llama 4 Scout: attention_chunk_size 8192 on the 36 RoPE layers (no_rope_layers 1), 12 global NoPE layers."""

    def test_a_chunked_layer_holds_at_most_one_chunk(self):
        """131,072 tokens: (12 x 131072 + 36 x 8192) x 2 x 8 x 128 x 2 B = 1,867,776 x 4096 B = 7,650,410,496 B."""
        assert api.kv_bytes("llama-4-scout", 131072, kv_precision="bf16") == 7_650_410_496

    def test_below_one_chunk_every_layer_holds_every_token(self):
        """4,096 tokens: 48 x 4096 x 4096 B = 805,306,368 B."""
        assert api.kv_bytes("llama-4-scout", 4096, kv_precision="bf16") == 805_306_368

    def test_decode_step_reads_and_computes_with_the_chunk_bound(self):
        """Batch 1 at 131,072 tokens, bf16, 8 GPUs (8 KV heads: no replication):

        weights: (attention 3,019,898,880 + shared experts 48 x 125,829,120 + routers 48 x 5120 x 16 + norms
        496,640 + lm_head 1,034,485,760 + one routed expert per layer 48 x 125,829,120) x 2 B
        = 16,138,408,960 x 2 = 32,276,817,920 B; KV 7,650,410,496 B.
        FLOPs: 2 x 16,138,408,960 + 4 x 40 heads x 128 x 1,867,776 layer-tokens = 70,528,870,400.
        """
        step = api.decode_step(
            "H200",
            "llama-4-scout",
            131072,
            batch=1,
            kv_precision="bf16",
            gpus=8,
            weight_precision="bf16",
            check_fit=False,
        )
        assert float(step.bytes_moved) == 32_276_817_920 + 7_650_410_496
        assert float(step.flop) == 70_528_870_400


class TestSchemaRefusals:
    def _entry(self, **changes):
        data = CAT.model("llama-4-scout").model_dump()
        data.update(changes)
        return data

    def test_chunked_layers_need_a_chunk_size(self):
        with pytest.raises(ValidationError, match="chunked_attention_layers needs attention_chunk_size"):
            Model(**self._entry(attention_chunk_size=None))

    def test_sliding_and_chunked_layers_together_are_refused(self):
        with pytest.raises(ValidationError, match="both sliding-window and chunked-attention"):
            Model(**self._entry(sliding_window=4096, sliding_window_layers=4))
