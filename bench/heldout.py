"""Held-out accuracy: the planner (and aiconfigurator and llm-analysis, where they install and support the row) on
published rows from sources the planner's time factors were not fitted on.

    python bench/heldout.py                      # planner; the estimators from bench/heldout_{aic,la}_cache.json
    python bench/heldout.py --why                # also one line per row without a prediction: why
    python bench/heldout.py --signed             # also the median signed error per vendor, GPU, TP, engine, MoE, batch band, lengths
    python bench/heldout.py --worst TTFT 30      # also the 30 worst TTFT figures, one line per row
    python bench/heldout.py --worst-aic TTFT 10  # the same on the rows aiconfigurator predicts, its error beside
    python bench/heldout.py --allreduce-fit      # all-reduces from the latency + bandwidth form, not vLLM's measured table
    python bench/heldout.py --run-aic --run-la   # also run aiconfigurator / llm-analysis (venvs) on new rows
    python bench/heldout.py --rows my.csv        # other benchmark rows (same columns as perf_public.csv)
    python bench/heldout.py --signed --source gpustack   # only the held-out rows of sources whose name holds "gpustack"
    python bench/heldout.py --serial-front-end   # one front-end process preparing requests in turn (the s112 experiment)
    python bench/heldout.py --write-serving-residuals   # catalogs/reference/heldout_serving_residuals.csv
    python bench/heldout.py --bootstrap          # each headline median / worst with its 90% interval over 1,000
                                                 # resamples of whole sources (--bootstrap N: N resamples)

Held out: every row of ``catalogs/reference/decode_*.csv`` and ``perf_*.csv`` whose ``source_group`` is not
in ``planner.accuracy.fit.FIT_SOURCE_GROUPS`` (``planner.accuracy.holdout.fit_rows`` fits those sources only). Prints median /
worst |error| per quantity (TPOT, TTFT, static-batch throughput, serving throughput) against the issue's goals,
each on all rows with, on the line under it, the same without the figures whose source contradicts itself
(``catalogs/reference/source_conflicts.csv``, ``planner.accuracy.source_conflicts``; nothing dropped), then per group (GPU vendor, GPU, TP size, model size, MoE, engine, how the run sent its prompts, batch band), planner beside
aiconfigurator and llm-analysis on the rows each predicted, and for each estimator the figures it cannot do and
why. A serving row's TTFT carries the per-request front-end time its benchmark client measures
(``planner.accuracy.frontend.frontend_s_of_rows``: the other sources' votes, never the row's own).
vLLM start-up rows (``vllm_startup_*.csv``, ``startup_memory_*.csv``: KV GiB per GPU, KV tokens, max
concurrency) are printed in three tiers: "in-sample" (the rows the memory profiles were fitted to,
``MEMORY_FIT_ROWS``), "same source" (other rows of those sources) and "held out" (other sources).

aiconfigurator (``/work/venvs/aic``, ``pip install aiconfigurator``) is run by ``bench/heldout_aic.py`` in its
own venv; its answers are cached by query in ``bench/heldout_aic_cache.json`` with its database version, so the
table reprints without it. llm-analysis 0.2.2 (``/work/venvs/la``) is run by ``bench/heldout_la.py`` on the rows
it can model (static batches and single-sequence runs of dense models on its A100 and H100 configs; its default
efficiencies), cached in ``bench/heldout_la_cache.json``. Without a venv and its cache that column is empty.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import statistics
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.accuracy import bootstrap as bs  # noqa: E402
from planner.accuracy import predict as acc  # noqa: E402
from planner.accuracy import source_conflicts  # noqa: E402
from planner.accuracy.datasets import sample_lengths  # noqa: E402
from planner.accuracy.fit import FIT_SOURCE_GROUPS, held_out_rows  # noqa: E402
from planner.accuracy.frontend import frontend_s_of_rows  # noqa: E402
from planner.accuracy.holdout import fold_of  # noqa: E402
from planner.accuracy.validation import LIMITS  # noqa: E402
from planner.catalog import default_catalog  # noqa: E402
from planner.engines.architecture import param_counts  # noqa: E402
from planner.model.layouts import layout_label  # noqa: E402
from planner.units import counted  # noqa: E402

HERE = Path(__file__).resolve().parent
AIC_PYTHON = Path("/work/venvs/aic/bin/python")
LA_PYTHON = Path("/work/venvs/la/bin/python")
LA_CACHE = HERE / "heldout_la_cache.json"
#: llm-analysis's shipped GPU configs, by catalog name.
LA_GPUS = {
    "A100 SXM 80GB": "a100-sxm-80gb",
    "A100 SXM 40GB": "a100-sxm-40gb",
    "A100 PCIe 80GB": "a100-pcie-80gb",
    "A100 PCIe 40GB": "a100-pcie-40gb",
    "H100 SXM 80GB": "h100-sxm-80gb",
    "H100 PCIe 80GB": "h100-pcie-80gb",
}
#: llm-analysis dtype configs (weights / activations / embeddings bits) by the row's weight precision.
#: llm-analysis's dtype config per catalog weight precision: int8 is W8A8 (int8 math), w8a16 weight-only 8-bit.
LA_DTYPES = {None: "w16a16e16", "fp16": "w16a16e16", "bf16": "w16a16e16", "fp8": "w8a8e16", "int8": "w8a8e16"}
LA_DTYPES.update({"w8a16": "w8a16e16", "int4": "w4a16e16", "awq": "w4a16e16"})
#: Start-up rows the vLLM memory profiles were fitted to (planner.engines.profiles, docs/accuracy.md "Memory"): 'vllm-0.10'
#: on KV001-KV003, 'vllm-fullsort' on KV013 and XL01-XL06, 'vllm' on XN01-XN12 (activation peak and non-torch
#: memory by least squares). They are in-sample for the KV GiB, tokens and concurrency vLLM printed.
MEMORY_FIT_ROWS = frozenset(
    ["KV001", "KV002", "KV003", "KV013"] + [f"XL0{i}" for i in range(1, 7)] + [f"XN{i:02d}" for i in range(1, 13)]
)
#: The sources of those rows (address or source_group): their other rows are "same source", not held out.
MEMORY_FIT_SOURCES = (
    "dennislee22/vLLM-benchmarking",
    "dennislee22-vllm-benchmarking",
    "llm-d/llm-d-benchmark",
    "jgchn/llm-d-planner",
    "llm-d-planner-v0.19.0-memory-sweep",
)
#: Start-up figures compared, and the StartupRow / StartupPrediction field of each.
MEMORY_QUANTITIES = {
    "vLLM KV GiB / GPU": "kv_cache_gib",
    "vLLM KV tokens": "kv_cache_tokens",
    "vLLM max concurrency": "max_concurrency",
}
AIC_CACHE = HERE / "heldout_aic_cache.json"
#: The issue's goals, (median, worst) |error|: the limits ``planner validate`` holds each quantity to
#: (``planner.accuracy.validation.LIMITS``); None: the figures are printed without a goal.
GOALS = {
    "TPOT": LIMITS["tpot_ms"],
    "TTFT": LIMITS["ttft_ms"],
    "static-batch throughput": LIMITS["throughput_tok_s"],
    "serving throughput": LIMITS["throughput_tok_s"],
    "vLLM KV GiB / GPU": LIMITS["kv_cache_gib"],
    "vLLM KV tokens": None,
    "vLLM max concurrency": None,
}
#: Fit tiers of the start-up rows, in the order printed.
MEMORY_TIERS = ("held out", "same source", "in-sample")
AIC_SYSTEMS = {
    "A100 SXM 80GB": "a100_sxm",
    "A100 PCIe 80GB": "a100_pcie",
    "H100 SXM 80GB": "h100_sxm",
    "H100 PCIe 80GB": "h100_pcie",
    "H200 SXM 141GB": "h200_sxm",
    "B200 180GB": "b200_sxm",
    "L40S": "l40s",
    "L4": "l4",
}
AIC_BACKENDS = {"vllm": "vllm", "sglang": "sglang", "tensorrt-llm": "trtllm"}
#: Checkpoints aiconfigurator ships configs for; other dense models get a config.json written from the catalog.
AIC_MODELS = {
    "Llama-3.1-8B": "meta-llama/Meta-Llama-3.1-8B",
    "Llama-3.1-70B": "meta-llama/Meta-Llama-3.1-70B",
    "Llama-3.1-405B": "meta-llama/Meta-Llama-3.1-405B",
    "Qwen3-0.6B": "Qwen/Qwen3-0.6B",
    "Qwen3-8B": "Qwen/Qwen3-8B",
    "Qwen3-32B": "Qwen/Qwen3-32B",
    "Qwen3-30B-A3B": "Qwen/Qwen3-30B-A3B",
    "Qwen3-235B-A22B": "Qwen/Qwen3-235B-A22B",
    "Mixtral-8x7B": "mistralai/Mixtral-8x7B-v0.1",
    "Mixtral-8x22B": "mistralai/Mixtral-8x22B-v0.1",
    "DeepSeek-V3": "deepseek-ai/DeepSeek-V3",
    "DeepSeek-R1": "deepseek-ai/DeepSeek-R1",
    "Qwen3-235B-A22B-2507": "Qwen/Qwen3-235B-A22B",  # the 2507 release keeps the shape (longer context only)
    "gpt-oss-20b": "openai/gpt-oss-20b",
    "gpt-oss-120b": "openai/gpt-oss-120b",
}
#: A max-throughput run of at most this many prompts (vLLM's and SGLang's smallest default max_num_seqs /
#: max_running_requests) ran them as one batch: aiconfigurator's agg mode is asked at that concurrency.
AIC_ALL_AT_ONCE_MAX = 256
AIC_GEMM = {"fp8": "fp8", "nvfp4": "nvfp4", "fp4": "nvfp4", "int4": "int4_wo", "awq": "int4_wo"}


def _err(pred: float, pub: float) -> float:
    return pred / pub - 1.0 if pub and not math.isnan(pred) and not math.isnan(pub) else math.nan


def size_class(total_params: float) -> str:
    for limit, label in ((10e9, "<10B"), (40e9, "10-40B"), (100e9, "40-100B")):
        if total_params < limit:
            return label
    return ">100B"


#: Batch bands of the per-group table: (largest batch, label).
BATCH_BANDS = ((1, "1"), (8, "2-8"), (32, "9-32"), (128, "33-128"), (512, "129-512"))


def batch_band(batch: float) -> str:
    """The row's batch (or client concurrency) band; "engine's" when the run sent every prompt at once."""
    if not batch or batch <= 0:
        return "engine's"
    return next((label for limit, label in BATCH_BANDS if batch <= limit), ">512")


