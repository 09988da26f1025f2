"""``planner plan`` names the shipped published runs of the deployment it prints, with validate's error on each
(trial 22 F7: the plan's SGLang TP8 DeepSeek-V3.2 prediction is 4x off a shipped published H200 run, GPUSTACK-017,
and nothing in plan said so).

Expected values:
- GPUSTACK-017 (catalogs/reference/perf_public.csv): gpustack's SGLang v0.5.6.post2 TP8 DeepSeek-V3.2 run on 8 x H200,
  1,000 ShareGPT prompts at once, "Mean TPOT (ms): 1103.96 | Mean TTFT (ms): 11470.15 | Output token throughput
  (tok/s): 1427.44" (https://github.com/gpustack/gpustack/blob/47277d79f4a5bae12a2d25e9ecbed2a2177a5f2d/docs/
  performance-lab/deepseek-v3.2/h200.md#L134). Its predictions are whatever ``planner validate`` computes: the test
  recomputes them with validate's own functions (``validate_time``, ``validate_load``) and holds the shipped file
  (``bench/published_run_errors.py``) to them.
- The matching and ordering rules on rows made up here (``same_deployment_runs`` is a pure function of its rows).
"""

from __future__ import annotations

import csv
import json
import math

import pytest

from planner.accuracy.published import load_decode_rows, reference_dir
from planner.accuracy.same_deployment import (
    COLUMNS,
    FIGURES,
    RUN_ERRORS_FILE,
    Deployment,
    deployment_of,
    engine_family,
    run_words,
    same_deployment_runs,
    shipped_run_errors,
)
from planner.accuracy.validation import validate_load, validate_time
from planner.catalog import default_catalog
from tests.cli_support import run

CAT = default_catalog()
SGLANG_TP8 = Deployment("H200 SXM 141GB", "DeepSeek-V3.2", "sglang", "TP8", "fp8", "bf16")


def _row(record_id: str, tpot: tuple[float, float], **changed) -> dict[str, str]:
    """A file row of SGLANG_TP8 with a TPOT (predicted, published) and nothing else."""
    r = dict.fromkeys(COLUMNS, "")
    r |= {"record_id": record_id, "source_group": "src", "gpu": "H200 SXM 141GB", "model": "DeepSeek-V3.2"}
    r |= {"engine": "sglang", "release": "0.5.6", "layout": "TP8", "weights": "fp8", "kv": "bf16", "run": "a run"}
    r |= {"tpot_ms_predicted": str(tpot[0]), "tpot_ms_published": str(tpot[1])}
    return r | changed


class TestMatching:
    def test_every_key_must_agree(self):
        rows = [
            _row("A", (150, 673)),
            _row("other-gpu", (1, 9), gpu="H100 SXM 80GB"),
            _row("other-model", (1, 9), model="DeepSeek-R1"),
            _row("other-engine", (1, 9), engine="vllm"),
            _row("other-layout", (1, 9), layout="DEP8"),
            _row("other-weights", (1, 9), weights="bf16"),
            _row("other-kv", (1, 9), kv="fp8"),
            _row("speculative", (1, 9), speculative="yes"),
        ]
        assert [r.record_id for r in same_deployment_runs(SGLANG_TP8, rows)] == ["A"]

    def test_farthest_off_first_and_validates_signed_error(self):
        """150 / 673 - 1 = -77.7%; 120 / 100 - 1 = +20%; 60 / 100 - 1 = -40%: |error| 0.777, 0.4, 0.2."""
        rows = [_row("B", (120, 100)), _row("A", (150, 673)), _row("C", (60, 100))]
        found = same_deployment_runs(SGLANG_TP8, rows)
        assert [r.record_id for r in found] == ["A", "C", "B"]
        assert found[0].figures[0].error == pytest.approx(150 / 673 - 1)
        assert "TPOT predicted 150 ms vs 673 ms published (-78%)" in found[0].words()

    def test_a_run_without_a_usable_figure_is_left_out(self):
        assert same_deployment_runs(SGLANG_TP8, [_row("Z", (150, 673), tpot_ms_predicted="")]) == []
        assert same_deployment_runs(SGLANG_TP8, [_row("Z", (150, 0))]) == []  # validate's Check: 0 is no figure

    def test_a_plans_deployment(self):
        """An engine profile's release suffix is the engine; tp-ep on 8 GPUs is TEP8 (``layout_label``)."""
        assert engine_family("sglang-0.5.5") == "sglang" and engine_family("tensorrt-llm-0") == "tensorrt-llm"
        d = Deployment.planned("H200 SXM 141GB", "DeepSeek-V3.2", "sglang-0.5.5", "tp-ep", 8, "fp8", "bf16")
        assert d == Deployment("H200 SXM 141GB", "DeepSeek-V3.2", "sglang", "TEP8", "fp8", "bf16")


