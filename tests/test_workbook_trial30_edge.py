"""Trial 30 F4: the what-if workbook said "Meets the latency targets: yes (simulated p95)" for the fleet ``planner plan``
warns sits at the targets' edge.

The trial's Inputs (H100 with Llama 3.3 70B at 16,384 tokens, 3 requests/s of 4,000-token prompts and 500 output
tokens, TTFT 2,000 ms, TPOT 50 ms); ``planner plan --gpu H100 --model llama3.3-70b --context 16384 --rate 3
--prompt-tokens 4000 --output-tokens 500 --ttft-target 2 --tpot-target 0.05`` sizes 2 x 4 x H100 = 8 GPUs and warns
"4 of 5 arrival draws of this traffic miss the p95 targets at 2 replicas ...; 3 replicas (12 GPUs) meet them in every
draw". The workbook's load figures now run the same computation (``planner.serving.fleet.draws_edge``) for each lever
and its Baseline reads "yes, at the edge: 4 of 5 arrival draws miss the p95 targets; 3 replicas (12 GPUs) meet them in
every draw".
"""

from __future__ import annotations

import openpyxl
import pytest
from workbook_support import require_libreoffice

from planner.workbook.calc import EDGE_LABEL, calc_rows, scenario_col
from planner.workbook.layout import CALC_SHEET, LEVERS_SHEET
from planner.workbook.update import generate

pytestmark = [pytest.mark.libreoffice, pytest.mark.xdist_group("test_workbook_trial30_edge")]

TRIAL = dict(
    gpu="H100", model="llama3.3-70b", context=16384, peak_requests_per_s=3, prompt_tokens=4000, output_tokens=500,
    tpot_target_ms=50, ttft_target_ms=2000,
)  # fmt: skip
BASE = scenario_col("base")
EDGE = "4 of 5 arrival draws miss the p95 targets; 3 replicas (12 GPUs) meet them in every draw"


@pytest.fixture(scope="module")
def book(tmp_path_factory):
    """The trial's workbook through the Python API (``generate`` with the Inputs), LibreOffice's values stored."""
    require_libreoffice()
    (w,) = generate(tmp_path_factory.mktemp("trial30"), None, ["H100"], ["llama3.3-70b"], inputs=TRIAL)
    return openpyxl.load_workbook(w.path, data_only=True)


#: Calc's rows by key (their positions do not depend on the values: ``calc_rows``)
ROW = calc_rows(lever_kv="fp8", lever_weights="fp8", load=True).row_of


def test_the_baseline_reads_yes_at_the_edge_as_plan_warns(book):
    calc = book[CALC_SHEET]
    assert calc[f"A{ROW['edge']}"].value == EDGE_LABEL
    assert calc[f"{BASE}{ROW['edge']}"].value == EDGE  # planner.serving.fleet.draws_edge, as plan warns
    assert calc[f"{BASE}{ROW['fleet_gpus']}"].value == 8  # plan's 2 x 4 x H100
    assert calc[f"{BASE}{ROW['meets_text']}"].value == f"yes, at the edge: {EDGE}"
    levers = book[LEVERS_SHEET]
    meets = next(c.row for c in levers["A"] if c.value == "Meets the latency targets")
    assert levers[f"{BASE}{meets}"].value == f"yes, at the edge: {EDGE}"
