"""Excel functions for the capacity model: =MAX_BATCH("H100","llama2-70b",8192,"fp16") and its family.

Thin ``@xw.func`` wrappers over ``planner.api`` (through ``planner.excel.support``, which cleans the
arguments, broadcasts ranges and maps errors to Excel error values). They hold no formula of their own.

- Windows, classic xlwings UDFs: set "UDF Modules" to ``planner.excel.functions`` (``planner addin install``
  does it) and click "Import Functions".
- xlwings Lite (Windows, Mac, Excel on the web): ``planner addin lite DIR`` writes the ``main.py`` and
  ``requirements.txt`` to paste into the Lite editor.

Every argument may be a cell or a range (the result spills in the same shape); optional arguments may be
left out or empty. A cell that cannot be computed shows #N/A (unknown name), #NUM! (out of range, does not
fit) or #VALUE! (wrong kind of argument); =PLANNER_WHY("MAX_BATCH", ...same arguments...) says why, and beside a
number flags what ``planner plan`` flags (a context past the model's trained maximum: computed, not refused). On
classic Windows UDFs, which cannot return real errors, the cell shows the code and the reason as text.

This module imports xlwings, numpy, pydantic and the model, nothing more (no pandas until a range of names
arrives, no openpyxl, matplotlib or CLI code).
"""

from __future__ import annotations

import functools
import sys

import xlwings as xw

from planner import __version__
from planner.excel import catalog as _c
from planner.excel import support as _s

__all__ = [
    "CAPACITY_RPS",
    "COST_PER_MTOK",
    "DECODE_INTENSITY",
    "FLEET_GPUS",
    "KV_BYTES",
    "LOADED_RANGE",
    "MAX_BATCH",
    "MBU",
    "MFU",
    "MIN_GPUS",
    "PLANNER_GPUS",
    "PLANNER_INFO",
    "PLANNER_MODELS",
    "PLANNER_PRECISIONS",
    "PLANNER_RELOAD",
    "PLANNER_VERSION",
    "PLANNER_WHY",
    "REPLICAS",
    "RIDGE",
    "THROUGHPUT",
    "TPOT",
    "TPOT_P50",
    "TPOT_P95",
    "TPOT_P99",
    "TTFT",
    "TTFT_P50",
    "TTFT_P95",
    "TTFT_P99",
    "WEIGHT_BYTES",
]


def detect_runtime(xlwings_module=xw, platform: str = sys.platform) -> str:
    """Which runtime calls us, from the decorators xlwings bound at import (see ``xlwings/__init__.py``).

    "officejs": xlwings Lite (Pyodide) or xlwings Server (``XLWINGS_ON_SERVER=true``); "classic": Windows
    with pywin32 (VBA/COM UDFs); "python": anything else (identity decorators: tests, notebooks).
    """
    where = getattr(getattr(xlwings_module, "func", None), "__module__", "") or ""
    if platform == "emscripten" or where.startswith(("xlwings.pro", "xlwings.server")):
        return "officejs"
    if where == "xlwings.udfs":
        return "classic"
    return "python"


_s.RUNTIME = detect_runtime()


def _udf(spec_name: str | None = None, **docs: str):
    """``@xw.func`` with every argument read as a 2-D range (keeps a row a row) and its help text; every text
    it returns fits a cell (``support.fit_cells``)."""

    def wrap(f):
        @functools.wraps(f)  # xlwings reads the signature through __wrapped__
        def udf(*args):
            return _s.fit_cells(f(*args))

        params = {p.name: p.doc for p in _s.SPECS[spec_name].params} if spec_name else {}
        params.update(docs)
        for name, doc in params.items():
            udf = xw.arg(name, ndim=2, doc=doc)(udf)
        return xw.func(udf)

    return wrap


# -- capacity functions ---------------------------------------------------------------------------------------


