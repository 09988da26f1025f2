"""The models and GPUs issue 23 adds, and the attention kinds they need: hybrid linear attention (Gated DeltaNet:
Qwen3-Next) keeps a fixed state per sequence instead of a per-token KV cache; DeepSeek Sparse Attention (DeepSeek-
V3.2, GLM-5) caches every token but attends to the indexer's top 2,048. Each figure is checked against the published
number it cites, or against arithmetic from the config.json values in the entry's ``source`` (in the docstring).
"""

from __future__ import annotations

import math

import pytest

import planner
from planner.catalog import default_catalog
from planner.catalog.hf import model_from_hf_config
from planner.catalog.resolve import _resolve
from planner.engines.architecture import model_facts, param_breakdown
from planner.engines.profiles import engine_profile
from planner.model import memory
from planner.model.decode import decode_step
from planner.model.prefill import causal_attention_flop

CAT = default_catalog()
VLLM = engine_profile(None)
GiB = 2**30

#: Qwen3-Next config.json: 12 full-attention layers (full_attention_interval 4 of 48), 2 KV heads of 256.
QWEN3_NEXT_KV_PER_TOKEN_BF16 = 12 * 2 * 2 * 256 * 2  # 24,576 B
#: 36 Gated DeltaNet layers x (32 value heads x 128 x 128 recurrent + 3 x (2 x 16 x 128 + 32 x 128) conv) x 2 B
#: (vLLM MambaStateShapeCalculator.gated_delta_net_state_shape, vllm/model_executor/layers/mamba/mamba_utils.py).
QWEN3_NEXT_STATE_BF16 = 36 * (32 * 128 * 128 + 3 * (2 * 16 * 128 + 32 * 128)) * 2  # 39,518,208 B


def facts(gpu: str, model: str, **kw):
    return _resolve(CAT, "raise", gpu=gpu, model=model, engine=VLLM, **kw)


class TestNamesAsHubsWriteThem:
    @pytest.mark.parametrize(
        "written, entry",
        [
            ("moonshotai/Kimi-K2.5", "Kimi-K2.5"),
            ("Qwen/Qwen3-Next-80B-A3B-Instruct", "Qwen3-Next-80B-A3B"),
            ("Qwen/Qwen3-Coder-Next", "Qwen3-Coder-Next"),
            ("zai-org/GLM-5", "GLM-5"),
            ("deepseek-ai/DeepSeek-V3.2", "DeepSeek-V3.2"),
            ("deepseek-ai/DeepSeek-V3.2-Exp", "DeepSeek-V3.2"),
        ],
    )
    def test_models(self, written, entry):
        """The hub ids of the issue's models resolve in the catalog and in ``max_batch``."""
        assert CAT.model(written).name == entry

    def test_the_gpu_by_the_name_nvidia_smi_prints(self):
        """nvidia-smi and torch print 'NVIDIA RTX PRO 6000 Blackwell Server Edition' (NHR@FAU Alex node docs)."""
        assert CAT.gpu("NVIDIA RTX PRO 6000 Blackwell Server Edition").name == "RTX PRO 6000 Blackwell Server Edition"
        assert planner.max_batch("NVIDIA RTX PRO 6000 Blackwell Server Edition", "Qwen/Qwen3-Next-80B-A3B-Instruct",
                                 8192, weight_precision="fp8") > 0  # fmt: skip