def run_kind(r: acc.DecodeRow) -> str:
    """How the benchmark sent its prompts: static batch, all at once, a client's fixed concurrency, or a rate."""
    if r.kind == "static":
        return "static"
    if r.request_rate:
        return "rate"
    return "closed loop" if 0 < r.batch < (r.num_prompts or r.batch) else "all at once"


def length_kind(r: acc.DecodeRow) -> str:
    """How the row's requests vary: a dataset's published sample (``planner.accuracy.datasets.sample_lengths``),
    drawn by ``--random-range-ratio``, or every request at the stated lengths."""
    if sample_lengths(r) is not None:
        return "ShareGPT sample"
    return "range ratio" if r.length_range_ratio is not None else "fixed"


def time_checks(rows: list[acc.DecodeRow]) -> list[dict]:
    """One dict per compared figure: quantity, planner prediction, published value, groups, the row."""
    cat = default_catalog()
    pred = acc.predict_decode_rows(rows, catalog=cat, frontend_s=frontend_s_of_rows(rows))
    out = []
    for i, r in enumerate(rows):
        try:
            gpu, model = acc.resolve_gpu_name(r.gpu, cat), cat.model(acc.resolve_model_name(r.model, cat))
        except acc.PlannerError:
            gpu, model = None, None
        groups = {
            "vendor": cat.gpu(gpu).vendor if gpu else "(unknown)",
            "GPU": gpu or "(unknown)",
            "TP": layout_label(r.parallelism, r.gpus),
            "size": size_class(param_counts(model)[0]) if model else "(unknown)",
            "MoE": ("MoE" if model.moe else "dense") if model else "(unknown)",
            "engine": r.engine,
            "run": run_kind(r),
            "batch": batch_band(r.batch),
            "lengths": length_kind(r),
        }
        tput_q = "static-batch throughput" if r.kind == "static" else "serving throughput"
        for q, p, pub in (
            ("TPOT", pred.tpot_s[i] * 1e3, r.tpot_s * 1e3),
            ("TTFT", pred.ttft_s[i] * 1e3, r.ttft_s * 1e3),
            (tput_q, pred.throughput_tokens_per_s[i], r.throughput_tokens_per_s),
        ):
            if not math.isnan(pub):
                out.append({"q": q, "planner": _err(p, pub), "row": r, "gpu": gpu, "model": model, **groups})
                if math.isnan(p):
                    out[-1]["why"] = acc.why_not_predicted(r, catalog=cat) or "the prediction is not a number"
    return out


