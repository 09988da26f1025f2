"""How far the planner is from what serving engines did: reference rows, read as logs and tables write them.

Two kinds of reference rows (``catalogs/reference/``, or a user's own files in the same columns):

- start-up logs of vLLM (``vllm_startup_*.csv``): the KV cache memory per GPU, the KV cache tokens of the
  tensor-parallel group and the maximum concurrency vLLM printed. Each row is predicted with its ``profile``
  column, else ``STARTUP_PROFILES``, else the profile of its ``engine_version``
  (``planner.engines.profiles.engine_for_version``), else ``vllm``. ``max_model_len`` is needed only for the
  concurrency figure.
- benchmark rows (``decode_*.csv``): ``batch`` sequences (or a server's concurrency) of ``input_len`` prompt
  and ``output_len`` output tokens, with any of TPOT, TTFT and output throughput. Each is predicted as the
  benchmark ran (``planner.serving.benchmark.predict_benchmark``): a static batch, a server given all prompts at
  once, or a server fed at ``request_rate``. A row with only a TTFT (batch 1, one output token) is a prefill.

Names are read as logs write them: "NVIDIA H100 SXM 80GB", "LLaMA 7B (Llama-2-7b)", "Qwen/Qwen2-72B"; a dtype
of "auto" or "not stated" is the model's default. A row that cannot be predicted keeps a one-line reason.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, Unpack

import numpy as np

from planner import api
from planner.accuracy import basis
from planner.accuracy.acceptance import middle_speculation, speculation_handled
from planner.accuracy.calibration import residual_quantiles, resolve_calibration
from planner.accuracy.datasets import chat_template_tokens, prefix_hit, run_requests
from planner.accuracy.published import (  # noqa: F401  (re-exported: the rows' loader lives in planner.accuracy.published)
    CLOSED_LOOP_PROMPTS_PER_SLOT,
    DECODE_COLUMNS,
    QUANT_METHODS,
    DecodeRow,
    auto_kv_precision,
    checkpoint_precision,
    first_number,
    load_decode_rows,
    pipeline_stages,
    precision_in,
    published_figure,
    read_csv_rows,
    reference_dir,
    refuse_text_figure,
    require_columns,
    resolve_gpu_name,
    resolve_model_name,
    server_flag,
    source_group_of,
    stated,
    statistic_of,
    throughput_scope,
    whole_number,
)
from planner.catalog import Catalog, default_catalog
from planner.engines import kernel_curves, kernel_paths, v0_capture
from planner.engines.kernel_paths import mxfp4_refusal
from planner.engines.profiles import (
    DEFAULT_RESIDUALS,
    ENGINES_WITHOUT_PROFILE,
    VLLM_BATCHING_RELEASES,
    EngineProfile,
    engine_for_version,
    engine_profile,
    first_token_from_decode_step,
    parse_version,
    trtllm_0_pytorch_profile,
    trtllm_bench_chunked_context,
    vllm_batching_release,
    vllm_mla_prompt_limit,
    with_dp_attention_kv_pool,
    with_expert_parallel,
    with_prefill_chunk_divisor,
    with_published_host_cost,
    with_release_kernels,
    with_row_attention_dp_gate,
    with_row_max_prefill_tokens,
    with_row_memory_utilization,
    with_row_scheduler_recv_interval,
    with_row_sglang_piecewise_off,
    with_sglang_eager_decode,
    with_sglang_host_overlap,
    with_stream_interval,
    with_trtllm_bench_build,
    with_trtllm_bench_host_cost,
    with_trtllm_serve_eager_decode,
    with_v0_default_scheduler,
    with_vllm_host_loop,
)
from planner.engines.vllm_log import vllm_kv_log
from planner.errors import InvalidInputError, PlannerError
from planner.model import max_concurrency  # noqa: F401  (re-exported: validation and its tests use it here)
from planner.options import DecodeOptions, DeploymentOptions
from planner.serving.benchmark import SCHEDULERS, predict_benchmark, scheduler_of

GiB = 2**30

#: Engine profile of shipped start-up rows whose version does not decide it. KV017 is stated as vLLM 0.11.0
#: but its activation peak (2.12 GiB) is the current sampler's ('vllm'), not that of the other rows of its
#: source (KV013: 4.76 GiB, 'vllm-fullsort'), which the 0.11 version maps to.
STARTUP_PROFILES = {"KV017": "vllm"}


# -- memory ------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class StartupRow:
    """One published vLLM start-up: the configuration and what vLLM printed."""

    record_id: str
    gpu: str
    model: str
    tensor_parallel_size: int
    memory_utilization: float
    max_model_len: int | None
    block_size: int | None
    weight_precision: str | None
    profile: str
    kv_cache_gib: float  # "Available KV cache memory", per GPU (NaN when not printed)
    kv_cache_tokens: float  # "GPU KV cache size", whole group (NaN when not printed)
    max_concurrency: float  # "Maximum concurrency for L tokens per request" (NaN when not printed)
    source: str = ""
    problem: str = ""  # why the row cannot be predicted as written (a bad cell), else ""
    kv_precision: str | None = None  # the kv_cache_dtype cell ("auto" / blank: the model's dtype)
    pipeline_parallel_size: int = 1  # pipeline stages, each a TP group of tensor_parallel_size GPUs; 1: none


STARTUP_COLUMNS = (
    "a start-up file has gpu, model and available_kv_cache_memory_gib and/or gpu_kv_cache_tokens "
    "(optional: record_id, tensor_parallel_size, gpu_memory_utilization, max_model_len, block_size, "
    "weight_dtype, quantization, engine_version, profile, max_concurrency_x)"
)

#: The figures a start-up CSV's row states, as vLLM's log prints them, and the memory table compares.
STARTUP_FIGURE_COLUMNS = ("available_kv_cache_memory_gib", "gpu_kv_cache_tokens", "max_concurrency_x")
#: Every column of a start-up CSV that ``load_startup_rows`` reads (with ``_weight_precision``, ``_startup_profile``
#: and ``pipeline_stages``). A column outside it and ``STARTUP_KEPT_COLUMNS`` is not read: ``planner.accuracy.unread``
#: names it (a misspelt ``available_kv_cache_memory_gibb`` left its row with no figure, without a word).
STARTUP_READ_COLUMNS = frozenset({
    "record_id", "source", "gpu", "model", "tensor_parallel_size", "num_gpus", "pipeline_parallel_size",
    "max_model_len", "block_size", "gpu_memory_utilization", "weight_dtype", "quantization", "kv_cache_dtype",
    "engine_version", "profile", *STARTUP_FIGURE_COLUMNS,
})  # fmt: skip
#: Columns of the shipped start-up files (``vllm_startup_*.csv``, ``startup_memory_public.csv``) that the reader
#: leaves unread on purpose: the source's words (``notes``, ``quote``, ``source_group``), the engine's name (a
#: start-up file is vLLM's), settings the prediction takes from the engine's profile, and the log's other figures
#: (weights, activation peak, blocks), which the memory table does not compare. Not read, and not unknown.
STARTUP_KEPT_COLUMNS = frozenset({
    "engine", "source_group", "notes", "quote", "data_parallel_size", "enforce_eager", "enable_prefix_caching",
    "max_num_batched_tokens", "max_concurrency_tokens_per_request", "total_gpu_memory_reported",
    "total_gpu_memory_reported_gib", "model_weights_memory", "model_weights_memory_gib", "activation_peak_gib",
    "non_torch_gib", "cuda_graph_gib", "num_gpu_blocks", "num_cpu_blocks",
})  # fmt: skip


def load_startup_rows(path: str | Path | None = None) -> list[StartupRow]:
    """Rows of a vLLM start-up CSV (default: every ``vllm_startup_*.csv`` shipped), in file order."""
    paths = (
        [Path(path)]
        if path
        else sorted(
            reference_dir().glob("vllm_startup_*.csv"), key=lambda q: (q.name != "vllm_startup_public.csv", q.name)
        )
    )
    rows = []
    for p in paths:
        raw = read_csv_rows(p)
        require_columns(p, raw, ("gpu", "model", "available_kv_cache_memory_gib|gpu_kv_cache_tokens"), STARTUP_COLUMNS)
        for i, r in enumerate(raw, 1):
            rid = r.get("record_id") or f"row{i}"
            problem, tp, pp, mml, block, util = "", 1, 1, None, None, 0.9
            figures = dict.fromkeys(STARTUP_FIGURE_COLUMNS, math.nan)
            try:
                tp = whole_number(r.get("tensor_parallel_size") or r.get("num_gpus"), "tensor_parallel_size", 1) or 1
                mml = whole_number(stated(r.get("max_model_len")), "max_model_len", tokens=True)
                block = whole_number(r.get("block_size"), "block_size")
                util_cell = first_number(r.get("gpu_memory_utilization"), "gpu_memory_utilization")
                util = 0.9 if math.isnan(util_cell) else util_cell
                figures = {c: published_figure(r.get(c), c) for c in figures}
                pp = pipeline_stages(r)
            except ValueError as exc:
                problem = str(exc)
            for c in figures:  # a figure cell of text ("fifty"): the file is refused, not the row dropped unseen
                refuse_text_figure(r.get(c), c, f"{p}: row {rid}")
            weight = _weight_precision(r)
            rows.append(
                StartupRow(
                    record_id=rid,
                    gpu=r["gpu"],
                    model=r["model"],
                    tensor_parallel_size=tp,
                    memory_utilization=util,
                    max_model_len=mml or None,
                    block_size=block or None,
                    weight_precision=weight,
                    profile=_startup_profile(rid, r),
                    kv_cache_gib=figures["available_kv_cache_memory_gib"],
                    kv_cache_tokens=figures["gpu_kv_cache_tokens"],
                    max_concurrency=figures["max_concurrency_x"],
                    source=r.get("source", ""),
                    problem=problem,
                    kv_precision=precision_in(r.get("kv_cache_dtype", "")) or auto_kv_precision(weight),
                    pipeline_parallel_size=pp,
                )
            )
    return rows


def _startup_profile(record_id: str, r: dict[str, str]) -> str:
    """The row's ``profile`` column, else STARTUP_PROFILES, else its vLLM version's profile, else 'vllm'."""
    if (r.get("profile") or "").strip():
        return r["profile"].strip()
    if record_id in STARTUP_PROFILES:
        return STARTUP_PROFILES[record_id]
    try:
        return engine_for_version("vllm", r.get("engine_version", ""))[0].name
    except PlannerError:
        return "vllm"


def _weight_precision(r: dict[str, str]) -> str | None:
    """The quantization cell's precision; for a method name ("compressed-tensors", "gptq_marlin") the one the
    checkpoint's name states ("-fp8-dynamic", "-quantized.w8a8"); else the weight_dtype cell."""
    quant = precision_in(r.get("quantization"))
    if quant and quant not in QUANT_METHODS:
        return "fp8" if quant.startswith("fp8") else quant
    return (quant and checkpoint_precision(r.get("model", ""))) or precision_in(r.get("weight_dtype", ""))