class TestParameterCounts:
    def test_qwen3_next_shape_to_the_parameter(self):
        """Qwen3-Coder-Next (Qwen3-Next-80B-A3B's shape): HF safetensors.total 79,674,391,296; 3,874,929,408 per
        token with embedding and head (a public count of the same checkpoint: 'published total minus inactive expert
        tensors = 3,874,929,408'). Gated attention doubles q_proj; 36 DeltaNet layers replace attention."""
        b = param_breakdown(CAT.model("Qwen3-Coder-Next"))
        assert (b.total, b.active) == (79_674_391_296, 3_874_929_408)
        nxt = param_breakdown(CAT.model("Qwen3-Next-80B-A3B"))  # the same decoder; its checkpoint adds the MTP layer
        assert (nxt.total - nxt.extra, nxt.total) == (79_674_391_296, 81_324_862_720)  # trial 17 F14

    def test_qwen3_6_27b_decoder_vision_and_mtp_to_the_parameter(self):
        """Qwen3.6-27B: HF safetensors.total 27,781,427,952 = decoder (64 layers, 48 of them Gated DeltaNet with 48
        value heads) 26,895,998,464 + vision tower 460,730,096 + MTP layer 424,699,392 (arithmetic in the entry)."""
        m = CAT.model("Qwen/Qwen3.6-27B")
        b = param_breakdown(m)
        assert (b.total, b.extra, b.total - b.extra) == (27_781_427_952, 885_429_488, 26_895_998_464)

    def test_dsa_models_within_their_rounded_totals(self):
        """DeepSeek-V3.2: card 685B (671B + 14B MTP); GLM-5: README 744B. The indexer adds 13,959,424 per layer to
        DeepSeek-V3's: 1,536 x 64 x 128 + 7,168 x 128 + 2 x 128 + 7,168 x 64."""
        v32, v3 = param_breakdown(CAT.model("DeepSeek-V3.2")), param_breakdown(CAT.model("DeepSeek-V3"))
        assert v32.attention - v3.attention == 61 * 13_959_424
        assert v32.total == pytest.approx(685e9, rel=1e-3)
        assert param_breakdown(CAT.model("GLM-5")).total == pytest.approx(744e9, rel=2e-4)


class TestHybridLinearAttention:
    """Qwen3-Next-80B-A3B: 12 full-attention layers cache tokens; 36 Gated DeltaNet layers hold a fixed state."""

    def test_kv_bytes_per_token_counts_only_the_attention_layers(self):
        """12 x 2 x 2 x 256 x 2 B = 24,576 B per token in bf16, a quarter of a 48-layer model's."""
        assert planner.kv_bytes_per_token("Qwen3-Next-80B-A3B", kv_precision="bf16") == QWEN3_NEXT_KV_PER_TOKEN_BF16

    def test_state_bytes_per_sequence_do_not_grow_with_context(self):
        """39,518,208 B per sequence; Qwen3.5's mamba_ssm_dtype float32 would double the recurrent part."""
        assert model_facts(CAT.model("Qwen3-Next-80B-A3B")).state_bytes_per_sequence == QWEN3_NEXT_STATE_BF16
        r = facts("H200", "Qwen3-Next-80B-A3B")
        assert memory.state_bytes(r.model, 3.0) == 3 * QWEN3_NEXT_STATE_BF16

    def test_a_float32_state_where_the_config_asks_for_it(self):
        """Qwen3.6-27B (mamba_ssm_dtype float32): 48 x (48 x 128 x 128 x 4 B + 3 x 10,240 x 2 B) = 153,944,064 B per
        sequence and 16 x 2 x 4 x 256 x 2 B = 65,536 B per token, as a public capacity study of the shape states."""
        assert model_facts(CAT.model("Qwen3.6-27B")).state_bytes_per_sequence == 153_944_064
        assert planner.kv_bytes_per_token("Qwen3.6-27B", kv_precision="bf16") == 65_536

    def test_a_sequence_in_the_memory_plan_is_vllms_pages(self):
        """At 8,192 tokens on 2 GPUs (each holds one of the 2 KV heads and half the state), vLLM pages the cache in
        blocks of 544 tokens (``test_qwen3_next_start_up_log``): per GPU 12 layer slots x 544 x 1,024 B x (16 attention
        blocks + 3 state groups) = 127,008,768 B, 254,017,536 B over the group, where the bare KV + state is
        8,192 x 24,576 + 39,518,208 = 240,844,800 B; max batch = floor(2 x budget per GPU / it)."""
        p = planner.memory_plan("H200", "Qwen3-Next-80B-A3B", 8192, gpus=2)
        assert p.kv_bytes_per_sequence == 2 * 12 * 544 * 1024 * (16 + 3) == 254_017_536
        assert 8192 * QWEN3_NEXT_KV_PER_TOKEN_BF16 + QWEN3_NEXT_STATE_BF16 == 240_844_800
        assert p.max_batch == math.floor(2 * p.kv_budget_bytes_per_gpu / 254_017_536)

    def test_decode_reads_and_writes_the_state_once_per_sequence(self):
        """A decode step moves 2 x state x batch more bytes than the attention layers' KV alone would."""
        r = facts("H200", "Qwen3-Next-80B-A3B")
        with_state = decode_step(r.gpu, r.model, r.precision, r.limits, 4096.0, 16.0, 1.0)
        no_state = decode_step(r.gpu, r.model.__class__(**{**r.model.__dict__, "state_bytes_per_sequence": 0.0,
                                                             "linear_attention_flop_per_token": 0.0}),
                               r.precision, r.limits, 4096.0, 16.0, 1.0)  # fmt: skip
        assert with_state.bytes_moved - no_state.bytes_moved == pytest.approx(2 * 16 * QWEN3_NEXT_STATE_BF16)

    def test_a_linear_layer_needs_a_full_attention_layer_beside_it(self):
        """A model whose every layer is linear is refused in one line (the KV model needs an attention layer)."""
        data = CAT.model("Qwen3-Next-80B-A3B").model_dump()
        data["linear_attention"]["layers"] = 48
        with pytest.raises(ValueError, match="at least one full-attention layer"):
            type(CAT.model("Qwen3-Next-80B-A3B"))(**data)


