"""Catalog of GPUs, models and precisions: schema and loader."""

from planner.catalog.loader import Catalog, default_catalog, load_catalog, reload_catalog, shipped_catalog_dir
from planner.catalog.schema import (
    PRICE_STALE_AFTER_DAYS,
    Gpu,
    Mla,
    Model,
    Moe,
    Precision,
    Price,
    normalize_name,
    stale_price_warning,
)

__all__ = [
    "PRICE_STALE_AFTER_DAYS",
    "Catalog",
    "Gpu",
    "Mla",
    "Model",
    "Moe",
    "Precision",
    "Price",
    "default_catalog",
    "load_catalog",
    "normalize_name",
    "reload_catalog",
    "shipped_catalog_dir",
    "stale_price_warning",
]
