"""Trial 24 F4 (an SRE comparing vLLM and SGLang on H100): the review's Assumptions gave one uncertainty and margin
row per GPU, model and group, so the SGLang option's +38% margin (Details: "Margin used 0.38") was shown as the vLLM
option's 0.25, and a reviewer could not reproduce its fleet. Each engine's range comes from its own runs
(`planner plan --engine sglang` says "-11% / +38% ... H100 SXM 80GB + SGLang"; vLLM "-12% / +25%"), so each gets its
row.
"""

from __future__ import annotations

from test_export import review_of, write_scenario

SCENARIO = """
title = "two engines"
[workload]
peak_requests_per_s = 40
average_requests_per_s = 20
prompt_tokens_mean = 2000
prompt_tokens_high = 6000
output_tokens_mean = 400
output_tokens_high = 1000
ttft_target_s = 1.5
tpot_target_s = 0.06
sizing = "littles-law"
[defaults]
model = "Llama-3.3-70B"
weight_precision = "fp8"
[[option]]
name = "H100 vLLM fp8"
gpu = "H100"
engine = "vllm"
[[option]]
name = "{bought}"
gpu = "H100"
engine = "sglang"
"""


def margin_rows(review) -> dict[str, float]:
    return {a.what: a.value for a in review.assumptions if a.what.endswith(": margin used")}


class TestEachEnginesMarginIsStated:
    def test_each_options_margin_has_its_row(self, tmp_path):
        review = review_of(write_scenario(tmp_path, SCENARIO, bought="H100 SGLang fp8"))
        rows = margin_rows(review)
        used = {r.option.name: r.margin for r in review.results}
        assert len(rows) == 2
        assert sorted(rows.values()) == sorted(used.values())
        (vllm,) = [w for w in rows if "engine vllm" in w]
        (sglang,) = [w for w in rows if "engine sglang" in w]
        assert rows[vllm] == used["H100 vLLM fp8"]
        assert rows[sglang] == used["H100 SGLang fp8"]
        assert rows[vllm] != rows[sglang]  # the finding: two engines' ranges differ (+25% vs +38% on 2026-12-06)

    def test_the_uncertainty_row_names_the_engines_runs(self, tmp_path):
        review = review_of(write_scenario(tmp_path, SCENARIO, bought="H100 SGLang fp8"))
        (row,) = [a for a in review.assumptions if "engine sglang" in a.what and "uncertainty" in a.what]
        assert "SGLang" in row.label

    def test_one_engine_keeps_the_short_row(self, tmp_path):
        one = SCENARIO.replace('engine = "sglang"', 'engine = "vllm"')
        review = review_of(write_scenario(tmp_path, one, bought="H100 vLLM again"))
        rows = margin_rows(review)
        groups = {int(r.replica.gpus) for r in review.results}
        assert len(groups) == 1  # both options keep one group (4 since trial 26 F9's headroom tie rule; 2 before)
        assert list(rows) == [f"H100 SXM 80GB, Llama-3.3-70B, {groups.pop()} GPUs per replica: margin used"]
