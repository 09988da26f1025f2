"""gpt-oss serving rows read as they ran (issue 21/22): the checkpoint's own precisions, the model the run served.

Sources: gpt-oss-120b config.json (https://huggingface.co/openai/gpt-oss-120b/blob/main/config.json: 36 layers,
hidden 2880, 64 query heads and 8 KV heads of 64, attention biases, one sink per head); vLLM's
``Mxfp4Config.get_quant_method`` (vllm/model_executor/layers/quantization/mxfp4.py, commit 007d50058a06): linear
layers unquantized, only the fused MoE experts in MXFP4; gpustack docs/performance-lab/gpt-oss-20b/h100.md and
gpt-oss-120b/h100.md at commit 47277d79 (the rows' ``source`` addresses).
"""

from __future__ import annotations

import pytest

from planner import api
from planner.accuracy.published import load_decode_rows, weight_precision_of
from planner.catalog import default_catalog


@pytest.fixture(scope="module")
def rows():
    return {r.record_id: r for r in load_decode_rows()}


def test_an_experts_only_cell_reads_as_the_checkpoint():
    assert weight_precision_of("mxfp4 experts (checkpoint)", "openai/gpt-oss-120b") is None
    assert weight_precision_of("mxfp4 experts (checkpoint format)", "openai/gpt-oss-120b") is None
    # a cell that states one precision for the whole model keeps it; a blank one falls back to the name's
    assert weight_precision_of("mxfp4", "openai/gpt-oss-120b") == "mxfp4"
    assert weight_precision_of("", "Qwen/Qwen3-8B-FP8") == "fp8"


def test_gpt_oss_rows_keep_attention_in_bf16(rows):
    """The rows' reading weighs the attention projections at 2 B, not MXFP4's 0.53125 B: the difference from an
    all-MXFP4 reading is exactly the attention's weights, biases and sinks x 1.46875 B (config.json shapes)."""
    row = rows["GPUSTACK-112"]
    assert row.weight_precision is None
    read = api.memory_plan("H100 SXM 80GB", "gpt-oss-120b", 410, gpus=1, weight_precision=row.weight_precision)
    all_fp4 = api.memory_plan("H100 SXM 80GB", "gpt-oss-120b", 410, gpus=1, weight_precision="mxfp4")
    q, kv, hidden = 64 * 64, 8 * 64, 2880
    per_layer = hidden * q * 2 + hidden * kv * 2 + (q + 2 * kv + hidden) + 64  # q/o, k/v, biases, sinks
    assert read.weight_bytes - all_fp4.weight_bytes == pytest.approx(36 * per_layer * (2 - 0.53125), abs=1)


def test_the_tuning_step_that_names_120b_served_20b(rows):
    """gpustack's gpt-oss-20b H100 document, step 5: its serving script names gpt-oss-120b, but the run sits in the
    20b document's tuning sequence on one H100 and matches step 4's 20b result (9,027 vs 9,064 output tok/s), three
    times what the 120b document's own one-H100 runs reach (2,874-2,943 tok/s)."""
    row = rows["GPUSTACK-147"]
    assert row.model == "openai/gpt-oss-20b"
    assert "gpt-oss-20b/h100.md" in row.source
    step4 = rows["GPUSTACK-146"]
    assert row.throughput_tokens_per_s == pytest.approx(step4.throughput_tokens_per_s, rel=0.01)
    one_h100_120b = [rows[k].throughput_tokens_per_s for k in ("GPUSTACK-112", "GPUSTACK-115", "GPUSTACK-119")]
    assert max(one_h100_120b) < row.throughput_tokens_per_s / 3


GiB = 2**30


@pytest.mark.parametrize(
    ("record", "model", "logged_gib"), [("XL05", "gpt-oss-120b", 64.38), ("XL04", "gpt-oss-20b", 13.47)]
)
def test_vllm_loads_mxfp4_experts_padded_to_256(record, model, logged_gib):
    """vLLM's MXFP4 MoE kernels pad the experts' hidden size 2,880 -> 3,072 (triton_kernels ``HopperMXValueLayout``
    aligns one dimension to 256; Marlin's ``create_weights`` rounds ``hidden_size`` up to 256): the experts take
    3,072 / 2,880 of their stored bytes. llm-d's H100 logs ('Model loading took', catalogs/reference/
    vllm_startup_extra.csv XL04/XL05, llm-d/llm-d-benchmark config_explorer/empirical-vllm-memory-results.md):
    64.38 and 13.47 GiB, within 0.3% of the rule; the checkpoint alone (60.71 / 12.81 GiB) is 4.9-5.7% short."""
    loaded = float(api.memory_plan("H100 SXM 80GB", model, 1024, gpus=1, engine="vllm").weight_bytes)
    stored = float(api.weight_bytes(model))
    assert loaded / GiB == pytest.approx(logged_gib, rel=0.003)
    assert stored / GiB < 0.96 * logged_gib
    # an engine without the rule loads the checkpoint as stored
    assert float(api.memory_plan("H100 SXM 80GB", model, 1024, gpus=1, engine="tensorrt-llm").weight_bytes) == stored


def test_the_padding_is_the_experts_hidden_alignment():
    """gpt-oss-120b: 114,661,785,600 routed expert weights (36 layers x 128 experts x 3 x 2,880^2, config.json) at
    0.53125 B and their 39,813,120 biases (36 x 128 x 3 x 2,880) at bf16, x (3,072 / 2,880 - 1): 4,066,246,656 B
    (4,060,938,240 before s199 counted the biases at the checkpoint's bf16, not packed with the matrices)."""
    loaded = float(api.memory_plan("A100 SXM 80GB", "gpt-oss-120b", 1024, gpus=1, engine="vllm").weight_bytes)
    stored = float(api.weight_bytes("gpt-oss-120b"))
    experts, biases = 36 * 128 * 3 * 2880 * 2880, 36 * 128 * 3 * 2880
    assert loaded - stored == pytest.approx((experts * 0.53125 + biases * 2) * (3072 / 2880 - 1), rel=1e-6)