@_udf("RIDGE")
def RIDGE(gpu, precision=None):
    """Ridge point of a GPU, FLOP per byte: dense peak at the precision's math / HBM bandwidth (H100 bf16: 295)."""
    return _s.evaluate(_s.SPECS["RIDGE"], (gpu, precision))


@_udf("WEIGHT_BYTES")
def WEIGHT_BYTES(model, precision=None):
    """Bytes of all of a model's weights at a precision (default: as published). 1 GB = 1e9 bytes."""
    return _s.evaluate(_s.SPECS["WEIGHT_BYTES"], (model, precision))


@_udf("KV_BYTES")
def KV_BYTES(model, tokens, kv_precision=None, batch=None):
    """KV-cache bytes of batch sequences of tokens each (Llama 2 70B, 8192 tokens, fp16: 2,684,354,560)."""
    return _s.evaluate(_s.SPECS["KV_BYTES"], (model, tokens, kv_precision, batch))


@_udf("MAX_BATCH")
def MAX_BATCH(
    gpu,
    model,
    context,
    kv_precision=None,
    gpus=None,
    weight_precision=None,
    memory_utilization=None,
    parallelism=None,
    engine=None,
):
    """Sequences of context tokens memory holds at once under the engine's memory budget (blank: vLLM's); without
    gpus, on the smallest group of 1, 2, 4, 8... that fits. Memory alone: vLLM runs at most its max_num_seqs (1,024 on
    H100, 256 on A100) at once; PLANNER_WHY says where the engine's limit binds."""
    return _s.evaluate(
        _s.SPECS["MAX_BATCH"],
        (gpu, model, context, kv_precision, gpus, weight_precision, memory_utilization, parallelism, engine),
    )


@_udf("MIN_GPUS")
def MIN_GPUS(
    gpu,
    model,
    context,
    batch=None,
    kv_precision=None,
    weight_precision=None,
    memory_utilization=None,
    parallelism=None,
    engine=None,
):
    """Smallest group (1, 2, 4, 8 ... 64 GPUs) the engine (blank: vLLM) runs the model on that holds the weights and
    batch sequences of context under its memory budget."""
    return _s.evaluate(
        _s.SPECS["MIN_GPUS"],
        (gpu, model, context, batch, kv_precision, weight_precision, memory_utilization, parallelism, engine),
    )


def _decode_step(name: str, doc: str):
    """A function of the decode-step family (TPOT, THROUGHPUT, MFU, MBU, DECODE_INTENSITY): the same arguments, its
    own Spec (``planner.excel.support.SPECS``) and help text ``doc``."""

    def f(
        gpu, model, context, batch=None, kv_precision=None, gpus=None, weight_precision=None, parallelism=None,
        engine=None,
    ):  # fmt: skip
        args = (gpu, model, context, batch, kv_precision, gpus, weight_precision, parallelism, engine)
        return _s.evaluate(_s.SPECS[name], args)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = doc
    return _udf(name)(f)


TPOT = _decode_step(
    "TPOT",
    """Time per output token, milliseconds: one decode step of the batch at context tokens on the engine (blank:
    vLLM).""",
)


@_udf("TTFT")
def TTFT(gpu, model, prompt_tokens, gpus=None, weight_precision=None, kv_precision=None, parallelism=None, engine=None):
    """Time to first token, milliseconds: the prefill of one prompt on the engine (blank: vLLM; no queueing)."""
    args = (gpu, model, prompt_tokens, gpus, weight_precision, kv_precision, parallelism, engine)
    return _s.evaluate(_s.SPECS["TTFT"], args)


THROUGHPUT = _decode_step(
    "THROUGHPUT",
    "Output tokens per second of the whole GPU group: batch / TPOT (on the same engine).",
)


