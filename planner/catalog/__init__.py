"""Catalog of GPUs, models and precisions: every number with its source, and names resolved to typed facts.

- ``schema``, ``loader``: the TOML entries as frozen pydantic models, and the one explicit loader.
- ``lookup``, ``resolve``: names (text, arrays, Series, Categoricals) to catalog entries and ``planner.model`` facts,
  with the engine's profile and the calibration applied (``planner.engines``, ``planner.accuracy.calibration``).
- ``hf``, ``hf_files``: a Hugging Face ``config.json`` turned into a catalog entry (``planner catalog import-hf``).

May import ``planner.model``, ``planner.errors``, ``planner.units``, ``planner.io``, ``planner.checks``, the
engines' facts (``planner.engines``) and the calibration file reader (``planner.accuracy.calibration``); never a
surface.
"""

from planner.catalog.loader import (
    Catalog,
    as_catalog,
    default_catalog,
    load_catalog,
    reload_catalog,
    shipped_catalog_dir,
)
from planner.catalog.schema import (
    PRICE_STALE_AFTER_DAYS,
    BlockFp8Checkpoint,
    Gpu,
    LinearAttention,
    Mla,
    Model,
    Moe,
    Precision,
    Price,
    SparseAttention,
    names_provider,
    no_rental_price,
    normalize_name,
    stale_price_warning,
)

__all__ = [
    "PRICE_STALE_AFTER_DAYS",
    "BlockFp8Checkpoint",
    "Catalog",
    "as_catalog",
    "Gpu",
    "LinearAttention",
    "Mla",
    "Model",
    "Moe",
    "Precision",
    "Price",
    "SparseAttention",
    "default_catalog",
    "load_catalog",
    "names_provider",
    "no_rental_price",
    "normalize_name",
    "reload_catalog",
    "shipped_catalog_dir",
    "stale_price_warning",
]