@dataclass(frozen=True)
class StartupPrediction:
    """What the planner says vLLM will print at start-up (max_concurrency NaN without a max_model_len)."""

    kv_cache_gib: float
    kv_cache_tokens: float
    max_concurrency: float


def predict_startup(row: StartupRow, *, catalog: Catalog | None = None) -> StartupPrediction:
    """Available KV cache GiB per GPU, KV cache tokens of the group, and max concurrency at max_model_len.

    Raises the ``PlannerError`` that stops the prediction (unknown name, bad cell, weights do not fit).
    """
    if row.problem:
        raise InvalidInputError(row.problem)
    cat = catalog or default_catalog()
    eng = engine_profile(row.profile)
    if row.block_size:
        eng = eng.with_(block_size=row.block_size)
    gpu, model = cat.gpu(resolve_gpu_name(row.gpu, cat)), cat.model(resolve_model_name(row.model, cat))
    stages = row.pipeline_parallel_size
    plan = api.memory_plan(
        gpu,
        model,
        row.max_model_len or eng.block_size,  # the budget and token count do not depend on it
        gpus=row.tensor_parallel_size * stages,
        parallelism=f"pp{stages}" if stages > 1 else None,  # the busiest stage's budget: the group's tokens are its
        weight_precision=row.weight_precision,
        kv_precision=row.kv_precision,
        memory_utilization=row.memory_utilization,
        engine=eng,
        catalog=cat,
    )
    budget = float(plan.kv_budget_bytes_per_gpu)
    tokens, conc = vllm_kv_log(
        model,
        budget,
        float(plan.kv_bytes_per_token_per_gpu),
        row.max_model_len,
        block_size=eng.block_size,
        max_num_batched_tokens=eng.batching_limits(gpu.memory_bytes, gpu.engine_device_name)[0],
        gpus=row.tensor_parallel_size or 1,
    )  # a pipeline: the busiest stage's layers and budget, whose tokens the engine takes for the group
    return StartupPrediction(budget / GiB, tokens, conc)


# -- time --------------------------------------------------------------------------------------------------


