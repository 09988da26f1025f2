"""bench/ttft_parts.py: light-load TTFT split into front end, queue + steps and the stall a new prompt causes."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

from step_operators import step_terms  # noqa: E402
from ttft_parts import affected_share, length_pairs, parts  # noqa: E402

from planner.accuracy.frontend import lightest_runs  # noqa: E402
from planner.accuracy.published import load_decode_rows, reference_dir  # noqa: E402

#: gpustack docs/performance-lab/qwen3-8b/h100-latency.md (commit 47277d79), section 1, `vllm bench serve` chat at
#: concurrency 4 on one H100: vLLM 0.11.0 median TTFT 60.26 ms, ITL 7.37 / 40.98 ms (p50 / p99); SGLang 0.5.3.post3
#: 27.25 ms, ITL 7.04 / 11.48 ms. The shipped rows LD068 (vLLM) and LD069 (SGLang).
VLLM_RUN, SGLANG_RUN = "LD068", "LD069"


@pytest.fixture(scope="module")
def loaded():
    return {r.record_id: r for r in load_decode_rows(reference_dir() / "load_public.csv")}


def test_affected_share_counts_the_other_streams(loaded):
    """At concurrency 4 with 221-token answers, each new prompt lands in 3 other streams' 220 gaps: 3 / 220 of the
    gaps follow one (over the 1% the stall needs); a rated run states no concurrency and gets 0."""
    assert affected_share(loaded[VLLM_RUN]) == pytest.approx(3 / 220)
    assert affected_share(loaded["LD005"]) == 0.0  # vLLM 0.14.1 at 0.5 requests/s


def test_parts_add_up_to_the_published_median(loaded):
    """The residual is the published median TTFT less the simulated one without a front end; the prompt's prefill
    step alone is the model's prefill of one 233-token prompt."""
    r = loaded[VLLM_RUN]
    p = parts(r)
    assert p["published"] == pytest.approx(60.26)
    assert p["simulated"] + p["residual"] == pytest.approx(p["published"], rel=1e-12)
    assert p["prefill"] == pytest.approx(step_terms(r, prefill=True, batch=1.0, tokens=233.0)["step"] * 1e3)


def test_stall_separates_the_engines_on_one_host(loaded):
    """Same host, client, model and prompts: vLLM 0.11's ITL p99 sits 33.6 ms over its median, SGLang's 4.4 ms, so a
    new prompt stalls vLLM's other streams by 30 ms or more beyond what the simulation gives either engine, and
    SGLang's by less than 5 ms (docs/accuracy.md, "TTFT at the lightest loads")."""
    vllm, sglang = parts(loaded[VLLM_RUN]), parts(loaded[SGLANG_RUN])
    assert vllm["stall"] - sglang["stall"] > 30.0
    assert sglang["stall"] < 5.0


def test_lightest_runs_keep_each_sweeps_lowest_load(loaded):
    """gpustack's vLLM Qwen3-8B sweep at concurrency 1, 2, 4 and 8 (LD085, LD086, LD068, LD087) contributes only its
    concurrency-1 run."""
    ids = {r.record_id for r in lightest_runs(loaded.values())}
    assert "LD085" in ids and not ids & {"LD086", "LD068", "LD087"}


def test_length_pairs_read_slope_and_intercept():
    """NIM 1.8.0, Llama-3.3-70B on 2 x H100 at concurrency 1 (NIM18-009, NIM18-001): mean TTFT 47.8 ms at 500 prompt
    tokens and 406.8 ms at 5,000, a slope of 79.8 us a token and an intercept of 7.9 ms."""
    rows = [r for r in load_decode_rows() if r.record_id in ("NIM18-001", "NIM18-009")]
    (line,) = [x for x in length_pairs(rows) if "NIM18-009/NIM18-001" in x]
    assert "slope 79.8 /" in line and "intercept 7.9 /" in line
