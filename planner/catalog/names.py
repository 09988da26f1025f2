"""Names as logs, hubs and people write them, resolved to catalog entries: "NVIDIA H100", "H100 80GB",
"RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8" (the base model, with the precision its name states).

``Catalog.gpu`` and ``Catalog.model`` fall back on these rules when a name is neither a catalog name nor an alias,
so every surface (``max_batch``, ``plan``, ``export``, ``validate``) reads the same names. Pure text rules; the
imports nothing of planner (the catalog loader imports it).
"""

from __future__ import annotations

import re
from typing import Any

Catalog = Any  # a planner.catalog.Catalog (not imported: the loader imports this module)

#: Published names that the catalog's aliases and the rules of ``resolve_gpu_name`` do not reach.
GPU_NAMES = {
    "nvidia a100-80g": "A100 SXM 80GB",  # LMDeploy's A100 benchmark page (SXM4 per its 400 W class results)
}
#: Words in published GPU names that say nothing about which card it is.
GPU_NOISE = re.compile(r"\b(nvidia|amd|tesla|instinct|geforce|hbm3e?|hbm2e?|gpu|gpus|tensor core)\b", re.I)
#: Model-name suffixes that change the weights but not the shape (chat/instruct tunes, packaging).
MODEL_SUFFIXES = re.compile(r"(-(instruct|chat|it|hf|base))+(-\d{4})?$", re.I)
#: Checkpoint-name suffixes that say how a repackaging quantized the weights (and ships KV-cache scales), not the
#: shape: such checkpoints keep the base model's config.json and add a ``quantization_config`` (e.g. Qwen/Qwen3-32B
#: against Qwen/Qwen3-32B-FP8, both copied in aiconfigurator 0.12's model_configs). The precision is the row's
#: dtype cell, else the one the suffix names (``checkpoint_precision``).
QUANT_SUFFIXES = re.compile(
    r"(-(fp8(-kv|-dynamic|-static)?|awq|gptq(-int[48])?|int[48]|w4a16|w8a16|w8a8|nvfp4|fp4|mxfp4|quantized(\.w\d+a\d+)?))+$",
    re.I,
)


# -- GPUs ----------------------------------------------------------------------------------------------


def _gpu_candidates(text: str) -> list[str]:
    inner = re.findall(r"\(([^()]*)\)", text)
    outer = re.sub(r"\s*\([^()]*\)", "", text).strip()
    out = []
    for c in (text, outer, *inner):
        out += [c, re.sub(r"\s+", " ", GPU_NOISE.sub(" ", c)).strip()]
    return [c for c in dict.fromkeys(out) if c]


def _gpu_by_parts(text: str, catalog: Catalog) -> str | None:
    """The one catalog GPU whose family (H100, MI300X ...), memory and form factor the text names, if any.

    Outside brackets, a word of letters alone must be one a catalog GPU name uses (SXM, PCIe, NVL, RTX ...) or a
    vendor's noise word: "H100 PCI" (PCIe mistyped) or "H100 ü" is no GPU, where the family alone had read them as
    the H100 SXM. Bracketed words are a source's remarks ("(79.18 GiB reported total)") and are not read."""
    outer = text
    while re.search(r"\([^()]*\)", outer):  # nested remarks too: '(script: "8 X H200 (bf16)")'
        outer = re.sub(r"\([^()]*\)", " ", outer)
    outer = GPU_NOISE.sub(" ", outer.split("(")[0]).lower()
    letters_only = {w for w in re.findall(r"[^\W_]+", outer) if not any(ch.isdigit() for ch in w)}
    if letters_only - _gpu_name_words(catalog):
        return None
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


def _gpu_name_words(catalog: Catalog) -> set[str]:
    """The letters-only words of every catalog GPU name and alias ("sxm", "pcie", "nvl", "rtx" ...), form factors and
    memory units."""
    words = {"sxm", "pcie", "nvl", "gb", "g"}
    for g in catalog.gpus:
        for name in g.all_names():
            words.update(w for w in re.findall(r"[^\W_]+", name.lower()) if not any(ch.isdigit() for ch in w))
    return words


def _remembered(kind: str, text: str, catalog: Catalog, read) -> str | None:
    """``read(text, catalog)``, kept in ``catalog.name_reads`` where the catalog has one (a frozen catalog: the same
    text reads the same way every time); objects without it are read every time."""
    memo = getattr(catalog, "name_reads", None)
    if memo is None:
        return read(text, catalog)
    key = (kind, text)
    if key not in memo:
        memo[key] = read(text, catalog)
    return memo[key]


def gpu_name(text: str, catalog: Catalog) -> str | None:
    """The catalog GPU a written name means ("NVIDIA H100 SXM 80GB", "H100 80GB", "NVIDIA A100 80GB (79.18 GiB
    reported)"), or None: its bracketed and noise-free forms, ``GPU_NAMES``, then family + memory + form factor."""
    return _remembered("gpu", str(text).strip(), catalog, _read_gpu_name)