#: EXPERIMENT (h-loadres, off; docs/hypotheses/sglang-dated-main-build.md): an SGLang row whose version cell names a
#: build of main by its date ("main at 2025-03-30 (...)", sglang-pr-4918's LD095-097) is read as the last release
#: uploaded on or before that date (``SGLANG_RELEASE_DATES``), not as the newest rule, which a cell without a version
#: number gets (``_base_profile_for``). Read at call time by ``_profile_for`` and ``_base_profile_for``; set for one
#: process by ``bench/switch_bootstrap.py sglang-dated-main``.
SGLANG_DATED_MAIN = False

#: EXPERIMENT switch (issue 21, h-dsk042; docs/hypotheses/sglang-dp-attention-kv-pool.md), read at call time; off on
#: main. On: an SGLang row whose release runs attention data parallelism over R > 1 ranks and that is predicted as
#: tensor parallel (``planner.accuracy.published.SGLANG_DP_ATTENTION`` off) keeps the KV pool and request slots of its
#: R ranks (each rank's own pool and slots: 0.4.3.post2 ``managers/data_parallel_controller.py`` l.160-187,
#: ``managers/tp_worker.py`` l.99-109, ``model_executor/model_runner.py`` l.548-606), its steps as tensor parallel.
SGLANG_DP_ATTENTION_KV_POOL = False

#: EXPERIMENT switch (issue 21, h-h100tpot; docs/hypotheses/h100-tpot-split.md), read at call time; off (None) on main.
#: "all": every H100 row's prefill and decode FLOP factors at ``H100_PCIE_OVER_SXM_FLOP`` of the profile's (the
#: reading that the model's H100 compute is too fast); "gpustack": gpustack's H100 rows only (a diagnostic of that
#: source's machine, never to ship). Bandwidth, interconnect and host terms unchanged.
H100_COMPUTE_SCALE: str | None = None
#: Switch (issue 21, h-amdttft; docs/hypotheses/amd-ttft.md), read at call time; shipped s212 ("all"; None: before). "all":
#: a MoE model's prompt steps on an AMD GPU under SGLang before 0.4.4 or vLLM before 0.8 (before AITER) at
#: ``planner.engines.profiles.ROCM_PRE_AITER_PREFILL_FLOP_FACTOR`` of the profile's prefill FLOP factor (Triton's
#: block-FP8 GEMM, fused MoE and extend attention, sized on sgl-project/sglang pull request 3237's DeepSeek-V3 prefill);
#: "sglang" (ablation): SGLang's releases alone, the engine it was measured on. Decode steps unchanged.
ROCM_PRE_AITER_PREFILL: str | None = "all"  # shipped s212 (docs/hypotheses/amd-ttft.md)
#: the H100 PCIe's over the H100 SXM's dense bf16 tensor peak (NVIDIA H100 Tensor Core GPU datasheet: 1,513 / 1,979
#: TFLOP/s with sparsity, 756 / 989 dense)
H100_PCIE_OVER_SXM_FLOP = 1513 / 1979
#: SGLang's releases of the 0.4 line by their PyPI upload date (https://pypi.org/pypi/sglang/json,
#: ``releases[version][0].upload_time``, read 2026-12-07), in order: a dated build of main between two of them ran the
#: earlier one's code; a date before the first or after the last is not resolved (the row keeps today's reading).
SGLANG_RELEASE_DATES = (
    ("2024-12-03", "0.4.0"),
    ("2025-03-06", "0.4.3.post4"),
    ("2025-03-13", "0.4.4"),
    ("2025-03-14", "0.4.4.post1"),
    ("2025-03-27", "0.4.4.post2"),
    ("2025-03-29", "0.4.4.post3"),
    ("2025-04-07", "0.4.5"),
    ("2025-04-16", "0.4.5.post1"),
    ("2025-04-27", "0.4.6"),
)
_MAIN_AT_DATE = re.compile(r"\bmain at (\d{4}-\d{2}-\d{2})\b")


def dated_main_release(engine: str, version: str) -> str | None:
    """The SGLang release a build of main dated in ``version`` ("main at 2025-03-30 ...") ran: the last of
    ``SGLANG_RELEASE_DATES`` uploaded on or before that date ("0.4.4.post3"); None for another engine, a cell with a
    version number or no "main at" date, or a date outside the table (before 0.4.0, after 0.4.6's upload)."""
    if engine != "sglang" or parse_version(version):
        return None
    hit = _MAIN_AT_DATE.search(str(version or ""))
    if not hit:
        return None
    day = hit.group(1)
    if day < SGLANG_RELEASE_DATES[0][0] or day > SGLANG_RELEASE_DATES[-1][0]:
        return None
    return [release for uploaded, release in SGLANG_RELEASE_DATES if uploaded <= day][-1]


def _dated_main_as_release(row: DecodeRow) -> DecodeRow:
    """``row`` with its dated SGLang build read as its release (``dated_main_release``) where ``SGLANG_DATED_MAIN`` is
    on; else ``row``."""
    if not SGLANG_DATED_MAIN:
        return row
    release = dated_main_release(row.engine, row.engine_version)
    return row if release is None else replace(row, engine_version=f"{release} ({row.engine_version})")


