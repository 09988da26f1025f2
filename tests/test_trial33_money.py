"""Trial 33 (Tomás, 8 x MI325X against 8 x H200; /work/trial33-findings.md): the money figures plan and export print.

F2: ``planner plan``'s cost "with prompt processing" charged every prompt of a data-parallel-attention (dp-ep) group
the whole group's one-prompt TTFT, while ``planner export`` charges a DP replica 1/g of the prefill of g prompts
(docs/model.md, "Data-parallel attention": "each rank prefills its own"). Both now call one rule,
``planner.timing.prompt_busy_s``.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import planner
from planner import api
from planner.accuracy.ranges import TimeRange
from planner.catalog import default_catalog
from planner.cli import main
from planner.engines.profiles import engine_profile
from planner.export.evaluate import _candidates
from planner.export.scenario import Option, Workload

#: the trial's F2 command (/work/trial33-findings.md, F2)
F2 = (
    "plan --gpu MI325X --model qwen3-235b-a22b -w fp8 --context 2560 --gpus 8 --parallelism dp-ep --engine sglang "
    "--prompt-tokens 2048 --output-tokens 500"
).split()
QWEN = dict(weight_precision="fp8", engine="sglang", parallelism="dp-ep", gpus=8)


@pytest.fixture(scope="module")
def f2():
    r = CliRunner().invoke(main, [*F2, "--json"])
    assert r.exit_code == 0, r.output
    text = CliRunner().invoke(main, F2)
    assert text.exit_code == 0, text.output
    return json.loads(r.output), text.output


def test_a_dp_ep_prompt_is_charged_one_gth_of_g_prompts_prefill(f2):
    data, _ = f2
    eight = float(planner.prefill("MI325X", "qwen3-235b-a22b", 2048, batch=8, **QWEN).ttft_s)
    one = float(planner.ttft("MI325X", "qwen3-235b-a22b", 2048, **QWEN))
    # the rule docs/model.md states for export: 1/g of the prefill of g prompts (g = 8 attention ranks)
    assert float(api.prompt_busy_s("MI325X", "qwen3-235b-a22b", 2048, **QWEN)) == pytest.approx(eight / 8)
    assert data["request_prompt_busy_s"] == pytest.approx(eight / 8)
    assert data["request_ttft_s"] == pytest.approx(one)  # TTFT targets keep the one-prompt time: 0.215 s
    assert one == pytest.approx(0.215, abs=0.001)  # the trial's figure
    assert eight / 8 == pytest.approx(0.036, abs=0.001)  # 0.288 s for 8 prompts at once, a rank each


def test_the_cost_with_prompts_is_the_hand_formula_at_the_shared_prefill(f2):
    data, text = f2
    price, gpus = data["price_usd_per_gpu_hour"], data["gpus"]
    tokens_per_s = data["throughput_tokens_per_s"]
    assert (price, gpus) == (1.95, 8)
    assert tokens_per_s == pytest.approx(23_600, rel=1e-3)  # the trial's "23,600 tokens/s" at batch 3,024
    # docs/model.md's table: g x $/GPU-h / 3600 x (output / tokens/s + the prompt's group-seconds) / output x 1e6
    # = 8 x 1.95 / 3600 x (500 / 23,600 + 0.0360) / 500 x 1e6 = $0.496
    hand = gpus * price / 3600 * (500 / tokens_per_s + data["request_prompt_busy_s"]) / 500 * 1e6
    assert data["cost_per_million_output_tokens_with_prompts_usd"] == pytest.approx(hand)
    assert hand == pytest.approx(0.496, abs=0.001)
    # before: the whole group's one-prompt TTFT, 8 x 1.95 / 3600 x (500 / 23,600 + 0.215) / 500 x 1e6 = $2.05
    before = gpus * price / 3600 * (500 / tokens_per_s + data["request_ttft_s"]) / 500 * 1e6
    assert before == pytest.approx(2.05, abs=0.01)
    assert "with prompt processing             $0.50 per million output tokens" in text
    assert "(1/8 of the 288 ms prefill of 8 prompts, one on each of its 8 attention ranks" in text


def test_tensor_parallelism_charges_the_prompts_own_ttft():
    tp = dict(QWEN, parallelism="tp")
    assert float(api.prompt_busy_s("MI325X", "qwen3-235b-a22b", 2048, **tp)) == pytest.approx(
        float(planner.ttft("MI325X", "qwen3-235b-a22b", 2048, **tp))
    )


def test_export_charges_the_same_prefill_as_plan(f2):
    """export's mean-prompt replica time (Little's law, the prefill share) is the same rule's figure."""
    data, _ = f2
    cat = default_catalog()
    workload = Workload(
        peak_requests_per_s=10,
        average_requests_per_s=5,
        prompt_tokens_mean=2048,
        prompt_tokens_high=2048,
        output_tokens_mean=500,
        output_tokens_high=500,
        tpot_target_s="5 s",
        ttft_target_s="10 s",
    )
    option = Option(gpu="MI325X", model="qwen3-235b-a22b", engine="sglang", parallelism="dp-ep")
    gpu, model = cat.gpu("MI325X"), cat.model("qwen3-235b-a22b")
    (c,) = _candidates(
        option, workload, cat, gpu, model, "fp8", None, engine_profile("sglang"), (8,), (TimeRange(0, 0, ""),)
    )
    assert c.ttft_mean_s == pytest.approx(data["request_prompt_busy_s"])
    assert c.ttft_high_s == pytest.approx(data["request_ttft_s"])


# -- F8: a workload of means only ------------------------------------------------------------------------------