def _read_gpu_name(text: str, catalog: Catalog) -> str | None:
    for candidate in _gpu_candidates(str(text).strip()):
        if candidate in catalog.gpus:
            return catalog.gpus.get(candidate).name
        mapped = GPU_NAMES.get(candidate.lower())
        if mapped:
            return catalog.gpus.get(mapped).name
    return _gpu_by_parts(str(text).strip(), catalog)


# -- models --------------------------------------------------------------------------------------------


def _model_candidates(text: str) -> list[str]:
    inner = re.findall(r"\(([^()]*)\)", text)
    outer = re.sub(r"\s*\([^()]*\)", "", text).strip()
    out = []
    for c in (text, *inner, outer):
        for d in (c, c.split("/")[-1]):
            bare = QUANT_SUFFIXES.sub("", d)
            for e in dict.fromkeys((d, bare, re.sub(r"^meta-(?=llama)", "", bare, flags=re.I))):
                out += [e, e + "-hf", MODEL_SUFFIXES.sub("", e), MODEL_SUFFIXES.sub("", e) + "-hf"]
    return [c for c in dict.fromkeys(out) if c]


def model_name(text: str, catalog: Catalog) -> str | None:
    """The catalog model a written name means ("meta-llama/Llama-2-7b", "RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8",
    "LLaMA 7B (Llama-2-7b)"), or None: the name, its repository-free, tune-free and quantization-free forms."""
    return _remembered("model", str(text).strip(), catalog, _read_model_name)


def _read_model_name(text: str, catalog: Catalog) -> str | None:
    for candidate in _model_candidates(str(text).strip()):
        if candidate in catalog.models:
            return catalog.models.get(candidate).name
    return None


def checkpoint_precision(name: str) -> str | None:
    """The weight precision a checkpoint's name states ("-FP8", "-FP8-KV": fp8; "-AWQ", "-GPTQ-Int4": int4;
    "-GPTQ-Int8", "quantized.w8a16": w8a16, weight-only 8-bit; "-Int8", "quantized.w8a8": int8, W8A8), or None.

    AMD's "-FP8-KV" checkpoints also ship fp8 KV-cache scales, but vLLM uses them only with ``--kv-cache-dtype
    fp8`` ("auto" keeps the model dtype: docs.vllm.ai, quantized KV cache), so the KV precision stays the row's.
    """
    hit = QUANT_SUFFIXES.search(str(name).strip())
    tail = hit.group(0).lower() if hit else ""
    for pattern, precision in (
        ("nvfp4|-fp4", "nvfp4"),
        ("mxfp4", "mxfp4"),
        ("fp8", "fp8"),
        ("gptq-int8|w8a16", "w8a16"),
        ("int8|w8a8", "int8"),
    ):
        if re.search(pattern, tail):
            return precision
    return "int4" if tail else None


#: Organizations whose "-FP8" checkpoints are block-quantized (config.json ``quantization_config.weight_block_size``
#: [128, 128]): Qwen's model cards ("Qwen/Qwen3-235B-A22B-FP8", "Note on FP8": "fine-grained fp8 quantization with
#: block size of 128"). Other hubs' "-FP8" repackagings (RedHatAI, neuralmagic, llm-compressor's FP8_DYNAMIC) are
#: per-channel or per-tensor: no blocks.
BLOCK_FP8_ORGS = {"qwen": 128}


def checkpoint_block_size(name: object) -> int | None:
    """The weight quantization block of a hub checkpoint that its name states, or None: 128 for Qwen's own
    "-FP8" checkpoints ("Qwen/Qwen3-235B-A22B-FP8", "Qwen3-30B-A3B-FP8" written without its organization), whose
    engines then need whole 128-blocks on each GPU (vLLM issue #17569: "The output_size of gate's and up's weight
    = 192 is not divisible by weight quantization block_n = 128" at TP 8; QwenLM/Qwen3#1485)."""
    if not isinstance(name, str):
        return None
    text = name.strip()
    hit = QUANT_SUFFIXES.search(text)
    if not hit or hit.group(0).lower() != "-fp8":
        return None
    org, _, repo = text.rpartition("/")
    if not org:
        return BLOCK_FP8_ORGS["qwen"] if repo.lower().startswith("qwen") else None
    return BLOCK_FP8_ORGS.get(org.lower())


def implied_weight_precision(model: object, given: object) -> object:
    """The weight precision to use: the one given, else the one a checkpoint's name states
    ("RedHatAI/Meta-Llama-3.1-70B-Instruct-FP8": fp8), else None (as published)."""
    if given is not None or not isinstance(model, str):
        return given
    return checkpoint_precision(model)
