"""Trial 31 (F3, F9, F10, F13): validate told a result file's layout and precisions, calibrate's error per quantity,
plan's --parallelism help naming the engines' flags, and a vLLM release older than the timed line.

The runs are InferenceX issue 870's SGLang 0.5.7 DeepSeek-R1 runs on 8 x H200 (TP8, 922/922 tokens, concurrency 8-64:
https://github.com/SemiAnalysisAI/InferenceX/issues/870, as /work/trial31-findings.md's Appendix transcribes them);
the result JSON is the trial's layout-reading file: the concurrency-64 run's figures with the ``--metadata`` that
``vllm bench serve --metadata data_parallel_size=8 notes=...`` writes (its median TTFT and ITL invented by the
trial, not a published run; only the layout read from it is checked here).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from tests.cli_support import run

TEAM_RUNS = """\
record_id,engine,engine_version,gpu,num_gpus,tensor_parallel_size,model,weight_dtype,kv_cache_dtype,batching,dataset,batch_size_or_concurrency,num_prompts,input_len,output_len,ttft_mean_ms,ttft_p99_ms,tpot_mean_ms,tpot_p99_ms,output_throughput,notes
IX-c8,SGLang,0.5.7,H200,8,8,DeepSeek-R1,fp8,auto,serving concurrency,random,8,80,922,922,330.6,1975.4,12.8,14.3,596.8,InferenceX issue 870
IX-c16,SGLang,0.5.7,H200,8,8,DeepSeek-R1,fp8,auto,serving concurrency,random,16,160,922,922,356.0,2149.4,17.2,18.5,895.2,InferenceX issue 870
IX-c32,SGLang,0.5.7,H200,8,8,DeepSeek-R1,fp8,auto,serving concurrency,random,32,320,922,922,426.5,2644.1,25.6,27.1,1208.8,InferenceX issue 870
IX-c64,SGLang,0.5.7,H200,8,8,DeepSeek-R1,fp8,auto,serving concurrency,random,64,640,922,922,423.1,2741.1,34.6,37.0,1788.8,InferenceX issue 870
"""

DPEP = {
    "date": "20261201-101500", "backend": "vllm", "model_id": "deepseek-ai/DeepSeek-R1-0528",
    "tokenizer_id": "deepseek-ai/DeepSeek-R1-0528", "num_prompts": 640, "request_rate": "inf", "burstiness": 1.0,
    "max_concurrency": 64, "engine_version": "0.19.0", "data_parallel_size": "8",
    "notes": "vllm serve -dp 8 --enable-expert-parallel", "team": "inference", "duration": 330.0, "completed": 640,
    "total_input_tokens": 590080, "total_output_tokens": 590080, "request_throughput": 1.94,
    "output_throughput": 1788.8, "total_token_throughput": 3577.6, "mean_ttft_ms": 423.1, "median_ttft_ms": 300.0,
    "p99_ttft_ms": 2741.1, "mean_tpot_ms": 34.6, "median_tpot_ms": 34.5, "p99_tpot_ms": 37.0, "mean_itl_ms": 34.6,
    "median_itl_ms": 34.0, "p99_itl_ms": 60.0,
}  # fmt: skip

RUN = ["--gpu", "H200", "--gpus", "8"]


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("t31")
    (d / "team_runs.csv").write_text(TEAM_RUNS)
    (d / "vllm-dpep.json").write_text(json.dumps(DPEP))
    return {"csv": d / "team_runs.csv", "json": d / "vllm-dpep.json", "dir": d}


@pytest.fixture(scope="module")
def told(files):
    """The trial's command: the layout and KV precision given on the command line."""
    return run("validate", "--decode", str(files["json"]), *RUN, "--parallelism", "dp-ep", "-k", "fp8")


def configurations(result) -> set[str]:
    return {m for m in re.findall(r"DeepSeek-R1-0528 H200 (\S+)", result.stdout)}