def memory_tier(record_id: str, source: str, source_group: str) -> str:
    """Whether a start-up row was fitted ("in-sample"), comes from a source a fit used ("same source") or not."""
    if record_id in MEMORY_FIT_ROWS:
        return "in-sample"
    text = f"{source} {source_group}"
    return "same source" if any(s in text for s in MEMORY_FIT_SOURCES) else "held out"


def memory_checks() -> list[dict]:
    """KV GiB per GPU, KV tokens and max concurrency of every published vLLM start-up row, with its fit tier."""
    out = []
    cat = default_catalog()
    ref = acc.reference_dir()
    for p in sorted([*ref.glob("vllm_startup_*.csv"), *ref.glob("startup_memory_*.csv")]):
        groups = {r["record_id"]: r.get("source_group", "") for r in acc.read_csv_rows(p)}
        for r in acc.load_startup_rows(p):
            why = ""
            try:
                pred = acc.predict_startup(r, catalog=cat)
                model = cat.model(acc.resolve_model_name(r.model, cat))
                gpu = acc.resolve_gpu_name(r.gpu, cat)
            except acc.PlannerError as exc:
                pred, model, gpu, why = None, None, None, str(exc)
            tier = memory_tier(r.record_id, r.source, groups.get(r.record_id, ""))
            groups_of_row = {
                "vendor": cat.gpu(gpu).vendor if gpu else "(unknown)",
                "GPU": gpu or "(unknown)",
                "TP": f"TP{r.tensor_parallel_size}",
                "size": size_class(param_counts(model)[0]) if model else "(unknown)",
                "MoE": ("MoE" if model.moe else "dense") if model else "(unknown)",
                "engine": f"vllm ({r.profile})",
                "run": "start-up",
                "batch": "start-up",
                "lengths": "start-up",
            }
            for q, field in MEMORY_QUANTITIES.items():
                pub = getattr(r, field)
                if math.isnan(pub):
                    continue
                predicted = getattr(pred, field) if pred else math.nan
                check = {"q": f"{q} [{tier}]", "planner": _err(predicted, pub), "record": r.record_id, "published": pub}
                out.append({**check, **groups_of_row, **({"why": why} if why else {})})
    return out


# -- aiconfigurator ------------------------------------------------------------------------------------------


def _hf_config(model) -> dict:
    """A config.json for a dense catalog model aiconfigurator has no copy of (its LLAMA family covers Llama/Qwen2)."""
    arch = "Qwen2ForCausalLM" if model.name.lower().startswith("qwen2") else "LlamaForCausalLM"
    return {
        "architectures": [arch],
        "model_type": "qwen2" if arch.startswith("Qwen2") else "llama",
        "hidden_size": model.hidden_size,
        "intermediate_size": model.intermediate_size,
        "num_hidden_layers": model.num_layers,
        "num_attention_heads": model.num_attention_heads,
        "num_key_value_heads": model.num_kv_heads,
        "head_dim": model.head_dim,
        "vocab_size": model.vocab_size,
        "max_position_embeddings": model.max_context,
        "tie_word_embeddings": model.tie_word_embeddings,
        "torch_dtype": "bfloat16",
    }


