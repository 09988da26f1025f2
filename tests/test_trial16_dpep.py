"""A sixteenth user trial's findings on data-parallel attention + expert parallelism (`--parallelism dp-ep`) for
DeepSeek-R1/V3 on H200, B200, H100 and MI300X (/tmp/trial16/findings.md F1-F11): a class per finding, each naming
where its expected value comes from."""

from __future__ import annotations

import csv
from types import SimpleNamespace

import pytest
from click.testing import CliRunner

from planner import api
from planner.accuracy.ranges import TimeRange
from planner.accuracy.serving_margin import (
    NO_DP_EP_RUN,
    RUNS_CLAUSE,
    counted_labels,
    load_serving,
    margin_range,
    release_token,
    serving_residuals_file,
)
from planner.catalog import as_catalog
from planner.cli import main
from planner.cli.plan import MLA_TTFT_RANGE, render_plan
from planner.deploy import spans_nodes_warning, weight_only_note
from planner.engines.profiles import engine_profile
from planner.engines.sglang import sglang_mem_fraction_static
from planner.errors import PlannerError
from planner.export.not_sized import margin_basis
from planner.export.reason import budget_sentence
from planner.report import plan


def _rendered(*args, **kw) -> str:
    return render_plan(plan(*args, **kw))


class TestF1MarginNamesItsRunsReleasesAndLayout:
    """The +149% margin of H200 + vLLM MLA rests on dstack's February 2025 nightly (0.7.4.dev181, 9 runs) and one
    gpustack v0.11.0 run, all TP 8 (catalogs/reference/heldout_serving_residuals.csv, its new ``versions`` and
    ``layouts`` columns, written by ``bench/heldout.py --write-serving-residuals``; the finding's DSTK-019..033)."""

    def test_the_file_records_each_regions_releases_and_layouts(self):
        with open(serving_residuals_file(), newline="", encoding="utf-8") as f:
            rows = {(r["gpu"], r["engine"], r["architecture"], r["releases"]): r for r in csv.DictReader(f)}
        row = rows[("H200 SXM 141GB", "vllm", "MLA", "all")]
        assert counted_labels(row["versions"]) == [("0.7.4.dev181", 9), ("0.11.0", 1)]
        assert counted_labels(row["layouts"]) == [("TP8", 10)]
        # the counts add up to the region's figures in every row
        for r in rows.values():
            assert sum(n for _, n in counted_labels(r["versions"])) == int(r["rows"])
            assert sum(n for _, n in counted_labels(r["layouts"])) == int(r["rows"])

    def test_release_words_are_one_token(self):
        assert release_token("v0.11.0 (the document's Engine Version list)") == "0.11.0"
        assert release_token("0.7.4.dev181+gf35f8e22 (the README's vLLM-H200 environment)") == "0.7.4.dev181"
        assert release_token("rocm/sgl-dev:upstream_20250312_v1 (ROCm SGLang build)") == (
            "rocm/sgl-dev:upstream_20250312_v1"
        )
        assert release_token("") == "?"

    def test_a_dp_ep_margin_says_no_run_used_the_layout(self):
        prediction = TimeRange(-0.28, 0.09, "the prediction's own")
        dp = margin_range(prediction, "H200 SXM 141GB", "vllm", "MLA", parallelism="dp-ep")
        tp = margin_range(prediction, "H200 SXM 141GB", "vllm", "MLA", parallelism="tp")
        # the margin's size does not move (s197, s198); 2 sources: widened by the 19 MLA runs on every GPU (s202)
        assert (dp.low, dp.high) == (tp.low, tp.high) == (0.02, 1.49)  # +11% before s212's pre-AITER ROCm prefill
        assert f"{RUNS_CLAUSE}vLLM 0.7.3.dev138 (9 runs), 0.7.4.dev181 (9), 0.11.0 (1); layout TP8 (all 19)" in dp.note
        assert NO_DP_EP_RUN in dp.note and NO_DP_EP_RUN not in tp.note
        assert "none of these runs used data-parallel attention" in NO_DP_EP_RUN

    def test_the_sized_on_the_margin_line_names_them(self):
        prediction = TimeRange(-0.28, 0.09, "the prediction's own")
        note = margin_range(prediction, "H200 SXM 141GB", "vllm", "MLA", parallelism="dp-ep").note
        said = margin_basis(note)
        assert said.startswith(
            "10 MLA-model runs on H200 SXM 141GB + vLLM, widened to vLLM MLA on every GPU, 19 runs from 2 sources: "
            "vLLM 0.7.3.dev138 (9 runs), 0.7.4.dev181 (9)"
        )
        assert said.endswith(NO_DP_EP_RUN)

    def test_a_pooled_margin_names_the_pooled_runs(self):
        # B200 + vLLM has no MLA run of its own: the 19 on any GPU (H200 10, MI300X 9) widen its range, and since
        # s212's no-data rule (trial 33 F10) it is held at least as wide as H200's own +149%
        # (heldout_serving_residuals.csv 'H200 SXM 141GB,vllm,MLA,all,10,0.40,..,1.49'; the 19's +133% before)
        prediction = TimeRange(-0.2, 0.2, "all GPUs' held-out residuals")
        got = margin_range(prediction, "B200 180GB", "vllm", "MLA", parallelism="dp-ep")
        note = got.note
        assert "vLLM 0.7.3.dev138 (9 runs), 0.7.4.dev181 (9), 0.11.0 (1); layout TP8 (all 19)" in note
        assert got.high == 1.49 and margin_basis(note, got.floor).startswith(
            "the model's range, widened to hold 19 MLA-model runs on any GPU + vLLM; held at least as wide as "
            "H200 SXM 141GB's +149%, the widest GPU measured for vLLM MLA runs: "
        )

    def test_the_plans_margin_line_names_them(self):
        text = _rendered("H200", "deepseek-r1", 2500, gpus=8, parallelism="dp-ep")
        line = next(x for x in text.splitlines() if x.startswith("Budget review's margin"))
        assert "0.7.4.dev181 (9)" in line and NO_DP_EP_RUN in line

    def test_regions_read_from_a_file_without_the_new_columns(self, tmp_path):
        old = tmp_path / "old.csv"
        with open(serving_residuals_file(), newline="", encoding="utf-8") as f:
            rows = list(csv.DictReader(f))
        with open(old, "w", newline="", encoding="utf-8") as f:
            w = csv.DictWriter(f, fieldnames=[c for c in rows[0] if c not in ("versions", "layouts")])
            w.writeheader()
            w.writerows({k: v for k, v in r.items() if k not in ("versions", "layouts")} for r in rows)
        regions = load_serving(str(old))
        assert regions[("H200 SXM 141GB", "vllm", "MLA", "all")].versions == ""


