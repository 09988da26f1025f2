"""The catalog as rows of plain values: ``catalog_records("gpus")`` for ``pandas.DataFrame(...)`` and
``planner catalog list --json``, the headline numbers ``planner catalog list`` prints, in base units.

Imports: the catalog, the engines' architecture counts and KV rules (``planner.catalog.resolve``); no I/O beyond
reading the catalog in effect (``as_catalog``).
"""

from __future__ import annotations

from typing import Any

from planner.catalog.loader import Catalog, as_catalog
from planner.catalog.resolve import kv_engines
from planner.catalog.schema import Gpu, Model, Precision, no_rental_price
from planner.engines.architecture import param_counts
from planner.errors import InvalidInputError

#: The kinds ``catalog_records`` lists, as ``planner catalog list`` names them (a singular is read as its plural).
RECORD_KINDS = ("gpus", "models", "precisions")


def gpu_record(g: Gpu) -> dict[str, Any]:
    """One GPU's headline numbers: memory (bytes, 1 GB = 1e9 B), HBM bandwidth (bytes/s), dense 16-bit peak
    (FLOP/s: bf16, else fp16), the on-demand price (US$ per GPU-hour; None without one) and its date, and
    ``price_note``: why there is none where the GPU has purchase quotes only (``no_rental_price``), else None."""
    price = g.price("on-demand")
    return {
        "name": g.name,
        "vendor": g.vendor,
        "architecture": g.architecture,
        "memory_bytes": g.memory_bytes,
        "hbm_bandwidth_bytes_per_s": g.hbm_bandwidth_bytes_per_s,
        "peak_16bit_flop_per_s": g.peak_flop_per_s.get("bf16") or g.peak_flop_per_s.get("fp16"),
        "price_usd_per_gpu_hour": None if price is None else price.usd_per_gpu_hour,
        "price_date": None if price is None else str(price.date),
        # a GPU with purchase quotes only: why the rate is None, in the words plan and catalog list use
        "price_note": no_rental_price(g) or None,
        "aliases": list(g.aliases),
    }


def model_record(m: Model) -> dict[str, Any]:
    """One model's headline numbers: parameters (total and active, computed from the architecture), attention kind,
    layers, trained context, published precision."""
    total, active = param_counts(m)
    return {
        "name": m.name,
        "params_total": total,
        "params_active": active,
        "moe": m.moe is not None,
        "attention_kind": m.attention_kind,
        "num_layers": m.num_layers,
        "max_context_tokens": m.max_context,
        "native_precision": m.native_precision,
        "aliases": list(m.aliases),
    }


def precision_record(p: Precision) -> dict[str, Any]:
    """One precision: bytes per element, the math it runs in, the engines that cache KV in it."""
    return {"name": p.name, "bytes_per_element": p.bytes_per_element, "math": p.math, "kv_engines": kv_engines(p)}


_RECORD = {"gpus": gpu_record, "models": model_record, "precisions": precision_record}


def catalog_records(kind: str = "gpus", catalog: Catalog | Any = None) -> list[dict[str, Any]]:
    """The entries of one kind ("gpus", "models" or "precisions") as flat dicts of base-unit numbers, one per entry:
    ``pandas.DataFrame(catalog_records("gpus"))`` is the table ``planner catalog list gpus`` prints. ``catalog``: a
    Catalog or a folder, as every function takes it (default: the shipped one and ``$PLANNER_CATALOG``). Every field
    of an entry, with its source: ``[g.model_dump() for g in catalog.gpus]``."""
    key = kind if isinstance(kind, str) and kind.endswith("s") else f"{kind}s"
    if key not in _RECORD:
        raise InvalidInputError(f"kind must be one of {', '.join(RECORD_KINDS)}; got {kind!r}")
    cat = as_catalog(catalog)
    table = {"gpus": cat.gpus, "models": cat.models, "precisions": cat.precisions}[key]
    return [_RECORD[key](entry) for entry in table]