def test_validate_takes_the_layout_and_kv_precision_of_a_result_file(told):
    """--parallelism dp-ep over --gpus 8 is DEP8 (``model.layouts.layout_label``), -k fp8 the KV; the weights are
    the checkpoint's fp8 (DeepSeek-R1 ships fp8). The run is compared (exit 0 without --check), every row as DEP8."""
    assert told.exit_code == 0, told.output
    head = told.stdout.splitlines()[0]  # the header, above the tables
    assert "vllm-dpep.json: predicted as H200 SXM 141GB, DeepSeek-R1, vLLM, DEP8, fp8 weights, fp8 KV" in head
    assert "layout: --parallelism" in head and "KV: --kv-precision" in head
    assert configurations(told) == {"DEP8"}
    # the CLI wins: the file's own layout key is set aside, said once
    assert "--metadata data_parallel_size set aside: --parallelism given" in told.stderr


def test_the_layout_is_read_from_the_metadata_and_unread_keys_are_named(files):
    """Without --parallelism, ``data_parallel_size=8`` with ``--enable-expert-parallel`` in notes is read as the CSV
    reads those columns (vLLM -tp 1 -dp 8 with EP: DEP8 on --gpus 8); the KV is the model's default, bf16. The key
    ``team`` is read by nothing: one warning naming it."""
    r = run("validate", "--decode", str(files["json"]), *RUN)
    assert r.exit_code == 0, r.output
    assert "DeepSeek-R1, vLLM, DEP8, fp8 weights, bf16 KV" in r.stdout.splitlines()[0]
    assert configurations(r) == {"DEP8"}
    warnings = [line for line in r.stderr.splitlines() if "--metadata key" in line]
    assert len(warnings) == 1 and "key team not read" in warnings[0], r.stderr
    assert "data_parallel_size" not in warnings[0].split("not read")[0]


def test_json_carries_the_deployment(files):
    """--json: the header's line under "deployments" (stdout stays one JSON object)."""
    r = run("validate", "--decode", str(files["json"]), *RUN, "-w", "fp8", "-k", "fp8", "--json")
    assert r.exit_code == 0, r.output
    (line,) = json.loads(r.stdout)["deployments"]
    assert "DEP8, fp8 weights, fp8 KV" in line and "weights: --weight-precision" in line


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        (["-k", "fp9"], "--kv-precision 'fp9': unknown precision 'fp9'; did you mean fp8"),
        (["-w", "int3"], "--weight-precision 'int3': unknown precision"),
    ],
)
def test_an_unknown_precision_is_one_line(files, extra, words):
    r = run("validate", "--decode", str(files["json"]), *RUN, *extra)
    assert r.exit_code == 2, r.output
    assert words in r.stderr and "Traceback" not in r.output
    assert len(r.stderr.strip().splitlines()) == 1


def test_layout_options_are_for_a_result_file_and_plans_names(files):
    """A CSV names its layout in its columns: --parallelism is refused there in one line (exit 2); a name plan does
    not take is refused with plan's list (``deploy.check_parallelism``)."""
    r = run("validate", "--decode", str(files["csv"]), "--parallelism", "dp-ep")
    assert r.exit_code == 2 and "data_parallel_size" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    r = run("validate", "--decode", str(files["json"]), *RUN, "--parallelism", "ep")
    assert r.exit_code == 2 and "is not one of tp, tp-ep, dp-ep, pp" in r.stderr


@pytest.fixture(scope="module")
def calibrated(files):
    return run("calibrate", str(files["csv"]), "-o", str(files["dir"] / "cal.toml"))


def test_calibrate_names_each_quantity_and_what_it_does_not_fit(calibrated):
    """The four closed-loop runs give 4 TPOT and 4 throughput figures to fit (``fit._observations``); their TTFT
    (a server's, with its queue) and p99s are not fitted, and calibrate says so instead of one unnamed error."""
    r = calibrated
    assert r.exit_code == 0, r.output
    assert "over the 8 figures fitted (TPOT, output throughput)" in r.stdout
    assert re.search(r"^  TPOT \(4 figures\): median \|error\| [\d.]+% -> [\d.]+%", r.stdout, re.M)
    assert re.search(r"^  output throughput \(4 figures\): median \|error\|", r.stdout, re.M)
    assert "not fitted: TTFT of 4 rows" in r.stdout and "TTFT p99 ms, TPOT p99 ms" in r.stdout


