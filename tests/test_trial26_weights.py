"""Trial 26 F2: gpt-oss-120b's weights are named as published ("bf16 + mxfp4 experts") on every surface, and the
Weights fp8 lever of a model whose experts ship in MXFP4 is no saving (fp8 experts would enlarge the model).

Expected values: gpt-oss-120b's config.json ships ``quantization_config.quant_method = "mxfp4"`` for the routed
experts beside bf16 attention and embeddings (catalogs: ``native_precision = "bf16"``,
``native_expert_precision = "mxfp4"``); MXFP4 stores 4 bits plus one 8-bit scale per 32 values = 4.25 bits =
0.53 bytes per value, fp8 1 byte (the catalog's precisions)."""

from __future__ import annotations

import shutil

import pytest
from workbook_support import recalculate_inputs

from planner.accuracy.same_deployment import Deployment
from planner.catalog import default_catalog
from planner.catalog.resolve import weights_enlarge_experts, weights_words
from planner.engines.profiles import engine_profile
from planner.export.quality import quality_notes
from planner.workbook.build import build_whatif
from planner.workbook.calc import SCENARIOS, calc_rows, scenario_col
from planner.workbook.catalog_sheets import fp8_quality
from planner.workbook.layout import CALC_SHEET, LEVERS_SHEET, RESULTS_SHEET
from planner.workbook.load_figures import lever_changes_nothing

NO_SAVING = "no saving: the checkpoint's experts are already mxfp4, smaller than fp8"


@pytest.fixture(scope="module")
def cat():
    return default_catalog()


class TestOneName:
    def test_gpt_oss_as_published_is_bf16_with_mxfp4_experts(self, cat):
        assert weights_words(cat, cat.model("gpt-oss-120b")) == "bf16 + mxfp4 experts"

    def test_asked_precisions_apply_to_the_experts_too(self, cat):
        """``expert_precision``: a weight precision asked by name covers the routed experts (no experts words)."""
        gpt = cat.model("gpt-oss-120b")
        assert weights_words(cat, gpt, "fp8") == "fp8"
        assert weights_words(cat, gpt, "bf16") == "bf16"

    def test_a_dense_model_is_its_precision(self, cat):
        """Llama-2-70B ships fp16 (its config's torch_dtype); Qwen3-235B-A22B, a MoE model, bf16 experts alike."""
        assert weights_words(cat, cat.model("llama2-70b")) == "fp16"
        assert weights_words(cat, cat.model("qwen3-235b-a22b")) == "bf16"

    def test_the_assumptions_deployment_words_take_the_label(self):
        """The export's "published runs of this deployment" row said "bf16 weights" for gpt-oss (trial 26 F2)."""
        d = Deployment("H100 SXM 80GB", "gpt-oss-120b", "vllm", "TP2", "bf16", "bf16")
        assert d.words("mxfp4").endswith("TP2, bf16 weights + mxfp4 experts, bf16 KV")
        assert d.words().endswith("TP2, bf16 weights, bf16 KV") and d.words("bf16") == d.words()

    def test_the_quality_note_says_published_as_bf16_with_mxfp4_experts(self):
        """An option asking gpt-oss at fp8 is published as "bf16 + mxfp4 experts", not "as bf16"; as published
        (its label equal to the published one) it gets no note."""
        (note,) = quality_notes([("A", "gpt-oss-120b", "fp8", "bf16 + mxfp4 experts")], "your team")
        assert note.text.startswith("Quality: gpt-oss-120b with fp8 weights (published as bf16 + mxfp4 experts; A)")
        assert quality_notes([("A", "gpt-oss-120b", "bf16 + mxfp4 experts", "bf16 + mxfp4 experts")], "x") == ()


class TestFp8IsNoSavingForMxfp4Experts:
    def test_the_rule(self, cat):
        """0.53 B (mxfp4) < 1 B (fp8): no saving; int4 (0.5 B) is smaller still, so the rule does not fire."""
        gpt = cat.model("gpt-oss-120b")
        assert weights_enlarge_experts(cat, gpt, "fp8") == NO_SAVING
        assert weights_enlarge_experts(cat, gpt, "int4") == ""

    @pytest.mark.parametrize("model", ["llama2-70b", "qwen3-235b-a22b", "deepseek-v3"])
    def test_models_without_smaller_experts_keep_the_lever(self, cat, model):
        assert weights_enlarge_experts(cat, cat.model(model), "fp8") == ""

    def test_the_models_sheet_quality_column_says_why(self, cat):
        assert fp8_quality(cat, cat.model("gpt-oss-120b")) == f"Weights fp8: {NO_SAVING}"
        assert "published as fp16" in fp8_quality(cat, cat.model("llama2-70b"))

    def test_the_lever_counts_as_changing_nothing(self, cat):
        """Calc's no_change row's Python rule: gpt-oss's Weights fp8 lever is never ranked; Llama-2-70B's is."""
        eng = engine_profile(None)
        gpt = {"gpu": "H100 SXM 80GB", "model": "gpt-oss-120b", "context": 4900, "gpus": 4}
        llama = {"gpu": "H100 SXM 80GB", "model": "Llama-2-70B", "context": 4096, "gpus": 4}
        assert lever_changes_nothing(gpt, "weights_fp8", cat, eng)
        assert not lever_changes_nothing(llama, "weights_fp8", cat, eng)