class TestF2F6PlanSaysWhatTheRangesAreNotSpecificTo:
    """Every attention-DP run planner validate checks is TensorRT-LLM's DEP (README "Layouts"; the finding's 60
    DEP rows); the prediction ranges' dimensions have no attention kind (planner.accuracy.ranges.DIMENSIONS)."""

    @pytest.mark.parametrize(("engine", "label"), [("vllm", "vLLM"), ("sglang", "SGLang")])
    def test_dp_ep_on_vllm_or_sglang_says_no_held_out_run(self, engine, label):
        text = _rendered("H200", "deepseek-r1", 2500, gpus=8, parallelism="dp-ep", engine=engine)
        line = next(x for x in text.splitlines() if x.startswith("Time ranges' layout"))
        assert f"no held-out {label} run of dp-ep exists (only TensorRT-LLM's DEP runs are checked)" in line

    def test_tensor_parallel_and_tensorrt_llm_say_nothing_of_it(self):
        assert "Time ranges' layout" not in _rendered("H200", "deepseek-r1", 2500, gpus=8)
        trt = _rendered("H200", "deepseek-r1", 2500, gpus=8, parallelism="dp-ep", engine="tensorrt-llm")
        assert "Time ranges' layout" not in trt

    def test_an_mla_models_ttft_range_is_said_not_to_be_its_own(self):
        assert MLA_TTFT_RANGE in _rendered("H200", "deepseek-r1", 2500, gpus=8)
        assert "TTFT range  " not in _rendered("H100", "llama3.1-8b", 2500, gpus=1)


class TestF3SglangDefaultFractionAtDp16IsRefusedInItsOwnWords:
    """SGLang's default rule reserves decode max_bs x dp_size x 3 MiB (x 1.5 above 300) under DP attention:
    sgl-project/sglang python/sglang/srt/arg_groups/memory_hook.py ``reserve_for_graph_mb`` ("reserved_mem +=
    decode_cuda_graph_config.max_bs * cfg.dp_size * 3"), the release the profile follows (0.5.20/0.5.23): the
    planner's reading is right, so 16 H100s at DP 16 get 0.331 (the finding) and DP 32 goes below 0."""

    def test_the_rule_multiplies_by_the_dp_size(self):
        h100 = 81559  # MiB, nvidia-smi (planner.engines.sglang docstring)
        assert sglang_mem_fraction_static(h100, 16, "sglang-0.5.20", 16, True) == pytest.approx(0.335, abs=0.005)
        assert sglang_mem_fraction_static(h100, 32, "sglang-0.5.20", 32, True) < 0

    @pytest.mark.parametrize(("gpus", "fraction"), [(16, "0.331"), (32, "-0.149")])
    def test_plan_refuses_in_one_line_without_the_false_no_group(self, gpus, fraction):
        with pytest.raises(PlannerError) as err:
            plan("H100", "deepseek-v3", 2100, gpus=gpus, parallelism="dp-ep", engine="sglang")
        said = str(err.value)
        assert f"SGLang's default rule gives mem_fraction_static {fraction} at DP {gpus}" in said
        assert "--mem-fraction-static" in said and "memory_utilization" in said
        assert "no group of up to" not in said and "\n" not in said

    def test_the_fraction_given_plans_it(self):
        p = plan("H100", "deepseek-v3", 2100, gpus=16, parallelism="dp-ep", engine="sglang", memory_utilization=0.85)
        assert p.max_batch == 1088  # the finding's figure with --memory-utilization 0.85