class TestDeepSeekSparseAttention:
    """DeepSeek-V3.2: MLA latent (512 + 64) plus a 132 B indexer key per token and layer; queries attend to 2,048."""

    def test_kv_bytes_per_token_add_the_indexer_key(self):
        """61 x (576 x 2 B + 132 B) = 78,324 B per token in bf16; DeepSeek-V3 caches 61 x 1,152 = 70,272 B."""
        assert planner.kv_bytes_per_token("DeepSeek-V3.2", kv_precision="bf16") == 61 * (576 * 2 + 132) == 78_324
        assert planner.kv_bytes_per_token("DeepSeek-V3", kv_precision="bf16") == 70_272

    def test_decode_attention_reads_the_top_k_latents_and_every_indexer_key(self):
        """At 65,536 tokens: latent bytes of 2,048 tokens + indexer keys of all 65,536, per layer and sequence."""
        r = facts("H200", "DeepSeek-V3.2")
        got = memory.decode_attention_bytes(r.model, r.precision, 65536.0, 1.0)
        assert got == pytest.approx(61 * (2048 * 576 * 2 + 65536 * 132))
        dense = facts("H200", "DeepSeek-V3")
        assert memory.decode_attention_bytes(dense.model, dense.precision, 65536.0, 1.0) == 61 * 65536 * 576 * 2

    def test_below_the_top_k_attention_is_dense_plus_the_indexer(self):
        """A 1,024-token prompt attends causally as DeepSeek-V3 does; the indexer adds 2 x 64 x 128 FLOP per pair
        (61 layers, L/2 = 512 earlier tokens on average). Above 2,048 tokens attention pairs stop growing with L."""
        v32, v3 = facts("H200", "DeepSeek-V3.2").model, facts("H200", "DeepSeek-V3").model
        extra = causal_attention_flop(v32, 1024.0) - causal_attention_flop(v3, 1024.0)
        assert extra == pytest.approx(1024 * 2 * 64 * 128 * 61 * 512)
        k, long = 2048.0, 131072.0
        mean_attended = k - k * k / (2 * long)  # (k^2 / 2 + (L - k) k) / L
        attention_only = causal_attention_flop(v32, long) - 2 * 64 * 128 * 61 * long * long / 2
        assert attention_only == pytest.approx(v3.prefill_attention_flop_per_token_pair_per_layer * long * 61
                                               * mean_attended)  # fmt: skip

    def test_long_context_decode_is_faster_than_dense_mla(self):
        """At 65,536 tokens a DSA decode step reads 2,048 latents (2,304 B) and 65,536 indexer keys (132 B) per layer,
        about 1/6 of DeepSeek-V3's 65,536 latents, so TPOT is lower on the same 8 GPUs."""
        a = planner.tpot("H200", "DeepSeek-V3.2", 65536, batch=4, gpus=8)
        b = planner.tpot("H200", "DeepSeek-V3", 65536, batch=4, gpus=8)
        assert a < b