#: the trial's scenario (/tmp/t33w/amd-vs-nv.toml), its two high lengths left out as his first TOML did
MEANS_ONLY = """
title = "MI325X vs H200, Llama-3.3-70B FP8"
[workload]
peak_requests_per_s = 20
average_requests_per_s = 10
prompt_tokens_mean = 2048
output_tokens_mean = 500
ttft_target_s = 2
tpot_target_s = 0.05
latency_percentile = 95
[[option]]
name = "8x H200 vLLM"
gpu = "H200"
model = "Llama-3.3-70B"
weight_precision = "fp8"
gpus_per_replica = 8
"""


def test_export_takes_the_high_lengths_at_the_means_as_plan_does():
    """plan --rate without --prompt-tokens-high sends every prompt at the mean ("Default: the mean, every prompt
    alike", its help); export refused the same workload ("workload.prompt_tokens_high: missing") until trial 33 F8."""
    import tomllib

    from planner.export.assumptions import simulated_lengths_words
    from planner.export.scenario import parse_scenario

    w = parse_scenario(tomllib.loads(MEANS_ONLY)).workload
    assert (w.prompt_tokens_high, w.output_tokens_high) == (2048, 500)
    assert w.simulated_lengths_kind == "means"
    assert "prompt_tokens_high and output_tokens_high are the means (their default" in simulated_lengths_words(w)
    # a fractional mean: the high length at least the mean (801 >= 800.5), not refused as below it
    half = parse_scenario(tomllib.loads(MEANS_ONLY.replace("= 2048", "= 800.5"))).workload
    assert half.prompt_tokens_high == 801


# -- F4: "What to budget" where a stated slow end is past the target --------------------------------------------


def test_a_slow_end_past_the_target_is_said_to_be_stated_not_sized_on():
    """The trial's review (8x MI325X, Summary A45): "p95 TTFT at 0.21 - 4.25 s (target 2.00 s), and at the slow end
    of those ranges the fleet is the same 40 GPUs". The p95 TTFT range shipped (catalogs' loaded ranges: ttft_p99,
    -21% / +1466%, +541% without sglang-pr-4918-deepseek-v3-h200) puts the simulated 0.27 s at 0.21 - 4.23 s; the
    slow end the fleet is sized on is x6.41 (Summary A57): 0.27 x 6.41 = 1.73 s, within 2 s."""
    from types import SimpleNamespace

    from planner.accuracy.loaded_ranges import load_loaded_ranges
    from planner.export.reason import _sized_below_the_end

    rec = SimpleNamespace(
        slow_end=SimpleNamespace(ttft_ratio=6.41, tpot_ratio=1.83), under_load=SimpleNamespace(percentile=95)
    )
    w = SimpleNamespace(ttft_target_s=2.0, tpot_target_s=0.05)
    ranges = load_loaded_ranges()
    said = _sized_below_the_end(rec, w, 18.8, 0.27, ranges, "")
    assert said == (
        "p95 TTFT's full slow end (4.23 s) would miss the 2.00 s target: that range is stated, not sized on; the slow "
        "end sized on is x6.41 (1.73 s; Sensitivity says which runs set it)"
    )
    # TPOT's end (18.8 ms x (1 + its high) < 50 ms) meets its target: nothing said of it; a TTFT within: nothing
    assert "TPOT" not in said
    assert _sized_below_the_end(rec, w, 18.8, 0.10, ranges, "") == ""


# -- F1: how weak a price is, wherever it is printed -----------------------------------------------------------


def test_the_mi325x_price_says_it_is_one_secondary_low_side_quote():
    """catalogs/gpus.toml's MI325X on-demand comment: "ONE quote, secondary, so no median ... read it as a low-side
    neocloud rate, not a like-for-like median"; the review's 2.6x gap against H200 ($56,940 against $150,307 a month,
    both 40 GPUs) is all price, so the price line and the review's "price from" carry it (trial 33 F1)."""
    from planner.export.ownership import option_money, quote_text
    from planner.export.scenario import Option

    cat = default_catalog()
    mi325x = cat.gpu("MI325X").price("on-demand")
    assert (mi325x.usd_per_gpu_hour, mi325x.caveat) == (1.95, "one secondary quote, low-side (no median)")
    # the H200's median of 2 rate cards states no caveat: only entries whose comment says so carry one
    assert cat.gpu("H200").price("on-demand").caveat == ""
    money = option_money(Option(gpu="MI325X", model="llama3.3-70b"), cat.gpu("MI325X"))
    assert quote_text(money, with_gap=False) == (
        "TensorWave (research note), 2026-05-18; one secondary quote, low-side (no median)"
    )


def test_plan_prints_the_caveat_in_its_price_line(f2):
    _, text = f2
    assert (
        "($1.95/GPU-hour: on-demand, TensorWave (research note), 2026-05-18; one secondary quote, low-side (no median))"
        in text
    )


# -- F9: the workload's growth months under their own name -----------------------------------------------------


def test_growth_months_is_the_workloads_key_and_horizon_months_still_reads():
    """[workload] horizon_months (the months the traffic grows over) shared its name with [finance] horizon_months (the
    months the cost covers); the headline had to explain it (trial 33 F9). growth_months is the key now; the old name
    is still read; both at once are refused."""
    import tomllib

    from planner.errors import PlannerError
    from planner.export.scenario import parse_scenario

    def months(extra: str) -> int:
        text = MEANS_ONLY.replace("[workload]", "[workload]\n" + extra, 1)
        return parse_scenario(tomllib.loads(text)).workload.horizon_months

    assert months("growth_months = 18") == 18
    assert months("horizon_months = 18") == 18
    assert months("") == 12  # the default, docs/export.md's key table
    with pytest.raises(PlannerError, match="growth_months and horizon_months are one key"):
        months("growth_months = 18\nhorizon_months = 18")