def _profile_for(row: DecodeRow, engine: str | EngineProfile | None) -> EngineProfile:
    """The row's profile (``engine`` if given, else its engine's release's) with what its release and command imply:
    ``with_release_kernels`` (TensorRT-LLM before XQA), ``with_vllm_host_loop`` (vLLM's asynchronous loop from 0.14),
    ``with_sglang_eager_decode`` (SGLang 0.4's eager decode),
    ``with_v0_default_scheduler`` (vLLM V0's prefill-only steps), ``with_trtllm_bench_build`` (the engine
    ``trtllm-bench`` built for a TensorRT-LLM 0.13 row), ``with_trtllm_bench_host_cost`` (an offline trtllm-bench run's
    host cost, TensorRT-LLM 1.x), and the off experiments ``with_published_host_cost`` and ``with_expert_parallel`` (and ``SGLANG_DATED_MAIN``)."""
    row = _dated_main_as_release(row)  # EXPERIMENT (h-loadres, off): a dated SGLang build read as its release
    profile = with_release_kernels(_base_profile_for(row, engine), row.engine, row.engine_version)
    # vLLM's host loop by release and command: asynchronous from 0.14 or with --async-scheduling (s189); an engine
    # without a profile runs on vLLM's, with the synchronous loop of a release not stated
    if row.engine in ENGINES_WITHOUT_PROFILE:
        profile = with_vllm_host_loop(profile, "vllm", None)
    else:
        profile = with_vllm_host_loop(profile, row.engine, row.engine_version, row.async_scheduling)
    # EXPERIMENT (s118, off unless PUBLISHED_HOST_COST): the published host cost of the row's loop, on a given profile
    # too (leave-one-source-out's fitted ones: the per-sequence term is held, the rest refits)
    profile = with_published_host_cost(profile, row.engine, row.engine_version, row.async_scheduling)
    # EXPERIMENT (h-sglhost, off unless SGLANG_HOST_OVERLAP): SGLang 0.4+'s own host cost, hidden by its overlap
    # scheduler unless the row's command turns that off (before the stream interval, which divides it)
    profile = with_sglang_host_overlap(profile, row.engine, row.engine_version, row.sglang_overlap_off)
    # an offline trtllm-bench run of TensorRT-LLM 1.x pays its loop's published exposed host cost (s158)
    profile = with_trtllm_bench_host_cost(profile, row.engine, row.engine_version, row.offline_benchmark)
    # TensorRT-LLM 1.x and SGLang build a streamed output every stream interval where the row's options set it (s189)
    profile = with_stream_interval(profile, row.engine, row.engine_version, row.stream_interval)
    # SGLang 0.4's eager decode steps above its largest graph (s123)
    profile = with_sglang_eager_decode(profile, row.engine, row.engine_version)
    # EXPERIMENT (h-mi300b, off unless VLLM_V0_LONG_CONTEXT_EAGER): vLLM V0's eager steps past 8,192 tokens of context
    profile = v0_capture.with_vllm_v0_long_context_eager(
        profile, row.engine, row.engine_version, row.input_len, row.output_len, row.batch
    )
    # vLLM V0's prefill-only steps without chunked prefill (s127)
    profile = _v0_default_scheduler(profile, row)
    # EXPERIMENT (h-tpotcls, off unless VLLM_HOPPER_MXFP4_MARLIN): vLLM 0.10-0.11.0's MXFP4 experts on Marlin on Hopper
    profile = _hopper_mxfp4_marlin(profile, row)
    # SGLang's input budget from the row's own ``--max-prefill-tokens`` (s139)
    profile = with_row_max_prefill_tokens(profile, row.max_prefill_tokens)
    # SGLang's receive interval from the row's own ``--scheduler-recv-interval`` (s187)
    profile = with_row_scheduler_recv_interval(profile, row.scheduler_recv_interval)
    # EXPERIMENT (h-ttftp50, off unless benchmark.SGLANG_PIECEWISE_COVERAGE): the row's command turns SGLang's
    # piecewise prefill graph off
    profile = with_row_sglang_piecewise_off(profile, row.sglang_piecewise_off)
    # TensorRT-LLM's attention-DP balancing gate from the row's own options (h-trt)
    profile = with_row_attention_dp_gate(profile, row.attention_dp_gate, row.gpus if row.parallelism == "dp-ep" else 1)
    # the memory share from the row's own command (s187)
    profile = with_row_memory_utilization(profile, row.server_memory_share)
    # the engine trtllm-bench built for a TensorRT-LLM 0.13 row (s141)
    profile = _trtllm_bench_build(profile, row)
    # EXPERIMENT (s183, off unless TRTLLM_SERVE_EAGER_ABOVE_GRAPHS): a plain trtllm-serve's decode above its graphs
    profile = with_trtllm_serve_eager_decode(profile, row.trtllm_default_graphs)
    # SGLang's prefill chunk divided under its attention data parallelism (s183)
    profile = with_prefill_chunk_divisor(profile, row.prefill_chunk_divisor)
    # EXPERIMENT (h-dsk042, off unless SGLANG_DP_ATTENTION_KV_POOL): SGLang's attention-DP ranks' own KV pools
    if SGLANG_DP_ATTENTION_KV_POOL:
        profile = with_dp_attention_kv_pool(profile, row.dp_attention_ranks)
    # a release's extra time per MoE layer per step (``profiles.MOE_LAYER_COSTS``: a pre-AITER ROCm release's Triton
    # fused-MoE call, h-band, on; SGLang 0.4.1-0.4.3's MoE layers on NVIDIA, h-h200dsk, off)
    profile = _moe_layer_costs(profile, row)
    # EXPERIMENT (h-h100tpot, off unless H100_COMPUTE_SCALE): the H100's FLOP rate at the PCIe part's share
    profile = _h100_compute_scale(profile, row)
    # h-amdttft (shipped s212; off where ROCM_PRE_AITER_PREFILL is None): a pre-AITER ROCm release's prompt steps on Triton kernels
    profile = _rocm_pre_aiter_prefill(profile, row)
    # EXPERIMENT (s126, off unless EXPERT_PARALLEL_FROM_ROWS): whole experts on each GPU where the row's command spreads them
    return with_expert_parallel(profile, row.expert_parallel)


def _h100_compute_scale(profile: EngineProfile, row: DecodeRow) -> EngineProfile:
    """``profile`` with its prefill and decode FLOP factors times ``H100_PCIE_OVER_SXM_FLOP`` where
    ``H100_COMPUTE_SCALE`` is on and the row's GPU resolves to an H100 SXM ("gpustack": and its source group is
    gpustack's); else ``profile``. EXPERIMENT (h-h100tpot): docs/hypotheses/h100-tpot-split.md."""
    if H100_COMPUTE_SCALE is None:
        return profile
    if H100_COMPUTE_SCALE == "gpustack" and not row.source_group.startswith("gpustack"):
        return profile
    cat = default_catalog()
    try:
        gpu = cat.gpu(resolve_gpu_name(row.gpu, cat))
    except PlannerError:
        return profile
    if not gpu.name.startswith("H100 SXM"):
        return profile
    f = H100_PCIE_OVER_SXM_FLOP
    return replace(
        profile,
        decode_flop_efficiency=profile.decode_flop_efficiency * f,
        prefill_flop_efficiency=profile.prefill_flop_efficiency * f,
    )


def _rocm_pre_aiter_prefill(profile: EngineProfile, row: DecodeRow) -> EngineProfile:
    """``profile`` with its prefill FLOP factor times ``ROCM_PRE_AITER_PREFILL_FLOP_FACTOR`` where
    ``ROCM_PRE_AITER_PREFILL`` is on and the row is a MoE model on an AMD GPU under a release before AITER
    (``planner.engines.profiles.rocm_pre_aiter_prefill_applies``; "sglang": SGLang's releases only); else
    ``profile`` (a GPU or model that does not resolve too). h-amdttft, shipped s212: docs/hypotheses/amd-ttft.md."""
    if ROCM_PRE_AITER_PREFILL is None:
        return profile
    from planner.engines import profiles

    engines = ("sglang",) if ROCM_PRE_AITER_PREFILL == "sglang" else ("sglang", "vllm")
    cat = default_catalog()
    try:
        vendor = cat.gpu(resolve_gpu_name(row.gpu, cat)).vendor
        moe = cat.model(resolve_model_name(row.model, cat)).moe_layers > 0
    except PlannerError:
        return profile
    if not profiles.rocm_pre_aiter_prefill_applies(row.engine, row.engine_version, vendor, moe, engines):
        return profile
    return profiles.with_rocm_pre_aiter_prefill(profile)