class TestSlidingWindowPools:
    """What a request of a sliding-window model holds in the engine's cache, in the logged tokens (every layer's)."""

    def test_vllm_hybrid_pages_at_sharegpt_context(self):
        """gpt-oss-120b, 16-token blocks, a request at C = 313 (ShareGPT's mean prompt 215 + half its 196 output):
        ceil(313 / 16) = 20 pages per full group, ceil(128 / 16) + 1 = 9 per sliding group (``SlidingWindowSpec``), one
        group of each (18 layers): 18 x 16 x 29 / 36 = 232 logged tokens for 313 of context."""
        from planner.engines.architecture import model_facts
        from planner.model.memory import vllm_sliding_tokens_factor

        facts = model_facts(default_catalog().model("gpt-oss-120b"))
        assert vllm_sliding_tokens_factor(facts, [313], 16) == pytest.approx(36 * 313 / (18 * 16 * 29), rel=1e-12)
        dense = model_facts(default_catalog().model("Llama-3.1-8B"))
        assert vllm_sliding_tokens_factor(dense, [313], 16) == 1.0

    def test_the_same_pages_give_the_logged_concurrency(self):
        """DL22S-003 (vLLM 0.10.1.1, 4 x A100, dennislee22 log): 2,640,144 tokens, 'Maximum concurrency for 16,384
        tokens per request: 284.25x'. At a 2,048-token prefill chunk a request holds 1,024 full pages and
        ceil((127 + 2,048) / 16) + 1 = 137 sliding ones: 2,640,144 x 36 / (18 x 16 x 1,161) = 284.25."""
        from planner.engines.architecture import model_facts
        from planner.model.memory import padded_kv_layer_tokens

        facts = model_facts(default_catalog().model("gpt-oss-120b"))
        slots = float(padded_kv_layer_tokens(facts, 16384, 16, 2048))
        assert slots == 18 * 16 * (1024 + 137)
        assert 2_640_144 * 36 / slots == pytest.approx(284.25, abs=0.005)

    def test_sglang_full_pool(self):
        """SGLang splits the profiled tokens so the sliding pool holds --swa-full-tokens-ratio (0.8) x the full pool's
        (``set_num_token_hybrid``): gpt-oss's full pool is 36 / (0.8 x 18 + 18) = 1.111 x the profiled tokens."""
        from planner.engines.architecture import model_facts
        from planner.model.memory import SGLANG_SWA_FULL_TOKENS_RATIO, sglang_full_pool_factor

        assert SGLANG_SWA_FULL_TOKENS_RATIO == 0.8
        facts = model_facts(default_catalog().model("gpt-oss-20b"))
        assert sglang_full_pool_factor(facts) == pytest.approx(36 / 32.4, rel=1e-12)

    @pytest.mark.parametrize(
        ("rule", "family", "splits"),
        [
            ("sglang-0.5.1", "gpt-oss", False),  # 0.5.1 server_args.py line 2274; 0.5.3 line 781; 0.5.4.post2 line 970
            ("sglang-0.5.5", "gpt-oss", False),  # 0.5.5 server_args.py line 997
            ("sglang-0.5.10", "gpt-oss", True),  # 0.5.10 model_config.py is_hybrid_swa_model lists GptOssForCausalLM
            ("sglang-0.5.10", "Gemma 3", False),  # ... and no Gemma architecture
            ("sglang-0.5.5", "Gemma 2", False),  # 0.5.5 server_args.py lines 1017-1029
            ("sglang-0.5.20", "gpt-oss", True),  # not read for this: the split pools as before
        ],
    )
    def test_which_sglang_releases_split_the_sliding_pool(self, rule, family, splits):
        """SGLang 0.5.1-0.5.9 set ``disable_hybrid_swa_memory`` for GptOssForCausalLM whatever the backend (and for
        Gemma 2/3), so one pool holds every layer's tokens; 0.5.10 splits only ``is_hybrid_swa_model``'s architectures."""
        from planner.engines.sglang import sglang_splits_sliding_pool

        assert sglang_splits_sliding_pool(rule, family) is splits

    @pytest.mark.parametrize(
        ("engine", "factor"),
        [
            ("vllm", 36 * 313 / (18 * 16 * 29)),
            ("sglang", 36 / 32.4),
            ("sglang-0.5.1", 1.0),
            ("sglang-0.5.10", 36 / 32.4),
        ],
    )
    def test_the_simulated_cache_holds_contexts(self, engine, factor):
        """The serving simulation's scheduler gets the logged tokens x the engine's factor (one run of 215 + 196)."""
        from planner.serving.benchmark import serving_setups

        opts = dict(engine=engine, catalog=default_catalog(), calibration=None, errors="coerce")
        prec = dict(weight_precision=None, kv_precision=None)
        scheduler = "sglang" if engine.startswith("sglang") else engine
        _, setups, _ = serving_setups(
            "H100 SXM 80GB", "gpt-oss-20b", 215.0, 196.0, 0.0, 1000.0, None, None, scheduler, None, 1.0, prec, opts,
        )  # fmt: skip
        logged = float(api.memory_plan("H100 SXM 80GB", "gpt-oss-20b", 411, gpus=1, engine=engine).kv_cache_tokens)
        assert setups[0].scheduler.kv_tokens == pytest.approx(logged * factor, rel=1e-9)
