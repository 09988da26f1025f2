"""A ninth user trial's findings: speculative decoding drafts with the checkpoint's own MTP layers where it ships them
(F9), and DeepSeek-R1 in NVFP4 has a published evaluation (F10)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner
from test_export import review_of, write_scenario

from planner import api
from planner.catalog import default_catalog
from planner.cli import main
from planner.errors import InvalidInputError
from planner.export.scenario import load_scenario
from planner.serving.benchmark import draft_ratio
from planner.serving.speculative import default_method, models_with_mtp, speculation_for, with_mtp_loaded

pytestmark = pytest.mark.xdist_group("test_trial9")

#: DeepSeek-V3's MTP module (config num_nextn_predict_layers 1, model.layers.61): one MLA + MoE decoder layer, enorm,
#: hnorm, eh_proj, the shared head norm and its stored copies of embedding and head = 13,463,426,304 parameters; the
#: HF model card: "671B of the Main Model weights and 14B of the Multi-Token Prediction (MTP) Module weights".
DEEPSEEK_MTP_PARAMS = 13_463_426_304

F9 = (
    "plan --gpu H200 --model deepseek-r1 --context 4096 --gpus 8 --rate 2 --prompt-tokens 1000 --output-tokens 1000 "
    "--speculative-tokens 3 --acceptance-length 2.4"
).split()


class TestMtpLoadsItsParameters:
    @pytest.mark.parametrize("model", ["DeepSeek-V3", "DeepSeek-R1"])
    def test_weights_grow_by_the_mtp_parameters_bytes(self, model):
        """fp8 as published: 1 B a parameter, so 11.61 GB more (DeepSeek-V3's layer 61 is stored in fp8 like the
        other layers; its stored copies of the embedding and output head, 2 x 129280 x 7168, are swapped for the
        target's: ``mtp_held_params``); nvfp4 weights: the same parameters at nvfp4's bytes."""
        m = default_catalog().model(model)
        assert m.mtp_params == DEEPSEEK_MTP_PARAMS and m.mtp_layers == 1
        held = DEEPSEEK_MTP_PARAMS - 2 * 129280 * 7168
        grown = api.weight_bytes(with_mtp_loaded(model)) - api.weight_bytes(model)
        assert grown == pytest.approx(held * 1.0)
        nvfp4 = api.weight_bytes(with_mtp_loaded(model), precision="nvfp4") - api.weight_bytes(model, precision="nvfp4")
        assert held * 0.5 < nvfp4 < held * 0.6

    def test_the_kv_budget_is_smaller_by_those_bytes(self):
        plain = api.memory_plan("H200", "deepseek-r1", 4096, gpus=8)
        mtp = api.memory_plan("H200", with_mtp_loaded("deepseek-r1"), 4096, gpus=8)
        assert float(plain.max_batch) > float(mtp.max_batch)

    def test_a_qwen35_mtp_run_loads_the_mtp_layer_not_the_vision_tower(self):
        m = default_catalog().model("Qwen3.5-35B-A3B")
        assert m.mtp_params == 844_640_768 < m.extra_params
        grown = api.weight_bytes(with_mtp_loaded(m)) - api.weight_bytes(m)
        assert grown == pytest.approx(m.mtp_params * 2.0)  # bf16

    def test_a_model_whose_catalog_counts_the_mtp_layer_loaded_grows_no_more(self):
        m = default_catalog().model("Qwen3.6-27B")
        assert m.extra_params_loaded and api.weight_bytes(with_mtp_loaded(m)) == api.weight_bytes(m)


class TestTheMethod:
    @pytest.mark.parametrize(
        ("model", "method"),
        [("deepseek-r1", "mtp"), ("DeepSeek-V3", "mtp"), ("GLM-4.5", "mtp"), ("Qwen3.5-397B-A17B", "mtp"),
         ("Llama-3.1-70B", "eagle3"), ("Qwen3-32B", "eagle3")],
    )  # fmt: skip
    def test_default_per_model(self, model, method):
        assert default_method(model) == method
        assert speculation_for(model, 3, 2.4).method == method

    def test_mtp_is_refused_for_a_model_without_mtp_layers_naming_those_with_them(self):
        with pytest.raises(InvalidInputError) as e:
            speculation_for("Llama-3.1-70B", 3, 2.4, method="mtp")
        text = str(e.value)
        assert "Llama-3.1-70B's checkpoint ships no multi-token-prediction (MTP) layers" in text
        assert "DeepSeek-V3, " in text and "DeepSeek-R1" in text and "GLM-4.5" in text and "eagle3 or ngram" in text
        assert set(models_with_mtp()) >= {"DeepSeek-V3", "DeepSeek-R1", "DeepSeek-V3.2", "GLM-4.5", "GLM-4.7"}

    def test_eagle3_and_ngram_are_still_chosen_when_named(self):
        assert speculation_for("deepseek-r1", 3, 2.4, method="eagle3").draft_params == pytest.approx(2013032448)
        assert speculation_for("deepseek-r1", 3, 2.4, method="ngram").draft_params == 0

    def test_an_mtp_pass_is_one_decoder_layer_of_the_target(self):
        """61 layers in DeepSeek-R1: a draft pass is 1/61 of the target's decode step at the same batch."""
        spec = speculation_for("deepseek-r1", 3, 2.4)
        assert draft_ratio(spec, "deepseek-r1") == pytest.approx(1 / 61)
        assert spec.draft == "MTP (the checkpoint's own 1 layer, 11.61B parameters loaded)"


@pytest.fixture(scope="module")
def f9_runs():
    runner = CliRunner()
    out = {}
    for method in ("mtp", "eagle3", None):
        extra = ["--speculative-method", method] if method else []
        args = F9 + extra if method else F9[: F9.index("--speculative-tokens")]
        r = runner.invoke(main, [*args, "--json"])
        assert r.exit_code == 0, r.output
        out[method] = json.loads(r.output)
    out["text"] = runner.invoke(main, F9).output
    return out


class TestThePlanCommand:
    def test_the_output_line_names_the_draft(self, f9_runs):
        assert (
            "speculative decoding: MTP (the checkpoint's own 1 layer, 11.61B parameters loaded) 3 draft tokens a "
            "step, 2.4 tokens emitted a step" in f9_runs["text"]
        )

    def test_mtp_holds_fewer_sequences_than_eagle3_or_none(self, f9_runs):
        """Each draft's weights and KV come out of the KV budget (s199): MTP's 11.61 GB of layers (DeepSeek-R1's
        num_nextn_predict_layers 1, a whole MoE decoder layer) more than an EAGLE-3 head's one dense layer; the
        head's KV is MLA's latent, as vLLM's deepseek_eagle3.py builds it (576 values a token, on every GPU)."""
        seqs = {k: f9_runs[k]["under_load"]["max_sequences_at_once"]["per_rank"] for k in ("mtp", "eagle3", None)}
        assert seqs["mtp"] < seqs["eagle3"] < seqs[None]
        assert f9_runs["mtp"]["under_load"]["speculative"]["method"] == "mtp"

    def test_mtp_is_refused_on_the_cli_for_a_model_without_it(self):
        r = CliRunner().invoke(
            main,
            "plan --gpu H100 --model llama-3.1-8b --context 1024 --rate 1 --prompt-tokens 200 --output-tokens 200 "
            "--speculative-tokens 3 --acceptance-length 2 --speculative-method mtp".split(),
        )
        assert r.exit_code != 0 and "ships no multi-token-prediction (MTP) layers" in r.output


NVFP4 = """
title = "DeepSeek-R1 NVFP4"
[workload]
peak_requests_per_s = 4
average_requests_per_s = 2
prompt_tokens_mean = 1000
prompt_tokens_high = 2000
output_tokens_mean = 500
output_tokens_high = 1000
high_percentile = 95
ttft_target_s = 3
tpot_target_s = 0.1
growth_over_horizon = 0
horizon_months = 12
sizing = "littles-law"
[defaults]
model = "DeepSeek-R1"
gpu = "B200"
gpus_per_replica = 8
[[option]]
name = "B200 nvfp4"
weight_precision = "nvfp4"
"""


def test_the_export_quality_line_of_deepseek_r1_nvfp4_cites_nvidias_model_card(tmp_path):
    """nvidia/DeepSeek-R1-FP4's model card, Evaluation: FP8 MMLU 90.8, GSM8K 96.3, AIME2024 80.0, GPQA Diamond 69.7,
    MATH-500 95.4; FP4 90.7, 96.1, 80.0, 69.2, 94.2."""
    review = review_of(write_scenario(tmp_path, NVFP4))
    (note,) = review.outlook.quality
    assert "no published evaluation" not in note.text
    assert (
        "nvidia/DeepSeek-R1-FP4 against the fp8 model (model card, 2026-12-06): MMLU 90.70 against 90.80" in note.text
    )
    assert "MATH-500 94.20 against 95.40 (-1.20 points, the largest drop)" in note.text


def test_the_scenario_reads_a_speculative_method(tmp_path):
    text = NVFP4.replace('sizing = "littles-law"', 'sizing = "simulated"').replace(
        'weight_precision = "nvfp4"',
        'weight_precision = "nvfp4"\nspeculative_tokens = 3\nacceptance_length = 2.4\nspeculative_method = "eagle3"',
    )
    assert load_scenario(write_scenario(tmp_path, text)).option[0].speculative_method == "eagle3"
    bad = text.replace("speculative_tokens = 3\nacceptance_length = 2.4\n", "")
    with pytest.raises(Exception, match="speculative_method 'eagle3' names the draft"):
        load_scenario(write_scenario(tmp_path, bad, name="bad.toml"))
