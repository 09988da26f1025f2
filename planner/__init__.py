"""planner: LLM-inference capacity from sourced catalogs: KV cache, max batch, TPOT, throughput and cost.

>>> from planner import kv_bytes, max_batch
>>> kv_bytes("llama2-70b", 8192, kv_precision="fp16")  # bytes of one 8K sequence
2684354560.0
>>> max_batch("H100", "llama2-70b", 8192, kv_precision="fp16", engine="ideal", memory_utilization=1)  # seeds' trailer
12
"""

import typing as _typing

from planner.api import (
    batch_token_time,
    cost_per_mtok,
    decode_intensity,
    decode_step,
    kv_bytes,
    kv_bytes_per_token,
    max_batch,
    mbu,
    memory_plan,
    mfu,
    min_gpus,
    next_tp_size,
    prefill,
    prefill_intensity,
    ridge,
    throughput,
    tpot,
    ttft,
    valid_tp_sizes,
    weight_bytes,
)
from planner.catalog import Catalog, default_catalog, load_catalog, reload_catalog
from planner.catalog.listing import catalog_records
from planner.engines.profiles import ENGINES, EngineProfile, engine_profile
from planner.errors import (
    CatalogError,
    DoesNotFitError,
    EmptyCatalogFolderError,
    InvalidInputError,
    MissingDataError,
    NoFleetMeetsError,
    OutOfRangeError,
    OutputExistsError,
    PlannerError,
    UnknownKeywordError,
    UnknownNameError,
    WriteError,
)
from planner.report import Plan, plan

__version__ = "0.1.0"

if _typing.TYPE_CHECKING:
    from planner.serving.benchmark import BenchmarkRun, predict_benchmark

#: Names imported at first use: the serving simulation (planner.serving) loads only for those who call it, so that
#: the model's surfaces (the Excel functions above all) start without it.
_LAZY = {
    "BenchmarkRun": "planner.serving.benchmark",
    "predict_benchmark": "planner.serving.benchmark",
    # a fleet under load, one figure a call (``planner plan --rate``'s under_load, piece by piece; the Excel functions
    # REPLICAS, FLEET_GPUS, TTFT_P*/TPOT_P* and CAPACITY_RPS)
    **dict.fromkeys(("replicas_needed", "fleet_gpus_needed", "load_percentile", "replica_capacity_per_s"),
                    "planner.serving.fleet"),
}  # fmt: skip


def __getattr__(name: str):
    """``planner.BenchmarkRun``, ``planner.predict_benchmark`` and the fleet functions of ``_LAZY``, imported at first
    use (PEP 562)."""
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'planner' has no attribute {name!r}")


def __dir__() -> list[str]:
    """The module's names with the lazy ones, as if imported."""
    return sorted({*globals(), *_LAZY})


__all__ = [
    "BenchmarkRun",
    "fleet_gpus_needed",
    "load_percentile",
    "replica_capacity_per_s",
    "replicas_needed",
    "ENGINES",
    "Catalog",
    "CatalogError",
    "DoesNotFitError",
    "EmptyCatalogFolderError",
    "EngineProfile",
    "InvalidInputError",
    "MissingDataError",
    "NoFleetMeetsError",
    "OutOfRangeError",
    "OutputExistsError",
    "Plan",
    "PlannerError",
    "UnknownKeywordError",
    "UnknownNameError",
    "WriteError",
    "__version__",
    "batch_token_time",
    "catalog_records",
    "cost_per_mtok",
    "decode_intensity",
    "decode_step",
    "default_catalog",
    "engine_profile",
    "kv_bytes",
    "kv_bytes_per_token",
    "load_catalog",
    "max_batch",
    "mbu",
    "memory_plan",
    "mfu",
    "min_gpus",
    "plan",
    "predict_benchmark",
    "prefill",
    "prefill_intensity",
    "reload_catalog",
    "ridge",
    "throughput",
    "tpot",
    "ttft",
    "next_tp_size",
    "valid_tp_sizes",
    "weight_bytes",
]
