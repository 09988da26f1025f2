"""Models that keep a fixed state per sequence: Mamba-2 hybrids (NVIDIA Nemotron-H) and the large Qwen3.5 Gated
DeltaNet MoE models, and the page rule vLLM applies to both. Each expected value cites the published number or the
engine source line it comes from.
"""

from __future__ import annotations

import pytest

import planner
from planner.catalog import default_catalog
from planner.catalog.hf import model_from_hf_config
from planner.catalog.resolve import _resolve
from planner.catalog.schema import Model
from planner.engines.architecture import (
    model_facts,
    param_breakdown,
    quantized_kept_16bit_params,
    state_bytes_per_sequence,
)
from planner.engines.profiles import engine_profile
from planner.engines.vllm_log import vllm_kv_log
from planner.errors import InvalidInputError, OutOfRangeError
from planner.model import memory
from planner.model.decode import decode_step

CAT = default_catalog()
GiB = 2**30


class TestMamba2Parameters:
    """Nemotron-H counts: one mixer or MLP per block (Megatron-Bridge nemotron_h_provider.py, commit 160ccccb)."""

    def test_nano_9b_v2_to_the_parameter(self):
        """NVIDIA-Nemotron-Nano-9B-v2: HF safetensors total 8,888,227,328 (public fixture table, read 2026-12-01)."""
        assert param_breakdown(CAT.model("nvidia/NVIDIA-Nemotron-Nano-9B-v2")).total == 8_888_227_328

    def test_nemotron_3_nano_moe_to_the_parameter(self):
        """Nemotron-3-Nano-30B-A3B: llama.cpp n_params 31,577,940,288, 'nemotron_h_moe 31B.A3.5B' (llama-bench)."""
        b = param_breakdown(CAT.model("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-FP8"))
        assert b.total == 31_577_940_288
        assert round(b.active / 1e9, 1) == 3.6  # A3.5B per llama.cpp's rounding of the active count

    def test_8b_as_a_public_ground_truth_table_gives_it(self):
        """Nemotron-H-8B-Base-8K: 8.101B real parameters (a public fixture table of hybrid models, read 2026-12-01)."""
        assert round(param_breakdown(CAT.model("nvidia/Nemotron-H-8B-Base-8K")).total / 1e9, 3) == 8.101

    def test_56b_within_its_rounded_name(self):
        """Nemotron-H-56B-Base-8K: the name rounds the total to 1B (HF model card); 54 Mamba-2, 54 MLP and 10
        attention blocks (NVIDIA ADLR's Nemotron-H page)."""
        m = CAT.model("Nemotron-H-56B")
        assert (m.mamba.mamba_layers, m.mamba.mlp_blocks, m.mamba.attention_layers) == (54, 54, 10)
        assert param_breakdown(m).total == pytest.approx(56e9, rel=0.01)


