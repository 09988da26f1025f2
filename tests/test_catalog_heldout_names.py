"""Catalog entries added so the held-out rows of issue 10 get a prediction: each checked against its cited source.

GH200 120GB (TensorRT-LLM v0.13.0 perf overview, TRT013-*), GLM-4.6 (GPUStack performance lab, GPUSTACK-07x..09x)
and the models of the llm-d-planner vLLM start-up runs (LP19-*). Expected values come from the sources quoted in
catalogs/gpus.toml and catalogs/models.toml, computed by hand here, not read back from the catalog.
"""

from __future__ import annotations

import math

import pytest

from planner import api
from planner.accuracy import predict as acc
from planner.accuracy.published import checkpoint_precision, resolve_gpu_name, resolve_model_name
from planner.catalog import default_catalog
from planner.engines.architecture import param_breakdown
from planner.errors import MissingDataError

CAT = default_catalog()
GiB = 2**30
MiB = 2**20


class TestGH200:
    @pytest.mark.parametrize("printed", ["GH200 120GB", "NVIDIA GH200 120GB", "NVIDIA GH200 480GB", "GH200"])
    def test_published_and_nvidia_smi_names_resolve_to_the_96_gb_hbm3_part(self, printed):
        """nvidia-smi prints 'NVIDIA GH200 120GB' and 'NVIDIA GH200 480GB' with 97871 MiB on both (the number is
        the Grace CPU's LPDDR5X, 120 or 480 GB); the TensorRT-LLM v0.13.0 table heads its column 'GH200 120GB'."""
        assert resolve_gpu_name(printed, CAT) == "GH200 96GB"

    def test_memory_is_the_96_gb_hbm3_stack_nvidia_smi_shows(self):
        """Datasheet 'High-bandwidth memory (HBM) size | 96GB HBM3 | 144GB HBM3e' (first variant); nvidia-smi
        97871 MiB = 96 GiB less a 433 MiB reservation, the same total as the 96 GB H20 (nvtrust #128)."""
        g = CAT.gpu("GH200 120GB")
        assert g.memory_bytes == 96 * GiB and g.memory_type == "HBM3"
        assert 0 < g.memory_bytes - 97871 * MiB == 433 * MiB
        assert g.memory_bytes == CAT.gpu("H20").memory_bytes

    def test_bandwidth_and_dense_peaks_are_the_datasheet_figures(self):
        """Datasheet 'Memory bandwidth | Up to 4TB/s' (HBM3); 'FP8 Tensor Core | 3,958 teraFLOPS* | 1,979',
        'BFLOAT16 Tensor Core | 1,979 teraFLOPS* | 990', 'TF32 | 989* | 494', 'FP32 | 67' (* with sparsity)."""
        g = CAT.gpu("GH200 96GB")
        assert g.hbm_bandwidth_bytes_per_s == 4.0e12
        assert g.peak_flop_per_s["fp8"] == 3958e12 / 2 == 1979e12  # dense = sparse / 2
        assert g.peak_flop_per_s["bf16"] == 990e12 and g.peak_flop_per_s["fp16"] == 990e12
        assert g.peak_flop_per_s["tf32"] == 494e12 and g.peak_flop_per_s["fp32"] == 67e12

    def test_lambda_and_coreweave_price_it(self):
        """Trial 17 F3 (was 'no dated public price'): Lambda '1x NVIDIA GH200 $2.29' (api-evangelist/lambda-labs
        plans/lambda-labs-plans-pricing.yml, 2026-09-20) and CoreWeave 'NVIDIA GH200 $6.50' for 1 GPU
        (api-evangelist/coreweave plans/coreweave-plans-pricing.yml, 2026-09-20): median (2.29 + 6.50) / 2 = $4.395."""
        g = CAT.gpu("GH200 96GB")
        assert g.price("on-demand").usd_per_gpu_hour == pytest.approx(4.395) and "no price is given" not in g.notes


class TestGLM46:
    def test_fp8_checkpoint_resolves_to_the_bf16_entry_with_fp8_weights(self):
        """GPUSTACK rows name zai-org/GLM-4.6-FP8 (the same model in FP8, per xorbitsai/inference's GLM-4.6 page)."""
        assert resolve_model_name("zai-org/GLM-4.6-FP8", CAT) == "GLM-4.6"
        assert checkpoint_precision("zai-org/GLM-4.6-FP8") == "fp8"
        assert resolve_model_name("zai-org/GLM-4.6", CAT) == "GLM-4.6"

    def test_kv_bytes_per_token_from_config_values(self):
        """config.json: num_hidden_layers 92, num_key_value_heads 8, head_dim 128; bf16 K and V:
        2 x 8 x 128 x 92 x 2 bytes = 376,832 per token."""
        assert float(api.kv_bytes_per_token("zai-org/GLM-4.6", kv_precision="bf16")) == 2 * 8 * 128 * 92 * 2

    def test_context_is_longer_than_glm_4_5(self):
        """max_position_embeddings 202752 (xorbitsai/inference: 'Context Length: 202752'); GLM-4.5: 131072."""
        assert CAT.model("GLM-4.6").max_context == 202752
        assert CAT.model("GLM-4.5").max_context == 131072

    def test_safetensors_total_is_glm_4_5_less_the_mtp_layer_copies_of_embedding_and_head(self):
        """HF totals: GLM-4.6 356,785,898,816; GLM-4.5 358,337,791,296; the gap is 2 x 151552 x 5120."""
        assert 358_337_791_296 - 356_785_898_816 == 2 * 151552 * 5120
        assert param_breakdown(CAT.model("GLM-4.6")).total == 356_785_898_816