class TestTheShippedFile:
    def test_every_run_is_a_shipped_row(self):
        ids = set()
        for name in ("perf_public.csv", "decode_public.csv", "load_public.csv"):
            with open(reference_dir() / name, newline="", encoding="utf-8") as f:
                ids |= {r["record_id"] for r in csv.DictReader(row for row in f if not row.startswith("#"))}
        listed = [r["record_id"] for r in shipped_run_errors()]
        assert len(listed) > 1000 and len(set(listed)) == len(listed) and set(listed) <= ids

    def test_gpustack_017_is_the_farthest_off_sglang_tp8_run(self):
        """Its published figures as perf_public.csv has them (gpustack h200.md#L134)."""
        first = same_deployment_runs(SGLANG_TP8)[0]
        assert first.record_id == "GPUSTACK-017" and first.release == "0.5.6.post2"
        assert [(c.quantity, c.published) for c in first.figures] == [
            ("tpot_ms", 1103.96),
            ("ttft_ms", 11470.15),
            ("throughput_tok_s", 1427.44),
        ]
        assert first.run == "1,000 prompts at once, ShareGPT 219/197 tokens"

    @pytest.mark.parametrize(
        "ids", [("GPUSTACK-016", "GPUSTACK-017", "GPUSTACK-018", "GPUSTACK-032", "TRT12-167", "DM028")]
    )
    def test_benchmark_rows_are_as_validate_computes_them(self, ids):
        """validate_time on the rows (their own engine and release, no calibration: ``planner validate``): TP8 vLLM,
        SGLang and TensorRT-LLM, TEP8 (GPUSTACK-032), DEP8 (TRT12-167) and a static LMDeploy batch (DM028); the file
        holds each figure's prediction to 8 digits. Fails while the file is stale: PYTHONPATH=. python
        bench/published_run_errors.py."""
        rows = [r for r in load_decode_rows() if r.record_id in ids]
        self._agrees(rows, validate_time(rows, catalog=CAT).checks)

    def test_serving_rows_are_as_validate_computes_them(self):
        rows = [r for r in load_decode_rows(reference_dir() / "load_public.csv") if r.record_id in ("LD037", "LD038")]
        self._agrees(rows, validate_load(rows, catalog=CAT).checks)

    @staticmethod
    def _agrees(rows, checks):
        shipped = {r["record_id"]: r for r in shipped_run_errors()}
        compared = 0
        for c in checks:
            if c.quantity not in FIGURES or math.isnan(c.error):
                continue
            line = shipped[c.record_id]
            assert float(line[f"{c.quantity}_published"]) == c.published
            assert float(line[f"{c.quantity}_predicted"]) == pytest.approx(c.predicted, rel=1e-7), (
                f"{RUN_ERRORS_FILE} is stale for {c.record_id} {c.quantity}: run bench/published_run_errors.py"
            )
            compared += 1
        assert compared >= 2 * len(rows)
        for r in rows:  # the deployment recorded is the row's, as read now
            line = shipped[r.record_id]
            d = deployment_of(r, CAT)
            assert (line["gpu"], line["model"], line["engine"], line["layout"], line["weights"], line["kv"]) == (
                d.gpu,
                d.model,
                d.engine,
                d.layout,
                d.weights,
                d.kv,
            )
            assert line["run"] == run_words(r)