def aic_query(c: dict, config_dir: Path) -> dict | str:
    """The aiconfigurator query for a check, or why it cannot be asked (a one-line reason)."""
    r, model = c["row"], c["model"]
    if not model or not c["gpu"]:
        return "the planner does not resolve the row's GPU or model"
    if c["gpu"] not in AIC_SYSTEMS:
        return f"no {c['gpu']} in its system database"
    if r.engine not in AIC_BACKENDS:
        return f"no {r.engine} backend"
    if r.request_rate:
        return "a run at a request rate (its modes take a batch or a concurrency)"
    batch = r.batch or (r.num_prompts if (r.num_prompts or 0) <= (r.max_num_seqs or AIC_ALL_AT_ONCE_MAX) else 0)
    if batch < 1:
        return "the engine chose the batch (a queue of more prompts than its max_num_seqs): its modes take a batch"
    path = AIC_MODELS.get(model.name)
    if path is None and model.nas is not None:
        return "a NAS-pruned model (per-layer block_configs) it is given no config.json for"
    if path is None:
        if model.moe or model.mla or model.sliding_window:
            return "a MoE, MLA or sliding-window model it ships no config.json for"
        d = config_dir / model.name
        d.mkdir(parents=True, exist_ok=True)
        (d / "config.json").write_text(json.dumps(_hf_config(model)))
        path = str(d)
    q = {
        "model_path": path,
        "system": AIC_SYSTEMS[c["gpu"]],
        "backend": AIC_BACKENDS[r.engine],
        "mode": "static" if r.kind == "static" else "agg",
        "isl": max(r.input_len, 1),
        "osl": max(r.output_len, 2),
        "batch_size": batch,
        "tp_size": r.gpus,
        "gemm_quant_mode": AIC_GEMM.get(r.weight_precision or ""),
        "kvcache_quant_mode": "fp8" if r.kv_precision == "fp8" else None,
    }
    if model.moe:  # experts split like the rest of the layer (the engines' default without expert parallelism)
        q["moe_tp_size"] = r.gpus
    q["key"] = json.dumps({**q, "model_path": model.name}, sort_keys=True)
    return q


def la_query(c: dict) -> dict | str:
    """The llm-analysis query for a check, or why it cannot model the row (see the module docstring)."""
    r, model = c["row"], c["model"]
    if not model or not c["gpu"]:
        return "the planner does not resolve the row's GPU or model"
    if model.moe or model.mla or model.sliding_window:
        return "a MoE, MLA or sliding-window model (its ModelConfig is a dense transformer)"
    if model.nas is not None:
        return "a NAS-pruned model (its ModelConfig has one shape for every layer)"
    if c["gpu"] not in LA_GPUS:
        return f"no {c['gpu']} among its GPU configs"
    if r.weight_precision not in LA_DTYPES:
        return f"no {r.weight_precision} dtype config"
    one = r.batch == 1 and (r.num_prompts or 1) == 1 or r.kind == "serving" and r.batch == 1 and not r.request_rate
    if not (r.kind == "static" and r.batch >= 1 or one) or r.output_len < 1:
        return "a serving run of more than one sequence (it models a static batch)"
    if r.kind == "serving" and c["q"] not in ("TTFT", "TPOT"):
        return "a serving run's output rate (it models a static batch's)"
    q = {
        "model": {
            "name": model.name,
            "num_layers": model.num_layers,
            "n_head": model.num_attention_heads,
            "hidden_dim": model.hidden_size,
            "vocab_size": model.vocab_size,
            "max_seq_len": max(model.max_context, r.input_len + r.output_len),
            "num_key_value_heads": model.num_kv_heads,
            "ffn_embed_dim": model.intermediate_size,
            "expansion_ratio": model.intermediate_size / model.hidden_size,
            "model_type": "llama",
        },
        "gpu": LA_GPUS[c["gpu"]],
        "dtype": LA_DTYPES[r.weight_precision],
        "tp": r.gpus,
        "batch": r.batch,
        "input_len": max(r.input_len, 1),
        "output_len": r.output_len,
    }
    q["key"] = json.dumps({**q, "model": model.name}, sort_keys=True)
    return q


def _published(c: dict) -> float:
    r = c["row"]
    return {"TPOT": r.tpot_s * 1e3, "TTFT": r.ttft_s * 1e3}.get(c["q"], r.throughput_tokens_per_s)


def _error_kind(error: str) -> str:
    """An estimator's error message without the names and sizes that make each one different."""
    text = re.sub(r"(the model|on system) '[^']*'", r"\1", error)
    return re.split(r" with the given| for MoeKey|: either| \(", text)[0]


def attach(checks: list[dict], tool: str, run: bool) -> str:
    """Each check's error for ``tool`` ("aic" or "la") from its cache, running the tool on new queries if ``run``."""
    python, cache_path, script = {
        "aic": (AIC_PYTHON, AIC_CACHE, "heldout_aic.py"),
        "la": (LA_PYTHON, LA_CACHE, "heldout_la.py"),
    }[tool]
    cache = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    with tempfile.TemporaryDirectory() as tmp:
        queries, refused = {}, Counter()
        for c in checks:
            if "row" not in c:
                refused["a vLLM start-up row (it has no vLLM memory budget)"] += 1
                continue
            q = aic_query(c, Path(tmp)) if tool == "aic" else la_query(c)
            if isinstance(q, str):
                refused[q] += 1
                continue
            c[f"{tool}_key"] = q["key"]
            queries[q["key"]] = q
        if run and python.exists():
            qfile = Path(tmp) / "queries.json"
            qfile.write_text(json.dumps(list(queries.values())))
            subprocess.run([str(python), str(HERE / script), str(qfile), str(cache_path)], check=False)
            cache = json.loads(cache_path.read_text()) if cache_path.exists() else {}
    answered = 0
    for c in checks:
        res = cache.get(c.get(f"{tool}_key", ""), {})
        key = {"TPOT": "tpot_ms", "TTFT": "ttft_ms"}.get(c["q"], "throughput_tok_s")
        c[tool] = _err(res[key], _published(c)) if key in res else math.nan
        answered += key in res
        if f"{tool}_key" in c and key not in res:
            refused[
                f"it raised {_error_kind(res['error'])}" if "error" in res else "not run yet (no cached answer)"
            ] += 1
    state = "ran" if run and python.exists() else ("cache" if cache else "absent")
    why = "".join(f"\n    {n:4d} figures: {reason}" for reason, n in refused.most_common())
    if tool == "la":
        return f"llm-analysis 0.2.2 ({state}; default efficiencies): {answered} figures; none for{why}"
    versions = sorted({v.get("version", "") for k, v in cache.items() if "version" in v and k in queries})
    head = f"aiconfigurator ({state}; backend database versions {', '.join(versions) or '-'}): {answered} figures"
    return f"{head}; none for{why}"


