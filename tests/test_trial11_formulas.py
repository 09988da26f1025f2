"""Trial 11's formula audit (findings F1-F6, F8), each expected value derived here by hand from config.json values.

Sources of the numbers:
- Llama-3.2-1B: meta-llama/Llama-3.2-1B config.json (hidden_size 2048, num_hidden_layers 16, num_attention_heads 32,
  num_key_value_heads 8, head_dim 64, intermediate_size 8192, vocab_size 128256, tie_word_embeddings true).
- Llama-2-70B: seed article 000 / catalogs/reference/seed_cases.toml (68,976,648,192 params, 137,953,296,384 B at
  fp16; vocab 32,000 x hidden 8,192; KV 327,680 B per token).
- gpt-oss-120b: openai/gpt-oss-120b config.json (num_hidden_layers 36, num_local_experts 128, hidden_size 2880,
  intermediate_size 2880) and the HF model API's safetensors total, 116,829,156,672 params; the checkpoint stores the
  experts' ``*_blocks`` / ``*_scales`` as U8 (MXFP4: 4 bits + one E8M0 scale per 32 = 0.53125 B) and their
  ``gate_up_proj_bias`` / ``down_proj_bias`` as BF16.
- Gemma-3-27B: google/gemma-3-27b-it config.json text_config (num_hidden_layers 62, num_key_value_heads 16,
  head_dim 128, sliding_window 1024, sliding_window_pattern 6: 5 local layers to 1 global, 10 global of 62).
- H100 SXM: datasheet 989.4 TFLOPS dense bf16, 3.35 TB/s.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

import planner
from planner import timing
from planner.cli.plan import render_plan
from planner.report import plan

ROOT = Path(__file__).parents[1]

# Llama-3.2-1B (config.json, module docstring)
H, LAYERS, HEADS, KV_HEADS, HEAD_DIM, MLP, VOCAB = 2048, 16, 32, 8, 64, 8192, 128256
DECODER_LINEAR = LAYERS * (
    H * HEADS * HEAD_DIM + 2 * H * KV_HEADS * HEAD_DIM + HEADS * HEAD_DIM * H + 3 * H * MLP
)  # q, k, v, o, gate, up, down: 973,078,528
NORMS = LAYERS * 2 * H + H  # two RMSNorms per layer + the final one: 2 FLOP per weight per token as well
HEAD = VOCAB * H  # tied: the embedding doubles as the output head, 262,668,288
H100_BF16_FLOP_PER_S = 989.4e12


def llama32_1b_prefill_flop(tokens: int, head_rows: int) -> float:
    """2 x (decoder linear + norms) x L + 2 x head x rows it runs on + causal attention 4 x heads x head dim x
    layers x L x L / 2."""
    attention = 4 * HEADS * HEAD_DIM * LAYERS * tokens * tokens / 2
    return 2.0 * (DECODER_LINEAR + NORMS) * tokens + 2.0 * HEAD * head_rows + attention


class TestPrefillHeadOnce:
    """F1: a prefill runs the output head on each prompt's last token, where the engine computes logits."""

    def test_hand_sums_match_the_config(self):
        """The hand counts are the ones the trial derived: 973,078,528 decoder params, a 262,668,288 head."""
        assert DECODER_LINEAR == 973_078_528
        assert HEAD == 262_668_288

    def test_flop_counts_the_head_once_per_prompt(self):
        """Llama-3.2-1B at 2,048 tokens: 4.2614e12 FLOP, the head once (planner gave 5.3368e12, the head x 2,048)."""
        flop = timing.prefill("H100", "llama3.2-1b", 2048, engine="ideal", gpus=1).flop
        assert flop == pytest.approx(llama32_1b_prefill_flop(2048, 1), rel=1e-12)
        assert flop < llama32_1b_prefill_flop(2048, 2048) / 1.2  # the old count was 25% higher

    def test_a_batch_of_prompts_counts_the_head_once_each(self):
        """Four prompts together: four heads, so exactly 4 x one prompt's FLOPs."""
        four = timing.prefill("H100", "llama3.2-1b", 2048, engine="ideal", gpus=1, batch=4).flop
        assert four == pytest.approx(4 * llama32_1b_prefill_flop(2048, 1), rel=1e-12)

    def test_ideal_ttft_is_the_flops_at_peak(self):
        """engine="ideal" is FLOP-bound at 2,048 tokens: TTFT = FLOPs / 989.4 TFLOP/s, about 4.31 ms (was 5.39)."""
        ttft = timing.prefill("H100", "llama3.2-1b", 2048, engine="ideal", gpus=1).ttft_s
        assert ttft == pytest.approx(llama32_1b_prefill_flop(2048, 1) / H100_BF16_FLOP_PER_S, rel=1e-3)

    def test_llama2_70b_untied_head(self):
        """Llama-2-70B at 2,048 tokens: 68,976,648,192 params less the input embedding (a lookup) and the untied head
        (each 32,000 x 8,192) on every token, the head once, + causal attention over 64 heads x 128: 2.8588e14."""
        vocab = 32_000 * 8192
        per_token = 68_976_648_192 - 2 * vocab  # decoder layers and norms
        attention = 4 * 64 * 128 * 80 * 2048 * 2048 / 2
        flop = timing.prefill("H100", "llama2-70b", 2048, engine="ideal", gpus=2).flop
        assert flop == pytest.approx(2.0 * per_token * 2048 + 2.0 * vocab + attention, rel=1e-12)

    def test_decode_still_runs_the_head_on_every_sequence(self):
        """Decode samples every sequence: batch 8 is 8 x (2 x params per token) + attention, the head included."""
        one = timing.decode_step("H100", "llama3.2-1b", 16, engine="ideal", gpus=1, batch=1).flop
        attention_one = 4 * HEADS * HEAD_DIM * LAYERS * 16  # decode: 4 x heads x head dim per cached token per layer
        assert one == pytest.approx(2.0 * (DECODER_LINEAR + NORMS + HEAD) + attention_one, rel=1e-9)


