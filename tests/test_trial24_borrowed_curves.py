"""Trial 24 F16: ``planner plan --gpu MI300X`` warns "kernel curves not measured on MI300X: its GEMM rates are H100
SXM 80GB's x 668.4 / 794.5 ...", while ``planner export`` ranked an MI300X option second and said nothing of it on
the console, the Summary or the markdown's warnings. The review now carries plan's own sentence
(``planner.engines.kernel_curves.curves_note``), once per such GPU however many options run on it."""

from __future__ import annotations

import tomllib

import pytest

from planner import plan
from planner.catalog import default_catalog
from planner.cli.export import summary_lines
from planner.engines.kernel_curves import curves_note
from planner.export.review import build_review
from planner.export.scenario import parse_scenario

SCENARIO = """
title = "H100 against MI300X"
[workload]
peak_requests_per_s = 40
average_requests_per_s = 16
prompt_tokens_mean = 2000
prompt_tokens_high = 2000
output_tokens_mean = 400
output_tokens_high = 400
ttft_target_s = 1.5
tpot_target_s = "60 ms"
latency_margin = 0.25
sizing = "littles-law"  # the warnings do not depend on how the replicas were counted
[defaults]
model = "Llama-3.3-70B"
weight_precision = "fp8"
pricing = "cloud"
[[option]]
name = "H100 fp8"
gpu = "H100"
[[option]]
name = "MI300X fp8"
gpu = "MI300X"
cloud_usd_per_gpu_hour = 6.0  # dearer than H100, so H100 is recommended and MI300X ranks below it
[[option]]
name = "MI300X fp8, 2 a replica"
gpu = "MI300X"
gpus_per_replica = 2
cloud_usd_per_gpu_hour = 6.0
"""


@pytest.fixture(scope="module")
def review():
    return build_review(parse_scenario(tomllib.loads(SCENARIO)), default_catalog(), date="2026-12-06")


def test_plans_sentence_is_the_reviews(review):
    catalog = default_catalog()
    note = curves_note("MI300X", catalog.gpu("MI300X").architecture)
    assert note.startswith("kernel curves not measured on MI300X: its GEMM rates are H100 SXM 80GB's x 668.4 / 794.5")
    assert note in plan("MI300X", "llama3.3-70b", 4096, weight_precision="fp8").warnings  # plan's own words
    assert list(review.warnings).count(note) == 1  # two MI300X options, one sentence
    assert not any("kernel curves not measured on H100" in w for w in review.warnings)  # H100's curves are its own


def test_the_console_says_it_of_an_option_not_recommended(review):
    """The console printed the recommended option's warnings only: H100's here, whose curves are its own."""
    note = curves_note("MI300X", default_catalog().gpu("MI300X").architecture)
    assert review.recommended.option.name == "H100 fp8" and note not in review.recommended.warnings
    assert [r.option.name for r in review.results][1:] == ["MI300X fp8", "MI300X fp8, 2 a replica"]
    lines = summary_lines(review)
    assert lines.count(f"  warning: {note}") == 1
    assert {r.gpu.name for r in review.results} == {"H100 SXM 80GB", "MI300X"}