class TestF4LayoutFlagsNamePlannersOptions:
    """`planner plan --ep 8` got click's "did you mean --gpu, --help, --rate" (the finding)."""

    @pytest.mark.parametrize("flag", ["--ep", "--dp", "--tp", "--ep-size", "--dp-size"])
    def test_an_engines_flag_names_parallelism_and_gpus(self, flag):
        out = CliRunner().invoke(main, ["plan", "--gpu", "H200", "--model", "deepseek-r1", flag, "8"])
        assert out.exit_code == 2
        assert "--parallelism" in out.output and "DP = EP = --gpus" in out.output and "Did you mean" not in out.output

    def test_another_unknown_option_keeps_clicks_suggestion(self):
        out = CliRunner().invoke(main, ["plan", "--gpu", "H200", "--model", "deepseek-r1", "--gpux", "8"])
        assert out.exit_code == 2 and "Did you mean" in out.output

    def test_the_docs_say_what_is_not_modelled_and_sglangs_flags(self):
        from pathlib import Path

        root = Path(__file__).parents[1]
        readme = " ".join((root / "README.md").read_text(encoding="utf-8").split())
        model = " ".join((root / "docs" / "model.md").read_text(encoding="utf-8").split())
        for words in ("EPLB", "DeepEP", "two-batch", "prefill/decode disaggregation"):
            assert words in readme and words in model
        assert "DP = EP = `--gpus`" in readme
        assert "`--tp g --dp g --enable-dp-attention` with `--ep-size g`" in model


class TestF5SlowEndBelowThePlanHasNoOtherwiseUpTo:
    """The trial's H200 TP8 option: slow end 96 GPUs, $362,314 (-37%) against the plan's $573,663 (my/r1.md)."""

    def test_the_sentence_says_what_the_options_table_says(self):
        sim = SimpleNamespace(
            percentile=95,
            result=SimpleNamespace(ttft_s=SimpleNamespace(at=lambda q: 0.23)),
            rate_per_replica_s=1.11,
            is_burst=False,
        )
        rec = SimpleNamespace(
            slow_end=SimpleNamespace(meets=True, gpus=96, monthly_usd=362314.0, ttft_ratio=1.49, tpot_ratio=1.49),
            under_load=sim,
            time_range_note="",
            margin=1.49,
            fleet=SimpleNamespace(tpot_peak_s=0.0197),
            monthly_usd=573663.0,
            own_runs=None,  # no published runs of this deployment call for another fleet (trial 26 F18)
            money=SimpleNamespace(pricing="cloud"),  # the trial's option rents (my/r1.md)
        )
        workload = SimpleNamespace(latency_margin="model-range", tpot_target_s=0.05, ttft_target_s=2.0)
        said = budget_sentence(SimpleNamespace(workload=workload), rec)
        assert "otherwise up to" not in said
        assert "the fleet is 96 GPUs, $362,314 a month (-37%), below the plan" in said
        # budget_sentence's branch for a slow end below the plan, on a fake: since trial 27 F4 (slow_end.floored_ratio)
        # a review's slow end is never below its plan
        assert "latency margin is wider than the held-out range it is checked against" in said
        assert "budget the plan's $573,663 a month" in said and "(1.11 requests/s)" in said


class TestF7VllmReleasesThatCannotRunRefused:
    """DeepSeek-V3 loads from vLLM 0.6.6 (vllm-project/vllm issue 11559); data-parallel attention with EP/TP MoE
    from 0.8.0 (pull request 13931, "[V1] EP/TP MoE + DP Attention")."""

    def test_vllm_0_6_0_cannot_load_deepseek(self):
        with pytest.raises(PlannerError, match="vLLM 0.6.0 cannot load DeepSeek-R1"):
            plan("H200", "deepseek-r1", 4096, gpus=8, engine="vllm==0.6.0", parallelism="dp-ep")

    def test_vllm_0_7_has_no_dp_ep_but_runs_tp(self):
        with pytest.raises(PlannerError, match="no data-parallel attention with expert-parallel MoE"):
            plan("H200", "deepseek-r1", 4096, gpus=8, engine="vllm==0.7.3", parallelism="dp-ep")
        assert plan("H200", "deepseek-r1", 4096, gpus=8, engine="vllm==0.7.3").max_batch > 0
        assert plan("H200", "deepseek-r1", 4096, gpus=8, engine="vllm==0.8.0", parallelism="dp-ep").max_batch > 0

    def test_a_dense_model_on_an_old_release_is_not_refused(self):
        assert api.release_cannot_run("vllm==0.6.0", as_catalog(None).model("llama3.1-8b")) == ""


