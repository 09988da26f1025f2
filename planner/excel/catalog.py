"""PLANNER_INFO, PLANNER_GPUS, PLANNER_MODELS: catalog facts for Excel cells (one field, or a whole entry)."""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from planner.errors import PlannerError, UnknownNameError
from planner.excel.cells import (
    MISSING,
    NA,
    VALUE,
    Failure,
    Param,
    _grid,
    _Shape,
    _unwrap,
    clean,
    failure_from,
)
from planner.excel.support import catalog, render


def names(kind: str) -> list[list[str]]:
    """A column of the catalog's names of one kind ("gpu", "model", "precision"), for spilling."""
    try:
        return [[n] for n in catalog().table(kind).names()]
    except Exception as exc:  # noqa: BLE001 - a broken user catalog shows as an error cell
        return render(failure_from(exc))


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    if isinstance(value, dict):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}" if prefix else str(k), v, out)
    elif isinstance(value, (list, tuple)):
        out[prefix] = ", ".join(str(v) for v in value)
    elif value is not None:
        out[prefix] = value


def facts(name: str) -> dict[str, Any]:
    """Every field of the catalog entry called ``name`` (GPU, then model, then precision), flattened with dots.

    Models also get the numbers the model derives from their architecture (params_total, params_active...).
    """
    cat = catalog()
    for kind in ("gpu", "model", "precision"):
        table = cat.table(kind)
        if name in table:
            entry = table.get(name)
            out: dict[str, Any] = {"kind": kind}
            dump = entry.model_dump(exclude={"prices"} if kind == "gpu" else None)
            if kind == "gpu":  # one price per kind: price.on-demand.usd_per_gpu_hour, price.purchase.purchase_usd
                kinds = dict.fromkeys(p.kind for p in entry.prices)
                dump["price"] = {k: entry.price(k).model_dump(exclude={"kind"}) for k in kinds}
            _flatten("", dump, out)
            if kind == "model":
                from planner.engines.architecture import CATALOG_FACT_FIELDS, model_facts

                derived = model_facts(entry)
                for f in CATALOG_FACT_FIELDS:
                    value = float(getattr(derived, f))
                    if math.isfinite(value):  # no window: inf inside the model, nothing in a cell
                        out.setdefault(f, value)
            return out
    known = cat.gpus.names() + cat.models.names() + cat.precisions.names()
    aliases = cat.gpus.aliases() + cat.models.aliases() + cat.precisions.aliases()
    raise UnknownNameError("GPU, model or precision", name, known + aliases)


#: The number of a GPU's price of one kind, what ``PLANNER_INFO(gpu, "price.<kind>")`` gives: $ per GPU-hour for a
#: rental kind, $ per GPU for a purchase.
PRICE_NUMBERS = ("usd_per_gpu_hour", "purchase_usd")


def _is_number(value: Any) -> bool:
    """Whether a catalog field is a number (not a logical): the fields PLANNER_INFO suggests first."""
    return isinstance(value, (int, float, np.number)) and not isinstance(value, (bool, np.bool_))


def _info_cell(name: Any, field: Any) -> Any:
    n = clean(name, Param("name", "text", "a catalog name"))
    if isinstance(n, Failure):
        return n
    if n is MISSING:
        return Failure(VALUE, "name is empty; give a GPU, model or precision name such as H100")
    try:
        table = facts(n)
    except PlannerError as exc:
        return failure_from(exc)
    f = clean(field, Param("field", "text", "a field name"))
    if isinstance(f, Failure):
        return f
    if f is MISSING:
        return table
    wanted = f.lower().replace(" ", "_")
    lowered = {k.lower(): k for k in table}
    key = lowered.get(wanted)
    if key is None:  # "price.on-demand": its number, the price itself (trial 30 F14)
        key = next((lowered[k] for k in (f"{wanted}.{n}" for n in PRICE_NUMBERS) if k in lowered), None)
    if key is None:
        from planner.errors import closest_names

        prices = [k for k in table if k.rpartition(".")[2] in PRICE_NUMBERS]
        numbers = [k for k, v in table.items() if _is_number(v)]
        near = [*closest_names(f, prices), *closest_names(f, numbers), *closest_names(f, list(table))]
        near = list(dict.fromkeys(near))[:3]  # the number fields first (the price itself, not its date or source)
        hint = f"did you mean {', '.join(near)}?" if near else f"fields: {', '.join(list(table)[:15])}, ..."
        return Failure(NA, f"{n!r} has no field {f!r}; {hint}")
    value = table[key]
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    if isinstance(value, (int, float, np.number)):
        return float(value) if not isinstance(value, int) else value
    return str(value)


def info(name: Any, field: Any = None, why: bool = False) -> Any:
    """PLANNER_INFO: one field of a catalog entry, or (no field) a two-column table of all its fields."""
    try:
        name, field = _unwrap(name), _unwrap(field)
        if not isinstance(name, (list, tuple, np.ndarray)) and not isinstance(field, (list, tuple, np.ndarray)):
            cell = _info_cell(name, field)
            if isinstance(cell, dict):
                return "ok" if why else [[k, v] for k, v in cell.items()]
            if why:
                return cell.message if isinstance(cell, Failure) else "ok"
            return render(cell)
        try:
            grids = [_grid(name), _grid(field)]
            shape = np.broadcast_shapes(*(g.shape for g in grids if isinstance(g, np.ndarray)))
        except (_Shape, ValueError) as exc:
            f = Failure(VALUE, f"PLANNER_INFO got ranges that do not line up ({exc})")
            return f.message if why else render(f)
        b = [np.broadcast_to(g, shape) if isinstance(g, np.ndarray) else g for g in grids]
        out = []
        for i in range(shape[0]):
            row = []
            for j in range(shape[1]):
                nm = b[0][i, j] if isinstance(b[0], np.ndarray) else b[0]
                fd = b[1][i, j] if isinstance(b[1], np.ndarray) else b[1]
                cell = (
                    _info_cell(nm, fd)
                    if fd is not None
                    else Failure(VALUE, "field is empty; with a range of names, give a field such as memory_bytes")
                )
                if isinstance(cell, dict):
                    cell = Failure(VALUE, "give a field such as memory_bytes")
                row.append((cell.message if isinstance(cell, Failure) else "ok") if why else render(cell))
            out.append(row)
        return out
    except Exception as exc:  # noqa: BLE001
        f = failure_from(exc)
        return f.message if why else render(f)
