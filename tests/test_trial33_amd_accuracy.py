"""Trial 33 (an AMD MI300X / MI325X performance engineer): which table a range's "no held-out figures on MI300X"
counts (F3), and validate's notes on a GPU's borrowed kernel and all-reduce rates (F7)."""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from planner.accuracy.ranges import RANGE_TABLE, load_regions, range_table_words
from planner.cli import main
from planner.engines.allreduce_table import borrowed_note
from planner.engines.kernel_curves import curves_note

# Llama-3.1-70B FP8 on 8 x MI325X, vLLM 0.11.0, as Tomás's runs file gives them (trial 33 F7: tomas-runs.csv)
MI325X_RUNS = """record_id,gpu,model,tensor_parallel_size,weight_dtype,batch,input_len,output_len,tpot_ms,ttft_ms,batching,engine,engine_version
T1,AMD Instinct MI325X,meta-llama/Llama-3.1-70B-Instruct,8,fp8,1,2048,128,9.0,,static,vllm,0.11.0
T2,AMD Instinct MI325X,meta-llama/Llama-3.1-70B-Instruct,8,fp8,8,2048,128,12.0,,static,vllm,0.11.0
"""


def test_mi300x_has_no_figures_in_the_range_table():
    """The premise of F3: heldout_residuals.csv (the fitted protocol's leave-one-source-out figures) has no MI300X
    region, while bench/heldout.py's held-out rows do (docs/accuracy.md's per-vendor table)."""
    assert ("gpu", "MI300X") not in load_regions()


def test_plan_names_the_table_its_widening_counts():
    """`planner plan --gpu MI300X ... --batch 1` (the trial's command) says the GPU has no figures *in the range
    table* and where the other held-out runs are, right after the GPU's factor."""
    args = ["plan", "--gpu", "MI300X", "--model", "llama3.1-70b", "-w", "fp8", "--context", "2048", "--gpus", "8"]
    out = CliRunner().invoke(main, [*args, "--batch", "1"]).output
    line = next(x for x in out.splitlines() if x.startswith("Time ranges widened"))
    assert f"no held-out figures on MI300X (x1.06) {RANGE_TABLE}; kernel curves of" in line, line
    assert "heldout_residuals.csv" in RANGE_TABLE and "bench/heldout.py" in RANGE_TABLE


@pytest.mark.parametrize(
    "widened",
    [
        "x1.12: no held-out figures at TP 8 (x1.12)",  # another dimension: nothing to say of the GPU
        "x1.06: no held-out figures on MI300X (x1.06)",  # another GPU's words
    ],
)
def test_range_table_words_only_where_the_gpu_lacks_figures(widened):
    assert range_table_words(widened, "B200 180GB") == widened


def test_range_table_words_follow_the_gpus_factor():
    text = "x1.13: no held-out figures on B200 180GB (x1.06), no held-out figures at TP 8 (x1.07)"
    assert range_table_words(text, "B200 180GB") == (
        f"x1.13: no held-out figures on B200 180GB (x1.06) {RANGE_TABLE}, no held-out figures at TP 8 (x1.07)"
    )


@pytest.fixture(scope="module")
def mi325x_validate(tmp_path_factory):
    path = tmp_path_factory.mktemp("t33") / "tomas-runs.csv"
    path.write_text(MI325X_RUNS)
    runner = CliRunner()
    return runner.invoke(main, ["validate", "--decode", str(path)]), runner.invoke(
        main, ["validate", "--decode", str(path), "--json"]
    )


def _plans_notes():
    """The two warnings `planner plan --gpu MI325X --gpus 8` prints (planner.report), from the same functions."""
    from planner.catalog import default_catalog

    cat = default_catalog()
    g = cat.gpu("MI325X")
    return [
        curves_note(g.name, g.architecture),
        borrowed_note(g, g.interconnect_bytes_per_s, cat, 8),
    ]


def test_validate_says_plans_borrowed_rate_notes_once_per_gpu(mi325x_validate):
    text, _ = mi325x_validate
    curves, allreduce = _plans_notes()
    assert curves.startswith("kernel curves not measured on MI325X: its GEMM rates are H100 SXM 80GB's")
    assert allreduce.startswith("all-reduce not measured on MI325X: MI300X's table")
    for note in (curves, allreduce):
        assert text.output.count(f"note: {note}") == 1, text.output  # two rows on MI325X: said once


def test_validate_json_carries_the_notes(mi325x_validate):
    _, as_json = mi325x_validate
    data = json.loads(as_json.stdout)
    for note in _plans_notes():
        assert f"note: {note}" in data["notes"]
