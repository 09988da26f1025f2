"""Trial 28 F7 and F8 on the what-if workbook.

F7: Llama-3.3-70B at 8,192 tokens on 4 x H100, 40 requests/s of 1,500 + 300 tokens, p95 TTFT 2 s and TPOT 60 ms,
burstiness 0.5: the Inputs' "Peak fleet, before spares, whole nodes and latency margin" read 44 GPUs, the budget's
with its spare and +25% margin, where ``planner plan`` sizes 9 x 4 = 36. The Load sheet simulated each replica at
what memory holds when every sequence is the whole context (55), not at the engine's own max_num_seqs with its paged
KV cache holding the tokens each request has, as plan (and vLLM) run it. Now the simulated replica is plan's.

F8: the Inputs say that requests are simulated at the mean lengths and judged at p95, and that a p99 SLO or long-tailed
lengths need ``planner export`` (its scenario keys).
"""

from __future__ import annotations

import openpyxl
import pytest
from workbook_support import require_libreoffice

from planner import api
from planner.catalog import default_catalog
from planner.engines.profiles import engine_profile
from planner.report import plan, replica_of
from planner.serving.fleet import fewest_gpus
from planner.workbook.build import build_whatif, select_entries
from planner.workbook.inputs import GLANCE, default_inputs, glance_row
from planner.workbook.layout import BUDGET_FIELDS, INPUTS_SHEET, REVIEW_FLEET_LABEL, input_row, meets_unit_formula
from planner.workbook.load_figures import load_figures
from planner.workbook.tail import HIGH_PERCENTILE
from planner.workbook.update import refresh
from planner.workbook.writer import write_workbook

#: The trial's Inputs, as the user typed them (the batch blank).
TRIAL = dict(
    model="Llama-3.3-70B", context=8192, gpus=4, batch=None, peak_requests_per_s=40, output_tokens=300,
    prompt_tokens=1500, tpot_target_ms=60, ttft_target_ms=2000, burstiness=0.5,
)  # fmt: skip
PEAK_FLEET_LABEL = "Peak fleet, before spares, whole nodes and latency margin"


def _inputs() -> dict:
    cat = default_catalog()
    return {**default_inputs(cat, *select_entries(cat, None, None)), **TRIAL}


def plans_fleet_gpus(inputs: dict) -> int:
    """``planner plan --gpu H100 --model llama3.3-70b --context 8k --gpus 4 --rate 40 --prompt-tokens 1500
    --output-tokens 300 --burstiness 0.5 --ttft-target 2 --tpot-target 60ms --percentile 95``'s fleet, by the calls
    plan makes (``planner.cli.plan``): its replica (``replica_of``: no max_num_seqs given) on the given group, sized by
    ``fewest_gpus`` at the percentile and targets."""
    p = plan(inputs["gpu"], inputs["model"], inputs["context"], gpus=inputs["gpus"])
    choice = fewest_gpus(
        {p.gpus: replica_of(p, default_catalog())}, inputs["prompt_tokens"], inputs["output_tokens"],
        float(inputs["peak_requests_per_s"]), percentile=float(HIGH_PERCENTILE),
        ttft_target_s=inputs["ttft_target_ms"] / 1e3, tpot_target_s=inputs["tpot_target_ms"] / 1e3,
        burstiness=inputs["burstiness"],
    )  # fmt: skip
    return choice.sizing.replicas * choice.gpus_per_replica


@pytest.fixture(scope="module")
def figures():
    return load_figures(_inputs(), default_catalog(), engine_profile(None), None)


