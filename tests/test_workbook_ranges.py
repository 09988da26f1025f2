"""The what-if workbook shows each time prediction with the range of the fit (or of the user's calibration)."""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from workbook_support import require_libreoffice

import planner
from planner.calibration import residual_quantiles
from planner.libreoffice import recalculate
from planner.workbook import read_inputs
from planner.workbook.layout import RESULTS_SHEET
from planner.workbook.update import generate

pytestmark = pytest.mark.libreoffice


def test_results_show_the_tpot_range_of_the_shipped_fit(tmp_path: Path):
    """Low / high = TPOT x (1 + the GPU's held-out residual quantiles) for the default inputs (planner.ranges)."""
    require_libreoffice()
    path = generate(tmp_path)[0].path
    i = read_inputs(path)
    sheet = openpyxl.load_workbook(recalculate(path, tmp_path / "rc"), data_only=True)[RESULTS_SHEET]
    rows = {r[0]: r[1:3] for r in sheet.iter_rows(min_col=1, max_col=3, values_only=True) if r[0]}
    args = (i["gpu"], i["model"], i["context"])
    opts = dict(kv_precision=i["kv_precision"], gpus=i["gpus"], weight_precision=i["weight_precision"])
    batch = i["batch"] or planner.max_batch(*args, **opts)
    tpot_ms = planner.tpot(*args, batch=batch, **opts) * 1e3
    low, high = residual_quantiles(i["gpu"])
    assert rows["TPOT at the chosen batch: low / high"] == pytest.approx((tpot_ms * (1 + low), tpot_ms * (1 + high)))