def _moe_layer_costs(profile: EngineProfile, row: DecodeRow) -> EngineProfile:
    """``planner.engines.profiles.with_moe_layer_costs`` on the row, where an entry of ``MOE_LAYER_COSTS`` is on (the
    row's GPU vendor looked up only then); a GPU that does not resolve keeps the profile."""
    from planner.engines import profiles

    if not profiles.moe_layer_costs_on():
        return profile
    try:
        cat = default_catalog()
        vendor = cat.gpu(resolve_gpu_name(row.gpu, cat)).vendor
    except PlannerError:
        return profile
    return profiles.with_moe_layer_costs(profile, row.engine, row.engine_version, vendor)


def eager_decode_note(row: DecodeRow, engine: str | EngineProfile | None = None) -> str:
    """The caveat of a row whose profile runs every decode step eagerly (``trtllm_0_pytorch_profile``: TensorRT-LLM
    0.x served by ``trtllm-serve --backend pytorch``): its eager cost is borrowed from another engine. "" otherwise,
    and for a row that is not predicted (its engine unknown, say)."""
    if not row.pytorch_backend or row.problem:
        return ""
    try:
        eng = _profile_for(row, engine)
    except PlannerError:
        return ""
    if not 0 < eng.decode_graph_max_batch < 1:
        return ""
    return (
        "served by trtllm-serve --backend pytorch (TensorRT-LLM 0.x): no decode CUDA graphs, each step priced at "
        "SGLang's published eager launch cost per layer (TensorRT-LLM publishes none)"
    )


def _trtllm_bench_build(profile: EngineProfile, row: DecodeRow) -> EngineProfile:
    """``with_trtllm_bench_build`` on the row: its model's catalog name, its tensor-parallel group and ISL + OSL (the
    dataset's max sequence length, every request of a perf-overview row being alike); a row whose model does not
    resolve keeps the profile."""
    if not trtllm_bench_chunked_context(row.engine, row.engine_version):
        return profile  # another release (before the catalog look-up, for speed)
    try:
        model = resolve_model_name(row.model, default_catalog())
    except PlannerError:
        return profile
    return with_trtllm_bench_build(
        profile, row.engine, row.engine_version, model, row.gpus or 1, row.input_len + row.output_len
    )


def _v0_default_scheduler(profile: EngineProfile, row: DecodeRow) -> EngineProfile:
    """``with_v0_default_scheduler`` on the row: its GPU's vendor (ROCm on AMD), its ``max_model_len`` (its command's
    ``--max-model-len``, else its model's context: ``_v0_server``), sliding window and MLA from the catalog, prefix
    caching from its command or warm prompts (``DecodeRow.prefix_caching``); a row whose names do not resolve keeps
    the profile."""
    if (row.scheduler_steps or 1) > 1 or row.chunked_prefill or not profile.name.startswith("vllm"):
        return profile  # not V0's default scheduler (before the catalog look-ups, for speed)
    if vllm_batching_release(row.engine_version)[0] != VLLM_BATCHING_RELEASES[0][1]:
        return profile
    cat = default_catalog()
    try:
        gpu, model = cat.gpu(resolve_gpu_name(row.gpu, cat)), cat.model(resolve_model_name(row.model, cat))
    except PlannerError:
        return profile
    return with_v0_default_scheduler(
        profile, row.engine, row.engine_version, chunked_prefill=row.chunked_prefill,
        scheduler_steps=row.scheduler_steps, **_v0_server(row, gpu, model),
    )  # fmt: skip


def _v0_server(row: DecodeRow, gpu: Any, model: Any) -> dict[str, Any]:
    """What vLLM V0's chunking rules read of the row's server: its ``max_model_len`` (the row's ``--max-model-len``,
    else the model's context, vLLM's default), ROCm (an AMD GPU), the model's sliding window and MLA, and prefix
    caching (``DecodeRow.prefix_caching``)."""
    return dict(
        max_model_len=int(row.max_model_len or model.max_context), rocm=gpu.vendor == "AMD",
        sliding_window=bool(model.sliding_window_layers), prefix_caching=row.prefix_caching, mla=model.mla is not None,
    )  # fmt: skip


def _base_profile_for(row: DecodeRow, engine: str | EngineProfile | None) -> EngineProfile:
    """``engine`` if given; else the profile of the row's engine release; the default profile for an engine without
    one (``ENGINES_WITHOUT_PROFILE``) or a release older than any rule read (SGLang 0.3.0); a TensorRT-LLM 0.x row
    served by ``trtllm-serve --backend pytorch``: ``trtllm_0_pytorch_profile``; an engine name no profile or alias
    has raises UnknownNameError (``load_decode_rows`` refuses such a row before it gets here)."""
    if engine is not None:
        return engine_profile(engine)
    row = _dated_main_as_release(row)  # EXPERIMENT (h-loadres, off): a dated SGLang build read as its release
    if row.engine in ENGINES_WITHOUT_PROFILE:  # the default profile (``_profile_for`` gives it the synchronous loop)
        return engine_profile(None)
    base = engine_profile(row.engine)
    if not (row.engine_version and parse_version(row.engine_version)):
        return base
    try:
        profile = engine_for_version(row.engine, row.engine_version)[0]
    except PlannerError:  # SGLang before 0.4: no rule read; the default profile's budget, factors and synchronous loop
        return with_vllm_host_loop(engine_profile(None), "vllm", None)
    if row.pytorch_backend and profile.name == "tensorrt-llm-0":
        return trtllm_0_pytorch_profile()  # the 0.x line's PyTorch backend: no decode graphs (s183)
    return profile


def _hopper_mxfp4_marlin(profile: EngineProfile, row: DecodeRow) -> EngineProfile:
    """``profile`` with its routed experts' grouped GEMMs at Marlin's FLOP fraction (``kernel_curves.
    MARLIN_FLOP_FRACTION``) where ``kernel_paths.VLLM_HOPPER_MXFP4_MARLIN`` is on and the row is a vLLM 0.10-0.11.0
    run of MXFP4 experts on an SM 9.0 GPU (``kernel_paths.vllm_hopper_mxfp4_marlin``); else ``profile``. EXPERIMENT
    (h-tpotcls): docs/hypotheses/vllm-hopper-mxfp4-marlin.md."""
    if not kernel_paths.VLLM_HOPPER_MXFP4_MARLIN or row.weight_precision not in (None, "mxfp4"):
        return profile
    cat = default_catalog()
    try:
        gpu = cat.gpu(resolve_gpu_name(row.gpu, cat))
        mdl = cat.model(resolve_model_name(row.model, cat))
    except PlannerError:
        return profile
    if mdl.native_expert_precision != "mxfp4":
        return profile
    if not kernel_paths.vllm_hopper_mxfp4_marlin(row.engine, row.engine_version, gpu.architecture):
        return profile
    if kernel_paths.VLLM_HOPPER_MXFP4_MARLIN == "ceiling":  # Marlin's rate flattens at the fraction (64+ rows)
        return replace(profile, moe_flop_ceiling=kernel_curves.MARLIN_FLOP_FRACTION)
    return replace(profile, moe_flop_scale=kernel_curves.MARLIN_FLOP_FRACTION)


