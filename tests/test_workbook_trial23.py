"""Trial 23's what-if workbook findings, on a generated workbook whose Inputs are typed with openpyxl, refreshed
(``planner workbook refresh``: planner's simulation, then LibreOffice's values stored) and read back:

- F1: with the GPU count blank the Inputs' headline sat on the smallest group that fits. On the trial's inputs
  (Llama-3.3-70B on H100 SXM 80GB, context 1,800, 50 requests/s of 300 output tokens, TPOT 60 ms, TTFT 1,500 ms) that
  is 2 x H100 holding 5 sequences: 404 GPUs, $1,060,237 a month (334, $876,533 since trial 28 F7), where the Levers' More GPUs column (4 a replica)
  needs 40 GPUs, $104,974, and ``planner export`` of the same file recommends 48 x H100 in 12 replicas of 4,
  $125,969 (the findings' figures). The headline now takes the cheaper of the two groups the workbook sizes, and the
  note beside it says which and why; where the smallest group is the cheaper (Llama-3.1-8B on 1 GPU) it stays.
- F5: a price per GPU-hour of $31.92 (an 8-GPU H100 instance's hourly price typed per GPU) is warned of on the Error
  line, in the words ``planner export`` warns of a scenario with that price (``evaluate._implausible_rate``), by the
  one bound both use (``planner.units.RENT_IMPLAUSIBLE_FACTOR``); a warning refuses nothing.
"""

from __future__ import annotations

import shutil

import openpyxl
import pytest
from click.testing import CliRunner
from doc_support import stated
from workbook_support import convert_to_csv_sheets, read_csv_sheet, require_libreoffice

from planner.catalog import default_catalog
from planner.cli import main
from planner.export.evaluate import _implausible_rate, evaluate
from planner.export.scenario import Option
from planner.export.workbook_input import scenario_from_workbook
from planner.report import plan
from planner.units import RENT_IMPLAUSIBLE_FACTOR
from planner.workbook.calc import STALE_MEETS, calc_rows, scenario_col
from planner.workbook.inputs import ESTIMATE_SUFFIX, GLANCE, glance_row
from planner.workbook.layout import CALC_SHEET, INPUTS_SHEET, LOAD_SHEET, input_row, why_error_row

pytestmark = [pytest.mark.libreoffice, pytest.mark.xdist_group("test_workbook_trial23")]

#: The trial's inputs (findings F1: context 1,800, peak 50 requests/s, 300 output tokens, TPOT 60 ms, TTFT 1,500 ms,
#: the GPU count left blank; H100 and Llama-3.3-70B).
TRIAL = dict(
    gpu="H100 SXM 80GB",
    model="Llama-3.3-70B",
    context=1800,
    gpus=None,
    compare_model=None,
    peak_requests_per_s=50,
    output_tokens=300,
    tpot_target_ms=60,
    ttft_target_ms=1500,
)
CASES = {
    "trial": TRIAL,
    # an 8B model fits one GPU: the smallest group (1) is no dearer than More GPUs (2), and stays
    "smallest-best": {**TRIAL, "model": "Llama-3.1-8B"},
    # findings F5: the price cell = 31.92, an 8-GPU instance's hourly price typed per GPU (count 4, as the finding's)
    "instance-price": {**TRIAL, "gpus": 4, "price_per_gpu_hour": 31.92},
    # just below 4 x H100's highest rental quote ($6.155 x 4 = $24.62): no warning
    "below-bound": {**TRIAL, "gpus": 4, "price_per_gpu_hour": 24.61},
}
MORE = scenario_col("more_gpus")
CALC = calc_rows(lever_kv="fp8", lever_weights="fp8")  # the levers move no row


def _glance(book, key: str, col: str = "B"):
    return book[INPUTS_SHEET][f"{col}{glance_row() + [g[1] for g in GLANCE].index(key) + 1}"].value


def _calc(book, key: str, col: str = "C"):
    return book[CALC_SHEET][CALC.ref(key, col)].value


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory) -> dict[str, tuple[object, openpyxl.Workbook, str]]:
    """Case -> (the refreshed file, its stored values, what refresh printed)."""
    require_libreoffice()
    tmp = tmp_path_factory.mktemp("trial23")
    runner = CliRunner()
    made = runner.invoke(
        main, ["workbook", "-o", str(tmp), "--force", "--gpus", "H100", "--models", "Llama-3.3-70B,Llama-3.1-8B"]
    )
    assert made.exit_code == 0, made.output
    out = {}
    for name, inputs in CASES.items():
        path = tmp / f"{name}.xlsx"
        shutil.copy(tmp / "capacity-what-if.xlsx", path)
        wb = openpyxl.load_workbook(path)
        for key, value in inputs.items():
            wb[INPUTS_SHEET][f"B{input_row(key)}"].value = value
        wb.save(path)
        done = runner.invoke(main, ["workbook", "refresh", str(path)])
        assert done.exit_code == 0, done.output
        out[name] = (path, openpyxl.load_workbook(path, data_only=True), done.output)
    return out