class TestGptOssExpertBiases:
    """F4: gpt-oss's expert biases are BF16 in the checkpoint, not MXFP4."""

    def test_weights_as_stored(self):
        """114,661,785,600 expert-matrix params x 0.53125 + the other 2,167,371,072 (biases included) x 2 B."""
        matrices = 36 * 128 * (2880 * 2 * 2880 + 2880 * 2880)  # gate_up [5,760 x 2,880] and down per expert
        assert matrices == 114_661_785_600
        total = 116_829_156_672  # HF safetensors total (catalog published_params_source)
        assert planner.weight_bytes("gpt-oss-120b") == pytest.approx(
            matrices * 0.53125 + (total - matrices) * 2, rel=1e-12
        )  # 65,248,815,744 B (was 65,190,340,224: the biases at MXFP4's width)


GEMMA_LAYER_TOKEN_BYTES = 16 * 128 * 2 * 2  # KV heads x head dim x (K, V) x bf16: 8,192 B


class TestGemmaPaddedKv:
    """F2: Gemma 3's KV per sequence under vLLM is padded, and plan says so."""

    def test_kv_bytes_is_the_layers_alone(self):
        """10 global layers x 8,192 tokens + 52 local x the 1,024 window: 1,107,296,256 B."""
        assert planner.kv_bytes("gemma-3-27b", 8192) == GEMMA_LAYER_TOKEN_BYTES * (10 * 8192 + 52 * 1024)

    def test_plan_names_the_padding_and_the_unpadded_figure(self):
        """vLLM: 10 + 60 layer slots (6 local groups of 10), each local group one block more (1,040 tokens)."""
        p = plan("H100", "gemma-3-27b", 8192)
        padded = GEMMA_LAYER_TOKEN_BYTES * (10 * 8192 + 60 * 1040)  # 1,182,269,440
        assert float(p.memory.kv_bytes_per_sequence) == pytest.approx(padded, rel=1e-12)
        text = render_plan(p)
        line = next(x for x in text.splitlines() if x.startswith("KV cache per sequence"))
        assert "1.18 GB" in line and "pad 62 layers to 70" in line and "what KV_BYTES gives: 1.11 GB" in line
        tokens = next(x for x in text.splitlines() if x.startswith("KV cache tokens"))
        assert "on the 62 layers alone" in tokens


class TestRangeAtTheRooflineFloor:
    """F8: no end of a printed range is below the datasheet roofline floor."""

    def test_ideal_tpot_range_starts_at_the_floor(self):
        """Llama-2-70B on 2 x H100 at batch 1, 8K, fp16 KV: (weights - input embedding + KV) / (2 x 3.35 TB/s)."""
        floor = (137_953_296_384 - 32_000 * 8192 * 2 + 2_684_354_560) / (2 * 3.35e12)  # 20.91 ms
        p = plan("H100", "llama2-70b", 8192, engine="ideal", memory_utilization=1, gpus=2, kv_precision="fp16")
        low, high = p.tpot_range(p.at_one)
        assert low >= floor * (1 - 1e-6)
        assert low <= float(p.at_one.step_s)
        assert high > low
        assert "the datasheet roofline floor" in render_plan(p)

    def test_a_range_above_the_floor_is_left_as_it_was(self):
        """Under vLLM the fitted range's low end stays above the floor, so it is the residual's."""
        p = plan("H100", "llama2-70b", 8192, gpus=2, kv_precision="fp16")
        step = float(p.at_one.step_s)
        assert p.tpot_range(p.at_one) == p.time_range(step)


class TestQuantizationOverheadWords:
    """F3, F5: the precisions catalog states the uncounted scale and zero-point overheads correctly."""

    notes = {
        p["name"]: p.get("notes", "")
        for p in tomllib.loads((ROOT / "catalogs" / "precisions.toml").read_text())["precision"]
    }

    def test_int4_zero_points(self):
        """4 bits per group of 128 = 0.00390625 B per weight: 0.76% of 0.515625 B (fp16 scale per 128 included)."""
        assert f"{0.5 / 128 / (0.5 + 2 / 128):.2%}" == "0.76%"
        assert "0.76%" in self.notes["int4"] and "0.4%" not in self.notes["int4"]

    def test_fp8_block_scales(self):
        """One fp32 scale per 128 x 128 block: 4 / 16,384 = 0.024% of 1 B per weight."""
        assert f"{4 / (128 * 128):.3%}" == "0.024%"
        assert "0.024%" in self.notes["fp8"] and "under 0.01%" not in self.notes["fp8"]


class TestH200VisibleMemoryDocs:
    """F6: docs/accuracy.md states the H200 torch-visible total the catalog holds (trial 27 F8: 139.80 GiB, torch's
    OOM message on 8x H200 in prime-rl's benchmark results; before, no address was found and the 98.98% fallback,
    139.56 GiB, was used)."""

    def test_docs_agree_with_the_catalog(self):
        gpus = tomllib.loads((ROOT / "catalogs" / "gpus.toml").read_text())["gpu"]
        h200 = next(g for g in gpus if g["name"] == "H200 SXM 141GB")
        assert f"{h200['engine_visible_memory_bytes'] / 2**30:.2f}" == "139.80"
        text = (ROOT / "docs" / "accuracy.md").read_text()
        assert "H200 139.80 GiB" in text
        assert "139.56 GiB" not in text
