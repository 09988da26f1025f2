"""No data is never narrower than some data (user trial 33, F10; ``serving_margin.no_data_floor``), and the one-line
margin verdict at the top of plan and in the export's reading notes.

The trial: an AMD performance engineer compared DeepSeek-R1 dp-ep on 8 x MI325X against 8 x H200 under SGLang
(10 requests/s of 2,048 / 500 tokens, p95 TTFT 2 s, TPOT 50 ms). Both need 2 x 8 = 16 GPUs on the prediction; at the
margin's slow end the export sized MI325X at 77 x 8 = 616 GPUs (+182%) and H200 at 535 x 8 = 4,280 (+202%). MI325X
has no SGLang runs of its own: it took MI300X's -10% / +140% moved out x1.17; H200 its own 13 runs'. The part with
no data got the narrower slow end.

Figures from catalogs/reference/heldout_serving_residuals.csv (every release's rows):

    gpu,engine,architecture,rows,residual_low,residual_high              sources
    *,sglang,MLA,27,-0.09,1.40                                             3
    H200 SXM 141GB,sglang,MLA,13,-0.03,2.02                                2 (own thin: widened by the 27: -9% / +202%)
    MI300X,sglang,MLA,14,-0.10,0.40                                        2 (own thin: -10% / +140%)
    *,vllm,dense,21,-0.12,0.25
    H100 SXM 80GB,vllm,dense,7,-0.08,-0.01                                 2 (own thin: -12% / +25%)
    MI300X,vllm,dense,5,-0.03,0.55                                         1 (own thin: -12% / +55%)
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
from cli_support import run

from planner.accuracy.ranges import NoDataFloor, TimeRange, _shift
from planner.accuracy.serving_margin import (
    EVERY_GPU,
    ServingRegion,
    load_serving,
    margin_pool,
    margin_range,
    measured_ends,
    sizing_range,
)
from planner.catalog import default_catalog
from planner.engines.kernel_curves import sibling_miss
from planner.engines.profiles import engine_profile

ROOT = Path(__file__).resolve().parents[1]

#: The trial's command, less --gpu.
TRIAL = (
    "--model", "deepseek-r1", "--context", "2560", "--gpus", "8", "--parallelism", "dp-ep", "--engine", "sglang",
    "--rate", "10", "--prompt-tokens", "2048", "--output-tokens", "500", "--ttft-target", "2", "--tpot-target", "0.05",
)  # fmt: skip


def shipped(gpu: str, engine: str, architecture: str) -> tuple[float, float]:
    """(10th, 90th percentile) of one every-release row of the shipped serving residuals."""
    with open(ROOT / "catalogs" / "reference" / "heldout_serving_residuals.csv", encoding="utf-8") as f:
        key = (gpu, engine, architecture, "all")
        row = next(r for r in csv.DictReader(f) if (r["gpu"], r["engine"], r["architecture"], r["releases"]) == key)
    return float(row["residual_low"]), float(row["residual_high"])


def margin_of(gpu: str, model: str, engine: str, gpus: int) -> TimeRange:
    """The Budget review's margin (``sizing_range``, what plan states and export sizes with)."""
    cat = default_catalog()
    return sizing_range(cat.gpu(gpu), engine_profile(engine), cat, gpus, cat.model(model), parallelism=None)