class TestF8UnevenExpertSplit:
    """256 routed experts (DeepSeek-R1 config.json n_routed_experts) over 6 ranks: vLLM's ``determine_expert_map``
    (vllm/model_executor/layers/fused_moe/layer.py) gives 4 ranks 43 and 2 ranks 42; SGLang's FusedMoE asserts
    ``num_experts % self.moe_ep_size == 0`` (python/sglang/srt/layers/moe/fused_moe_triton/layer.py)."""

    def test_vllm_sizes_the_busiest_rank_and_says_so(self):
        p6 = plan("H200", "deepseek-r1", 4096, gpus=6, parallelism="dp-ep")
        p8 = plan("H200", "deepseek-r1", 4096, gpus=8, parallelism="dp-ep")
        # the finding's 128.06 GB a GPU was 42.67 experts; 43 add a third of an expert (~0.85 GB)
        weights = next(x for x in render_plan(p6).splitlines() if x.strip().startswith("- weights"))
        assert "128.91 GB" in weights
        assert any("4 ranks hold 43, the others 42" in w for w in p6.warnings)
        assert not any("routed experts over" in w for w in p8.warnings)

    def test_sglang_refuses(self):
        with pytest.raises(PlannerError, match="num_experts % ep_size == 0"):
            plan("H200", "deepseek-r1", 4096, gpus=6, parallelism="dp-ep", engine="sglang")


class TestF9Fp8E5m2IsFp8Kv:
    """vLLM's ``CacheDType`` literal holds "fp8_e5m2" (vllm/config/cache.py), 1 B an element as fp8."""

    def test_it_reads_as_fp8(self):
        a = plan("H200", "deepseek-r1", 4096, gpus=8, kv_precision="fp8_e5m2")
        b = plan("H200", "deepseek-r1", 4096, gpus=8, kv_precision="fp8")
        assert a.max_batch == b.max_batch and as_catalog(None).precision("fp8_e5m2").name == "fp8"


class TestF10PaddingWordsWithoutSlidingWindows:
    """DeepSeek-V3 (config.json: 61 layers, no sliding_window) at 2,100 tokens: 2,112 in 16-token blocks, +0.6%."""

    def test_block_rounding_only(self):
        text = _rendered("H200", "deepseek-v3", 2100, gpus=8, parallelism="dp-ep")
        line = next(x for x in text.splitlines() if x.startswith("KV cache per sequence"))
        assert "block rounding (16-token blocks), +0.6%" in line
        assert "sliding-window" not in line and "61 layers to 61" not in line

    def test_a_sliding_window_model_keeps_its_words(self):
        # gpt-oss-120b config.json: sliding_window 128 on 18 of 36 layers
        line = next(
            x
            for x in _rendered("H200", "gpt-oss-120b", 2100, gpus=1).splitlines()
            if x.startswith("KV cache per sequence")
        )
        assert "each sliding-window group holds one more block" in line


class TestF11WordsOnRocmAndUnderDpEp:
    """Marlin is a CUDA kernel (vLLM's ``Fp8LinearMethod.use_marlin``); Excel messages name arguments, not flags."""

    def test_no_marlin_on_mi300x(self):
        cat = as_catalog(None)
        note = weight_only_note(cat.gpu("MI300X"), cat.precision("mxfp4"), engine_profile("vllm"))
        assert "weight-only, dequantized" in note and "Marlin" not in note
        h100 = weight_only_note(cat.gpu("H100"), cat.precision("fp8"), engine_profile("vllm"))  # H100 has fp8: none
        a100 = weight_only_note(cat.gpu("A100"), cat.precision("fp8"), engine_profile("vllm"))
        assert h100 == "" and "Marlin kernels" in a100

    def test_planner_why_names_the_argument(self):
        from planner.excel import functions as xf

        said = xf.PLANNER_WHY("MAX_BATCH", "MI300X", "deepseek-r1", 8192, None, 8, "fp4")
        said = str(said)
        assert "use -w mxfp4" not in said and "give mxfp4 as the weight precision (weight_precision)" in said

    def test_node_warning_names_the_layout(self):
        h100 = as_catalog(None).gpu("H100")
        dp = spans_nodes_warning(h100, 16, "dp-ep")
        assert "tensor parallelism" not in dp and "all-to-all" in dp and "data-parallel" in dp
        assert "tensor parallelism across nodes" in spans_nodes_warning(h100, 16)
