"""``planner plan`` states the margin a budget review sizes the same group with, beside its own range.

A user trial (s194) found ``plan``'s TPOT range for DeepSeek-R1 on 8 x H200 (-28% / +9%, static-batch runs) and the
review's margin for the same GPU and model (+34% / +148%, serving runs under steady load) with nothing saying why they
differ. Both now come from one rule (``planner.accuracy.serving_margin.sizing_range``): the review sizes each group
with it, and ``plan`` prints it as "Budget review's margin" and in ``--json`` ``serving_margin``.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from cli_support import run

from planner.catalog import default_catalog
from planner.export.evaluate import evaluate
from planner.export.scenario import load_scenario

ROOT = Path(__file__).resolve().parents[1]


def residual_row(gpu: str, engine: str, architecture: str, releases: str = "all") -> dict:
    with open(ROOT / "catalogs" / "reference" / "heldout_serving_residuals.csv", newline="") as f:
        key = (gpu, engine, architecture, releases)
        return next(r for r in csv.DictReader(f) if (r["gpu"], r["engine"], r["architecture"], r["releases"]) == key)


def test_plan_states_the_h200_vllm_mla_serving_margin_and_the_review_sizes_with_it(tmp_path):
    """catalogs/reference/heldout_serving_residuals.csv, H200 SXM 141GB + vllm + MLA, every release: 10 figures, 10th
    / 90th percentile +0.40 / +1.49 (dstack's and gpustack's DeepSeek-R1 runs; vLLM 0.8 and later have 1, too few for
    a range of their own), from 2 sources, so widened to the 19 on every GPU (+1.79). plan prints them and --json carries them; the review's option on the same GPU, model and
    group is sized with the same range."""
    row, pooled = residual_row("H200 SXM 141GB", "vllm", "MLA"), residual_row("*", "vllm", "MLA")
    # 2 sources, fewer than MIN_SOURCES (trial 20, F1): widened by the 19 MLA vLLM runs on every GPU
    low = min(float(row["residual_low"]), float(pooled["residual_low"]))
    high = max(float(row["residual_high"]), float(pooled["residual_high"]))
    args = ("plan", "--gpu", "H200", "--model", "deepseek-r1", "--context", "8192", "--gpus", "8")
    text = run(*args)
    assert text.exit_code == 0, text.output
    assert "Budget review's margin" in text.output
    assert f"TPOT {low:+.0%} / {high:+.0%} under steady load, not this range: from 10 MLA-model runs" in text.output
    margin = json.loads(run(*args, "--json").output)["serving_margin"]
    assert (margin["low"], margin["high"]) == pytest.approx((low, high))
    scenario = tmp_path / "r1.toml"
    scenario.write_text(
        "[workload]\npeak_requests_per_s = 2\naverage_requests_per_s = 1\nprompt_tokens_mean = 1000\n"
        "prompt_tokens_high = 2000\noutput_tokens_mean = 500\noutput_tokens_high = 1000\nttft_target_s = 10\n"
        'tpot_target_s = 1\nsizing = "littles-law"\n[[option]]\nname = "r1"\ngpu = "H200"\nmodel = "DeepSeek-R1"\n'
        'gpus_per_replica = 8\npricing = "cloud"\n'
    )
    s = load_scenario(scenario)
    result = evaluate(s.option[0], s.workload, default_catalog(), s.traffic_change)
    assert result.time_range == pytest.approx((low, high))


def test_plan_leaves_the_line_out_where_the_margin_is_its_own_range():
    """A GPU and engine with no serving figures of the class: the review sizes with the prediction range itself
    (``margin_range``'s "none" case: no figure of that engine and class anywhere), so there is nothing to add.
    The csv has no row of the 'ideal' engine (the roofline with no engine's overheads) on any GPU."""
    with open(ROOT / "catalogs" / "reference" / "heldout_serving_residuals.csv", newline="") as f:
        assert not any((r["engine"], r["architecture"]) == ("ideal", "dense") for r in csv.DictReader(f))
    out = run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096", "--engine", "ideal")
    assert out.exit_code == 0, out.output
    assert "Budget review's margin" not in out.output


def test_readme_quotes_the_two_ranges_as_plan_gives_them():
    """README "Assumptions and limits": 'DeepSeek-R1 on 8 x H200 under vLLM, +34% / +148% beside its own -28% / +9%'
    are plan's serving margin and its own range for that deployment (the DeepSeek-R1 plan at 8,192 tokens)."""
    from planner.report import plan

    p = plan("H200", "deepseek-r1", 8192, gpus=8)
    (low, high), (own_low, own_high) = p.serving_margin, p.time_residuals
    readme = (ROOT / "README.md").read_text()
    assert (
        f"DeepSeek-R1 on 8 x H200 under vLLM, {low:+.0%} / {high:+.0%} beside its own {own_low:+.0%} / {own_high:+.0%}"
    ) in " ".join(readme.split())
