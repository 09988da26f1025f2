"""Trial 23's what-if workbook findings, on a generated workbook refreshed (planner's simulation) and recalculated by
LibreOffice (``planner workbook refresh`` stores its values):

- F1: with the GPU count blank the headline fleet sits on the smallest group that fits. On the trial's inputs
  (Llama-3.3-70B on H100 SXM 80GB, context 1,800, 50 requests/s of 300 output tokens, TPOT 60 ms, TTFT 1,500 ms) that
  is 2 x H100 holding 5 sequences: 404 GPUs, $1,060,237.40 a month, where the Levers' More GPUs column (4 a replica)
  needs 40 GPUs, $104,974 (the numbers of the findings, /work/trial23-findings.md F1, with a count of 4 typed). Inputs
  warns below the Error line, and refresh prints it; where the smallest group is the cheapest (Llama-3.1-8B on 1 GPU)
  nothing is said.
- F5: a price per GPU-hour of $31.92 (an 8-GPU H100 instance's rate typed per GPU) draws the warning planner export
  gives a scenario file with that price (``planner.export.evaluate._implausible_rate``, 4x the highest catalog
  quote), in the same words; refresh prints it too.
"""

from __future__ import annotations

import shutil

import openpyxl
import pytest
from click.testing import CliRunner
from workbook_support import require_libreoffice

from planner.catalog import default_catalog
from planner.cli import main
from planner.export.evaluate import IMPLAUSIBLE_RATE_FACTOR, _implausible_rate
from planner.workbook.calc import calc_rows, scenario_col
from planner.workbook.inputs import group_warning_row, price_warning_row
from planner.workbook.layout import CALC_SHEET, INPUTS_SHEET, input_row

pytestmark = [pytest.mark.libreoffice, pytest.mark.xdist_group("test_workbook_trial23")]

#: The trial's inputs (findings F1: "B6=1800 (context), B14=50 (peak), B15=300 (output), B16=60 ms and B17=1500 ms",
#: GPU count blank, H100 and Llama-3.3-70B).
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
    # an 8B model fits one GPU: the smallest group (1) is the cheapest, More GPUs (2) needs more
    "smallest-best": {**TRIAL, "model": "Llama-3.1-8B"},
    # findings F5: Inputs!B11 = 31.92, an 8-GPU instance's hourly price typed per GPU (count 4, as the finding's B9=4)
    "instance-price": {**TRIAL, "gpus": 4, "price_per_gpu_hour": 31.92},
}


@pytest.fixture(scope="module")
def refreshed(tmp_path_factory) -> dict[str, tuple[str, openpyxl.Workbook]]:
    """Case -> (refresh's output, the refreshed file's stored values)."""
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
        out[name] = (done.output, openpyxl.load_workbook(path, data_only=True))
    return out


def _calc(book: openpyxl.Workbook, key: str, col: str):
    c = calc_rows(lever_kv="fp8", lever_weights="fp8")
    return book[CALC_SHEET][c.ref(key, col)].value


class TestLargerGroupCheaper:
    def test_trial_inputs_warn_with_the_more_gpus_fleet(self, refreshed):
        output, book = refreshed["trial"]
        more = scenario_col("more_gpus")
        # the findings' figures: 404 GPUs on 2 a replica at $3.595 (the catalog's median), 40 on 4
        assert _calc(book, "n", "C") == 2 and _calc(book, "fleet_gpus", "C") == 404
        assert _calc(book, "fleet_usd_month", "C") == pytest.approx(1_060_237.4)
        assert _calc(book, "n", more) == 4 and _calc(book, "fleet_gpus", more) == 40
        assert _calc(book, "fleet_usd_month", more) == pytest.approx(104_974.0)
        want = (
            "Warning: a larger group is cheaper: 4 GPUs a replica need 40 GPUs, $104,974 a month (Levers, More GPUs), "
            "not 404 GPUs on 2; type 4 in GPU count"
        )
        assert book[INPUTS_SHEET][f"D{group_warning_row()}"].value == want
        assert want in output.splitlines()

    def test_no_warning_where_the_smallest_group_is_cheapest(self, refreshed):
        output, book = refreshed["smallest-best"]
        more = scenario_col("more_gpus")
        base_gpus, more_gpus = _calc(book, "fleet_gpus", "C"), _calc(book, "fleet_gpus", more)
        assert _calc(book, "n", "C") == 1 and more_gpus >= base_gpus, (base_gpus, more_gpus)
        assert book[INPUTS_SHEET][f"D{group_warning_row()}"].value in (None, "")
        assert "Warning" not in output

    def test_no_warning_with_the_cheaper_count_typed(self, refreshed):
        # 4 typed: the baseline is the 40-GPU fleet; More GPUs (8 a replica) needs no fewer
        _, book = refreshed["instance-price"]
        assert _calc(book, "fleet_gpus", "C") == 40
        assert book[INPUTS_SHEET][f"D{group_warning_row()}"].value in (None, "")


class TestInstancePrice:
    def test_warns_in_planner_exports_words(self, refreshed):
        output, book = refreshed["instance-price"]
        gpu = default_catalog().gpu(TRIAL["gpu"])
        option = type("O", (), dict(cloud_usd_per_gpu_hour=31.92, pricing="cloud", price_kind=None))()
        said = _implausible_rate(option, gpu)  # the scenario file's warning (planner export)
        assert said.startswith("cloud_usd_per_gpu_hour $31.92 is 5.2x")
        want = "Warning: " + said.replace("cloud_usd_per_gpu_hour $31.92", "$31.92 per GPU-hour").replace(
            " instances)", " instances; GPUs sheet)"
        )
        assert book[INPUTS_SHEET][f"D{price_warning_row()}"].value == want
        assert want in output.splitlines()

    def test_catalog_price_and_one_below_the_bound_say_nothing(self, refreshed):
        for name in ("trial", "smallest-best"):
            assert refreshed[name][1][INPUTS_SHEET][f"D{price_warning_row()}"].value in (None, "")
        gpu = default_catalog().gpu(TRIAL["gpu"])
        top = max(p.usd_per_gpu_hour for p in gpu.prices if p.kind != "purchase")
        assert top == pytest.approx(6.155)  # CoreWeave's 8-GPU instance per GPU (findings F5)
        assert 31.92 >= IMPLAUSIBLE_RATE_FACTOR * top