@_udf("COST_PER_MTOK")
def COST_PER_MTOK(
    gpu,
    model,
    context,
    batch=None,
    price_per_gpu_hour=None,
    kv_precision=None,
    gpus=None,
    weight_precision=None,
    parallelism=None,
    engine=None,
):
    """US dollars per million output tokens: GPUs x $/GPU-hour / 3600 / throughput x 1e6 (default batch 1; the
    throughput THROUGHPUT gives on the engine)."""
    args = (gpu, model, context, batch, price_per_gpu_hour, kv_precision, gpus, weight_precision, parallelism, engine)
    return _s.evaluate(_s.SPECS["COST_PER_MTOK"], args)


MFU = _decode_step(
    "MFU",
    "Model FLOPs utilization of a decode step on the engine, a fraction (0.003 = 0.3%).",
)


MBU = _decode_step(
    "MBU",
    """Memory bandwidth utilization of a decode step on the engine, a fraction (bytes moved / (step time x GPUs x
    bandwidth)).""",
)


DECODE_INTENSITY = _decode_step(
    "DECODE_INTENSITY",
    """Arithmetic intensity of a decode step, FLOP per byte moved (weights + KV); compare with RIDGE. The engine
    (blank: vLLM) decides which groups hold the batch and run the model.""",
)


# -- under load: computed by planner's serving simulation, not a cell formula --------------------------------


def _under_load(name: str, doc: str):
    """A percentile function of the family: the same arguments, its own Spec (``planner.serving.load``)."""

    def f(
        gpu,
        model,
        rate_per_s,
        prompt_tokens,
        output_tokens,
        gpus=None,
        weight_precision=None,
        kv_precision=None,
        speculative_tokens=None,
        acceptance_length=None,
        parallelism=None,
        prefix_hit_rate=None,
        engine=None,
        speculative_method=None,
        burstiness=None,
        replicas=None,
        routing=None,
        prompt_tokens_high=None,
        output_tokens_high=None,
        length_percentile=None,
        context=None,
    ):
        args = (gpu, model, rate_per_s, prompt_tokens, output_tokens, gpus, weight_precision, kv_precision)
        args += (speculative_tokens, acceptance_length, parallelism, prefix_hit_rate, engine, speculative_method)
        args += (burstiness, replicas, routing, prompt_tokens_high, output_tokens_high, length_percentile, context)
        return _s.evaluate(_s.SPECS[name], args)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"{doc}, milliseconds, one replica on the engine (blank: vLLM) taking rate_per_s requests, their gaps "
    f.__doc__ += "gamma of shape burstiness (blank: 1, Poisson): computed by planner's queue simulation of 1,000 "
    f.__doc__ += "requests (not a cell formula). speculative_method: the draft (mtp, eagle3, ngram; blank: mtp where "
    f.__doc__ += "the checkpoint ships MTP layers, else eagle3). With replicas (REPLICAS' answer) burstiness is the "
    f.__doc__ += "whole traffic's, as REPLICAS takes it, dealt as routing says (blank: random); blank: one replica "
    f.__doc__ += "takes the traffic as it comes. prompt_tokens_high / output_tokens_high (the lengths at "
    f.__doc__ += "length_percentile, blank: 95): each request's lengths drawn around the means as plan --rate "
    f.__doc__ += "--prompt-tokens-high --output-tokens-high draws them, cut to context as plan --context cuts them "
    f.__doc__ += "(blank: the model's trained context); blank high lengths: every request at the means."
    return _udf(name)(f)


TTFT_P50 = _under_load("TTFT_P50", "Median time to first token under load")
TTFT_P95 = _under_load("TTFT_P95", "95th-percentile time to first token under load")
TTFT_P99 = _under_load("TTFT_P99", "99th-percentile time to first token under load")
TPOT_P50 = _under_load("TPOT_P50", "Median time per output token (after the first) under load")
TPOT_P95 = _under_load("TPOT_P95", "95th-percentile time per output token (after the first) under load")
TPOT_P99 = _under_load("TPOT_P99", "99th-percentile time per output token (after the first) under load")


