"""SGLang's published eager decode surplus per layer (catalogs/reference/eager_decode_published.csv, sgl-project/sglang
pull request 1401) and the s123 rule that reads it (``planner.engines.profiles.with_sglang_eager_decode``): the
constants are re-derived from the quoted latencies, and a decode step above SGLang 0.4's largest CUDA graph (160)
pays them while a graphed one does not."""

from __future__ import annotations

import csv
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from planner.engines import profiles
from planner.model.decode import eager_surplus_s

PATH = Path(__file__).resolve().parents[1] / "catalogs" / "reference" / "eager_decode_published.csv"
with PATH.open(encoding="utf-8") as _f:
    ROWS = {r["record_id"]: r for r in csv.DictReader(_f)}


def test_each_row_quotes_its_graph_latency_and_cites_its_pull_request():
    for r in ROWS.values():
        assert r["source"] == "https://github.com/sgl-project/sglang/pull/1401"
        assert f"{float(r['graph_ms']) / 1000:.5f}" in r["quote"], r["record_id"]


def test_the_dense_layer_surplus_is_the_llama_rows_difference_over_its_layers():
    r = ROWS["SGL1401-LLAMA3-8B"]
    per_layer_s = (float(r["eager_ms"]) - float(r["graph_ms"])) / 1000 / int(r["layers"])
    assert per_layer_s == pytest.approx(profiles.SGLANG_EAGER_LAYER_S, rel=1e-9)
    assert float(r["eager_surplus_us_per_layer"]) == pytest.approx(69.375, abs=1e-3)


def test_the_moe_layer_surplus_is_the_deepseek_lite_rows_after_its_dense_layer():
    r = ROWS["SGL1401-DSV2-LITE"]
    assert float(r["eager_ms"]) == pytest.approx(4 * float(r["graph_ms"]))  # the heading's "4x faster"
    dense = int(r["layers"]) - int(r["moe_layers"])
    surplus_s = (float(r["eager_ms"]) - float(r["graph_ms"])) / 1000 - dense * profiles.SGLANG_EAGER_LAYER_S
    assert surplus_s / int(r["moe_layers"]) == pytest.approx(profiles.SGLANG_EAGER_MOE_LAYER_S, rel=1e-9)
    assert float(r["eager_surplus_us_per_layer"]) == pytest.approx(715.024, abs=1e-3)


#: DeepSeek-R1's layers (3 dense, then 58 MoE) and SGLang 0.4's eager limits as ``with_sglang_eager_decode`` sets
#: them; the surplus reads only these fields
R1 = SimpleNamespace(num_layers=61.0, moe_layers=58.0)
SGLANG_04 = SimpleNamespace(
    decode_graph_max_batch=profiles.SGLANG_04_GRAPH_MAX_BATCH,
    eager_layer_s=profiles.SGLANG_EAGER_LAYER_S,
    eager_moe_layer_s=profiles.SGLANG_EAGER_MOE_LAYER_S,
)


@pytest.mark.parametrize("batch,expected_ms", [(160.0, 0.0), (161.0, 41.68), (300.0, 41.68)])
def test_deepseek_r1_pays_the_surplus_only_above_sglang_04s_largest_graph(batch, expected_ms):
    assert eager_surplus_s(R1, SGLANG_04, batch) * 1e3 == pytest.approx(expected_ms, abs=0.01)


def test_no_graph_limit_means_no_surplus_and_arrays_gate_per_batch():
    off = SimpleNamespace(decode_graph_max_batch=0.0, eager_layer_s=1.0, eager_moe_layer_s=1.0)
    assert eager_surplus_s(R1, off, 300.0) == 0.0
    got = eager_surplus_s(R1, SGLANG_04, np.array([88.0, 160.0, 300.0])) * 1e3
    assert got == pytest.approx([0.0, 0.0, 41.68], abs=0.01)


def test_only_sglang_04_line_releases_run_eager_decode_steps():
    base = profiles.engine_profile("sglang")
    assert base.decode_graph_max_batch == 0.0  # the profile users and the workbook plan with: no eager step
    rocm = "rocm/sgl-dev:upstream_20250312_v1 (ROCm SGLang build of 2025-03-12)"
    assert profiles.with_sglang_eager_decode(base, "SGLang", rocm).decode_graph_max_batch == 160.0
    assert profiles.with_sglang_eager_decode(base, "sglang", "0.4.3").decode_graph_max_batch == 160.0
    assert profiles.with_sglang_eager_decode(base, "sglang", "v0.5.3") is base
    assert profiles.with_sglang_eager_decode(base, "vllm", "0.4.3") is base


def test_one_eager_copy_per_profile():
    """The facts caches key on the profile object (``planner.catalog.resolve``: ``id(engine)``), so every SGLang 0.4
    row of one base profile gets the same copy, as ``_copy_with`` gives every per-release reading;
    a fresh copy per row would resolve the GPU and model numbers again for each."""
    base = profiles.engine_profile("sglang")
    first = profiles.with_sglang_eager_decode(base, "sglang", "0.4.3")
    assert profiles.with_sglang_eager_decode(base, "SGLang", "v0.4.6.post5") is first


def test_a_serving_runs_step_table_jumps_at_the_graph_limit_not_across_the_grid():
    """The serving simulation reads decode steps from a table interpolated over a batch grid (exact to 64, then
    geometric): the eager surplus must step up between batch 160 and 161, as ``decode_step`` prices it, not ramp
    between the grid points around them (a batch of 158 paying part of it, 162 not all of it). DeepSeek-R1 on eight
    H200 under SGLang 0.4: the table's 161 - 160 gap is the 58 MoE + 3 dense layers' surplus (41.68 ms) plus what one
    more sequence adds (under 0.5 ms), and the gaps beside it carry none of it (before s132: 5.3 ms of the 41.68)."""
    from planner.serving.benchmark import serving_setups

    eng = profiles.with_sglang_eager_decode(profiles.engine_profile("sglang"), "sglang", "0.4.3")
    _, setups, _ = serving_setups(
        "H200 SXM 141GB", "DeepSeek-R1", 1000.0, 1000.0, None, 2000, 1024, 16384, "sglang", None, 8,
        dict(weight_precision=None, kv_precision=None),
        dict(engine=eng, catalog=None, calibration=None, errors="raise"),
    )  # fmt: skip
    table = setups[0].table
    assert setups[0].cap > 170
    step = [table.decode_lo_s[b - 1] for b in (159, 160, 161, 162)]  # decode_lo_s[b - 1]: a batch of b
    assert 0 < step[1] - step[0] < 0.5e-3 and 0 < step[3] - step[2] < 0.5e-3  # one sequence more, graphed or not
    assert 41.68e-3 < step[2] - step[1] < 41.68e-3 + 0.5e-3