def test_calibrate_says_where_a_factor_sits_at_its_bound_and_what_the_file_changes(calibrated, files):
    """The trial's file: bandwidth_efficiency and decode_flop_efficiency written at 1.0, the fit's top
    (``fit.EFFICIENCY_BOUNDS``); each is named under the factors (stdout: the fit does not miss because of them, so no
    warning on stderr, ``PINNED_MISS``). The entry is keyed by GPU only (no --engine): the note says
    it re-times every engine's and every model's plans on that GPU."""
    r = calibrated
    text = (files["dir"] / "cal.toml").read_text()
    for name in ("bandwidth_efficiency", "decode_flop_efficiency"):
        # at the bound to the fit's tolerance: since s211's SGLang eager launch floor (h-b200moe) the bandwidth
        # factor stops at 0.9997, which calibrate reads (and prints) as at its bound
        written = float(re.search(rf"^{name} = ([\d.]+)$", text, re.M).group(1))
        assert 0.999 <= written <= 1.0, (name, written)
    for name in ("bandwidth_efficiency", "decode_flop_efficiency"):
        assert f"  at its bound: {name} = 1 sits at the fit's upper bound" in r.stdout
    assert (
        "applies to every plan, validate and export on H200 SXM 141GB with every engine (--engine NAME writes an "
        "entry for one engine only) and every model; the rows' 8-GPU groups and models of 684.5B parameters only"
    ) in r.stdout


def test_plan_help_names_the_engine_flags_of_each_layout():
    """docs/model.md, "Data-parallel attention and expert parallelism": vLLM --data-parallel-size g
    --enable-expert-parallel, SGLang --tp g --dp g --enable-dp-attention with --ep-size g; --enable-dp-attention
    alone ("dp-tp") is not modelled."""
    r = run("plan", "--help")
    assert r.exit_code == 0
    text = " ".join(r.stdout.split()).replace("- ", "-")  # click wraps at hyphens
    assert "dp-ep = vLLM --data-parallel-size g --enable-expert-parallel" in text
    assert "SGLang --tp g --dp g --enable-dp-attention --ep-size g" in text
    assert "Not modelled: SGLang --enable-dp-attention without --ep-size" in text and '"dp-tp"' in text


@pytest.mark.parametrize(("release", "warned"), [("0.7.0", True), ("0.11.0", False)])
def test_an_old_vllm_release_says_its_step_time_is_not_modelled(release, warned):
    """vLLM 0.7.0 is older than 0.10.1.1, the oldest release read (``profiles.OLDEST_LOGGED_VLLM``), and runs V0
    (before 0.8, ``profiles.VLLM_V1_VERSION``); 0.11.0 has its own profile and no such line."""
    r = run("plan", "--gpu", "H100", "--model", "Llama-3.1-8B", "--engine", f"vllm=={release}", "--context", "8k")
    assert r.exit_code == 0, r.output
    line = f"warning: vLLM {release}'s step time is not modelled either"
    assert (line in r.output) is warned
    if warned:
        assert "runs the V0 engine" in r.output


def test_a_factor_at_its_bound_says_whether_the_runs_ask_for_more(files):
    """``top_bound_lines`` on the trial's four runs at planner's own factors (bandwidth and decode FLOP efficiency 1,
    the fit's top): as measured, 5% more bandwidth fits them no better (the calibrate run above); with every TPOT and
    throughput made 25% faster than measured, the rows ask for more than the bound allows and the line says so."""
    from dataclasses import replace

    from planner.accuracy.fit import FitResult, residuals
    from planner.catalog import default_catalog
    from planner.cli.accuracy import read_measurement_cells, top_bound_lines
    from planner.engines.profiles import engine_profile

    cat = default_catalog()
    eng = engine_profile(None)
    rows = [r for r, _ in read_measurement_cells(files["csv"], None, None, 1, cat)]
    fast = [replace(r, tpot_s=r.tpot_s * 0.75, throughput_tokens_per_s=r.throughput_tokens_per_s / 0.75) for r in rows]
    factors = {"bandwidth_efficiency": 1.0, "decode_flop_efficiency": eng.decode_flop_efficiency}
    assert eng.bandwidth_efficiency == 1.0  # profiles.KERNEL_FACTORS: the kernels as measured
    after = residuals(fast, eng, cat)
    fit = FitResult(factors, tuple(factors), after, after, (), len(fast))
    (line,) = [x for x in top_bound_lines(fit, fast, eng, cat) if x.startswith("bandwidth_efficiency")]
    assert "the runs are faster than the model can express there" in line, line