class TestRtxPro6000ServerEdition:
    def test_datasheet_values(self):
        """NVIDIA datasheet (Dec 2025): 96 GB GDDR7 ECC, 1,597 GB/s, FP32 120 TFLOPS, FP4 4 PFLOPS with sparsity
        (dense 2), up to 600 W, PCIe 5.0 x16, no NVLink; nvidia-smi 97,887 MiB with ECC on (no 1/16 sideband)."""
        g = CAT.gpu("RTX PRO 6000 Blackwell Server Edition")
        assert (g.memory_bytes, g.hbm_bandwidth_bytes_per_s, g.tdp_w) == (96 * GiB, 1.597e12, 600)
        assert g.peak_flop_per_s["fp4"] == 2e15 and g.peak_flop_per_s["fp32"] == 120e12
        assert g.peak_flop_per_s["fp8"] == 2 * g.peak_flop_per_s["bf16"] == 1e15
        assert (g.interconnect_kind, g.interconnect_domain_gpus, g.ecc_reserved_fraction) == ("pcie", 1, 0)


class TestImportHf:
    """``planner catalog import-hf`` reads the new attention kinds from a config.json."""

    QWEN3_NEXT = {  # Qwen/Qwen3-Coder-Next config.json (the fields that shape the model), as quoted in the entry
        "architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next", "hidden_size": 2048,
        "num_hidden_layers": 48, "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
        "intermediate_size": 5120, "vocab_size": 151936, "tie_word_embeddings": False,
        "max_position_embeddings": 262144, "torch_dtype": "bfloat16", "full_attention_interval": 4,
        "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128,
        "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4, "num_experts": 512, "num_experts_per_tok": 10,
        "moe_intermediate_size": 512, "shared_expert_intermediate_size": 512, "decoder_sparse_step": 1,
        "mlp_only_layers": [],
    }  # fmt: skip

    def test_a_qwen3_next_config_imports_to_the_published_count(self):
        """The imported entry has 36 linear layers and 79,674,391,296 parameters (HF safetensors.total)."""
        m, notes = model_from_hf_config(self.QWEN3_NEXT, "imported")
        assert m.linear_attention.layers == 36 and m.attention_output_gate and m.moe.shared_expert_gate
        assert param_breakdown(m).total == 79_674_391_296
        assert any("linear attention" in n for n in notes)

    def test_index_topk_on_an_mla_config_is_sparse_attention(self):
        """GLM-5-style config: index_topk 2048, 32 index heads of 128 (transformers GlmMoeDsaConfig defaults)."""
        cfg = {
            "model_type": "glm_moe_dsa", "hidden_size": 6144, "num_hidden_layers": 78, "num_attention_heads": 64,
            "num_key_value_heads": 64, "intermediate_size": 12288, "vocab_size": 154880,
            "max_position_embeddings": 202752, "torch_dtype": "bfloat16", "kv_lora_rank": 512, "q_lora_rank": 2048,
            "qk_rope_head_dim": 64, "qk_nope_head_dim": 192, "v_head_dim": 256, "n_routed_experts": 256,
            "num_experts_per_tok": 8, "n_shared_experts": 1, "moe_intermediate_size": 2048,
            "first_k_dense_replace": 3, "topk_method": "noaux_tc", "index_topk": 2048, "index_n_heads": 32,
            "index_head_dim": 128, "tie_word_embeddings": False,
        }  # fmt: skip
        m, _ = model_from_hf_config(cfg, "imported")
        assert (m.sparse_attention.top_k, m.sparse_attention.index_n_heads) == (2048, 32)
        assert param_breakdown(m).total == param_breakdown(CAT.model("GLM-5")).total
