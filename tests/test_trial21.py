"""Trial 21 (an ML engineer checking the formulas): each finding's mend against the trial's hand figures or the
engine source it cites."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

import planner.api as api
from planner import model as m
from planner.cli import main
from planner.errors import PlannerError
from planner.export.glossary import GLOSSARY
from planner.report import plan


class TestCostWithPrompts:
    """F1: plan's cost per million output tokens is decode only; a second figure adds each request's prefill."""

    @pytest.mark.parametrize(
        "model, context, prompt, output, gpus, decode_only, with_prompts",
        [  # the trial's hand check: g x 3.595 / 3600 x (output / throughput + TTFT(prompt)) / output x 1e6
            ("llama3.1-70b", 1200, 800, 400, 4, 0.491, 1.164),
            ("llama2-70b", 4096, 3696, 400, 4, 1.201, 3.962),
            ("llama3.1-8b", 8192, 7680, 512, 1, 0.518, 0.856),
        ],
    )
    def test_plan_prices_each_requests_prefill_as_the_hand_check_does(
        self, model, context, prompt, output, gpus, decode_only, with_prompts
    ):
        """The figure with prompts equals the trial's hand figures (to its three digits)."""
        p = plan("H100", model, context, gpus=gpus, prompt_tokens=prompt, output_tokens=output)
        assert p.cost_per_mtok_usd == pytest.approx(decode_only, abs=6e-4)
        assert p.cost_with_prompts_usd == pytest.approx(with_prompts, abs=6e-4)
        busy_s = output / float(p.at_batch.throughput_tokens_per_s) + float(api.ttft("H100", model, prompt, gpus=gpus))
        assert p.cost_with_prompts_usd == pytest.approx(gpus * 3.595 / 3600 * busy_s / output * 1e6, rel=1e-12)
        d = p.to_dict()
        assert d["cost_per_million_output_tokens_with_prompts_usd"] == p.cost_with_prompts_usd
        assert d["request_tokens"] == {"prompt": prompt, "output": output}
        assert "prompt processing not included" in d["cost_per_million_output_tokens_basis"]

    def test_the_model_function_is_the_decode_cost_plus_the_prefill_share(self):
        """With no prefill it is the decode-only cost; each prefill second adds g x price / 3600 / output x 1e6."""
        decode = m.cost_per_million_tokens_usd(3.595, 4, 8139.3)
        assert m.cost_per_million_output_tokens_with_prompts_usd(3.595, 4, 400, 8139.3, 0.0) == pytest.approx(decode)
        extra = m.cost_per_million_output_tokens_with_prompts_usd(3.595, 4, 400, 8139.3, 1.0) - decode
        assert extra == pytest.approx(4 * 3.595 / 3600 / 400 * 1e6)

    def test_peak_fleet_reads_the_same_request_time(self):
        """api.peak_fleet's rate per replica is 1 / request_group_time_s: one rule for both."""
        f = api.peak_fleet("H100", "llama3.1-70b", 1200, gpus=4, peak_requests_per_s=10, output_tokens=400)
        p = plan("H100", "llama3.1-70b", 1200, gpus=4)
        busy_s = m.request_group_time_s(400, p.at_batch.throughput_tokens_per_s, p.ttft_s)
        assert f.rate_per_replica_s == pytest.approx(1 / float(busy_s), rel=1e-12)

    def test_plan_text_says_decode_only_and_prints_the_line_with_prompts(self):
        """The cost line names its basis; --prompt-tokens and --output-tokens work without --rate."""
        args = ["plan", "--gpu", "H100", "--model", "llama3.1-70b", "--context", "1200", "--gpus", "4"]
        out = CliRunner().invoke(main, args).output
        assert "$0.49 per million output tokens, decode only, 100% busy; prompt processing not included" in out
        assert "all of the GPU time" not in out
        result = CliRunner().invoke(main, [*args, "--prompt-tokens", "800", "--output-tokens", "400"])
        assert result.exit_code == 0, result.output
        assert (
            "$1.16 per million output tokens, 100% busy: each request's prefill of 800 prompt tokens" in result.output
        )
        one = CliRunner().invoke(main, [*args, "--prompt-tokens", "800"])
        assert one.exit_code == 2 and "give both" in one.output

    def test_a_request_longer_than_the_context_is_refused(self):
        """prompt + output above the context is one clear error."""
        with pytest.raises(PlannerError, match="more than the context 1,200"):
            plan("H100", "llama3.1-70b", 1200, gpus=4, prompt_tokens=1000, output_tokens=400)

    def test_the_glossary_no_longer_calls_plans_figure_all_in(self):
        """The review's glossary says plan's figure is decode only and lower, not 'all-in, higher'."""
        words = dict(GLOSSARY)["$ per M input / output tokens"]
        assert "all-in" not in words and "decode only" in words and "prompt processing not included" in words