@_udf("REPLICAS")
def REPLICAS(
    gpu,
    model,
    rate_per_s,
    prompt_tokens,
    output_tokens,
    ttft_target_s=None,
    tpot_target_s=None,
    percentile=None,
    gpus=None,
    weight_precision=None,
    kv_precision=None,
    parallelism=None,
    prefix_hit_rate=None,
    engine=None,
    burstiness=None,
    routing=None,
    prompt_tokens_high=None,
    output_tokens_high=None,
    length_percentile=None,
    context=None,
):
    """The fewest replicas whose simulated percentile TTFT and TPOT meet the targets (seconds) at rate_per_s requests
    (their gaps gamma of shape burstiness, blank: 1, Poisson; dealt over the replicas as routing says, "random" or
    "round-robin", blank: random), as planner plan --rate --burstiness --routing sizes a fleet (on the engine, blank:
    vLLM, as --engine); GPUs = replicas x gpus. With prompt_tokens_high / output_tokens_high (the lengths at
    length_percentile, blank: percentile) each request's lengths are drawn around the means as plan --rate
    --prompt-tokens-high --output-tokens-high draws them, cut to context as plan --context cuts them (blank: the
    model's trained context); blank high lengths: every request at the means. Computed by planner's
    queue simulation (a few runs of 1,000 requests, ~0.2-2 s a cell), not a cell formula."""
    args = (gpu, model, rate_per_s, prompt_tokens, output_tokens, ttft_target_s, tpot_target_s, percentile, gpus)
    args += (weight_precision, kv_precision, parallelism, prefix_hit_rate, engine, burstiness, routing)
    args += (prompt_tokens_high, output_tokens_high, length_percentile, context)
    return _s.evaluate(_s.SPECS["REPLICAS"], args)


@_udf("FLEET_GPUS")
def FLEET_GPUS(
    gpu,
    model,
    rate_per_s,
    prompt_tokens,
    output_tokens,
    ttft_target_s=None,
    tpot_target_s=None,
    percentile=None,
    weight_precision=None,
    kv_precision=None,
    parallelism=None,
    prefix_hit_rate=None,
    engine=None,
    burstiness=None,
    routing=None,
    prompt_tokens_high=None,
    output_tokens_high=None,
    length_percentile=None,
    context=None,
):
    """The fewest GPUs in all whose fleet meets the percentile targets (seconds) at rate_per_s requests (gaps gamma of
    shape burstiness, blank: 1, Poisson; dealt as routing says, blank: random, as REPLICAS): each
    group of 1, 2, 4, 8 GPUs the engine (blank: vLLM) runs the model on, from the smallest holding a request, sized as
    REPLICAS sizes it, the fewest replicas x group kept, as planner plan --rate without --gpus; PLANNER_WHY names the
    group. prompt_tokens_high, output_tokens_high, length_percentile, context: the lengths' spread and the context
    they are cut to, as REPLICAS takes them.
    Computed by planner's queue simulation (a few runs per group, ~1-3 s a cell), not a cell formula."""
    args = (gpu, model, rate_per_s, prompt_tokens, output_tokens, ttft_target_s, tpot_target_s, percentile)
    args += (weight_precision, kv_precision, parallelism, prefix_hit_rate, engine, burstiness, routing)
    args += (prompt_tokens_high, output_tokens_high, length_percentile, context)
    return _s.evaluate(_s.SPECS["FLEET_GPUS"], args)


@_udf("CAPACITY_RPS")
def CAPACITY_RPS(
    gpu, model, prompt_tokens, output_tokens, gpus=None, weight_precision=None, kv_precision=None, parallelism=None,
    prefix_hit_rate=None, engine=None,
):  # fmt: skip
    """Requests per second one replica on the engine (blank: vLLM) completes in steady state at these mean lengths,
    the capacity every surface judges a rate by (past it a queue grows without bound). Computed by planner's queue
    simulation (~1-2 s the first time for a replica and lengths), not a cell formula. It takes no burstiness: a
    steady-state completion rate is the same however bursty the arrivals (a mean rate at or above it queues without
    bound whatever the shape)."""
    args = (gpu, model, prompt_tokens, output_tokens, gpus, weight_precision, kv_precision, parallelism)
    return _s.evaluate(_s.SPECS["CAPACITY_RPS"], args + (prefix_hit_rate, engine))