def release_refusal(row: DecodeRow, cat: Catalog) -> str:
    """Why the row's engine release cannot serve it: it cannot load the model on its GPU (``planner.engines.
    kernel_paths.mxfp4_refusal``: TensorRT-LLM 1.x's MXFP4 experts below SM 9.0), or it refused the row's prompts
    (``prompt_limit_refusal``); with ``planner.accuracy.basis.UNMEASURED_SPARSE_ATTENTION`` on (h-worst, off), a DSA
    model on an engine and GPU without a measured sparse-attention kernel (``basis.sparse_attention_gap``): no basis
    to predict it from; "": it serves them, or the names do not resolve."""
    try:
        gpu = cat.gpu(resolve_gpu_name(row.gpu, cat))
        mdl = cat.model(resolve_model_name(row.model, cat))
    except PlannerError:
        return ""
    if limited := prompt_limit_refusal(row, gpu, mdl):
        return limited
    if basis.UNMEASURED_SPARSE_ATTENTION and (
        gap := basis.sparse_attention_gap(gpu, _base_profile_for(row, None), mdl, cat)
    ):
        return gap  # EXPERIMENT (h-worst, off): a DSA model on an engine and GPU without a measured kernel
    if mdl.native_expert_precision != "mxfp4" or row.weight_precision not in (None, "mxfp4"):
        return ""
    return mxfp4_refusal(row.engine, row.engine_version, gpu.architecture)


def prompt_limit_refusal(row: DecodeRow, gpu: Any, model: Any) -> str:
    """Why a vLLM 0.7.1-0.7.3 server refused the row's prompts (``vllm_mla_prompt_limit``: an MLA model whose chunked
    prefill was forced off with the chunked default's 2,048-token budget kept), or ""."""
    if row.engine != "vllm":
        return ""
    limit = vllm_mla_prompt_limit(
        row.engine_version, chunked_prefill=row.chunked_prefill, max_num_batched_tokens=row.max_num_batched_tokens,
        **_v0_server(row, gpu, model),
    )  # fmt: skip
    if limit is None or row.input_len <= limit:
        return ""
    return (
        f"vLLM {row.engine_version.split()[0]} refused prompts over {limit:,} tokens for an MLA model ({model.name}): "
        f"it forced chunked prefill off and kept its {limit:,}-token step budget (vLLM issue 13209, fixed after 0.7.3 "
        f"by PR 13620); give the server's --max-num-batched-tokens if it set one"
    )


def row_scheduler(row: DecodeRow) -> str:
    """The scheduler a row's run is simulated with: its engine's where the simulation has it ("vllm", "sglang",
    "tensorrt-llm"), else its release's profile's family (``scheduler_of``: a NIM row's TensorRT-LLM), else vLLM's."""
    return row.engine if row.engine in SCHEDULERS else scheduler_of(_base_profile_for(row, None))


@dataclass(frozen=True)
class DecodePrediction:
    """Predictions for benchmark rows (arrays, one entry per row, or floats for one row); NaN where none."""

    tpot_s: Any
    throughput_tokens_per_s: Any  # the run's output rate (steady-state decode for output_len = 0 rows)
    ttft_s: Any
    #: a static row's most sequences of input + output tokens that fit (``BenchmarkRun.max_batch``); NaN for
    #: serving rows and rows without a prediction. None: not computed (held-out predictions)
    max_batch: Any = None


def predict_decode(
    row: DecodeRow,
    *,
    engine: str | EngineProfile | None = None,
    calibration: Any = None,
    catalog: Catalog | None = None,
) -> DecodePrediction:
    """TPOT, output rate and TTFT of one row, as its benchmark ran (see the module docstring)."""
    p = predict_decode_rows([row], engine=engine, calibration=calibration, catalog=catalog)
    return DecodePrediction(
        float(p.tpot_s[0]), float(p.throughput_tokens_per_s[0]), float(p.ttft_s[0]), float(p.max_batch[0])
    )


def _row_args(rows: Sequence[DecodeRow], cat: Catalog) -> dict[str, Any]:
    return dict(
        gpu=np.array([resolve_gpu_name(r.gpu, cat) for r in rows], dtype=object),
        model=np.array([resolve_model_name(r.model, cat) for r in rows], dtype=object),
        input_len=np.array([r.input_len + chat_template_tokens(r) for r in rows], dtype=float),
        output_len=np.array([r.output_len for r in rows], dtype=float),
        batch=np.array([r.batch for r in rows], dtype=float),
        num_prompts=np.array([r.num_prompts or r.batch for r in rows], dtype=float),
        max_num_seqs=np.array([r.max_num_seqs for r in rows], dtype=object),
        max_num_batched_tokens=np.array([r.max_num_batched_tokens for r in rows], dtype=object),
        chunked_prefill=np.array([_chunked_prefill(r) for r in rows], dtype=object),
        scheduler=np.array([row_scheduler(r) for r in rows], dtype=object),
        length_range_ratio=np.array([r.length_range_ratio for r in rows], dtype=object),
        gpus=np.array([r.gpus for r in rows], dtype=float),
        weight_precision=np.array([r.weight_precision for r in rows], dtype=object),
        kv_precision=np.array([r.kv_precision for r in rows], dtype=object),
    )


def _chunked_prefill(row: DecodeRow) -> bool | None:
    """The row's own chunked-prefill setting, else its release's run (``trtllm_bench_chunked_context``: a TensorRT-LLM
    0.13 ``trtllm-bench throughput`` run chunks, s141) for a serving row, else None (the scheduler's default). A
    static batch prefills its prompts together (``predict_benchmark`` refuses a chunking setting for one), so the
    release's chunking is not given to a static row: one measured on 0.13 is predicted, not refused (s150)."""
    if row.chunked_prefill is not None:
        return row.chunked_prefill
    if row.kind != "serving":
        return None
    return trtllm_bench_chunked_context(row.engine, row.engine_version)