class TestF7PeakFleetIsPlans:
    def test_the_simulated_baseline_fleet_is_plans_and_within_the_budget(self, figures):
        """The baseline's simulated fleet, as the Levers / Inputs fleet formula computes it (``api.peak_fleet`` at the
        stored rate factor), is plan's for the same inputs (9 x 4 = 36 GPUs; 11 x 4 = 44 before), and no more than
        the budget (planner export's, with its margin and spare: 44)."""
        inputs = _inputs()
        base = next(v for v in figures.levers if v.key == "base")
        fleet = api.peak_fleet(
            inputs["gpu"], inputs["model"], inputs["context"], peak_requests_per_s=inputs["peak_requests_per_s"],
            output_tokens=inputs["output_tokens"], gpus=inputs["gpus"], rate_factor=base.rate_factor,
        )  # fmt: skip
        want = plans_fleet_gpus(inputs)
        assert fleet.gpus == base.needed_replicas * inputs["gpus"] == want
        assert figures.budget is not None and figures.budget.gpus is not None
        assert fleet.gpus <= figures.budget.gpus
        assert want < figures.budget.gpus  # the margin and the spare cost GPUs here

    def test_the_replica_runs_the_engines_own_limit_not_the_whole_context_batch(self, figures):
        """vLLM's max_num_seqs (1,024 on an H100), its KV cache admitting 300 of the 1,500-token prompts (plan's "each
        running at most 300 sequences at once"), not the 55 whole 8,192-token sequences memory holds."""
        base = next(v for v in figures.levers if v.key == "base")
        p = plan("H100 SXM 80GB", "Llama-3.3-70B", 8192, gpus=4)
        assert base.max_batch == int(p.memory.max_batch) == 55
        assert base.batch_limit == p.engine_batch_limit == 1024
        assert base.at_once == replica_of(p).setup(1500, 300).cap == 300


class TestF8InputsSayWhatIsSimulated:
    def test_the_targets_name_the_percentile_input_and_the_lengths(self):
        """TPOT and TTFT targets' notes: at the Inputs' latency percentile (p95 blank), the lengths simulated as
        the Inputs give them (high lengths drawn as plan --rate); the percentile and high lengths are Inputs of their
        own now (tests/test_workbook_percentile.py), no longer a pointer to planner export."""
        helps = {f.key: f.help for f in BUDGET_FIELDS}
        for key in ("tpot_target_ms", "ttft_target_ms"):
            assert "p95" in helps[key], key
        assert "high lengths" in helps["tpot_target_ms"]
        for key in ("latency_percentile", "prompt_tokens_high", "output_tokens_high", "length_percentile"):
            assert key in helps, key
        assert "plan --percentile" in helps["latency_percentile"]

    def test_the_lengths_are_said_to_be_the_mean(self):
        helps = {f.key: f.help for f in BUDGET_FIELDS}
        assert helps["output_tokens"].startswith("Mean")
        assert "mean" in helps["prompt_tokens"].lower()

    def test_meets_the_targets_unit_names_the_percentile(self):
        unit = next(u for label, _, _, u in GLANCE if label == "Meets the latency targets")
        assert "p95" in unit
        assert "in_latency_percentile" in meets_unit_formula()


class TestF7RefreshedAndRecalculated:
    def test_refreshed_workbook_in_libreoffice_shows_plans_fleet_below_the_budget(self, tmp_path):
        """The trial's steps: Inputs typed on a written workbook, ``refresh``, LibreOffice's recalculation: the Inputs'
        peak fleet is plan's (36), the budget row planner export's (44), the peak fleet not above it."""
        require_libreoffice()
        from workbook_support import convert_to_csv_sheets, read_csv_sheet

        inputs = _inputs()
        path = write_workbook(build_whatif(), tmp_path / "mine.xlsx")
        wb = openpyxl.load_workbook(path)
        for key, value in TRIAL.items():
            wb[INPUTS_SHEET][f"B{input_row(key)}"] = value
        wb.save(path)
        refresh(path)
        (csvs,) = convert_to_csv_sheets(path, [INPUTS_SHEET], tmp_path / "recalc")
        values = read_csv_sheet(csvs[INPUTS_SHEET])
        rows = {label: glance_row() + i for i, (label, *_) in enumerate(GLANCE, 1)}
        peak, budget = values[f"B{rows[PEAK_FLEET_LABEL]}"], values[f"B{rows[REVIEW_FLEET_LABEL]}"]
        assert peak == plans_fleet_gpus(inputs)
        assert peak <= budget == 44
