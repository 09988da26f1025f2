"""The what-if workbook's data-parallel attention + expert parallel lever, and levers that change nothing (a user
trial's finding F7).

The trial's book: ``planner workbook --gpus H200,B200 --models deepseek-v3,qwen3-235b-a22b,gptoss-120b``, which opens
on DeepSeek-V3 at 4,096 tokens on 8 x H200 SXM 141GB, 40 requests/s of 400 output tokens, p95 TPOT 50 ms and TTFT
1,500 ms. Its "cheapest fleet" was KV cache fp8 (136 GPUs) where ``planner plan --rate`` on the same inputs printed:

    planner plan --gpu H200 --model deepseek-v3 --context 4096 --gpus 8 --rate 40 --prompt-tokens 3696 \\
        --output-tokens 400 --ttft-target 1.5 --tpot-target 0.05
    Same 8 GPUs, data-parallel attention + expert parallel  max batch 832, TPOT 47 ms and 17,660 tokens/s at it,
        TTFT 415 ms, $0.65 per million output tokens (--parallelism dp-ep)
      replicas (p95 TTFT <= 1.50 s, TPOT <= 50 ms): 18 x 8 x H200 SXM 141GB = 144 GPUs, ...
      same 8 GPUs a replica, data-parallel attention + expert parallel: 12 x 8 = 96 GPUs for the same targets

(prompt 3,696 = context 4,096 - 400 output tokens, the workbook's rule). Those lines are the expected values below.
Every value is read as LibreOffice recalculated it when the book was written (``planner.workbook.values``)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner

from planner.accuracy.calibration import resolve_calibration
from planner.catalog import default_catalog
from planner.cli import main
from planner.engines.profiles import engine_profile
from planner.workbook.calc import DENSE_WORDS, DP_EP, SCENARIOS, calc_rows, scenario_col
from planner.workbook.load_figures import dp_ep_cells, lever_changes_nothing, load_figures

pytestmark = [pytest.mark.libreoffice, pytest.mark.xdist_group("test_workbook_dp_lever")]

ROOT = Path(__file__).resolve().parents[1]
TRIAL = ["--gpus", "H200,B200", "--models", "deepseek-v3,qwen3-235b-a22b,gptoss-120b"]
PLAN = ["--gpu", "H200", "--model", "deepseek-v3", "--context", "4096", "--gpus", "8", "--rate", "40"]
PLAN += ["--prompt-tokens", "3696", "--output-tokens", "400", "--ttft-target", "1.5", "--tpot-target", "0.05"]
DP = scenario_col(DP_EP[0])  # the Levers and Calc column of the lever
#: The dp-ep fleet's edge over the peak's arrival draws (``serving.fleet.draws_edge`` at 12 replicas, then 13:
#: ``load_figures`` on the trial's Inputs, TestComputedByPlanner below)
DP_EDGE = "1 of 5 arrival draws miss the p95 targets; 13 replicas (104 GPUs) meet them in every draw"


def _rows(ws) -> dict[str, int]:
    """Levers row of each label in column A (the first of a repeated label)."""
    out: dict[str, int] = {}
    for cell in ws["A"]:
        if isinstance(cell.value, str):
            out.setdefault(cell.value, cell.row)
    return out


def _levers(path: Path):
    """The Levers sheet with its stored (LibreOffice-recalculated) values, and its rows by label."""
    ws = openpyxl.load_workbook(path, data_only=True)["Levers"]
    return ws, _rows(ws)


@pytest.fixture(scope="module")
def trial(tmp_path_factory) -> Path:
    if shutil.which("soffice") is None:
        pytest.skip("LibreOffice (soffice) is not installed: the values are its recalculation")
    out = tmp_path_factory.mktemp("wb")
    result = CliRunner().invoke(main, ["workbook", *TRIAL, "-o", str(out)])
    assert result.exit_code == 0, result.output
    return out / "capacity-what-if.xlsx"


class TestTrialF7:
    def test_the_dp_ep_lever_sizes_the_fleet_plan_rate_prints(self, trial):
        """DP attention + EP: 12 replicas of 8 GPUs, 96 GPUs (plan --rate's "12 x 8 = 96 GPUs"), against the
        baseline's 18 x 8 = 144 (plan --rate's "18 x 8 x H200 SXM 141GB = 144 GPUs")."""
        ws, row = _levers(trial)
        assert ws[f"{DP}3"].value == "DP attention + EP"
        assert ws[f"{DP}{row['Replicas for the peak']}"].value == 12
        assert ws[f"{DP}{row['Fleet GPUs']}"].value == 96
        assert ws[f"C{row['Fleet GPUs']}"].value == 144
        assert ws[f"{DP}{row['Meets the latency targets']}"].value == f"yes, at the edge: {DP_EDGE}"
        assert ws[f"{DP}{row['Fleet sized by']}"].value == "simulated p95 under load"

    def test_the_dp_ep_fleet_at_the_edge_says_so_as_the_other_columns_do(self, trial):
        """The 12 dp-ep replicas meet the p95 targets in seed 0's draw and miss them in 1 of 5 arrival draws
        (``serving.fleet.draws_edge``, stored in Calc's edge row as the scenarios' are); "Meets the latency targets"
        reads "yes, at the edge: ..." as tests/test_workbook_trial30_edge.py's Baseline does, in Calc and Levers."""
        calc = openpyxl.load_workbook(trial, data_only=True)["Calc"]
        c = calc_rows(lever_kv="fp8", lever_weights="fp8", load=True)
        assert calc[f"{DP}{c.row_of['edge']}"].value == DP_EDGE
        assert calc[f"{DP}{c.row_of['meets_text']}"].value == f"yes, at the edge: {DP_EDGE}"

    def test_its_figures_are_plans_dp_ep_line(self, trial):
        """Max batch 832, TPOT 47 ms, 17,660 tokens/s, TTFT 294 ms, $0.65 per million output tokens: plan's "Same 8
        GPUs, data-parallel attention + expert parallel" line (its ``alternatives`` entry in plan --json), to its
        printed digits. (17,545 tokens/s before the per-layer overhead was refitted to 15.7 us; TTFT 423 ms before a
        prefill counted the output head once per prompt, 415 ms before the lone prompt's MoE gather carried its own
        tokens, not 8 x them: h-dpgather, docs/hypotheses/dp-attention-gather-tokens.md.)"""
        from cli_support import run

        result = run("plan", *PLAN, "--json")
        assert result.exit_code == 0, result.output
        (dp,) = [a for a in json.loads(result.stdout)["alternatives"] if a["parallelism"] == "dp-ep"]
        assert (dp["max_batch"], round(dp["throughput_tokens_per_s"]), round(dp["ttft_s"] * 1e3)) == (832, 17660, 294)
        ws, row = _levers(trial)
        assert ws[f"{DP}{row['Max batch memory holds']}"].value == dp["memory_max_batch"] == 832
        assert ws[f"{DP}{row['Max batch the engine serves']}"].value == dp["max_batch"]
        assert round(ws[f"{DP}{row['TPOT at max batch']}"].value * 1e-3, 3) == round(dp["tpot_s"], 3) == 0.047
        assert round(ws[f"{DP}{row['Throughput at max batch']}"].value) == round(dp["throughput_tokens_per_s"])
        assert round(ws[f"{DP}{row['TTFT (whole context as prompt)']}"].value) == round(dp["ttft_s"] * 1e3)
        assert round(ws[f"{DP}{row['Cost at max batch']}"].value, 2) == round(dp["cost_per_mtok_usd"], 2) == 0.65

    def test_the_cheapest_fleet_is_the_dp_ep_lever(self, trial):
        """96 GPUs cost less than KV cache fp8's 136 (the trial's pick): the cheapest line names DP attention + EP."""
        ws, row = _levers(trial)
        assert ws[f"G{row['Fleet GPUs']}"].value == 136  # KV cache fp8, the trial's "cheapest"
        assert ws[f"C{row['Cheapest fleet that meets the targets']}"].value == "DP attention + EP"

    def test_levers_that_change_nothing_say_so(self, trial):
        """Weights fp8 on DeepSeek-V3 (it ships fp8 weights) and the compare model (blank: DeepSeek-V3 itself, no
        MHA model to find a GQA sibling for) are labelled "no change"; the others keep their description."""
        ws, _ = _levers(trial)
        what = {header: ws[f"{scenario_col(key)}4"].value for key, header, _ in SCENARIOS}
        assert what["Weights fp8"] == "no change: DeepSeek-V3 ships fp8 weights"
        assert what["Compare model"].startswith("no change: the compare model is DeepSeek-V3 itself")
        assert not any(
            what[h].startswith("no change") for h in ("More GPUs per replica", "Prompt halved", "KV cache fp8")
        )

    def test_the_no_change_row_is_planners_answer(self, trial):
        """Calc's no_change row, as LibreOffice computes it, equals ``lever_changes_nothing`` (the model, context,
        group and precisions ``planner.report.plan`` resolves for the lever and for the baseline)."""
        ws = openpyxl.load_workbook(trial, data_only=True)["Calc"]
        row = calc_rows(lever_kv="fp8", lever_weights="fp8").row_of["no_change"]
        inputs = {"gpu": "H200 SXM 141GB", "model": "DeepSeek-V3", "context": 4096}
        cat, eng = default_catalog(), engine_profile(None)
        for key, _, _ in SCENARIOS:
            assert bool(ws[f"{scenario_col(key)}{row}"].value) == lever_changes_nothing(inputs, key, cat, eng), key

    def test_a_lever_that_changes_nothing_is_never_green(self, trial):
        """Weights fp8 costs what the baseline costs (the same deployment) and meets the targets, yet is not ranked."""
        ws = openpyxl.load_workbook(trial, data_only=True)["Calc"]
        c = calc_rows(lever_kv="fp8", lever_weights="fp8")
        h = scenario_col("weights_fp8")
        assert ws[f"{h}{c.row_of['meets']}"].value == 1
        assert ws[f"{h}{c.row_of['budget_rank']}"].value >= 1e300
        assert ws[f"{h}{c.row_of['green']}"].value == 0
        assert ws[f"{DP}{c.row_of['green']}"].value == 1