@pytest.fixture(scope="module")
def export_fleet(refreshed):
    """The fleet ``planner export`` of the trial's refreshed file recommends (its one option, sized as the review
    sizes it)."""
    scenario = scenario_from_workbook(refreshed["trial"][0])
    return evaluate(scenario.option[0], scenario.workload, default_catalog(), 1.0).fleet


class TestHeadlineTakesTheCheaperGroup:
    def test_the_trial_inputs_headline_the_more_gpus_fleet(self, refreshed):
        _, book, _ = refreshed["trial"]
        # the findings' figures: the smallest group, 2 x H100 holding 5 sequences, needs 334 GPUs at $3.595 (the
        # catalog's on-demand median; 404 in the findings, before trial 28 F7 simulated the replica as planner plan's:
        # the engine's max_num_seqs, the KV cache admitting by the prompts' tokens, not 5 whole contexts); More GPUs,
        # 4 a replica, 40
        assert (_calc(book, "n"), _calc(book, "max_batch"), _calc(book, "fleet_gpus")) == (2, 5, 334)
        assert _calc(book, "fleet_usd_month") == pytest.approx(876_532.9)
        assert (_calc(book, "n", MORE), _calc(book, "fleet_gpus", MORE)) == (4, 40)
        assert _calc(book, "headline") == 2
        assert _glance(book, "fleet_gpus") == 40 and _glance(book, "fleet_gpus", "C") == "GPUs"
        assert _glance(book, "fleet_usd_month") == pytest.approx(104_974.0)  # 40 x $3.595 x 730 h
        # 10 x 4 meet on seed 0's draw; 2 of 5 draws miss, as planner plan --rate warns (trial 30 F4)
        assert (
            _glance(book, "meets_text")
            == _calc(book, "meets_text", MORE)
            == "yes, at the edge: 2 of 5 arrival draws miss the p95 targets; 11 replicas (44 GPUs) meet them in every draw"
        )
        assert _glance(book, "fleet_gpus", "D").startswith(
            "replicas x 4 GPUs, the cheaper group (GPU count blank): 4 GPUs a replica need 40 GPUs, fewer than 2 "
            "GPUs a replica's 334 (the smallest that fits; Levers). No latency margin"
        )
        assert _glance(book, "fleet_usd_month", "D") == "rented: = 40 GPUs x $3.595 per GPU-hour x 730 h a month"
        # the cost per token is the fleet's group's too: planner plan's on 4 x H100, the smallest group's beside it
        on_4 = plan("H100", "Llama-3.3-70B", 1800, gpus=4).cost_per_mtok_usd
        on_2 = plan("H100", "Llama-3.3-70B", 1800).cost_per_mtok_usd
        assert _glance(book, "m_cost") == pytest.approx(on_4, rel=1e-9) and on_2 > 15 * on_4
        assert _glance(book, "m_cost", "D").startswith(
            f"on 4 GPUs a replica, the peak fleet's group (2 GPUs: ${on_2:,.2f}): US$ per million output tokens"
        )
        # the figures of the smallest group stay what they are (GPUs in the group, its max batch)
        assert (_glance(book, "n"), _glance(book, "max_batch")) == (2, 5)

    def test_planner_export_of_the_file_sizes_the_same_group(self, refreshed, export_fleet):
        """The review searches 1, 2, 4 and 8 GPUs a replica and recommends 4 (48 = 12 x 4, $125,969, the findings'):
        the headline's group. Its fleet is the headline's 10 replicas plus its latency margin (+25%: 11 serving) and
        one spare."""
        _, book, _ = refreshed["trial"]
        fleet = export_fleet
        assert fleet.gpus / fleet.replicas == _calc(book, "n", MORE) == 4
        assert (fleet.gpus, round(fleet.monthly_usd)) == (48, 125_969)
        assert fleet.replicas == _calc(book, "replicas", MORE) + 2

    def test_docs_state_these_figures(self, refreshed, export_fleet):
        """docs/workbooks.md (Levers) quotes the trial's figures: the smallest group's and the headline's fleets and
        costs, and export's 12 x 4."""
        _, book, _ = refreshed["trial"]
        doc = stated(
            "docs/workbooks.md",
            r"the smallest group, (\d) x H100 holding (\d) sequences, needs ([\d,]+) GPUs, \$([\d,]+) a month, which "
            r"the headline showed; it now shows More GPUs' (\d+) GPUs, \$([\d,]+) .* \((\d+) = (\d+) x (\d): its",
        )
        money = (round(_calc(book, "fleet_usd_month")), round(_calc(book, "fleet_usd_month", MORE)))
        assert doc[:3] == (_calc(book, "n"), _calc(book, "max_batch"), _calc(book, "fleet_gpus"))
        assert (doc[3], doc[5]) == money and doc[4] == _glance(book, "fleet_gpus")
        fleet = export_fleet
        assert doc[6:] == (fleet.gpus, fleet.replicas, fleet.gpus / fleet.replicas)

    def test_the_smallest_group_stays_where_it_is_the_cheaper(self, refreshed):
        _, book, _ = refreshed["smallest-best"]
        assert (_calc(book, "n"), _calc(book, "n", MORE)) == (1, 2)
        # 4 against 4 since trial 28 F7 (3 against 4 before): a tie keeps the smallest group
        assert _calc(book, "fleet_gpus") <= _calc(book, "fleet_gpus", MORE)
        assert _calc(book, "headline") == 1 and _glance(book, "fleet_gpus") == _calc(book, "fleet_gpus")
        assert _glance(book, "fleet_gpus", "D").startswith("replicas x 1 GPU, the smallest group that fits")
        assert _glance(book, "m_cost", "D").startswith("US$ per million output tokens")

    def test_a_typed_count_is_the_headlines_group(self, refreshed):
        # 4 typed: the baseline is the 40-GPU fleet; More GPUs (8 a replica) needs more and is not taken
        _, book, _ = refreshed["instance-price"]
        assert _calc(book, "headline") == 1 and _glance(book, "fleet_gpus") == _calc(book, "fleet_gpus") == 40
        assert _calc(book, "fleet_gpus", MORE) > 40

    def test_a_stale_estimate_compares_the_same_groups(self, refreshed, tmp_path):
        """The peak raised to 60 after the refresh, recalculated by LibreOffice without one: the Load sheet is stale
        and nothing is judged, but each group's last simulation met the targets, so the headline is More GPUs'
        estimate, "~48 est." (40 x 60 / 50), not the smallest group's (~401; ~485 before trial 28 F7)."""
        source, _, _ = refreshed["trial"]
        path = tmp_path / "stale.xlsx"
        wb = openpyxl.load_workbook(source)
        wb[INPUTS_SHEET][f"B{input_row('peak_requests_per_s')}"].value = 60
        wb.save(path)
        (csvs,) = convert_to_csv_sheets(path, [INPUTS_SHEET, CALC_SHEET, LOAD_SHEET], tmp_path / "recalc")
        inputs, calc = read_csv_sheet(csvs[INPUTS_SHEET]), read_csv_sheet(csvs[CALC_SHEET])
        assert calc[CALC.ref("unknown", MORE)] == STALE_MEETS and calc[CALC.ref("headline", "C")] == 2
        more, base = calc[CALC.ref("fleet_gpus", MORE)], calc[CALC.ref("fleet_gpus", "C")]
        assert more == 48 and base > 8 * more
        row = glance_row() + [g[1] for g in GLANCE].index("fleet_gpus") + 1
        assert inputs[f"B{row}"] == f"~48{ESTIMATE_SUFFIX}"
        assert "4 GPUs a replica need ~48 GPUs" in inputs[f"D{row}"]