@_udf("LOADED_RANGE")
def LOADED_RANGE(quantity, percentile, end=None):
    """Measured / predicted at the low or high end of a loaded percentile's held-out range: the 10th-90th percentile
    over published runs under steady load from sources planner never saw, each source alike, as ``plan --rate``
    prints it; =TTFT_P99(...)*LOADED_RANGE("TTFT",99,"high"). Percentile 50 takes the p50 range; 90, 95 and 99 take
    p99's (only p50 and p99 are tabled), so =TTFT_P95(...)*LOADED_RANGE("TTFT",95,"high") is the review's bound.
    Without end: both, as a row."""
    return _s.loaded_range_row(quantity, percentile, end)


# -- catalog, reasons, reload -----------------------------------------------------------------------------------


@_udf()
def PLANNER_GPUS():
    """The catalog's GPU names, spilled down a column."""
    return _c.names("gpu")


@_udf()
def PLANNER_MODELS():
    """The catalog's model names, spilled down a column."""
    return _c.names("model")


@_udf()
def PLANNER_PRECISIONS():
    """The catalog's precision names, spilled down a column."""
    return _c.names("precision")


@_udf(
    name="GPU, model or precision name, e.g. H100",
    field="field, e.g. memory_bytes, hbm_bandwidth_bytes_per_s, price.on-demand.usd_per_gpu_hour, params_total; "
    "empty: all fields as a two-column table",
)
def PLANNER_INFO(name, field=None):
    """A fact from the catalog (units in the field name), or every field of the entry as a two-column table."""
    return _c.info(name, field)


@_udf(
    function='the function\'s name as text, e.g. "MAX_BATCH"',
    args="the same arguments as the function call, cells or ranges",
)
def PLANNER_WHY(function, *args):
    """Why a planner function shows an error: the reason per cell ("ok" where there is a number; "ok: on 4 x H100
    SXM 80GB, the smallest group ..." where gpus was left empty and the function chose the group; "; warning: ..."
    where ``planner plan`` flags the same scenario, as a context past the model's trained maximum)."""
    others = {
        "PLANNER_INFO": lambda a: _c.info(*(list(a) + [None, None])[:2], why=True),
        "LOADED_RANGE": _s.loaded_range_why,
        **{  # functions that show no error value: their own cell says what happened
            name: (lambda a, name=name: f"{name} shows no error value; its cell says what it did")
            for name in (
                "PLANNER_WHY",
                "PLANNER_RELOAD",
                "PLANNER_VERSION",
                "PLANNER_GPUS",
                "PLANNER_MODELS",
                "PLANNER_PRECISIONS",
            )
        },
    }
    return _s.why(function, args, others)


@_udf(folder="a catalog folder of *.toml files to add; empty: the folder named in the xlwings config")
def PLANNER_RELOAD(folder=None):
    """Read the catalog again (after editing it or to add a folder); then recalculate (Ctrl+Alt+F9)."""
    folder = _s._unwrap(folder)
    if folder is not None and not isinstance(folder, str):
        return "catalog not reloaded: folder must be a path as text"
    try:
        return _s.reload(folder.strip() if folder else None)
    except Exception as exc:  # noqa: BLE001 - never raise into Excel
        return f"catalog not reloaded: {exc}"


@_udf()
def PLANNER_VERSION():
    """The planner version and the Excel runtime it detected (officejs, classic or python)."""
    return f"planner {__version__} ({_s.RUNTIME})"