# -- report --------------------------------------------------------------------------------------------------


def stats(errs: list[float], width: int = 5) -> str:
    """Median / worst |error| (figures) of the errors that are numbers; a dash, as wide, when none is."""
    e = [abs(x) for x in errs if not math.isnan(x)]
    n = width - 2
    return (
        f"{statistics.median(e):{width}.0%} / {max(e):{width}.0%} ({len(e):{n}d})"
        if e
        else f"{'-':>{width + 8}}" + " " * (width + 1)
    )


def _sections(checks: list[dict]) -> list[tuple[str, tuple[float, float] | None]]:
    """The quantities present, in GOALS order (start-up ones once per fit tier), each with its goal."""
    present = {c["q"] for c in checks}
    out = []
    for q, goal in GOALS.items():
        for name in (q, *(f"{q} [{t}]" for t in MEMORY_TIERS)):
            if name in present:
                out.append((name, goal))
    return out


def bootstrap_line(errors: list[float], sources: list[str], resamples: int, indent: str = "  ") -> str:
    """The median and worst |error| of ``errors`` with each one's 90% interval over ``resamples`` resamples of whole
    ``sources`` (``planner.accuracy.bootstrap.source_interval``, seed ``DEFAULT_SEED``), one line."""
    known = [(e, s) for e, s in zip(errors, sources, strict=True) if not math.isnan(e)]
    if not known:
        return f"{indent}90% by source: no figures"
    e, s = [k[0] for k in known], [k[1] for k in known]
    med, worst = (bs.source_interval(e, s, stat, resamples=resamples) for stat in ("median", "worst"))
    return (
        f"{indent}90% by source ({resamples:,} resamples of {len(set(s))} sources): median {med.observed:.1%} "
        f"[{med.low:.1%}, {med.high:.1%}], worst {worst.observed:.0%} [{worst.low:.0%}, {worst.high:.0%}]"
    )


def without_conflicts_line(qc: list[dict]) -> str:
    """One quantity's median / worst |error| (figures) without the figures whose source contradicts itself
    (``planner.accuracy.source_conflicts``, ``catalogs/reference/source_conflicts.csv``): a diagnostic printed under
    the headline on all rows, which stays the headline. Flagged figures the planner does not predict count in N too
    (N is what the file flags among these figures)."""
    flagged = [c for c in qc if source_conflicts.flagged(c["row"].record_id, c["q"])]
    kept = [c["planner"] for c in qc if not source_conflicts.flagged(c["row"].record_id, c["q"])]
    kinds = Counter(source_conflicts.source_conflicts()[c["row"].record_id].kind for c in flagged)
    by_kind = f", {', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))}" if kinds else ""

    def two_decimals(errs: list[float]) -> str:
        e = [abs(x) for x in errs if not math.isnan(x)]
        return f"{statistics.median(e):.2%} / {max(e):.2%} ({len(e)})" if e else "- / - (0)"

    figures = "figure" if len(flagged) == 1 else "figures"
    return (
        f"  without the {len(flagged)} {figures} whose source contradicts itself: {two_decimals(kept)}; all rows "
        f"{two_decimals([c['planner'] for c in qc])} (catalogs/reference/source_conflicts.csv{by_kind})"
    )


def report(checks: list[dict], bootstrap: int = 0) -> str:
    """The per-quantity tables; with ``bootstrap`` resamples, each quantity's "all" line is followed by its median
    and worst with their 90% intervals over resamples of whole sources (time quantities; start-up figures carry no
    source per row here, so none). Under each time quantity's "all" line, the same without the figures whose
    source contradicts itself (``without_conflicts_line``)."""
    lines = []
    head = (
        f"{'':<34}{'planner: all rows':>22}{'planner: rows aic has':>24}{'aiconfigurator':>22}"
        f"{'planner: rows la has':>24}{'llm-analysis':>22}"
    )
    for q, goal in _sections(checks):
        qc = [c for c in checks if c["q"] == q]
        target = f"goal {goal[0]:.0%} / {goal[1]:.0%}" if goal else "no goal set"
        lines += ["", f"== {q}: median / worst |error| (rows); {target}", head]

        def line(label, cs):
            out = f"{label:<34}{stats([c['planner'] for c in cs]):>22}"
            for tool in ("aic", "la"):
                both = [c for c in cs if not math.isnan(c.get(tool, math.nan)) and not math.isnan(c["planner"])]
                out += f"{stats([c['planner'] for c in both]):>24}{stats([c[tool] for c in both]):>22}"
            return out

        lines.append(line("all", qc))
        if bootstrap and all("row" in c for c in qc):
            sources = [fold_of(c["row"]) for c in qc]
            lines.append(bootstrap_line([c["planner"] for c in qc], sources, bootstrap))
        if q in TIME_QUANTITIES:
            lines.append(without_conflicts_line(qc))
        unpredicted = sum(1 for c in qc if math.isnan(c["planner"]))
        if unpredicted:
            lines.append(f"{'  (planner: no prediction)':<34}{unpredicted:>13}")
        for by in ("vendor", "GPU", "TP", "size", "MoE", "engine", "run", "batch", "lengths"):
            groups = defaultdict(list)
            for c in qc:
                groups[c[by]].append(c)
            for label in sorted(groups):
                lines.append(line(f"  {by} {label}", groups[label]))
    return "\n".join(lines)