class TestDenseBaseline:
    def test_the_shipped_books_lever_says_it_does_not_apply(self):
        """The checked-in book opens on Llama 2 70B (dense): its DP attention + EP column says why, shows no fleet
        and is not green."""
        ws, row = _levers(ROOT / "workbooks/capacity-what-if.xlsx")
        assert ws[f"{DP}4"].value == (
            "does not apply: Llama-2-70B is dense, no experts to spread (a MoE model's layout)"
        )
        # every figure and verdict of the column says so (trial 13 F13: "yes" and 0 requests/s stood beside it)
        assert ws[f"{DP}{row['Meets the latency targets']}"].value == DENSE_WORDS == "does not apply"
        assert ws[f"{DP}{row['Max batch memory holds']}"].value == DENSE_WORDS
        assert ws[f"{DP}{row['Requests/s one replica takes']}"].value == DENSE_WORDS
        assert ws[f"C{row['Cheapest fleet that meets the targets']}"].value != "DP attention + EP"


class TestComputedByPlanner:
    def test_the_stored_figures_are_the_simulations(self):
        """The dp-ep column's numbers come from ``load_figures`` (``fewest_replicas`` of a dp-ep replica): 12
        replicas needed at 40 requests/s (plan --rate's 12), so 40 / 12 requests/s each."""
        inputs = {
            "gpu": "H200 SXM 141GB", "model": "DeepSeek-V3", "context": 4096, "peak_requests_per_s": 40,
            "output_tokens": 400, "tpot_target_ms": 50, "ttft_target_ms": 1500,
        }  # fmt: skip
        figures = load_figures(inputs, default_catalog(), engine_profile(None), resolve_calibration(None))
        assert figures.dp_ep.load.needed_replicas == 12
        cells = dp_ep_cells(figures)
        assert cells["rate_repl"] == pytest.approx(40 / 12)
        assert cells["max_batch"] == cells["served_batch"] == 832
        assert cells["edge"] == figures.dp_ep.load.edge == DP_EDGE  # stored as the scenarios' edge words are

    def test_a_dense_baseline_has_none(self):
        """Llama 2 70B has no experts: no dp-ep figures (blank cells)."""
        inputs = {"gpu": "H100 SXM 80GB", "model": "Llama-2-70B", "context": 4096, "peak_requests_per_s": 40,
                  "output_tokens": 400, "tpot_target_ms": 50, "ttft_target_ms": 1500}  # fmt: skip
        figures = load_figures(inputs, default_catalog(), engine_profile(None), resolve_calibration(None))
        assert figures.dp_ep is None and dp_ep_cells(figures) == {}


