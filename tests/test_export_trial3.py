"""A third user trial's findings on `planner export` (s196): each scenario as the trial wrote it, the behaviour checked
against the value it should have."""

from __future__ import annotations

from cli_support import SCENARIO, run

#: prompt p95 3,800 (the trial's 4,000 is 4.00 x the mean: no lognormal, and a lognormal truncated at its 4,900-token
#: slot reaches 3.97, so it is refused since trial 27 F12; 3.80 is a lognormal's)
SPECULATING = """\
[workload]
peak_requests_per_s = 10
average_requests_per_s = 4
prompt_tokens_mean = 1000
prompt_tokens_high = 3800
output_tokens_mean = 300
output_tokens_high = 900
ttft_target_s = 2
tpot_target_s = 0.05
[[option]]
name = "L70B H200 spec"
gpu = "H200"
model = "llama3.1-70b"
weight_precision = "fp8"
speculative_tokens = 3
acceptance_length = 2.5
"""


def review_md(tmp_path, text: str) -> str:
    path = tmp_path / "s.toml"
    path.write_text(text)
    result = run("export", str(path), "-o", "-", "--format", "md", "--date", "2026-12-05")
    assert result.exit_code == 0, result.output
    return result.stdout


class TestSpeculativeDecodingInAReview:
    def test_a_speculating_baseline_gets_its_levers(self, tmp_path):
        """The GQA lever sizes a hypothetical variant of the model (Llama-3.1-70B without GQA); with speculative
        decoding the draft head was looked up by that name in the catalog and the whole export failed ("unknown
        model 'Llama-3.1-70B without GQA'", exit 2)."""
        text = review_md(tmp_path, SPECULATING)
        assert "| GQA model | Llama-3.1-70B already uses GQA (8 KV heads for 64 query heads)" in text

    def test_the_assumptions_state_the_speculation_and_the_arrivals(self, tmp_path):
        """Both change the fleet (the trial: 236 GPUs with speculation, 216 without; burstiness 0.5 against 1: 21
        against 17 serving replicas), and neither was on any sheet."""
        text = review_md(tmp_path, SPECULATING)
        assert (
            "| L70B H200 spec: speculative decoding (draft tokens a step / accepted tokens a step) | 3 / 2.5 |" in text
        )
        assert "| Arrivals at the peak: gamma shape (Poisson) | 1 |" in text
        bursty = review_md(tmp_path, SCENARIO.replace("tpot_target_s = 0.05", "tpot_target_s = 0.05\nburstiness = 0.5"))
        assert "| Arrivals at the peak: gamma shape (burstier than Poisson) | 0.5 |" in bursty


TWO_MODELS = """\
[workload]
peak_requests_per_s = 4
average_requests_per_s = 2
prompt_tokens_mean = 1000
prompt_tokens_high = 2000
output_tokens_mean = 300
output_tokens_high = 600
ttft_target_s = 2
tpot_target_s = 0.06
[[option]]
name = "8B on H100 quote"
gpu = "H100"
model = "llama3.1-8b"
cloud_usd_per_gpu_hour = 2.50
[[option]]
name = "70B on H100 fp8"
gpu = "H100"
model = "llama3.1-70b"
weight_precision = "fp8"
[[option]]
name = "gpt-oss on H200"
gpu = "H200"
model = "gpt-oss-120b"
[finance]
grid_price_kinds = ["on-demand"]
"""


class TestLikeForLikeServesOneModel:
    def test_every_grid_row_serves_the_recommended_model_and_names_only_its_own_options(self, tmp_path):
        """The trial's grid sized its H100 rows with the first H100 option (gpt-oss-120b at its own $2.50 quote) and
        labelled one of them "= option Qwen3-235B H100 on-demand fp8" (224 GPUs, $506,094 a month, against the row's
        16 GPUs, $29,200), its H200 rows with DeepSeek-V3: a cheapest "like for like" across models. The grid now
        serves the recommendation's model (here Llama-3.1-8B, the cheapest option) on every GPU of the scenario."""
        import tomllib

        from planner.catalog import default_catalog
        from planner.export.review import build_review
        from planner.export.scenario import parse_scenario

        review = build_review(parse_scenario(tomllib.loads(TWO_MODELS)), default_catalog(), date="2026-12-05")
        assert review.recommended.model.name == "Llama-3.1-8B"
        grid = [g for g in review.outlook.grid if g.result is not None]
        assert grid and {g.result.model.name for g in grid} == {"Llama-3.1-8B"}
        assert {g.result.gpu.name for g in grid} == {"H100 SXM 80GB", "H200 SXM 141GB"}
        text = review_md(tmp_path, TWO_MODELS)
        assert "= option 70B on H100 fp8" not in text  # another model on the same GPU, kind and weights
        assert "combinations of GPU, price kind and weights serving Llama-3.1-8B)" in text

    def test_gpt_oss_weights_are_named_with_their_experts(self, tmp_path):
        """plan says "bf16 + mxfp4 experts"; the review said "bf16 / bf16" for gpt-oss as published (trial s196)."""
        text = review_md(tmp_path, TWO_MODELS)
        assert "bf16 + mxfp4 experts / bf16" in text