class TestInstancePrice:
    def test_warns_on_the_error_line_in_planner_exports_words(self, refreshed):
        _, book, _ = refreshed["instance-price"]
        gpu = default_catalog().gpu(TRIAL["gpu"])
        option = Option(gpu=TRIAL["gpu"], model=TRIAL["model"], pricing="cloud", cloud_usd_per_gpu_hour=31.92)
        said = _implausible_rate(option, gpu)  # what planner export of a scenario with this price says
        assert said.startswith("cloud_usd_per_gpu_hour $31.92 is 5.2x the highest catalog quote")
        want = "Warning: " + said.replace("cloud_usd_per_gpu_hour $31.92", "$31.92 per GPU-hour").replace(
            " instances)", " instances; GPUs sheet)"
        )
        assert book[INPUTS_SHEET][f"D{why_error_row()}"].value == want
        assert want in refreshed["instance-price"][2].splitlines()  # planner workbook refresh prints it
        # a warning refuses nothing: the targets are judged and the fleet stands, at the price typed
        assert (
            _glance(book, "meets_text")
            == "yes, at the edge: 2 of 5 arrival draws miss the p95 targets; 11 replicas (44 GPUs) meet them in every draw"
        )
        assert _glance(book, "fleet_usd_month") == pytest.approx(40 * 31.92 * 730)

    def test_below_the_bound_export_uses_nothing_is_said(self, refreshed):
        """$31.92 is 5.2x H100's highest rental quote, CoreWeave's $6.155 per GPU of an 8-GPU instance (findings
        F5); $24.61 is just under 4x it, where planner export says nothing either; the catalog's price says nothing."""
        gpu = default_catalog().gpu(TRIAL["gpu"])
        top = gpu.highest_rental_quote()
        assert (top.usd_per_gpu_hour, top.provider, RENT_IMPLAUSIBLE_FACTOR) == (6.155, "CoreWeave", 4)
        option = Option(gpu=TRIAL["gpu"], model=TRIAL["model"], pricing="cloud", cloud_usd_per_gpu_hour=24.61)
        assert _implausible_rate(option, gpu) == ""
        for name in ("below-bound", "trial", "smallest-best"):
            assert refreshed[name][1][INPUTS_SHEET][f"D{why_error_row()}"].value in (None, ""), name
            assert "Warning" not in refreshed[name][2], name