def _resolves(row: DecodeRow, cat: Catalog, memo: dict[tuple[str, str], bool]) -> bool:
    """Whether the row's GPU and model names resolve (each pair tried once: a miss builds a suggestion list)."""
    key = (row.gpu, row.model)
    if key not in memo:
        try:
            resolve_gpu_name(row.gpu, cat), resolve_model_name(row.model, cat)
            memo[key] = True
        except PlannerError:
            memo[key] = False
    return memo[key]


#: Experiment, not used by the shipped model (docs/history.md: "Batch-1 TTFT by operator, and LMDeploy
#: 0.1.0a1's first token from a decode step", s106): whether a static row of a release that samples the first token in
#: a decode step after prefilling all but the last prompt token (LMDeploy before 0.1.0a2, ``planner.engines.profiles.
#: first_token_from_decode_step``) is predicted so. Read by ``predict_decode_rows`` at call time; set for one process
#: only by the bench scripts (``bench/loso.py`` and ``bench/ttft_batch1.py`` ``--first-token-decode-step``,
#: ``bench/switch_bootstrap.py``), never by a user surface. Off as shipped: on, with the engine costs refitted (per
#: layer 12.9 -> 11.5 us, LMDeploy's prefill latency 9.5 -> 1.2 ms), leave-one-source-out batch-1 TTFT went 16.1% /
#: 53.0% -> 7.5% / 41.6% but the held-out serving output rate 19.95% -> 20.06% and loaded TTFT p50 23.73% -> 23.96%.
FIRST_TOKEN_FROM_DECODE_STEP = False


def predict_decode_rows(
    rows: Sequence[DecodeRow],
    *,
    engine: str | EngineProfile | None = None,
    calibration: Any = None,
    catalog: Catalog | None = None,
    frontend_s: Sequence[float] | None = None,
) -> DecodePrediction:
    """``predict_decode`` for many rows: one vectorized call per (engine, kind of run). NaN where a row fails.

    ``frontend_s``: per row, seconds of per-request front-end time in a serving row's run (its TTFT, mean and median,
    and a closed-loop client's next send), as the benchmark client measures it (``vllm bench serve``, ``sglang.bench_serving`` and genai-perf time the
    first streamed token from the moment the request is sent: HTTP, chat template and tokenizing included;
    ``planner.accuracy.frontend.frontend_s_of_rows`` gives each row its leave-one-source-out value); static rows (an
    offline engine call) get none. None: no front end."""
    cat = catalog or default_catalog()
    cal = resolve_calibration(calibration)
    n = len(rows)
    tpot, tput, ttft, fits = (np.full(n, math.nan) for _ in range(4))
    groups: dict[tuple, list[int]] = {}
    profiles: dict[tuple[str, bool], EngineProfile] = {}
    resolvable: dict[tuple[str, str], bool] = {}
    speculation: dict[int, Any] = {}  # a speculating row's decoding, at its draft's published acceptance
    for i, r in enumerate(rows):
        if (r.problem and not speculation_handled(r)) or not _resolves(r, cat, resolvable):
            continue
        if release_refusal(r, cat):  # the release cannot load the model on that GPU: no run to predict
            continue
        if r.speculation is not None and r.problem:
            try:
                speculation[i] = middle_speculation(r, cat)
            except PlannerError:
                continue  # nothing published for its draft: no prediction (why_not_predicted says so)
        eng = _profile_for(r, engine)
        # a release's kernels and batching defaults are a profile of their own
        key = (
            eng.name, eng.decode_kv_reads_per_query_head, eng.batching_defaults(),
            eng.sequence_overhead_s, eng.host_overlap,  # the published host cost (EXPERIMENT s118) differs by release
            eng.experts_whole,  # whole experts where the row's command spreads them (EXPERIMENT s126)
            eng.decode_graph_max_batch,  # SGLang 0.4's eager decode steps (s123) by release
            eng.eager_layer_s, eng.eager_moe_layer_s,  # vLLM V0's eager share past 8,192 tokens (EXPERIMENT h-mi300b)
            eng.decode_graph_gap_above,  # TensorRT-LLM 1.x's eager batches between its default graphs (EXPERIMENT h-p50)
            eng.prefill_only_steps,  # vLLM V0's prefill-only steps (s127) by release
            eng.max_prefill_tokens,  # SGLang's input budget from the row's command (s139)
            eng.scheduler_recv_interval,  # SGLang's receive interval from the row's command (s187)
            eng.sglang_piecewise_off,  # SGLang's piecewise prefill graph off by the row's command (EXPERIMENT h-ttftp50)
            eng.attention_dp_gate_iters,  # TensorRT-LLM's attention-DP balancing gate from the row's options (h-trt)
            eng.attention_dp_gate_quorum,
            eng.row_memory_utilization,  # the memory share from the row's command (s187)
            eng.moe_layer_overhead_s,  # a release's per-MoE-layer cost (``profiles.MOE_LAYER_COSTS``)
            eng.decode_moe_layer_overhead_s,  # ... on decode steps alone
            eng.dp_attention_kv_ranks,  # SGLang's attention-DP ranks' own KV pools (EXPERIMENT h-dsk042)
            eng.moe_flop_scale,  # vLLM 0.10-0.11.0's MXFP4 experts on Marlin on Hopper (EXPERIMENT h-tpotcls)
            eng.moe_flop_ceiling,
            eng.decode_flop_efficiency, eng.prefill_flop_efficiency,  # the H100's FLOP share (EXPERIMENT h-h100tpot)
        )  # fmt: skip
        profiles[key] = eng
        groups.setdefault((key, r.kind, r.request_rate is not None, r.parallelism), []).append(i)
    for (name, kind, at_rate, parallelism), idx in groups.items():
        sel = [rows[i] for i in idx]
        try:
            args = _row_args(sel, cat)
        except PlannerError:
            if len(sel) > 1:  # find the bad row by itself
                for i in idx:
                    front = None if frontend_s is None else [frontend_s[i]]
                    one = predict_decode_rows(
                        [rows[i]], engine=profiles[name], calibration=cal, catalog=cat, frontend_s=front
                    )
                    tpot[i], tput[i], ttft[i] = one.tpot_s[0], one.throughput_tokens_per_s[0], one.ttft_s[0]
                    fits[i] = one.max_batch[0]
            continue
        rate = np.array([r.request_rate for r in sel], dtype=float) if at_rate else None
        serving = kind == "serving"  # the run as the percentile rows simulate it (planner.accuracy.under_load)
        front = [float(frontend_s[i]) for i in idx] if serving and frontend_s is not None else 0.0
        run = predict_benchmark(
            **args,
            kind=kind,
            request_rate=rate,
            sample_lengths=[run_requests(r) for r in sel] if serving else None,
            cached_fraction=np.array([prefix_hit(r) for r in sel]) if serving else 0.0,
            frontend_s=np.array(front),
            async_scheduling=np.array([r.async_scheduling for r in sel]) if serving else False,
            scheduler_steps=np.array([r.scheduler_steps or 1 for r in sel]) if serving else 1,
            speculative=[speculation.get(i) for i in idx] if serving else None,
            first_token_decode_step=np.array([first_token_from_decode_step(r.engine, r.engine_version) for r in sel])
            if FIRST_TOKEN_FROM_DECODE_STEP and not serving
            else False,
            engine=profiles[name],
            calibration=cal,
            catalog=cat,
            errors="coerce",
            parallelism=parallelism,
        )
        steady = np.array([r.output_len == 0 for r in sel])
        median = np.array([r.statistic == "median" for r in sel])
        tpot[idx] = np.where(median, run.tpot_median_s, run.tpot_s)
        tput[idx] = np.where(steady, run.steady_decode_tokens_per_s, run.run_output_tokens_per_s)
        ttft[idx] = np.where(steady, math.nan, np.where(median, run.ttft_median_s, run.ttft_s))
        if run.max_batch is not None:
            fits[idx] = run.max_batch
        for j, r in enumerate(sel):  # a statistic the source does not name: only where mean and median agree
            if r.statistic == "" and r.kind == "serving":
                for arr, mean, med in ((tpot, run.tpot_s, run.tpot_median_s), (ttft, run.ttft_s, run.ttft_median_s)):
                    if statistic_matters(np.ravel(mean)[j], np.ravel(med)[j]):
                        arr[idx[j]] = math.nan
    return DecodePrediction(tpot, tput, ttft, fits)


