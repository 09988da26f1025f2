"""A third user trial's findings on `planner export` (s196): each scenario as the trial wrote it, the behaviour checked
against the value it should have."""

from __future__ import annotations

from cli_support import SCENARIO, run

SPECULATING = """\
[workload]
peak_requests_per_s = 10
average_requests_per_s = 4
prompt_tokens_mean = 1000
prompt_tokens_high = 4000
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
