"""Reading published tables and logs as they are written: GPU and model names, dtype cells, numbers in cells.

"NVIDIA H100 SXM 80GB" is the catalog's H100 SXM 80GB, "LLaMA 7B (Llama-2-7b)" its Llama-2-7B, "Qwen/Qwen2-7B"
its Qwen2-7B; "auto" or "not stated" as a dtype is the model's default; "14.2488 GiB" is 14.2488.
"""

from __future__ import annotations

import csv
import math
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from planner.catalog import Catalog
from planner.errors import InvalidInputError

#: Published names that the catalog's aliases and the rules of ``resolve_gpu_name`` do not reach.
GPU_NAMES = {
    "nvidia a100-80g": "A100 SXM 80GB",  # LMDeploy's A100 benchmark page (SXM4 per its 400 W class results)
}
#: Words in published GPU names that say nothing about which card it is.
GPU_NOISE = re.compile(r"\b(nvidia|amd|tesla|instinct|geforce|hbm3e?|hbm2e?|gpu|gpus|tensor core)\b", re.I)
#: Model-name suffixes that change the weights but not the shape (chat/instruct tunes, packaging).
MODEL_SUFFIXES = re.compile(r"(-(instruct|chat|it|hf|base))+(-\d{4})?$", re.I)
#: dtype cells that mean "the model's default".
DEFAULT_DTYPES = {"", "auto", "default", "none", "n/a", "na", "-", "unknown", "not stated"}


# -- name resolution ---------------------------------------------------------------------------------------


def _gpu_candidates(text: str) -> list[str]:
    inner = re.findall(r"\(([^()]*)\)", text)
    outer = re.sub(r"\s*\([^()]*\)", "", text).strip()
    out = []
    for c in (text, outer, *inner):
        out += [c, re.sub(r"\s+", " ", GPU_NOISE.sub(" ", c)).strip()]
    return [c for c in dict.fromkeys(out) if c]


def _gpu_by_parts(text: str, catalog: Catalog) -> str | None:
    """The one catalog GPU whose family (H100, MI300X ...), memory and form factor the text names, if any."""
    words = set(re.findall(r"[a-z0-9]+", text.lower()))
    family = re.compile(r"^[a-z]{1,3}\d{2,4}[a-z]?$|^rtx$|^a\d+g?$")
    hits = []
    for g in catalog.gpus:
        parts = set(re.findall(r"[a-z0-9]+", g.name.lower()))
        fam = {p for p in parts if family.match(p) and not p.endswith("gb")}
        mem = {p for p in parts if p.endswith("gb")}
        if not fam or not fam <= words:
            continue
        stated_mem = {w for w in words if re.fullmatch(r"\d+gb?", w)}
        if stated_mem and mem and not {m.rstrip("b") for m in mem} & {w.rstrip("b") for w in stated_mem}:
            continue
        forms = {"sxm", "sxm4", "sxm5", "pcie", "nvl"}
        stated_form = {w.rstrip("45") for w in words & forms}
        form = {p.rstrip("45") for p in parts & forms}
        if stated_form and form and not stated_form <= form:
            continue
        hits.append((bool(form) and "sxm" not in form, g.name))  # SXM (the default alias) before PCIe / NVL
    hits.sort()
    if len(hits) == 1 or (hits and hits[0][0] != hits[1][0]):
        return hits[0][1]
    return None


def resolve_gpu_name(name: str, catalog: Catalog) -> str:
    """A catalog GPU name for a published one ("NVIDIA H100 SXM 80GB", "NVIDIA A100 80GB (79.18 GiB reported)")."""
    text = str(name).strip()
    for candidate in _gpu_candidates(text):
        if candidate in catalog.gpus:
            return catalog.gpu(candidate).name
        mapped = GPU_NAMES.get(candidate.lower())
        if mapped:
            return catalog.gpu(mapped).name
    found = _gpu_by_parts(text, catalog)
    return found or catalog.gpu(text).name  # raises UnknownNameError with suggestions


def _model_candidates(text: str) -> list[str]:
    inner = re.findall(r"\(([^()]*)\)", text)
    outer = re.sub(r"\s*\([^()]*\)", "", text).strip()
    out = []
    for c in (text, *inner, outer):
        for d in (c, c.split("/")[-1]):
            out += [d, d + "-hf", MODEL_SUFFIXES.sub("", d), MODEL_SUFFIXES.sub("", d) + "-hf"]
    return [c for c in dict.fromkeys(out) if c]


def resolve_model_name(name: str, catalog: Catalog) -> str:
    """A catalog model name for a published one ("meta-llama/Llama-2-7b", "LLaMA 7B (Llama-2-7b)", "Qwen/Qwen2-7B")."""
    text = str(name).strip()
    for candidate in _model_candidates(text):
        if candidate in catalog.models:
            return catalog.model(candidate).name
    return catalog.model(text).name


def precision_in(value: Any) -> str | None:
    """A precision name from a dtype cell ("FP16 (fp16 page)" -> "fp16"); None for "auto", "not stated", blank."""
    text = re.sub(r"\s*\(.*$", "", str(value or "")).strip().lower()
    if text in DEFAULT_DTYPES or text.startswith(("not ", "unknown", "default")):
        return None
    return text.split(" ")[0]


def first_number(value: Any) -> float:
    """The first number in a published cell ("14.2488 GiB", "93,872", "5.73x"); NaN when there is none."""
    hit = re.search(r"-?\d[\d,]*\.?\d*(?:[eE]-?\d+)?", str(value or ""))
    return float(hit.group(0).replace(",", "")) if hit else math.nan


def whole_number(value: Any, what: str, default: int | None = None) -> int | None:
    """A whole number from a cell; ``default`` when blank; ValueError naming ``what`` otherwise."""
    x = first_number(value)
    if math.isnan(x):
        if default is not None or not str(value or "").strip():
            return default
        raise ValueError(f"{what} {value!r} is not a number")
    if x < 0 or x != int(x):
        raise ValueError(f"{what} {value!r} is not a whole number")
    return int(x)


def read_csv_rows(path: Path) -> list[dict[str, str]]:
    try:
        with open(path, newline="", encoding="utf-8-sig") as f:
            return [{(k or "").strip(): (v or "") for k, v in r.items()} for r in csv.DictReader(f)]
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise InvalidInputError(f"{path}: cannot read as CSV ({getattr(exc, 'strerror', None) or exc})") from None


def require_columns(path: Path, raw: list[dict[str, str]], needed: Iterable[str], accepted: str) -> None:
    if not raw:
        return
    missing = [c for c in needed if not any(alt in raw[0] for alt in c.split("|"))]
    if missing:
        names = ", ".join(c.replace("|", " or ") for c in missing)
        raise InvalidInputError(f"{path}: missing column(s) {names}; {accepted}")