class TestRule:
    def test_mi325x_without_runs_is_no_narrower_than_h200_with_them(self):
        """MI325X + SGLang, DeepSeek-R1: MI300X's -10% / +140% (its 14 runs' -10% / +28%, +40% before s212's pre-AITER ROCm prefill, widened to the 27 on every
        GPU, -9% / +140%) moved out x1.17 gave -24% / +182% (trial 33 F10); H200's own 13 runs, widened likewise,
        give +202%, so MI325X's slow end is now H200's +202%, its fast end its own -24%."""
        mi300x, h200, pooled = (shipped(g, "sglang", "MLA") for g in ("MI300X", "H200 SXM 141GB", EVERY_GPU))
        assert (mi300x, h200, pooled) == (
            (-0.10, 0.28),
            (-0.03, 2.02),
            (-0.09, 1.40),
        )  # +40% before s212's pre-AITER prefill
        cat = default_catalog()
        miss, sibling = sibling_miss(cat.gpu("MI325X"), cat)
        assert sibling == "MI300X" and f"{miss:.2f}" == "1.17"
        before = (_shift(-0.10, 1 / miss), _shift(1.40, miss))
        assert before == (-0.24, 1.82)  # the trial's -24% / +182%
        got, theirs = margin_of("MI325X", "DeepSeek-R1", "sglang", 8), margin_of("H200", "DeepSeek-R1", "sglang", 8)
        assert theirs[:2] == (-0.09, 2.02) and got[:2] == (-0.24, 2.02) and got.high >= theirs.high
        assert (
            "no runs on MI325X: at least as wide as the widest measured GPU of SGLang MLA runs, H200 SXM 141GB's "
            "+202%: -24% / +182% -> -24% / +202%" in got.note
        )
        assert got.note.startswith("MI300X's margin, moved out x1.17 either way for MI325X")

    def test_the_reviews_words_on_the_margin_say_whose_end_it_is(self):
        """The review's Risk line (``reason.range_basis``) and its low-confidence and not-sized sentences
        (``not_sized.margin_basis``) said only "MI300X's margin moved out x1.17": +202% is no such figure."""
        from planner.export.not_sized import margin_basis
        from planner.export.reason import range_basis

        got = margin_of("MI325X", "DeepSeek-R1", "sglang", 8)
        note, floor = got.note, got.floor
        held = "held at least as wide as H200 SXM 141GB's +202%, the widest GPU measured for SGLang MLA runs"
        basis = range_basis(note, floor)
        assert basis.startswith("MI300X's margin moved out x1.17 for MI325X, which has no runs of its own")
        assert basis.endswith(f"; {held}") and f"3 sources; {held}: SGLang 0.4.2.post4" in margin_basis(note, floor)
        h200 = margin_of("H200", "DeepSeek-R1", "sglang", 8)
        assert h200.floor is None and "held at least" not in range_basis(h200.note, h200.floor)

    def test_the_floor_is_a_field_not_words_to_read_back(self):
        """``TimeRange.floor`` says whose end the margin was held to (``no_data_floor``), and the note's words are
        written from it: MI325X's slow end moved to H200's +202% (its fast end, -24%, already wider than H200's -9%
        and MI300X's -10%: ``test_mi325x_without_runs_is_no_narrower_than_h200_with_them``)."""
        from planner.export.reason import floor_words, range_basis

        got = margin_of("MI325X", "DeepSeek-R1", "sglang", 8)
        assert got.floor == NoDataFloor(
            "MI325X", "SGLang MLA", (("H200 SXM 141GB", 2.02),), (-0.24, 1.82), (-0.24, 2.02)
        )
        assert got.floor.note_words() in got.note
        # a review reads the field, not the note: the same note without it says no floor
        assert "held at least" not in range_basis(got.note) and floor_words(None) == ""

    def test_a_gpu_with_runs_of_its_own_is_unchanged(self):
        """H200 and MI300X + SGLang have their own MLA runs: each keeps its own (widened) range, -9% / +202% and
        -10% / +140%, with no floor said; and they are the measured GPUs a part without runs is held to."""
        h200 = margin_of("H200", "DeepSeek-R1", "sglang", 8)
        mi300x = margin_of("MI300X", "DeepSeek-R1", "sglang", 8)
        assert h200[:2] == (-0.09, 2.02) and mi300x[:2] == (-0.10, 1.40)
        assert "no runs on" not in h200.note and "no runs on" not in mi300x.note
        pool = margin_pool("MI325X", "sglang", "MLA")
        assert pool.own is None and measured_ends(pool, load_serving()) == [
            ("H200 SXM 141GB", -0.09, 2.02), ("MI300X", -0.10, 1.40)
        ]  # fmt: skip

    def test_a_borrowed_range_already_wider_stays(self):
        """Llama-3.3-70B + vLLM (trial 33): MI325X takes MI300X's dense margin, -12% / +55% (5 runs, 1 source, widened
        to the 21 dense vLLM runs on every GPU), moved out x1.17: +83% with the prediction's widening, already wider
        than any measured GPU's (H100 +25%, MI300X +55%): unchanged, no floor said. H200 (no dense vLLM run, its own
        vendor's kernel curves) keeps the 21 runs' +25%: MI300X's +55% holds the miss of H100's curves standing in
        on it, which H200's prediction does not have, so only H100's +25% bounds it."""
        assert shipped("MI300X", "vllm", "dense") == (-0.03, 0.55) and shipped(EVERY_GPU, "vllm", "dense")[1] == 0.25
        mi325x, h200 = margin_of("MI325X", "Llama-3.3-70B", "vllm", 4), margin_of("H200", "Llama-3.3-70B", "vllm", 4)
        assert round(mi325x.high, 2) == 0.83 and "no runs on" not in mi325x.note
        assert h200.high == 0.25 and "no runs on" not in h200.note
        assert [g for g, *_ in measured_ends(margin_pool("H200 SXM 141GB", "vllm", "dense"), load_serving())] == [
            "H100 SXM 80GB"
        ]
        assert [g for g, *_ in measured_ends(margin_pool("MI325X", "vllm", "dense"), load_serving())] == [
            "H100 SXM 80GB", "MI300X"
        ]  # fmt: skip

    def test_an_nvidia_gpu_without_sglang_mla_runs_takes_h200s_slow_end(self):
        """B200 + SGLang, DeepSeek-R1: no run of its own; the prediction range widened to the 27 runs on every GPU
        gave +140% (below H200's measured +202%): now +202%, the note saying whose."""
        got = margin_of("B200", "DeepSeek-R1", "sglang", 8)
        assert got.high == 2.02 and "no runs on B200 180GB: at least as wide as" in got.note
        assert "H200 SXM 141GB's +202%: " in got.note

    def test_few_runs_of_its_own_are_runs_of_its_own(self):
        """Hand-made regions: a measured GPU at +200%, and the queried GPU with 2 runs of its own (+20% to +87%) or
        none: with 2 it keeps the prediction widened to the pool and its two (-50% / +87%); with none the floor takes
        it to +200%, the measured GPU's."""
        prediction = TimeRange(-0.29, 0.44, "H100's held-out residuals")
        own = ServingRegion("H100 SXM 80GB", "vllm", "dense", 2, 0.27, 0.53, 0.80, 0.20, 0.87, "x")
        measured = ServingRegion("A100 SXM 80GB", "vllm", "dense", 6, -0.1, 0.5, 2.0, -0.2, 2.5, "a b c")
        pooled = ServingRegion(EVERY_GPU, "vllm", "dense", 8, -0.5, 0.0, 0.04, -0.6, 0.1, "a b c x")
        regions = {(r.gpu, "vllm", "dense", "all"): r for r in (own, measured, pooled)}
        assert margin_range(prediction, "H100 SXM 80GB", "vllm", "dense", regions)[:2] == (-0.5, 0.87)
        del regions[("H100 SXM 80GB", "vllm", "dense", "all")]
        got = margin_range(prediction, "H100 SXM 80GB", "vllm", "dense", regions)
        assert got[:2] == (-0.5, 2.0) and "no runs on H100 SXM 80GB" in got.note
        assert "A100 SXM 80GB's +200%: -50% / +44% -> -50% / +200%" in got.note