class TestPlan:
    ARGS = ("plan", "--gpu", "H200", "--model", "deepseek-v3.2", "--context", "8k", "--gpus", "8")

    def test_sglang_tp8_names_gpustack_017_first(self):
        out = run(*self.ARGS, "--engine", "sglang")
        assert out.exit_code == 0, out.output
        lines = out.output.splitlines()
        i = next(n for n, x in enumerate(lines) if x.startswith("Published runs of this deployment"))
        assert "in planner validate's tables, each predicted as it ran" in lines[i]
        assert "TP8, fp8 weights, bf16 KV); the 3 farthest off:" in lines[i]
        assert lines[i + 1].split()[0] == "GPUSTACK-017"
        assert "SGLang 0.5.6.post2, 1,000 prompts at once, ShareGPT 219/197 tokens: TPOT predicted" in lines[i + 1]
        assert "vs 1.10 s published (-" in lines[i + 1]
        assert lines[i - 1].startswith("Budget review's margin") and lines[i + 4].startswith("Cost at batch")

    def test_json_carries_every_run(self):
        out = run(*self.ARGS, "--engine", "sglang", "--json")
        runs = json.loads(out.output)["published_runs"]
        assert runs[0]["record_id"] == "GPUSTACK-017" and len(runs) == len(same_deployment_runs(SGLANG_TP8))
        assert runs[0]["figures"][0] == {
            "quantity": "tpot_ms",
            "predicted": runs[0]["figures"][0]["predicted"],
            "published": 1103.96,
            "error": pytest.approx(runs[0]["figures"][0]["predicted"] / 1103.96 - 1),
        }

    def test_the_python_api_carries_them_too(self):
        """``planner.plan`` is what plan prints: its ``published_runs`` and ``to_dict()["published_runs"]``."""
        import planner

        p = planner.plan("H200", "deepseek-v3.2", 8192, gpus=8, engine="sglang")
        assert [r.record_id for r in p.published_runs] == [r.record_id for r in same_deployment_runs(SGLANG_TP8)]
        assert p.to_dict()["published_runs"][0]["record_id"] == "GPUSTACK-017"
        assert p.to_dict()["published_runs"][0]["in_sample"] is False  # gpustack is not a fit source

    def test_a_deployment_without_published_runs_prints_none(self):
        out = run("plan", "--gpu", "H200", "--model", "qwen3-235b-a22b", "--context", "8k", "-w", "fp8", "--gpus", "8")
        assert out.exit_code == 0 and "Published runs of this deployment" not in out.output


def test_the_review_names_them_for_an_option_on_its_assumptions(tmp_path):
    """The option's kept group (8 GPUs, given) is SGLANG_TP8's deployment: its Assumptions row lists GPUSTACK-017
    first with validate's errors, as plan does."""
    scenario = tmp_path / "dsv32.toml"
    scenario.write_text(
        "[workload]\npeak_requests_per_s = 2\naverage_requests_per_s = 1\nprompt_tokens_mean = 1000\n"
        "prompt_tokens_high = 2000\noutput_tokens_mean = 200\noutput_tokens_high = 400\nhigh_percentile = 95\n"
        "ttft_target_s = 20\ntpot_target_s = 0.5\nsizing = 'littles-law'\n[[option]]\nname = 'sglang tp8'\n"
        "gpu = 'H200'\nmodel = 'deepseek-v3.2'\nengine = 'sglang'\ngpus_per_replica = 8\n",
        encoding="utf-8",
    )
    out = run("export", str(scenario), "-o", str(tmp_path / "r.md"))
    assert out.exit_code == 0, out.output
    lines = (tmp_path / "r.md").read_text(encoding="utf-8").splitlines()
    row = next(x for x in lines if "published runs of this deployment" in x)  # not the decision box's Risk row
    first = same_deployment_runs(SGLANG_TP8)[0]
    assert row.startswith(
        "| sglang tp8: published runs of this deployment (TP8), farthest off first | GPUSTACK-017 TPOT "
    )
    assert f"GPUSTACK-017 TPOT {first.figures[0].error:+.0%}, TTFT {first.figures[1].error:+.0%}" in row
    assert f"the {len(same_deployment_runs(SGLANG_TP8))} shipped published runs of the same GPU" in row


def test_the_shipped_run_errors_are_what_validate_gives_today():
    """The whole file, not a sample of its rows: export's own-runs budget and slow end read every row, and s208's
    pre-AITER MoE time left its nine MI300X DeepSeek-R1 vLLM runs at the old 1.64-4.04x TPOT for a session (found in
    s209). ``bench/published_run_errors.py`` rewrites it."""
    from bench_support import bench_module

    shipped = (reference_dir() / RUN_ERRORS_FILE).read_text(encoding="utf-8")
    assert shipped == bench_module("published_run_errors").rendered(), (
        "catalogs/reference/published_run_errors.csv is stale: run PYTHONPATH=. python bench/published_run_errors.py"
    )