def signed(errs: list[float], width: int = 6) -> str:
    """Median signed error (+: predicted above measured) and how many figures; a dash, as wide, when none."""
    e = [x for x in errs if not math.isnan(x)]
    return f"{statistics.median(e):+{width}.0%} ({len(e):3d})" if e else f"{'-':>{width}}      "


def signed_report(checks: list[dict]) -> str:
    """Median signed error per quantity and group: which regimes the planner (and aiconfigurator, on the rows it
    predicts) puts too slow (TPOT, TTFT +; throughput -) or too fast."""
    lines = []
    for q, _ in _sections(checks):
        if "[" in q:  # start-up figures: the |error| tables say enough
            continue
        qc = [c for c in checks if c["q"] == q]
        lines += [
            "",
            f"== {q}: median signed error (figures)",
            f"{'':<34}{'planner':>14}{'planner, aic rows':>20}{'aic':>14}",
        ]
        for by in ("all", "vendor", "GPU", "TP", "MoE", "engine", "run", "batch", "lengths"):
            groups = defaultdict(list)
            for c in qc:
                groups["all" if by == "all" else f"  {by} {c[by]}"].append(c)
            for label in sorted(groups):
                cs = groups[label]
                both = [c for c in cs if not math.isnan(c.get("aic", math.nan)) and not math.isnan(c["planner"])]
                lines.append(
                    f"{label:<34}{signed([c['planner'] for c in cs]):>14}"
                    f"{signed([c['planner'] for c in both]):>20}{signed([c['aic'] for c in both]):>14}"
                )
    return "\n".join(lines)


def worst_rows(checks: list[dict], quantity: str, count: int, aic_rows: bool = False) -> list[str]:
    """The ``count`` figures of ``quantity`` furthest from their published value (signed error, published value,
    the row's groups and lengths), worst first: the rows behind a group's median. With ``aic_rows``, only the rows
    aiconfigurator also predicts (the subset the side-by-side columns are computed on), aiconfigurator's error beside
    the planner's. A start-up memory figure (``memory_checks``: no benchmark row) is listed by its record id, its
    published value and its groups."""
    qc = sorted(
        (
            c
            for c in checks
            if c["q"] == quantity
            and not math.isnan(c["planner"])
            and (not aic_rows or not math.isnan(c.get("aic", math.nan)))
        ),
        key=lambda c: -abs(c["planner"]),
    )
    subset = " on aiconfigurator's rows" if aic_rows else ""
    lines = [f"\n== {quantity}: the {min(count, len(qc))} worst of {len(qc)} figures{subset} (planner / published - 1)"]
    for c in qc[:count]:
        if "row" not in c:  # a start-up memory figure: no benchmark row behind it
            lines.append(
                f"{c['record']:<15}{c['planner']:>+8.0%}{'':<11} published {c['published']:>10,.1f}  {c['GPU']} "
                f"{c['TP']} {c['engine']} {c['size']} {c['MoE']} start-up"
            )
            continue
        r = c["row"]
        pub = {"TPOT": r.tpot_s * 1e3, "TTFT": r.ttft_s * 1e3}.get(quantity, r.throughput_tokens_per_s)
        aic = f" aic {c['aic']:+.0%}" if not math.isnan(c.get("aic", math.nan)) else ""
        lines.append(
            f"{r.record_id:<15}{c['planner']:>+8.0%}{aic:<11} published {pub:>10,.1f}  {c['GPU']} {c['TP']} {c['engine']} "
            f"{r.engine_version.split(' ')[0]} {r.model.split('/')[-1].split(' ')[0]} {r.input_len}/{r.output_len} "
            f"run {c['run']} batch {c['batch']} ({r.batch}, {r.num_prompts or '-'} prompts) lengths {c['lengths']} "
            f"{r.statistic or 'statistic not stated'}"
        )
    return lines


def worst_refusal(checks: list[dict], option: str, quantity: str, count: str) -> str | None:
    """Why ``option QUANTITY N`` (``--worst`` / ``--worst-aic``) cannot be listed, one line, or None where it can: a
    quantity this run has no figures of (the ones it has named, in the report's order), or N not a whole number of
    1 or more."""
    names = [q for q, _ in _sections(checks)]
    if quantity not in names:
        return f"{option}: no quantity {quantity!r} in this run; use one of: {', '.join(repr(q) for q in names)}"
    if not (count.isdigit() and int(count) >= 1):
        return f"{option}: N {count!r} is not a whole number of 1 or more, e.g. 10"
    return None


#: The block of docs/accuracy.md that ``--write-docs`` rewrites and tests/test_heldout.py checks.
DOC_BLOCK = ("<!-- heldout:summary -->\n", "<!-- /heldout:summary -->\n")
TIME_QUANTITIES = ("TPOT", "TTFT", "static-batch throughput", "serving throughput")


def _pct(errs: list[float]) -> str:
    e = [abs(x) for x in errs if not math.isnan(x)]
    return f"{statistics.median(e):.0%} / {max(e):.0%} ({len(e)})" if e else "-"


def summary_markdown(checks: list[dict]) -> str:
    """The held-out figures as docs/accuracy.md states them: per time quantity, median / worst |error| (figures)
    on every held-out row, and on the rows aiconfigurator predicts, planner's beside aiconfigurator's. ``checks``
    must carry aiconfigurator's answers (``attach(checks, "aic", ...)``)."""
    lines = [
        "| quantity | planner, held-out rows | on aiconfigurator's rows: planner | aiconfigurator | goal |",
        "| --- | --- | --- | --- | --- |",
    ]
    for q in TIME_QUANTITIES:
        qc = [c for c in checks if c["q"] == q]
        both = [c for c in qc if not math.isnan(c.get("aic", math.nan)) and not math.isnan(c["planner"])]
        goal = GOALS[q]
        lines.append(
            f"| {q} | {_pct([c['planner'] for c in qc])} | {_pct([c['planner'] for c in both])} | "
            f"{_pct([c['aic'] for c in both])} | {goal[0]:.0%} / {goal[1]:.0%} |"
        )
    return "\n".join(lines) + "\n"