class TestMamba2State:
    def test_state_is_conv_plus_ssm_per_mamba_layer(self):
        """Nemotron-H-8B: 24 x ((4 - 1) x (8,192 + 2 x 8 x 128) x 2 B + 128 x 64 x 128 x 2 B) = 51,806,208 B
        (vLLM 0.33.0 mamba_utils.py lines 201-210: conv_dim = intermediate + 2 x groups x state; temporal state
        heads x head_dim x state_size; both in the model dtype under mamba_ssm_cache_dtype 'auto', lines 104-108)."""
        m = CAT.model("Nemotron-H-8B")
        assert state_bytes_per_sequence(m) == 24 * (3 * (8192 + 2 * 8 * 128) * 2 + 128 * 64 * 128 * 2) == 51_806_208

    def test_only_attention_blocks_cache_tokens(self):
        """Nemotron-H-8B's 4 attention blocks: 4 x 2 x 8 KV heads x 128 x 2 B = 16,384 B per token in bf16."""
        assert planner.kv_bytes_per_token("Nemotron-H-8B", kv_precision="bf16") == 16_384
        f = model_facts(CAT.model("Nemotron-H-8B"))
        assert (f.num_layers, f.full_attention_layers, f.linear_attention_layers) == (28, 4, 24)

    def test_float32_ssm_state_where_the_card_serves_it(self):
        """Nano 9B v2 (model card: --mamba_ssm_cache_dtype float32): 27 x (3 x 12,288 x 2 B + 128 x 80 x 128 x 4 B)."""
        assert state_bytes_per_sequence(CAT.model("Nemotron-Nano-9B-v2")) == 27 * (
            3 * 12_288 * 2 + 128 * 80 * 128 * 4
        ) == 143_548_416  # fmt: skip

    def test_float32_ssm_state_where_config_json_names_it(self):
        """Nemotron-3-Nano-30B-A3B: config.json "mamba_ssm_cache_dtype": "float32" (the BF16 and NVFP4 checkpoints'
        config.json as copied in ai-dynamo/aiconfigurator at 095f58a5), which vLLM's NemotronHForCausalLMConfig copies
        into the cache config under 'auto': 23 x (3 x 6,144 x 2 B + 64 x 64 x 128 x 4 B) = 49,082,368 B."""
        assert state_bytes_per_sequence(CAT.model("nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-FP8")) == 23 * (
            3 * 6_144 * 2 + 64 * 64 * 128 * 4
        ) == 49_082_368  # fmt: skip

    def test_decode_moves_the_state(self):
        """A decode step of 16 sequences reads and writes every sequence's state once: 2 x 16 x 51,806,208 B more
        than the attention blocks' KV alone."""
        r = _resolve(CAT, "raise", gpu="H100", model="Nemotron-H-8B", engine=engine_profile(None))
        stateless = r.model.__class__(**{**r.model.__dict__, "state_bytes_per_sequence": 0.0,
                                         "linear_attention_flop_per_token": 0.0})  # fmt: skip
        with_state = decode_step(r.gpu, r.model, r.precision, r.limits, 4096.0, 16.0, 1.0)
        no_state = decode_step(r.gpu, stateless, r.precision, r.limits, 4096.0, 16.0, 1.0)
        assert with_state.bytes_moved - no_state.bytes_moved == pytest.approx(2 * 16 * 51_806_208)


class TestQuantizedKeptMixers:
    """NVIDIA's quantized Nemotron-3-Nano checkpoints leave every attention layer, the Mamba-2 mixer before each and
    every conv1d in bf16 (hf_quant_config exclude_modules: backbone.layers.{4,11,18,25,32,41}.mixer.in_proj/out_proj,
    backbone.layers.{5,12,19,26,33,42}.mixer.q/k/v/o_proj, every mixer.conv1d; aiconfigurator 095f58a5's copy)."""

    NANO = "nvidia/NVIDIA-Nemotron-3-Nano-30B-A3B-FP8"

    def test_kept_parameters(self):
        """6 attention layers of 2,688 x (4,096 + 2 x 256) + 4,096 x 2,688 = 23,396,352, 6 Mamba-2 mixers of
        38,742,208 (transformers NemotronHMamba2Mixer's parameters) and 17 more conv1d of 6,144 x 4 + 6,144 = 30,720:
        373,353,600 parameters read at 2 B in fp8 and NVFP4."""
        m = CAT.model(self.NANO)
        assert quantized_kept_16bit_params(m) == 6 * 23_396_352 + 6 * 38_742_208 + 17 * 30_720 == 373_353_600

    def test_fp8_weights_carry_them_at_two_bytes(self):
        """FP8 weights: every parameter at 1 B plus 1 B more for each kept 16-bit one (embedding, head, norms, routers
        and the 373,353,600 kept mixer parameters); bf16: 2 B each, whatever is kept."""
        b = param_breakdown(CAT.model(self.NANO))
        kept = b.embedding + b.lm_head + b.norms + b.router + 373_353_600
        assert planner.weight_bytes(self.NANO, precision="fp8") == pytest.approx(b.total + kept)
        assert planner.weight_bytes(self.NANO, precision="bf16") == pytest.approx(2 * b.total)

    def test_a_kept_block_must_be_a_mixer(self):
        """Block 1 of Nano's pattern is a MoE block ('E'): refused, naming the index."""
        data = CAT.model(self.NANO).model_dump()
        data["mamba"]["quantized_kept_16bit_blocks"] = [1, 4]
        with pytest.raises(ValueError, match=r"quantized_kept_16bit_blocks \[1\] are not"):
            Model(**data)