class TestFp8DsMla:
    """F2: a DSA model's fp8 cache under vLLM is fp8_ds_mla, 656 B a token per layer (vllm/v1/kv_cache_interface.py
    ``MLAAttentionSpec.real_page_size_bytes`` = block_size x 656, vllm-project/vllm 001cabc1be16), + 132 B indexer."""

    def test_deepseek_v32_and_glm5_fp8_bytes_per_token_are_vllms(self):
        """61 x (656 + 132) = 48,068 B and 78 x 788 = 61,464 B, not 61 x 708 and 78 x 708."""
        assert api.kv_bytes_per_token("deepseek-v3.2", kv_precision="fp8") == 61 * (656 + 132)
        assert api.kv_bytes_per_token("glm-5", kv_precision="fp8") == 78 * (656 + 132)

    def test_the_bf16_cache_and_non_dsa_mla_are_unchanged(self):
        """bf16: 61 x (576 x 2 + 132) = 78,324 B; DeepSeek-V3's fp8 MLA cache stays 61 x 576 = 35,136 B."""
        assert api.kv_bytes_per_token("deepseek-v3.2") == 61 * (576 * 2 + 132)
        assert api.kv_bytes_per_token("deepseek-v3", kv_precision="fp8") == 61 * 576

    def test_the_max_batch_is_the_trials_hand_figure(self):
        """8 x H200 at 8K with fp8: budget / (48,068 x 8,192) = 111 sequences, not 125 (the trial's hand figure was
        112 at 139.56 GiB seen per GPU; H200's engine-visible memory is 139.80 GiB since s207, public torch logs:
        929,696 KV tokens / 8,192 = 113.5 before trial 31 F11; since, each tensor-parallel rank also holds the fused
        q_a + kv_a projection whole (vLLM ``disable_tp=True``): 61 x 7,168 x 2,112 = 923,467,776 fp8 bytes x (1 - 1/8)
        = 808,034,304 B more per GPU, 912,880 KV tokens / 8,192 = 111.4)."""
        p = api.memory_plan("H200", "deepseek-v3.2", 8192, gpus=8, kv_precision="fp8")
        assert p.kv_bytes_per_token_per_gpu == 48_068  # the latent whole on every GPU, as vLLM holds it
        assert p.replicated_weight_bytes_per_gpu == 61 * 7168 * 2112 * 7 // 8
        assert int(p.max_batch) == 111 and p.kv_cache_tokens == 912_880

    def test_other_engines_keep_the_plain_layout(self):
        """SGLang and the 'ideal' engine are not read as fp8_ds_mla: 576 + 132 per layer."""
        from planner.catalog import default_catalog
        from planner.catalog.resolve import kv_layout_extra_bytes
        from planner.engines.profiles import engine_profile

        cat = default_catalog()
        mdl, fp8 = cat.model("deepseek-v3.2"), cat.precision("fp8")
        assert kv_layout_extra_bytes(mdl, fp8, engine_profile("vllm")) == 80.0
        assert kv_layout_extra_bytes(mdl, fp8, engine_profile("vllm==0.11.0")) == 80.0
        assert kv_layout_extra_bytes(mdl, fp8, engine_profile("sglang")) == 0.0
        assert kv_layout_extra_bytes(mdl, fp8, engine_profile("ideal")) == 0.0

    def test_a_plan_pinned_to_vllm_0_11_0_says_its_default_cache_is_fp8(self):
        """vLLM 0.11.0 mapped 'auto' to fp8_ds_mla (pull request 25988); 0.11.1 and later keep bf16 (27121)."""
        old = plan("H200", "deepseek-v3.2", 8192, gpus=8, engine="vllm==0.11.0")
        assert any("pull request 27121" in w and "-k fp8" in w for w in old.warnings)
        assert old.kv_precision == "bf16"
        assert not any("27121" in w for w in plan("H200", "deepseek-v3.2", 8192, gpus=8).warnings)
        given = plan("H200", "deepseek-v3.2", 8192, gpus=8, engine="vllm==0.11.0", kv_precision="fp8")
        assert not any("27121" in w for w in given.warnings)


class TestRidgeNoteFor4BitFormats:
    """F3: RIDGE's note no longer calls NVFP4/MXFP4 weight-only while saying the math runs in fp4."""

    @pytest.mark.parametrize("precision", ["nvfp4", "mxfp4"])
    def test_blackwell_fp4_is_w4a4_not_weight_only(self, precision):
        """B200: 9 PFLOP/s dense fp4 / 8 TB/s = 1,125 FLOP/B, said to be fp4 math (W4A4)."""
        from planner.excel import functions as xf

        assert xf.RIDGE("B200", precision) == pytest.approx(1125.0)
        why = xf.PLANNER_WHY("RIDGE", "B200", precision)
        assert "weight-only" not in why and "W4A4" in why

    def test_before_blackwell_it_is_weight_only_in_bf16(self):
        """H100 has no fp4 tensor cores: its bf16 ridge (989.4 / 3.35 = 295.3), the format weight-only there."""
        from planner.excel import functions as xf

        assert xf.RIDGE("H100", "nvfp4") == pytest.approx(295.34, abs=0.01)
        why = xf.PLANNER_WHY("RIDGE", "H100", "nvfp4")
        assert "ridge of its bf16 math (weight-only there" in why
        assert "int4 is a weight-only format: the matrix math runs in fp16" in xf.PLANNER_WHY("RIDGE", "H100", "int4")