#: The block of docs/accuracy.md with the held-out figures per GPU vendor (``vendor_markdown``; trial 33 F3).
VENDOR_BLOCK = ("<!-- heldout:vendor -->\n", "<!-- /heldout:vendor -->\n")


def vendor_markdown(checks: list[dict]) -> str:
    """The held-out figures per GPU vendor as docs/accuracy.md states them: per vendor and time quantity, median /
    worst |error| (figures) and median signed error (+: predicted above measured), the GPUs (how many, past three)
    and how many sources; rows whose GPU the catalog does not know (no prediction) are left out."""
    lines = [
        "| vendor (GPUs; sources) | " + " | ".join(TIME_QUANTITIES) + " |",
        "| --- |" + " --- |" * len(TIME_QUANTITIES),
    ]
    for vendor in sorted({c["vendor"] for c in checks if c["q"] in TIME_QUANTITIES} - {"(unknown)"}):
        vc = [c for c in checks if c["vendor"] == vendor and c["q"] in TIME_QUANTITIES]
        named = sorted({c["GPU"] for c in vc})
        gpus = ", ".join(named) if len(named) <= 3 else f"{len(named)} GPUs"
        sources = counted(len({c["row"].source_group for c in vc}), "source")
        cells = []
        for q in TIME_QUANTITIES:
            errs = [c["planner"] for c in vc if c["q"] == q]
            known = [e for e in errs if not math.isnan(e)]
            cells.append(f"{_pct(errs)}, signed {statistics.median(known):+.0%}" if known else "-")
        lines.append(f"| {vendor} ({gpus}; {sources}) | " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"


def _rewrite_block(doc: Path, block: tuple[str, str], body: str) -> None:
    text = doc.read_text(encoding="utf-8")
    start, end = block
    head, rest = text.split(start, 1)
    _, tail = rest.split(end, 1)
    doc.write_text(head + start + body + end + tail, encoding="utf-8")


def write_docs_summary(checks: list[dict], doc: Path = Path(__file__).parents[1] / "docs" / "accuracy.md") -> Path:
    """Rewrite docs/accuracy.md's ``DOC_BLOCK`` with ``summary_markdown(checks)`` and its ``VENDOR_BLOCK`` with
    ``vendor_markdown(checks)``."""
    _rewrite_block(doc, DOC_BLOCK, summary_markdown(checks))
    _rewrite_block(doc, VENDOR_BLOCK, vendor_markdown(checks))
    return doc


def why_lines(checks: list[dict]) -> list[str]:
    """One line per row without a planner prediction: its id, the figures it lacks, and why."""
    rows: dict[str, tuple[list[str], str]] = {}
    for c in checks:
        if "why" in c:
            rid = c["row"].record_id if "row" in c else c["record"]
            rows.setdefault(rid, ([], c["why"]))[0].append(c["q"])
    return [f"{rid}: no {', '.join(qs)}: {why}" for rid, (qs, why) in rows.items()]


def steady_load_tpot(
    held: list[acc.DecodeRow],
) -> tuple[list[acc.DecodeRow], list[float], list[str | None], list[str | None]]:
    """The held-out rows whose load was steady (``planner.accuracy.serving_margin.steady_load``), each one's predicted
    TPOT in seconds, its catalog GPU and its catalog model's margin class (``serving_margin.margin_class``; None: not in
    the catalog): the arguments of ``serving_residual_table``."""
    from planner.accuracy.serving_margin import steady_load

    cat = default_catalog()
    # only steady-load runs enter the table: the bursts (the costliest runs to simulate) are not predicted
    held = [r for r in held if steady_load(r.kind, r.batch, r.num_prompts, r.request_rate)]
    pred = acc.predict_decode_rows(held, catalog=cat)
    return (
        held,
        list(pred.tpot_s),
        [_gpu_or_none(r.gpu, cat) for r in held],
        [_class_or_none(r.model, cat) for r in held],
    )


def write_serving_residuals(held: list[acc.DecodeRow]) -> Path:
    """``catalogs/reference/heldout_serving_residuals.csv`` from the held-out rows (``serving_residual_table``)."""
    import csv

    from planner.accuracy.serving_margin import COLUMNS, serving_residual_table, serving_residuals_file

    table = serving_residual_table(*steady_load_tpot(held))
    if not table:
        raise SystemExit("no held-out steady-load TPOT figure with a catalog GPU and model: nothing to write")
    path = serving_residuals_file()
    part = path.with_name(path.name + ".part")  # written whole, then moved over the old file
    with open(part, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, lineterminator="\n")
        w.writeheader()
        w.writerows(table)
    part.replace(path)
    return path


def _class_or_none(name: str, cat) -> str | None:
    """The margin class of a row's model (``planner.accuracy.serving_margin.margin_class``), None when the catalog does not
    know the model."""
    from planner.accuracy.serving_margin import margin_class

    try:
        return margin_class(cat.model(acc.resolve_model_name(name, cat)))
    except acc.PlannerError:
        return None


def _gpu_or_none(name: str, cat) -> str | None:
    try:
        return acc.resolve_gpu_name(name, cat)
    except acc.PlannerError:
        return None


def add_bootstrap_option(parser: argparse.ArgumentParser) -> None:
    """``--bootstrap [N]`` (this script's, ``bench/load_validation.py``'s and ``bench/loso.py``'s): N resamples of
    whole sources (``planner.accuracy.bootstrap``), 1,000 when N is left out; 0 (the default): no intervals."""

    def resamples(text: str) -> int:
        if not text.isdigit() or int(text) < 1:
            raise argparse.ArgumentTypeError(f"a number of resamples of at least 1, not {text!r}")
        return int(text)

    parser.add_argument(
        "--bootstrap",
        nargs="?",
        type=resamples,
        const=bs.DEFAULT_RESAMPLES,
        default=0,
        metavar="N",
        help="print each headline median / worst with its 90%% interval over N resamples of whole sources "
        f"(default N {bs.DEFAULT_RESAMPLES:,}, seed {bs.DEFAULT_SEED})",
    )


def add_allreduce_fit_option(parser: argparse.ArgumentParser) -> None:
    """``--allreduce-fit`` (this script's and ``bench/loso.py``'s): read by ``use_allreduce_fit``."""
    parser.add_argument(
        "--allreduce-fit",
        action="store_true",
        help="time every all-reduce with the latency + bandwidth form instead of vLLM's measured table (the default)",
    )


def use_allreduce_fit(args: argparse.Namespace) -> None:
    """With ``--allreduce-fit``, time every all-reduce of this process by the latency + bandwidth form
    (``planner.engines.allreduce_table.FIT_INSTEAD``). Call before any prediction: the GPU numbers are read once per
    process."""
    if args.allreduce_fit:
        from planner.engines import allreduce_table

        allreduce_table.FIT_INSTEAD = True


def add_serial_front_end_option(parser: argparse.ArgumentParser) -> None:
    """``--serial-front-end`` (this script's, ``bench/load_validation.py``'s and ``bench/frontend_fit.py``'s): read by
    ``use_serial_front_end``."""
    parser.add_argument(
        "--serial-front-end",
        action="store_true",
        help="every simulated run's requests wait in turn for one front-end process (off by default: "
        "docs/history.md, s112)",
    )


def use_serial_front_end(on: bool) -> None:
    """If ``on`` (``--serial-front-end``), every simulated run's requests wait in turn for one front-end process,
    ``FRONTEND_SERIAL_S`` of their front-end time (``planner.serving.benchmark.SERIAL_FRONT_END_S``). Call before
    any prediction (the front-end votes are computed once per process)."""
    if on:
        from planner.serving import benchmark

        benchmark.SERIAL_FRONT_END_S = benchmark.FRONTEND_SERIAL_S


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", nargs="*", type=Path, help="benchmark CSVs [default: the shipped reference rows]")
    parser.add_argument("--run-aic", action="store_true", help="run aiconfigurator on rows its cache lacks")
    parser.add_argument("--run-la", action="store_true", help="run llm-analysis on rows its cache lacks")
    parser.add_argument("--why", action="store_true", help="also print why each row without a prediction has none")
    parser.add_argument("--signed", action="store_true", help="also print the median signed error per group")
    parser.add_argument("--source", help="only held-out rows whose source_group contains this text")
    parser.add_argument(
        "--worst",
        nargs=2,
        metavar=("QUANTITY", "N"),
        help="also list the N worst figures of QUANTITY (TPOT, TTFT, ...), one line per row",
    )
    parser.add_argument(
        "--worst-aic",
        nargs=2,
        metavar=("QUANTITY", "N"),
        help="as --worst, on the rows aiconfigurator predicts only, its error beside the planner's",
    )
    parser.add_argument(
        "--write-serving-residuals",
        action="store_true",
        help="write the held-out steady-load TPOT residuals per GPU, engine and architecture class (planner.accuracy.serving_margin)",
    )
    parser.add_argument(
        "--write-docs", action="store_true", help="rewrite docs/accuracy.md's held-out summary table with these figures"
    )
    add_bootstrap_option(parser)
    add_allreduce_fit_option(parser)
    add_serial_front_end_option(parser)
    args = parser.parse_args()
    use_allreduce_fit(args)
    use_serial_front_end(args.serial_front_end)
    rows = [r for p in args.rows for r in acc.load_decode_rows(p)] if args.rows else acc.load_decode_rows()
    held = held_out_rows(rows)
    if args.source:
        held = [r for r in held if args.source.lower() in r.source_group.lower()]
    if args.write_serving_residuals:
        print(f"wrote {write_serving_residuals(held)}")
        return
    checks = time_checks(held) + (memory_checks() if not args.rows else [])
    for option, given in (("--worst", args.worst), ("--worst-aic", args.worst_aic)):
        if given and (refusal := worst_refusal(checks, option, *given)):
            sys.exit(f"heldout.py: {refusal}")
    notes = [attach(checks, "aic", args.run_aic), attach(checks, "la", args.run_la)]
    groups = sorted({r.source_group for r in held})
    print(f"held-out rows: {len(held)} from {len(groups)} sources (fit used: {', '.join(FIT_SOURCE_GROUPS)})")
    print("\n".join(notes))
    print(report(checks, args.bootstrap))
    if args.write_docs:
        print(f"wrote {write_docs_summary(checks)}")
    if args.signed:
        print(signed_report(checks))
    if args.worst:
        print("\n".join(worst_rows(checks, args.worst[0], int(args.worst[1]))))
    if args.worst_aic:
        print("\n".join(worst_rows(checks, args.worst_aic[0], int(args.worst_aic[1]), aic_rows=True)))
    if args.why:
        print("\n== rows without a planner prediction, and why")
        print("\n".join(why_lines(checks)))


if __name__ == "__main__":
    main()