def plan_lines(gpu: str, *args: str) -> list[str]:
    r = run("plan", "--gpu", gpu, *args)
    assert r.exit_code == 0, r.output
    return r.stdout.splitlines()


@pytest.fixture(scope="module")
def trial_plans() -> dict[str, list[str]]:
    """The trial's two commands' text."""
    return {gpu: plan_lines(gpu, *TRIAL) for gpu in ("MI325X", "H200")}


class TestPlan:
    def test_the_trials_slow_ends_and_fleets(self, trial_plans):
        """Both on 2 x 8 = 16 GPUs as predicted; at the slow end MI325X +202% (was +182%: 77 x 8 = 616 GPUs), H200
        +202% (535 x 8 = 4,280, unchanged; the trial's figures)."""
        for gpu, fleet in (("MI325X", "237 x 8 = 1,896 GPUs"), ("H200", "535 x 8 = 4,280 GPUs")):
            text = "\n".join(trial_plans[gpu])
            assert "  replicas (p95 TTFT <= 2.00 s, TPOT <= 50 ms): 2 x 8 x " in text
            assert "Budget review's margin               TPOT " in text and "+202% under steady load" in text
            assert f"At the +202% margin's end planner export sizes {fleet}" in text

    @pytest.mark.parametrize(
        "gpu,own", [("MI325X", "none on MI325X"), ("H200", "2 of them on H200 SXM 141GB")]
    )  # fmt: skip
    def test_the_verdict_is_the_line_under_the_head(self, trial_plans, gpu, own):
        """The MoE case's fleet at the slow end is x118 / x268 the 2 replicas as predicted (3 times or more: not a
        budget figure): one line right under the head says so, with the SGLang MLA runs' 3 sources (heldout_serving_
        residuals.csv's '*,sglang,MLA' row) and this GPU's."""
        lines = trial_plans[gpu]
        assert lines[0].startswith("DeepSeek-R1 on 8 x ")
        assert lines[1] == (
            f"Margin: DeepSeek-R1 (MLA) on SGLang has runs from 3 sources ({own}); the margin-sized fleet is not a "
            "budget figure: measure one replica"
        )
        assert sum(x.startswith("Margin: ") for x in lines) == 1

    def test_no_verdict_where_the_margin_costs_little(self):
        """The README's budget review, its H100 option as plan checks it (Llama-3.1-70B on 4 x H100 + vLLM at the
        grown peak, 60 requests/s of 800 / 400 tokens, p95 TTFT 1.5 s, TPOT 50 ms): +25% sizes 9 replicas against 8
        (README: 'The +25% latency margin costs no GPU' once spares and whole nodes are added): no verdict."""
        lines = plan_lines(
            "H100", "--model", "Llama-3.1-70B", "--context", "4200", "--gpus", "4", "--rate", "60",
            "--prompt-tokens", "800", "--output-tokens", "400", "--ttft-target", "1.5", "--tpot-target", "0.05",
        )  # fmt: skip
        assert "  at the +25% margin's end: 9 x 4 = 36 GPUs" in "\n".join(lines)
        assert not any(x.startswith("Margin: ") for x in lines)

    def test_json_carries_the_verdict_line(self, trial_plans):
        """``plan --json``'s ``margin_verdict`` is the text's line under the head, word for word (MI325X, the trial's
        command: the verdict of ``test_the_verdict_is_the_line_under_the_head``)."""
        r = run("plan", "--gpu", "MI325X", *TRIAL, "--json")
        assert r.exit_code == 0, r.output
        assert json.loads(r.stdout)["margin_verdict"] == trial_plans["MI325X"][1]
        assert trial_plans["MI325X"][1].startswith("Margin: ")

    def test_json_verdict_is_null_without_a_fleet(self):
        """No --rate, no fleet sized at the margin's end: the key is there, null (the text has no "Margin: " line)."""
        args = ("plan", "--gpu", "MI325X", *TRIAL[: TRIAL.index("--rate")])
        assert not any(x.startswith("Margin: ") for x in run(*args).stdout.splitlines())
        d = json.loads(run(*args, "--json").stdout)
        assert "margin_verdict" in d and d["margin_verdict"] is None