@pytest.fixture(scope="module")
def books(tmp_path_factory):
    """The trial's workbook (H100, H200 x Qwen3-235B, gpt-oss-120b) recalculated by LibreOffice for the trial's
    gpt-oss inputs (4 x H100, 4,900 tokens) and for Qwen3-235B-A22B on 8 x H100."""
    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) is not installed: the values are its recalculation")
    spec = build_whatif(gpus=["H100", "H200"], models=["qwen3-235b-a22b", "gpt-oss-120b"], load=False)
    inputs = {
        "gpt": {"gpu": "H100 SXM 80GB", "model": "gpt-oss-120b", "context": 4900, "gpus": 4},
        "qwen": {"gpu": "H100 SXM 80GB", "model": "Qwen3-235B-A22B", "context": 4900, "gpus": 8},
    }
    return recalculate_inputs(spec, inputs, tmp_path_factory.mktemp("t26"))


class TestWorkbook:
    def test_results_title_names_the_experts(self, books):
        title = books["gpt"][RESULTS_SHEET]["A2"].value
        assert "weights bf16 + mxfp4 experts, KV bf16" in title, title

    def test_levers_weight_row_names_the_experts(self, books):
        ws = books["gpt"][LEVERS_SHEET]
        row = next(r for r in range(1, 40) if ws[f"A{r}"].value == "Weight precision")
        assert ws[f"C{row}"].value == "bf16 + mxfp4 experts"
        assert ws[f"{scenario_col('weights_fp8')}{row}"].value == "fp8"

    def test_the_fp8_lever_says_no_saving_and_is_not_ranked(self, books):
        c = calc_rows(lever_kv="fp8", lever_weights="fp8")
        col = scenario_col("weights_fp8")
        calc = books["gpt"][CALC_SHEET]
        assert calc[f"{col}{c.row_of['what']}"].value == NO_SAVING
        assert calc[f"{col}{c.row_of['no_change']}"].value == 1
        assert calc[f"{col}{c.row_of['void']}"].value == "no saving"

    def test_a_bf16_model_keeps_its_fp8_lever(self, books):
        """Qwen3-235B-A22B (bf16 experts): fp8 halves its weights; the lever keeps its description."""
        c = calc_rows(lever_kv="fp8", lever_weights="fp8")
        col = scenario_col("weights_fp8")
        calc = books["qwen"][CALC_SHEET]
        what = next(w for key, _, w in SCENARIOS if key == "weights_fp8")
        assert calc[f"{col}{c.row_of['what']}"].value == what
        assert calc[f"{col}{c.row_of['no_change']}"].value == 0
        assert books["qwen"][RESULTS_SHEET]["A2"].value.endswith("weights bf16, KV bf16")


class TestReviewGrid:
    def test_the_like_for_like_grid_offers_no_fp8_gpt_oss(self, cat):
        """The review's grid tries every weight precision among the options on the recommended model's GPUs: an fp8
        Llama option made it size gpt-oss-120b at fp8, its MXFP4 experts grown to 1 byte a value. It now says why
        not, as the workbook's lever does; the as-published row is named "bf16 weights + mxfp4 experts"."""
        from planner.export.evaluate import evaluate
        from planner.export.outlook import like_for_like
        from planner.export.scenario import parse_scenario

        workload = {
            "peak_requests_per_s": 2,
            "average_requests_per_s": 1,
            "prompt_tokens_mean": 800,
            "prompt_tokens_high": 3000,
            "output_tokens_mean": 300,
            "output_tokens_high": 900,
            "ttft_target_s": 2.0,
            "tpot_target_s": 0.05,
            "sizing": "littles-law",  # the grid's rule, not the simulation, is under test
        }
        options = [
            {"name": "gpt-oss", "gpu": "H100", "model": "gpt-oss-120b", "pricing": "cloud"},
            {
                "name": "llama fp8",
                "gpu": "H100",
                "model": "Llama-3.1-8B",
                "pricing": "cloud",
                "weight_precision": "fp8",
            },
        ]
        s = parse_scenario(
            {"workload": workload, "option": options, "finance": {"grid_price_kinds": ["on-demand"]}}, "s.toml"
        )
        results = tuple(evaluate(o, s.workload, cat, s.traffic_change) for o in s.option)
        grid = {g.weight_precision: g for g in like_for_like(s, results, cat)}
        assert set(grid) == {"bf16", "fp8"}
        assert grid["fp8"].result is None and grid["fp8"].note == NO_SAVING
        published = grid["bf16"].result
        assert published.option.name == "H100 SXM 80GB, on-demand, bf16 weights + mxfp4 experts"
        assert published.weights_label == "bf16 + mxfp4 experts"
