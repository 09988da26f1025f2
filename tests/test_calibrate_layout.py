"""calibrate takes a result file's deployment as validate does: --parallelism, -w and -k, else the file's
``--metadata`` data_parallel_size / expert_parallel_size / pipeline_parallel_size / notes (``cli.accuracy.result_rows``
and ``run_layout_options``, the code validate uses), and its text starts with the deployment each run is predicted as.

The run is tests/test_trial31_valopts.py's DPEP result (trial 31's layout-reading file: the InferenceX issue 870
concurrency-64 run's figures with ``vllm bench serve --metadata data_parallel_size=8 notes=...``, a closed loop of 64
on 8 x H200): its TPOT and output throughput are the two figures fitted.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli_support import one_line, run
from tests.test_trial31_valopts import DPEP, TEAM_RUNS

RUN = ["--gpu", "H200", "--gpus", "8"]
HEAD = "predicted as H200 SXM 141GB, DeepSeek-R1, vLLM"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("callayout")
    (d / "vllm-dpep.json").write_text(json.dumps(DPEP))
    (d / "team_runs.csv").write_text(TEAM_RUNS)
    return {"json": d / "vllm-dpep.json", "csv": d / "team_runs.csv", "dir": d}


def calibrate(files, *extra: str):
    return run("calibrate", str(files["json"]), *RUN, *extra, "-o", str(files["dir"] / "c.toml"), "--force")


@pytest.fixture(scope="module")
def told(files):
    return calibrate(files, "--parallelism", "dp-ep", "-k", "fp8")


@pytest.fixture(scope="module")
def as_tp(files):
    return calibrate(files, "--parallelism", "tp")


def before(result) -> float:
    """The fit's median |error| before the factors: the rows as predicted as their deployment."""
    return float(re.search(r"1 row; median \|error\| ([\d.]+)% ->", result.stdout).group(1))


def test_calibrate_takes_the_layout_and_kv_precision_of_a_result_file(told, files):
    """The trial's validate command's options, given to calibrate: DEP8 (dp-ep over --gpus 8), fp8 KV, the
    checkpoint's fp8 weights; the header names each fact's source as validate's does; the file's own layout key is set
    aside with validate's note, and the check it suggests is validate with the same options."""
    assert told.exit_code == 0, told.output
    head = told.stdout.splitlines()[0]
    assert head.startswith(f"{files['json']}: {HEAD}, DEP8, fp8 weights, fp8 KV (layout: --parallelism;"), head
    assert "KV: --kv-precision" in head and told.stdout.splitlines()[1] == ""
    assert "--metadata data_parallel_size set aside: --parallelism given" in told.stderr
    assert "--gpu H200 --gpus 8 --parallelism dp-ep --kv-precision fp8" in told.stderr  # the validate check


def test_the_layout_is_read_from_the_metadata_as_validate_reads_it(files, told):
    """Without the options: data_parallel_size=8 with --enable-expert-parallel in notes is DEP8, the KV the model's
    default (bf16), as tests/test_trial31_valopts.py's validate run reads the same file; the fit starts from the same
    predictions as with --parallelism dp-ep (the KV precision moves neither figure of a batch of 64 at 922 tokens
    here: the before-error is the same 13.8%, read off the told run); the key ``team`` is named, as validate does."""
    r = calibrate(files)
    assert r.exit_code == 0, r.output
    assert f"{HEAD}, DEP8, fp8 weights, bf16 KV (layout: --gpus and the file's metadata" in r.stdout.splitlines()[0]
    assert before(r) == before(told) == 13.8
    warnings = [line for line in r.stderr.splitlines() if "--metadata key" in line]
    assert len(warnings) == 1 and "key team not read; calibrate reads" in warnings[0], r.stderr


def test_the_rows_are_fitted_as_the_deployment_named(told, as_tp):
    """--parallelism tp predicts the same run as TP8: its before-fit error differs from DEP8's (9.8% vs 13.8%,
    ``calibrate`` on this file at 8 x H200), so the layout reaches the fit and is not only printed."""
    assert as_tp.exit_code == 0, as_tp.output
    assert f"{HEAD}, TP8, fp8 weights, bf16 KV (layout: --parallelism;" in as_tp.stdout.splitlines()[0]
    assert before(as_tp) == 9.8 and before(told) == 13.8


def test_calibrate_reads_the_rows_validate_reads(files):
    """One reader: calibrate's rows (``read_measurement_cells``) equal validate's (``_read_result_file``) for the same
    options."""
    from planner.catalog import default_catalog
    from planner.cli.accuracy import RunLayout, _read_result_file, read_measurement_cells

    cat = default_catalog()
    layout = RunLayout("dp-ep", None, "fp8").checked(cat)
    mine = [r for r, _ in read_measurement_cells(files["json"], "H200", None, 8, cat, layout)]
    theirs = _read_result_file(files["json"], cat, "H200", 8, None, None, False, layout)
    assert [(r.parallelism, r.kv_precision, r.gpus) for r in mine] == [("dp-ep", "fp8", 8)]
    assert repr(mine) == repr(theirs)  # (NaN figures compare unequal; their reprs match)


def test_the_layout_options_are_for_a_result_file(files):
    """A CSV names its layout in its columns and --measure times this machine: --parallelism is refused (exit 2) in one
    line for both, and an unknown precision with plan's lookup, as validate does."""
    line = one_line(
        run("calibrate", str(files["csv"]), "--parallelism", "dp-ep", "-o", str(files["dir"] / "x.toml")), 2
    )
    assert "--parallelism names what a result file (JSON) does not say" in line and "data_parallel_size" in line
    r = run("calibrate", "--measure", "--parallelism", "dp-ep", "-o", str(files["dir"] / "x.toml"))
    assert r.exit_code == 2 and "--measure times this GPU" in r.stderr
    line = one_line(calibrate(files, "-k", "fp9"), 2)
    assert "--kv-precision 'fp9': unknown precision 'fp9'; did you mean fp8" in line