EXPORT = """title = "MI325X against H200, DeepSeek-R1 dp-ep"
[workload]
peak_requests_per_s = 10
average_requests_per_s = 10
prompt_tokens_mean = 2048
prompt_tokens_high = 2048
output_tokens_mean = 500
output_tokens_high = 500
ttft_target_s = 2
tpot_target_s = 0.05
sizing = "littles-law"
[defaults]
model = "DeepSeek-R1"
engine = "sglang"
parallelism = "dp-ep"
gpus_per_replica = 8
[[option]]
name = "MI325X"
gpu = "MI325X"
[[option]]
name = "H200"
gpu = "H200"
"""


class TestExport:
    @pytest.fixture(scope="class")
    @classmethod
    def notes(cls, tmp_path_factory):
        from planner.export.review import build_review
        from planner.export.scenario import load_scenario
        from planner.export.xlsx import _reading_notes

        out = {}
        for name, text in (("moe", EXPORT), ("llama", README_H100)):
            path = tmp_path_factory.mktemp("f10") / f"{name}.toml"
            path.write_text(text)
            review = build_review(load_scenario(path), default_catalog(), date="2026-12-07")
            out[name] = (review, _reading_notes(review))
        return out

    def test_the_reading_notes_open_with_the_verdict(self, notes):
        """Both options at +202% (Little's law here): fleets x3 or more those as predicted, so the Summary's reading
        notes open with one verdict for the model and engine, naming each GPU's own sources."""
        review, lines = notes["moe"]
        assert {r.option.name: round(r.margin, 2) for r in review.results} == {"MI325X": 2.02, "H200": 2.02}
        assert lines[0] == (
            "Margin: DeepSeek-R1 (MLA) on SGLang has runs from 3 sources (none on MI325X; 2 of them on H200 SXM "
            "141GB); the margin-sized fleets are not budget figures: measure one replica"
        )
        assert sum(x.startswith("Margin: ") for x in lines) == 1

    def test_no_verdict_for_the_readme_h100_llama_case(self, notes):
        """cli_support's one-option scenario (the README's workload, Llama-3.1-70B on H100 + vLLM, +25%)."""
        review, lines = notes["llama"]
        assert round(review.results[0].margin, 2) == 0.25
        assert not any(x.startswith("Margin: ") for x in lines)


README_H100 = """title = "README workload, H100"
[workload]
peak_requests_per_s = 40
average_requests_per_s = 16
prompt_tokens_mean = 800
prompt_tokens_high = 3000
output_tokens_mean = 400
output_tokens_high = 1200
ttft_target_s = 1.5
tpot_target_s = 0.05
sizing = "littles-law"
[[option]]
gpu = "H100"
model = "Llama-3.1-70B"
"""