class TestPatternErrors:
    def _data(self, **mamba):
        data = CAT.model("Nemotron-H-8B").model_dump()
        data["mamba"].update(mamba)
        return data

    def test_an_unknown_block_letter_is_named(self):
        with pytest.raises(ValueError, match=r"pattern has \['X'\]"):
            Model(**self._data(pattern="MX" + "M" * 50))

    def test_the_pattern_must_cover_every_layer(self):
        with pytest.raises(ValueError, match="52"):
            Model(**self._data(pattern="M*"))


class TestVllmHybridPages:
    """vLLM 0.33.0 ``Platform._align_hybrid_block_size`` (vllm/platforms/interface.py lines 1098-1128)."""

    def test_qwen3_next_start_up_log(self):
        """vLLM 0.10.2, Qwen3-Next-80B-A3B-Instruct, TP 2 on H200 (a public start-up log, read 2026-12-01):
        'Setting attention block size to 544 tokens', 'Padding mamba page size by 1.49%', 'Available KV cache memory:
        44.59 GiB', 'Maximum concurrency for 262,144 tokens per request: 14.77x'."""
        f = model_facts(CAT.model("Qwen/Qwen3-Next-80B-A3B-Instruct"))
        token_page = 2 * 1 * 256 * 2  # one of 2 KV heads per GPU, K and V, bf16
        state_page = f.state_bytes_per_sequence / 36 / 2
        block = memory.hybrid_state_block_tokens(token_page, state_page, 16)
        assert block == 544
        assert round(100 * (block * token_page - state_page) / state_page, 2) == 1.49
        seq = memory.hybrid_sequence_bytes(f, token_page, 262_144, 2, 16)
        assert round(2 * 44.59 * GiB / seq, 2) == 14.77

    def test_qwen3_6_27b_block(self):
        """Qwen3.6-27B (float32 state): 784-token blocks, as vLLM logs them (LMCache's hybrid-model guide, 'Qwen3.6-27B
        | 784', read 2026-12-01): 16 x ceil(3,207,168 / (16 x 4,096))."""
        f = model_facts(CAT.model("Qwen3.6-27B"))
        assert memory.hybrid_state_block_tokens(2 * 4 * 256 * 2, f.state_bytes_per_sequence / 48, 16) == 784

    def test_qwen3_5_state_is_float32_as_the_family_logs_it(self):
        """vLLM start-up log of Qwen/Qwen3.5-9B (a public log, read 2026-12-01): 'Setting attention block size to 528
        tokens', 'Padding mamba page size by 0.76%'. Its config (4 KV heads of 256; DeltaNet 16 key / 32 value heads
        of 128, kernel 4) gives that only with a float32 recurrent state (mamba_ssm_dtype), the assumption the
        Qwen3.5-397B-A17B and 122B-A10B entries make: 32 x 128 x 128 x 4 + 3 x 8,192 x 2 = 2,146,304 B per layer;
        in bf16 the block would be 272 tokens."""
        token_page = 2 * 4 * 256 * 2
        f32, bf16 = 32 * 128 * 128 * 4 + 3 * 8192 * 2, 32 * 128 * 128 * 2 + 3 * 8192 * 2
        block = memory.hybrid_state_block_tokens(token_page, f32, 16)
        assert (block, round(100 * (block * token_page - f32) / f32, 2)) == (528, 0.76)
        assert memory.hybrid_state_block_tokens(token_page, bf16, 16) == 272
        assert CAT.model("Qwen3.5-397B-A17B").linear_attention.state_bytes_per_element == 4

    def test_max_batch_pays_for_the_padded_pages(self):
        """The memory plan's sequence is the paged one, at least the bare KV + state (Nemotron-H-8B, 1 x H100)."""
        p = planner.memory_plan("H100", "Nemotron-H-8B", 1000, gpus=1)
        bare = 1000 * 16_384 + 51_806_208
        assert p.kv_bytes_per_sequence == 4 * 528 * 4096 * (2 + 6) > bare  # 528-token blocks, 1 + 6 groups of 4