class TestStartupLogModels:
    @pytest.mark.parametrize(
        "published, entry",
        [
            ("codellama/CodeLlama-7b-hf", "CodeLlama-7B"),
            ("deepseek-ai/DeepSeek-V2-Lite-Chat", "DeepSeek-V2-Lite"),
            ("google/gemma-2-2b-it", "Gemma-2-2B"),
            ("ibm-granite/granite-3.1-2b-instruct", "Granite-3.1-2B"),
            ("ibm-granite/granite-3.1-8b-instruct", "Granite-3.3-8B"),  # vocab 49155 vs 49159, shape otherwise equal
            ("ibm-granite/granite-3.3-8b-instruct", "Granite-3.3-8B"),
        ],
    )
    def test_names_as_the_runs_print_them_resolve(self, published, entry):
        assert resolve_model_name(published, CAT) == entry

    @pytest.mark.parametrize(
        "model, per_token",
        [
            # config.json values quoted in catalogs/models.toml; 2 bytes per value (bf16)
            ("CodeLlama-7B", 2 * 32 * 128 * 32 * 2),  # K+V x 32 KV heads x 128 x 32 layers
            ("Gemma-2-2B", 2 * 4 * 256 * 26 * 2),  # K+V x 4 KV heads x 256 x 26 layers (all cache short contexts)
            ("Granite-3.1-2B", 2 * 8 * 64 * 40 * 2),  # K+V x 8 KV heads x 64 (2048 / 32) x 40 layers
            ("Granite-3.3-8B", 2 * 8 * 128 * 40 * 2),
            ("DeepSeek-V2-Lite", (512 + 64) * 27 * 2),  # MLA latent: kv_lora_rank 512 + qk_rope_head_dim 64, 27 layers
        ],
    )
    def test_kv_bytes_per_token_by_hand(self, model, per_token):
        assert float(api.kv_bytes_per_token(model, kv_precision="bf16")) == per_token

    @pytest.mark.parametrize(
        "model, total",
        [  # published totals (HF safetensors; sources in catalogs/models.toml)
            ("CodeLlama-7B", 6_738_546_688),
            ("Gemma-2-2B", 2_614_341_888),
            ("Granite-3.1-2B", 2_533_531_648),
            ("Granite-3.3-8B", 8_170_864_640),
            ("DeepSeek-V2-Lite", 15_706_484_224),
        ],
    )
    def test_shapes_reproduce_the_published_parameter_count_exactly(self, model, total):
        assert param_breakdown(CAT.model(model)).total == total

    @pytest.mark.parametrize("record", ["LP19-001", "LP19-002", "LP19-006", "LP19-011", "LP19-012", "LP19-013"])
    def test_vllm_start_up_kv_tokens_within_two_percent(self, record):
        """The KV cache tokens vLLM printed on one H100 (llm-d-planner runs, startup_memory_public.csv), from
        the catalog entries' shapes: within 2% (measured 0.3-1.3%)."""
        rows = {
            r.record_id: r for p in acc.reference_dir().glob("startup_memory_*.csv") for r in acc.load_startup_rows(p)
        }
        row = rows[record]
        pred = acc.predict_startup(row, catalog=CAT)
        assert not math.isnan(row.kv_cache_tokens)
        assert pred.kv_cache_tokens == pytest.approx(row.kv_cache_tokens, rel=0.02)

    @pytest.mark.parametrize("published", ["ibm-granite/granite-vision-3.3-2b", "moonshotai/Kimi-VL-A3B-Instruct"])
    def test_vision_language_models_are_refused_with_a_reason(self, published):
        with pytest.raises(MissingDataError, match="vision-language model"):
            resolve_model_name(published, CAT)


def test_glm_4_5_air_section_3_rows_are_read_as_fp8():
    """GPUStack's GLM-4.5-Air H100 page: its Conclusion gives the section-3 TP4+EP4 result (Total TPS 12411.25) as
    the 'Optimized' figure served from zai-org/GLM-4.5-Air-FP8, so the TP2 rows hold fp8 weights (bf16, 221 GB,
    would not fit on 2 x 80 GB) and get a prediction."""
    rows = {r.record_id: r for r in acc.load_decode_rows()}
    for rid in ("GPUSTACK-062", "GPUSTACK-063"):
        assert rows[rid].weight_precision == "fp8"
        assert acc.why_not_predicted(rows[rid], catalog=CAT) == ""