class TestDefaultKvPrecisionByName:
    """F6: ``planner.api.default_kv_precision`` takes a model name as every other api function does."""

    def test_a_name_resolves_through_the_catalog(self):
        """README: Llama-2-70B plans 'KV fp16'; an fp8 checkpoint (DeepSeek-V3, V3.2) caches bf16 (docs/model.md)."""
        assert api.default_kv_precision("llama2-70b") == "fp16"
        assert api.default_kv_precision("deepseek-v3.2") == "bf16"
        assert api.default_kv_precision("DeepSeek-V3") == "bf16"
        from planner.catalog import default_catalog

        assert api.default_kv_precision(default_catalog().model("llama2-70b")) == "fp16"  # a Model as before

    def test_an_unknown_name_or_a_wrong_kind_is_one_clear_error(self):
        """An unknown name gets the catalog's 'did you mean'; a number is refused by kind."""
        with pytest.raises(PlannerError, match="unknown model 'llama2-7'; did you mean"):
            api.default_kv_precision("llama2-7")
        with pytest.raises(PlannerError, match="model must be a model name"):
            api.default_kv_precision(3)


class TestPriceShownAsComputed:
    """F7: the price printed is the one the cost is computed with; the list dates a median by its quotes' range."""

    def test_plan_prints_the_median_it_computes_with(self):
        """H100's on-demand median of 2.69, 3.20, 3.99, 6.155 is 3.595: printed so, and $20.48 re-derives from it."""
        out = CliRunner().invoke(main, ["plan", "--gpu", "H100", "--model", "llama2-70b", "--context", "8192"]).output
        assert "($3.595/GPU-hour: on-demand, median of 4 quotes" in out
        p = plan("H100", "llama2-70b", 8192)
        assert p.price_usd_per_gpu_hour == 3.595
        assert 2 * 3.595 / 3600 / float(p.at_batch.throughput_tokens_per_s) * 1e6 == pytest.approx(20.4785, abs=1e-4)

    def test_a_given_price_keeps_its_cents(self):
        """--price 9 prints $9.00."""
        args = ["plan", "--gpu", "H100", "--model", "llama2-70b", "--context", "8192", "--price", "9"]
        assert "($9.00/GPU-hour)" in CliRunner().invoke(main, args).output

    def test_catalog_list_gives_the_quotes_date_range(self):
        """H100's four quotes are dated 2026-05-22 (RunPod) to 2026-09-20 (Lambda, CoreWeave)."""
        out = CliRunner().invoke(main, ["catalog", "list", "gpus"]).output
        assert "$3.595/h on-demand 2026-05-22 to 2026-09-20 (median of 4)" in out


class TestReleaseMemoryRuleNamed:
    """F8: where vLLM's release memory rules disagree by a lot, plan names the rule it used and the other's batch."""

    def test_gpt_oss_120b_on_one_h100_names_both_rules(self):
        """The trial's table: 13 sequences at 16,000 tokens under 'vllm' (0.19 fit), 5 under 'vllm-fullsort'."""
        p = plan("H100", "gpt-oss-120b", 16000, gpus=1, memory_utilization=0.95)
        assert p.max_batch == 13
        note = next(w for w in p.warnings if w.startswith("the KV budget depends on the vLLM release"))
        assert "holds 13 sequences" in note and "vllm-fullsort) holds 5" in note and "201,088-entry" in note
        assert int(api.memory_plan("H100", "gpt-oss-120b", 16000, gpus=1, memory_utilization=0.95,
                                   engine="vllm-fullsort").max_batch) == 5  # fmt: skip

    def test_a_pinned_release_or_a_small_vocabulary_gets_no_note(self):
        """A pinned release plans that release's rule; Llama-2-70B's 32,000-entry vocabulary moves no batch by 25%."""
        pinned = plan("H100", "gpt-oss-120b", 16000, gpus=1, memory_utilization=0.95, engine="vllm==0.19.0")
        assert not any("depends on the vLLM release" in w for w in pinned.warnings)
        assert not any("depends on the vLLM release" in w for w in plan("H100", "llama2-70b", 8192).warnings)


def test_plan_under_load_keeps_the_request_when_it_picks_another_group():
    """F1 under --rate: the fleet's group re-plans, and the cost with prompt processing is still at 800 + 400."""
    args = ["plan", "--gpu", "H100", "--model", "llama3.1-70b", "--context", "4096", "-w", "fp8", "--rate", "60",
            "--prompt-tokens", "800", "--output-tokens", "400", "--ttft-target", "1.5", "--tpot-target", "0.05"]  # fmt: skip
    out = CliRunner().invoke(main, args).output
    assert "each request's prefill of 800 prompt tokens added to its share of the decode steps for 400" in out