#: Where a source does not say mean or median, a TTFT or TPOT is compared only if the predicted mean and median
#: of the run differ by less than this (then the choice cannot matter much); else it gets no prediction.
STATISTIC_AGREEMENT = 0.10


def statistic_matters(mean: float, median: float) -> bool:
    return not (mean > 0 and median > 0 and abs(mean / median - 1.0) < STATISTIC_AGREEMENT)


def why_not_predicted(row: DecodeRow | StartupRow, *, engine: Any = None, calibration: Any = None, catalog=None) -> str:
    """The one-line reason a row has no prediction (the error its prediction raises), or "" when it has one."""
    if row.problem and not speculation_handled(row):
        return row.problem
    cat = catalog or default_catalog()
    if isinstance(row, DecodeRow) and (refused := release_refusal(row, cat)):
        return refused
    try:
        spec = middle_speculation(row, cat) if row.speculation is not None and row.problem else None
        if isinstance(row, StartupRow):
            predict_startup(row, catalog=cat)
            return ""
        eng = _profile_for(row, engine)
        args = _row_args([row], cat)
        run = predict_benchmark(
            **{k: v[0] for k, v in args.items()},
            kind=row.kind,
            request_rate=row.request_rate,
            speculative=spec,
            engine=eng,
            calibration=calibration,
            catalog=cat,
        )
    except PlannerError as exc:
        return str(exc)
    if row.statistic == "" and row.kind == "serving":
        for what, mean, med in (("TTFT", run.ttft_s, run.ttft_median_s), ("TPOT", run.tpot_s, run.tpot_median_s)):
            if statistic_matters(mean, med):
                return (
                    f"the source does not say mean or median, and the predicted {what} mean ({mean * 1e3:.0f} ms) "
                    f"and median ({med * 1e3:.0f} ms) differ by {STATISTIC_AGREEMENT:.0%} or more"
                )
    return ""


def with_names(rows: Sequence[DecodeRow], gpu: str | None, model: str | None) -> list[DecodeRow]:
    """The rows with their GPU and/or model replaced (a file that does not name them)."""
    return [replace(r, gpu=gpu or r.gpu, model=model or r.model) for r in rows]


# -- ranges ------------------------------------------------------------------------------------------------


def _residuals(gpu: Any, model: Any, context: Any, options: dict) -> tuple[float, float]:
    """The query's residual quantiles (``planner.accuracy.calibration.residual_quantiles``): its GPU, engine, model and
    tensor-parallel group (``gpus``, else the smallest that holds the weights and one sequence, as the API picks)."""
    gpus = options.get("gpus")
    if gpus is None:
        keys = ("kv_precision", "weight_precision", "memory_utilization", "engine", "reserve_bytes", "catalog")
        gpus = api.min_gpus(gpu, model, context, **{k: options[k] for k in keys if k in options})
    cal, cat = options.get("calibration"), options.get("catalog")
    return residual_quantiles(gpu, options.get("engine"), cal, cat, gpus=gpus, model=model)


def _bracket(value: Any, gpu: Any, model: Any, tokens: Any, options: dict, inverse: bool = False) -> tuple[Any, Any]:
    """(low, high) around ``value``: times 1 + the query's residual quantiles (``_residuals``); a rate
    (``inverse``) is divided by them instead, high quantile first."""
    low, high = _residuals(gpu, model, tokens, options)
    if inverse:
        return value / (1.0 + high), value / (1.0 + low)
    return value * (1.0 + low), value * (1.0 + high)


def tpot_range(gpu: Any, model: Any, context: Any, **options: Unpack[DecodeOptions]) -> tuple[Any, Any]:
    """(low, high) TPOT in seconds: ``api.tpot`` times 1 + the residual quantiles (scalars)."""
    return _bracket(api.tpot(gpu, model, context, **options), gpu, model, context, options)


def throughput_range(gpu: Any, model: Any, context: Any, **options: Unpack[DecodeOptions]) -> tuple[Any, Any]:
    """(low, high) output tokens/s: ``api.throughput`` divided by 1 + the residual quantiles (high, low)."""
    return _bracket(api.throughput(gpu, model, context, **options), gpu, model, context, options, inverse=True)


def ttft_range(gpu: Any, model: Any, prompt_tokens: Any, **options: Unpack[DeploymentOptions]) -> tuple[Any, Any]:
    """(low, high) TTFT in seconds: ``api.ttft`` times 1 + the residual quantiles (no queueing)."""
    return _bracket(api.ttft(gpu, model, prompt_tokens, **options), gpu, model, prompt_tokens, options)


def quantiles(residuals: Iterable[float], low: float = 0.1, high: float = 0.9) -> tuple[float, float]:
    """The ``low`` and ``high`` quantiles of relative residuals, rounded outwards to 0.01, never excluding 0."""
    r = np.asarray([x for x in residuals if not math.isnan(x)], dtype=float)
    if not len(r):
        return DEFAULT_RESIDUALS
    lo, hi = np.quantile(r, [low, high])
    return min(math.floor(lo * 100) / 100, 0.0), max(math.ceil(hi * 100) / 100, 0.0)