class TestQwen35Moe:
    def test_397b_text_vision_and_mtp_to_the_parameter(self):
        """Qwen3.5-397B-A17B: safetensors total 403,397,928,944 = text 396,346,350,336 + vision 456,010,480 + MTP
        6,595,568,128 (a public checkpoint audit, read 2026-12-01)."""
        b = param_breakdown(CAT.model("Qwen/Qwen3.5-397B-A17B"))
        assert (b.total, b.total - b.extra) == (403_397_928_944, 396_346_350_336)

    def test_122b_to_the_parameter(self):
        """Qwen3.5-122B-A10B: safetensors total 125,086,497,008; text decoder 122.11B as llama.cpp prints it."""
        b = param_breakdown(CAT.model("Qwen/Qwen3.5-122B-A10B"))
        assert b.total == 125_086_497_008
        assert round((b.total - b.extra) / 1e9, 2) == 122.11

    def test_35b_a3b_and_its_3_6_twin_to_the_parameter(self):
        """Qwen3.5-35B-A3B and Qwen3.6-35B-A3B: safetensors total 35,951,822,704 each (public model table and an HF
        revision record, read 2026-12-01); one entry, the same architecture and model_type (transformers docs)."""
        m = CAT.model("Qwen/Qwen3.6-35B-A3B")
        assert (m.name, param_breakdown(m).total) == ("Qwen3.5-35B-A3B", 35_951_822_704)
        assert state_bytes_per_sequence(m) == 30 * (32 * 128 * 128 * 4 + 3 * 8192 * 2) == 64_389_120

    def test_mtp_and_vision_are_not_loaded(self):
        """vLLM's recipe serves text with --language-model-only; MTP loads only for speculative decoding."""
        f = model_facts(CAT.model("Qwen3.5-397B-A17B"))
        assert f.params_not_loaded == 7_051_578_608


class TestMamba2LoadingRule:
    def test_groups_must_divide_the_mixers_heads_and_groups(self):
        """vLLM 0.33.0 ``MambaMixer2.__init__`` (vllm/model_executor/layers/mamba/mamba_mixer2.py lines 316-323):
        ``num_heads % tp_size == 0`` and ``n_groups % tp_size == 0 or n_groups == 1``. Nemotron-H-8B's 32 attention
        heads, 8 KV heads and MLP width 21,504 all split 16 ways, its 8 Mamba groups do not."""
        assert (32 % 16, 16 % 8, 21_504 % 16, 8 % 16) == (0, 0, 0, 8)
        with pytest.raises(OutOfRangeError, match=r"128 heads and 8 groups evenly \(MambaMixer2\): 8 / 16 leaves 8"):
            planner.max_batch("H100", "Nemotron-H-8B", 4096, gpus=16)
        assert planner.valid_tp_sizes("Nemotron-H-8B") == (1, 2, 4, 8)

    def test_gated_deltanet_heads_divide_the_group(self):
        """vLLM 0.33.0 qwen_gdn_linear_attn.py line 651 (``divide(self.num_v_heads, self.tp_size)``) and line 957
        (``self.num_k_heads // self.tp_size`` key heads per GPU): Qwen3.5-397B-A17B's 32 attention heads and 2 KV
        heads would split 32 ways, its 16 DeltaNet key heads do not."""
        with pytest.raises(OutOfRangeError, match=r"16 key heads and 64 value heads evenly: 16 / 32 leaves 16"):
            planner.max_batch("H200", "Qwen3.5-397B-A17B", 8192, gpus=32, weight_precision="fp8")
        assert planner.valid_tp_sizes("Qwen3.5-397B-A17B") == (1, 2, 4, 8, 16)