class TestConcurrencyBecomesEachOptionsRate:
    def test_the_assumptions_state_each_options_requests_per_second(self, tmp_path):
        """Requests in flight become requests/s at each option's own latency (Little's law), so two options of one
        review serve different rates (trial s196: 62.6 against 51.8 requests/s from one average), and no sheet said
        so. The rate is the option's peak_rate_per_s, stated with the rule."""
        text = review_md(
            tmp_path,
            SCENARIO.replace("peak_requests_per_s = 40", "peak_concurrent_requests = 100").replace(
                "average_requests_per_s = 16", "average_concurrent_requests = 40"
            ),
        )
        line = next(x for x in text.splitlines() if "planned peak as requests/s" in x)
        # the latency per request the sized fleet's simulation gives (trial 24 F18), with the check
        assert "Little's law on the sized fleet: 100 requests in flight at the planned peak / " in line
        assert "the simulated mean time a request takes (queue, TTFT and decode)" in line and "check: " in line
        rate = float(line.split("|")[2])
        assert 1 < rate < 100  # 100 in flight, each taking seconds: a few tens a second


class TestWordsOfTheReview:
    def test_a_rent_setting_on_a_bought_option_is_warned_as_unused(self, tmp_path):
        """price_kind = "spot" on an option that buys was ignored without a word (trial s196), as a purchase price
        on a rented one was before s195."""
        text = review_md(tmp_path, SCENARIO + 'pricing = "purchase"\nprice_kind = "spot"\n')
        assert "price\\_kind 'spot' not used: the option buys (pricing \"purchase\")" in text

    def test_an_eight_percent_cost_of_capital_takes_an(self, tmp_path):
        text = review_md(tmp_path, SCENARIO + "[finance]\ncost_of_capital = 0.08\n")
        assert "at an 8.0% cost of capital" in text and "at a 8.0%" not in text


def test_a_slow_end_is_never_below_the_plan():
    """The trial read "-$34,373" in "Held-out slow end: $/month over plan" (DeepSeek-V3 dp-ep on H200, sized with a
    +148% margin) as a pessimistic case cheaper than the plan; the note then said why. Since trial 27 F4 the slow end
    is floored at the plan's own margin (planner.export.slow_end.floored_ratio): a +148% margin against the held-out
    TPOT end x1.58 takes x2.48, and the note says so (tests/test_trial27_slow_end.py holds the fleet to it)."""
    from planner.export.records import SlowEnd
    from planner.export.slow_end import PLAN_MARGIN, basis_text, floored_ratio

    ratio, basis = floored_ratio(1.58, 2.48, [])
    assert (ratio, basis) == (2.48, PLAN_MARGIN)
    s = SlowEnd(95, 6.41, ratio, "", "", 4, 32, 1.0, tpot_basis=basis, tpot_range_ratio=1.58)
    assert (
        basis_text(s) == "at least the plan: TPOT x2.48, the plan's own +148% margin (the held-out range's end: x1.58)"
    )


def test_the_ideal_engine_is_never_recommended_over_a_real_one(tmp_path):
    """The trial's review recommended the 'ideal' engine (8 H100, $18,075) over vLLM and TensorRT-LLM (14 each): a
    bound (all of the memory, every datasheet peak, no overheads; README) booked as a deployment. It ranks after the
    options a real engine runs, and says what it is."""
    text = review_md(
        tmp_path, SCENARIO + '[[option]]\nname = "bound"\ngpu = "H100"\nmodel = "Llama-3.1-70B"\nengine = "ideal"\n'
    )
    lines = text.splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("| Rank | Option |"))  # the Options table
    rows = lines[start + 2 : start + 4]
    assert "H100, Llama-3.1-70B, cloud" in rows[0] and "| bound |" in rows[1]
    col = [c.strip() for c in lines[start].split("|")].index("Monthly cost")
    monthly = [float(r.split("|")[col].strip().lstrip("$").replace(",", "")) for r in rows]
    assert monthly[1] < monthly[0]  # cheaper, and still not first
    assert "bound: the 'ideal' engine is a bound, not an engine to deploy" in text


def test_the_assumptions_say_what_is_left_out_and_the_billing_unit_as_applied(tmp_path):
    """With [finance] cost_of_capital and residual_value_share set, the sheet still said "Not included: ... interest,
    residual value", and "rented in nodes of 1 GPUs" beside Details' "billed in 8-GPU instances" (the H100 quote was
    then billed in its quotes' largest instance, 8). Since trial 23 F4 the median of H100's on-demand quotes ($3.595)
    is billed per GPU, as RunPod's $2.69 and Hyperstack's $3.20 at or below it bill (catalogs/gpus.toml), and the row
    says so and why."""
    text = review_md(tmp_path, SCENARIO + "[finance]\ncost_of_capital = 0.08\nresidual_value_share = 0.2\n")
    assert "| Not included | storage, staff, software licences, discounts |" in text
    assert "rented in instances of | 1 | GPUs | the median's: the smallest unit that a quote at or below $3.595" in text
    assert "billed in 8-GPU instances" not in text
    plain = review_md(tmp_path, SCENARIO)
    assert "interest (cost\\_of\\_capital 0), residual value (residual\\_value\\_share 0), discounts" in plain


def test_two_engines_without_a_common_kv_format_are_told_of_the_baseline(tmp_path):
    """vLLM caches no int8 and LMDeploy no fp8: each refusal of the KV lever recommended the format the other
    refused, and neither named the way out, a baseline the lever starts from (trial s196)."""
    path = tmp_path / "s.toml"
    path.write_text(
        SCENARIO + '[[option]]\nname = "lmd"\ngpu = "H100"\nmodel = "Llama-3.1-70B"\nengine = "lmdeploy"\n'
        '[levers]\nkv_precision = "int8"\n'
    )
    result = run("export", str(path), "-o", str(tmp_path / "r.md"))
    assert result.exit_code == 2
    assert 'or name the option the levers start from, baseline = "..." (the lever applies to it alone)' in result.output