class TestRefreshAndExport:
    def test_refresh_recomputes_the_dp_ep_column(self, trial, tmp_path):
        """A refresh after the peak traffic is edited to 20 requests/s writes the new simulation's numbers into
        Calc's dp-ep column (``load_figures.dp_ep_cells`` of the new Inputs)."""
        path = tmp_path / "copy.xlsx"
        wb = openpyxl.load_workbook(trial)
        wb["Inputs"]["B15"].value = 20  # Peak traffic (the Inputs' row 15)
        wb.save(path)
        result = CliRunner().invoke(main, ["workbook", "refresh", str(path)])
        assert result.exit_code == 0, result.output
        inputs = {
            "gpu": "H200 SXM 141GB", "model": "DeepSeek-V3", "context": 4096, "peak_requests_per_s": 20,
            "output_tokens": 400, "tpot_target_ms": 50, "ttft_target_ms": 1500,
        }  # fmt: skip
        want = dp_ep_cells(load_figures(inputs, default_catalog(), engine_profile(None), resolve_calibration(None)))
        ws = openpyxl.load_workbook(path)["Calc"]
        c = calc_rows(lever_kv="fp8", lever_weights="fp8")
        assert ws[f"{DP}{c.row_of['rate_repl']}"].value == pytest.approx(want["rate_repl"])
        assert ws[f"{DP}{c.row_of['max_batch']}"].value == want["max_batch"]

    def test_export_of_the_book_offers_the_fifth_lever_too(self, trial):
        """``planner export`` of the trial's book reviews a MoE baseline: its levers include Data-parallel attention
        (docs/export.md), as the workbook's now do. (Only its presence is checked: the review sizes against its
        latency margin and high-percentile lengths, so its fleets are not the workbook's.)"""
        from planner.export import build_review
        from planner.export.workbook_input import scenario_from_workbook

        review = build_review(scenario_from_workbook(trial), default_catalog(), date="2026-12-05")
        # the baseline sets no layout, so the review sizes tp and dp-ep and keeps the cheaper (trial 24 F15): the
        # lever is the layout it did not keep
        changes = {
            "Data-parallel attention": "layout tp -> dp-ep (data-parallel attention, experts spread)",
            "Tensor parallelism": "layout dp-ep -> tp",
        }
        lever = next(lv for lv in review.levers if lv.name in changes)
        assert lever.change.startswith(changes[lever.name])
        assert lever.result is not None