class TestGlm47:
    def test_its_own_entry_to_its_trained_context(self):
        """zai-org/GLM-4.7(-FP8) config.json (aiconfigurator's copy, commit a0ba9ec6): max_position_embeddings 202752,
        GLM-4.5's shape; HF safetensors total 358,337,791,296 (a public model-variant table)."""
        m = CAT.model("zai-org/GLM-4.7-FP8")
        assert (m.name, m.max_context) == ("GLM-4.7", 202_752)
        assert param_breakdown(m).total == 358_337_791_296
        assert CAT.model("zai-org/GLM-4.5").name == "GLM-4.5"


class TestImportNemotronH:
    def test_a_nemotron_h_config_imports_to_the_catalogs_count(self):
        """NVIDIA-Nemotron-Nano-9B-v2's config.json keys (nemotron_h: hybrid_override_pattern, mamba_num_heads 128,
        mamba_head_dim 80, ssm_state_size 128, n_groups 8, conv_kernel 4, mamba_ssm_cache_dtype float32 as its card
        serves it) give the catalog's 8,888,227,328 parameters and state."""
        cfg = {
            "architectures": ["NemotronHForCausalLM"], "model_type": "nemotron_h", "num_hidden_layers": 56,
            "hidden_size": 4480, "num_attention_heads": 40, "num_key_value_heads": 8, "head_dim": 128,
            "intermediate_size": 15680, "vocab_size": 131072, "tie_word_embeddings": False,
            "max_position_embeddings": 131072, "torch_dtype": "bfloat16", "mamba_num_heads": 128,
            "mamba_head_dim": 80, "ssm_state_size": 128, "n_groups": 8, "conv_kernel": 4, "use_conv_bias": True,
            "mamba_ssm_cache_dtype": "float32",
            "hybrid_override_pattern": "M-M-M-MM-M-M-M*-M-M-M*-M-M-M-M*-M-M-M-M*-M-MM-M-M-M-M-M-",
        }  # fmt: skip
        m, notes = model_from_hf_config(cfg, name="nano-9b-v2")
        assert param_breakdown(m).total == 8_888_227_328
        assert state_bytes_per_sequence(m) == state_bytes_per_sequence(CAT.model("Nemotron-Nano-9B-v2"))
        assert any("27 Mamba-2" in n for n in notes)

    def test_a_pattern_of_the_wrong_length_is_refused(self):
        cfg = {"model_type": "nemotron_h", "num_hidden_layers": 4, "hidden_size": 64, "num_attention_heads": 4,
               "vocab_size": 128, "mamba_num_heads": 4, "mamba_head_dim": 16, "ssm_state_size": 16,
               "hybrid_override_pattern": "M*"}  # fmt: skip
        with pytest.raises(InvalidInputError, match="hybrid_override_pattern has 2 blocks but num_hidden_layers is 4"):
            model_from_hf_config(cfg, name="bad")


class TestVllmStartUpLogOfHybrids:
    def test_qwen3_next_tp2_kv_cache_size_and_concurrency(self):
        """The same public vLLM 0.10.2 log (Qwen3-Next-80B-A3B-Instruct, TP 2, H200): 'GPU KV cache size: 973,760
        tokens' and 'Maximum concurrency for 262,144 tokens per request: 14.77x' from 'Available KV cache memory:
        44.59 GiB'; blocks = 44.59 GiB / (12 x 544 x 1,024 B) = 7,162, tokens = 7,162 // 4 x 544."""
        m = CAT.model("Qwen3-Next-80B-A3B")
        tokens, conc = vllm_kv_log(
            m, 44.59 * GiB, 12 * 1024, 262_144, block_size=16, max_num_batched_tokens=8192, gpus=2
        )
        assert (tokens, round(conc, 2)) == (973_760, 14.77)
