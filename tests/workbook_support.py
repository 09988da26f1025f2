"""Helpers for the workbook tests: LibreOffice availability, recalculation, and the Python model's expected values.

Not a conftest: test modules import it (pytest puts tests/ on sys.path).
"""

from __future__ import annotations

import copy
import math
import os
from pathlib import Path
from typing import Any

import openpyxl
import pytest

from planner import api
from planner.catalog import default_catalog
from planner.errors import DoesNotFitError, MissingDataError, PlannerError
from planner.libreoffice import convert, find_soffice
from planner.workbook.catalog_sheets import gqa_sibling
from planner.workbook.layout import COMPARE_FIELD, INPUT_FIELDS, INPUTS_SHEET, input_row
from planner.workbook.spec import WorkbookSpec
from planner.workbook.writer import write_workbook


def require_libreoffice() -> None:
    """Skip without soffice, except on CI (CI=true), where a missing LibreOffice is a failure."""
    if find_soffice() is None:
        if os.environ.get("CI") == "true":
            pytest.fail("LibreOffice (soffice) is required on CI: .ci/run installs libreoffice-calc-nogui")
        pytest.skip("LibreOffice (soffice) not installed")


def with_inputs(spec: WorkbookSpec, inputs: dict[str, Any]) -> WorkbookSpec:
    """A copy of the description with the Inputs cells set (keys of read_inputs, plus compare_model)."""
    out = copy.deepcopy(spec)
    sheet = out.sheet(INPUTS_SHEET)
    for f in (*INPUT_FIELDS, COMPARE_FIELD):
        if f.key in inputs:
            sheet.cells[f"B{input_row(f.key)}"].value = inputs[f.key]
    return out


def recalculate_many(specs: dict[str, WorkbookSpec], tmp: Path) -> dict[str, openpyxl.Workbook]:
    """Write each description, recalculate all in one LibreOffice call, load the values (data_only)."""
    src = tmp / "src"
    src.mkdir(exist_ok=True)
    paths = [write_workbook(spec, src / f"{key}.xlsx", force=True) for key, spec in specs.items()]
    outputs = convert(paths, "xlsx", tmp / "recalculated", timeout_s=600)
    return {key: openpyxl.load_workbook(p, data_only=True) for key, p in zip(specs, outputs, strict=True)}


# -- the model's side -----------------------------------------------------------------------------------


class Error:
    """An expected error cell: the model raised ``exc`` (or the sheet marks 'does not fit' as #N/A)."""

    def __init__(self, text: str):
        self.text = text

    def __repr__(self) -> str:
        return f"Error({self.text})"


def _err(exc: PlannerError) -> Error:
    """The error value every surface shows for this exception (PlannerError.excel_error)."""
    return Error(exc.excel_error)


def scenario_inputs(base: dict, key: str) -> dict:
    """The inputs each Calc column evaluates (as the workbook's lever formulas define them), from the baseline's."""
    s = dict(base)
    if key == "base":
        return s
    try:
        n = int(
            api.memory_plan(
                base["gpu"],
                base["model"],
                base["context"],
                kv_precision=base.get("kv_precision"),
                gpus=base.get("gpus"),
                weight_precision=base.get("weight_precision"),
                memory_utilization=base.get("memory_utilization"),
            ).gpus
        )
        s["gpus"] = 2 * n if key == "gpus_x2" else n
    except PlannerError as exc:
        s["gpus"] = _err(exc)  # n-dependent results repeat the baseline's error
    if key == "context_half":
        ctx = base["context"]
        whole = isinstance(ctx, (int, float)) and not isinstance(ctx, bool) and ctx >= 1 and float(ctx).is_integer()
        s["context"] = max(1, int(ctx) // 2) if whole else ctx
    elif key == "compare":
        cat = default_catalog()
        s["model"] = base.get("compare_model") or gqa_sibling(cat.model(base["model"]), list(cat.models))
    elif key == "kv_fp8":
        s["kv_precision"] = "fp8"
    elif key == "kv_int4":
        s["kv_precision"] = "int4"
    return s


_N_FREE = ("ridge", "weight_bytes", "kv_token")


def expected(s: dict, quantity: str) -> float | Error:
    """What the Python model says for one probe of a scenario: a number, or the error cell it must show."""
    if isinstance(s.get("gpus"), Error) and quantity not in _N_FREE:
        return s["gpus"]
    gpu, model, ctx = s["gpu"], s["model"], s["context"]
    kv, wp, util, gpus = s.get("kv_precision"), s.get("weight_precision"), s.get("memory_utilization"), s.get("gpus")
    try:
        if quantity == "ridge":
            native = default_catalog().model(model).native_precision
            return api.ridge(gpu, precision=wp or native)
        if quantity == "weight_bytes":
            return api.weight_bytes(model, precision=wp)
        if quantity == "kv_token":
            return api.kv_bytes_per_token(model, kv_precision=kv)
        mem = api.memory_plan(gpu, model, ctx, kv_precision=kv, gpus=gpus, weight_precision=wp, memory_utilization=util)
        n = int(mem.gpus)
        kind, _, field = quantity.partition(".")
        if kind == "memory":
            return float(getattr(mem, field))
        if kind == "prefill":
            return float(
                getattr(
                    api.prefill(gpu, model, ctx, gpus=n, weight_precision=wp, kv_precision=kv, memory_utilization=util),
                    field,
                )
            )
        if quantity == "batch_per_dollar":
            price = s.get("price_per_gpu_hour")
            if price is None:
                price = api.gpu_price_per_hour(gpu)
                if math.isnan(price):
                    raise MissingDataError("no catalog price")  # as api.cost_per_mtok raises
            return float(mem.max_batch) / (n * price)
        if kind.startswith("sweep_context"):
            c = int(quantity.split(":")[1])
            try:
                return float(
                    api.max_batch(gpu, model, c, kv_precision=kv, gpus=n, weight_precision=wp, memory_utilization=util)
                )
            except DoesNotFitError:
                return Error("#N/A")
        if kind.startswith("sweep_batch"):
            _, b, field = quantity.split(":")
            if int(b) > mem.max_batch:
                return Error("#N/A")
            return _decode_field(
                api.decode_step(
                    gpu, model, ctx, batch=int(b), kv_precision=kv, gpus=n, weight_precision=wp, memory_utilization=util
                ),
                field,
            )
        batch = s.get("batch") if kind == "decode" else None
        b = int(mem.max_batch) if batch is None else batch
        if field == "cost":
            return float(
                api.cost_per_mtok(
                    gpu,
                    model,
                    ctx,
                    batch=b,
                    price_per_gpu_hour=s.get("price_per_gpu_hour"),
                    kv_precision=kv,
                    gpus=n,
                    weight_precision=wp,
                    memory_utilization=util,
                )
            )
        return _decode_field(
            api.decode_step(
                gpu, model, ctx, batch=b, kv_precision=kv, gpus=n, weight_precision=wp, memory_utilization=util
            ),
            field,
        )
    except PlannerError as exc:
        return _err(exc)


def _decode_field(step, field: str) -> float:
    return float(getattr(step, field))


def agrees(cell: Any, want: float | Error, scale: float = 1.0, rel: float = 1e-9) -> bool:
    if isinstance(want, Error):
        return cell == want.text
    if isinstance(cell, bool) or not isinstance(cell, (int, float)):
        return False
    return math.isclose(cell, want * scale, rel_tol=rel, abs_tol=1e-300)
