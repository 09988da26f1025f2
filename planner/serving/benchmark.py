"""What a benchmark run reports: TTFT, TPOT and the run's output rate, predicted from the model's step times.

Two rates, named apart:

- ``planner.throughput()`` and ``BenchmarkRun.steady_decode_tokens_per_s`` are the **steady-state decode**
  rate, batch / TPOT: output tokens per second once every sequence of the batch is decoding, prefill, ramp-up
  and tail excluded.
- ``BenchmarkRun.run_output_tokens_per_s`` is a **whole run's** output rate, what a benchmark prints as
  "output throughput": every output token over the run's wall time, prefills, ramp-up and tail included.

Two kinds of run:

- ``kind="static"`` (LMDeploy ``profile_generation``, TensorRT-LLM static-batch tables, vLLM
  ``benchmark_latency``): ``batch`` prompts prefilled together, then ``output_len - 1`` decode steps of the
  whole batch. TTFT = the batch's prefill; TPOT = the decode step at the mean context ``input + output / 2``
  (decode time is linear in the context); output rate = batch x output / (TTFT + (output - 1) x TPOT). A group
  that cannot hold one sequence of input + output tokens is refused (DoesNotFitError; NaN with errors="coerce"); a
  batch above what fits is timed as if it all ran at once, and ``BenchmarkRun.max_batch`` says how many fit.
- ``kind="serving"`` (``vllm bench serve``, ``sglang.bench_serving``, ``trtllm-bench``): a continuous-batching
  engine given ``num_prompts`` requests, simulated step by step (``planner.serving.simulate``): at most
  ``max_num_seqs`` in flight, KV cache taken token by token as the engine takes it (vLLM preempts, SGLang
  reserves part of the future output, TensorRT-LLM each whole sequence in blocks: ``reservation_block_tokens``), chunked
  prefill within ``max_num_batched_tokens`` per step, decodes
  first, then prompt chunks. Requests arrive all at once; or, when
  ``batch`` is less than ``num_prompts``, ``batch`` at a time, the client sending one more as one finishes
  (``--max-concurrency``); or at ``request_rate`` per second, Poisson arrivals as ``vllm bench serve`` sends them
  (``arrival_times_s``, seeded with ``ARRIVAL_SEED``), so a prediction is repeatable. TTFT and TPOT are means over
  requests (medians in ``ttft_median_s``, ``tpot_median_s``: np.percentile's 50th, as the benchmark prints it), TPOT
  excluding the first token, as vLLM's benchmark defines it. The run is the one ``planner.serving.load`` simulates
  for its percentiles: the same step table, engine rule (overlap scheduling, ``engine_behaviour``) and arrivals.

Engine limits: the profile's ``batching_limits`` on that GPU (vLLM ``vllm serve`` defaults: 8192 tokens and
1024 sequences on GPUs of 70 GiB or more whose device name holds no "a100", else 2048 and 256; ``vllm/engine/arg_utils.py``
``EngineArgs.get_batch_defaults``), unless ``max_num_seqs`` / ``max_num_batched_tokens`` are given; a given token
budget also sizes TensorRT-LLM 1.x's KV cache (its start-up estimate runs that many tokens:
``planner.engines.profiles.profiled_at_token_budget``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Literal, Unpack

import numpy as np

from planner import api
from planner.catalog import default_catalog
from planner.checks import token_counts
from planner.deploy import check_parallelism
from planner.engines.profiles import (
    TOKEN_BUDGET_PROFILED,
    EngineProfile,
    engine_family,
    engine_profile,
    profiled_at_token_budget,
    sglang_piecewise_host_s,
    sglang_piecewise_refused,
    sglang_prefill_host_s,
)
from planner.engines.sglang import MiB, sglang_chunked_prefill_size, sglang_max_running_requests
from planner.errors import InvalidInputError, OutOfRangeError, PlannerError
from planner.model.layouts import is_pipeline
from planner.model.parallel import streams_of
from planner.options import BenchmarkOptions, Options
from planner.serving.simulate import RunBehaviour, Scheduler, StepTable, simulate, weighted_percentile
from planner.serving.speculative import served_model, speculative_table

KINDS = ("static", "serving")
#: How the engine fills a step and its KV cache (``planner.serving.simulate.Scheduler``): "vllm" mixes decodes and prompt
#: chunks and preempts on a full cache (vLLM v1); "sglang" runs prefill-only steps while prompts wait and
#: reserves part of the future output; "tensorrt-llm" mixes like vLLM and reserves every whole sequence.
SCHEDULERS = ("vllm", "sglang", "tensorrt-llm")
#: Seed of the Poisson arrivals of a run at a request rate (numpy ``default_rng``): the same run every call.
ARRIVAL_SEED = 0
#: The most requests one serving run is simulated with (its cost grows with them: about 50 us each; the shipped
#: benchmarks' largest run has 30,000).
MAX_PROMPTS = 100_000
#: The largest per-step token budget (max_num_batched_tokens) accepted: a prefill table is built over up to
#: budget / prompt length prompts (vLLM's defaults: 2,048 to 16,384; the shipped rows' largest: 131,072).
MAX_BATCHED_TOKENS = 2**20
#: Batch sizes tabulated exactly; above, a geometric grid (decode time is smooth in the batch) interpolated.
EXACT_BATCHES = 64
GRID_BATCHES = 48


@dataclass(frozen=True)
class BenchmarkRun:
    """A benchmark's figures (floats, or arrays when inputs are arrays)."""

    ttft_s: Any  # mean time to first token of a request (waiting at the server included)
    tpot_s: Any  # mean time per output token after the first, of a request
    run_output_tokens_per_s: Any  # the whole run's output rate: all output tokens / wall time of the run
    steady_decode_tokens_per_s: Any  # steady-state decode at the run's concurrency: what planner.throughput() gives
    duration_s: Any  # wall time of the run
    concurrency: Any  # the most sequences in flight (static: the batch)
    ttft_median_s: Any = None  # median over requests (static: = ttft_s)
    tpot_median_s: Any = None
    #: static runs: the most sequences of input + output tokens the group's KV budget holds (``api.max_batch``); a
    #: batch above it is timed as if it all ran at once, which the engine cannot do (it queues or preempts the
    #: rest). None for serving runs (the simulation admits only what fits).
    max_batch: Any = None


def arrival_times_s(
    num_requests: int, rate_per_s: float, burstiness: float = 1.0, seed: int = ARRIVAL_SEED
) -> np.ndarray:
    """When each request is sent, seconds: gaps ~ Gamma(shape = burstiness, scale = 1 / (rate x burstiness)) (mean
    1 / rate; burstiness 1 is Poisson), summed and rescaled so the last goes at N / rate, as ``vllm bench serve``
    sends them. An infinite rate sends all at 0; an infinite burstiness evenly, every 1 / rate."""
    n = _whole(num_requests, "num_requests")
    rate, shape = float(rate_per_s), float(burstiness)
    if not rate > 0 or math.isnan(rate):
        raise InvalidInputError(f"request rate {rate_per_s!r} is not a positive number of requests per second")
    if not shape > 0 or math.isnan(shape):
        raise InvalidInputError(f"burstiness {burstiness!r} is not positive; use 1 for Poisson, below 1 burstier")
    if math.isinf(rate):
        return np.zeros(n)
    gaps = (
        np.full(n, 1.0 / rate)
        if math.isinf(shape)
        else np.random.default_rng(seed).gamma(shape, 1.0 / (rate * shape), n)
    )
    times = np.cumsum(gaps)
    return times * (n / rate / times[-1]) if times[-1] > 0 else times


def _whole(x: Any, name: str) -> int:
    try:
        v = float(x)
    except (TypeError, ValueError):
        raise InvalidInputError(f"{name} {x!r} is not a number; use a whole number of 1 or more") from None
    if not (v >= 1 and v == int(v)) or math.isinf(v):
        raise OutOfRangeError(f"{name} {x!r} is not a whole number of 1 or more")
    return int(v)


#: Engines whose scheduler prepares step n + 1 while step n runs, by default (a request arriving at a busy engine
#: joins the second step that starts after it: ``simulate``'s ``async_scheduling``). TensorRT-LLM's PyTorch backend
#: (1.0 and later): "At step n, the system launches GPU computation for step n+1 without waiting for CPU tasks (e.g.,
#: stop criteria checks) from step n to complete ... Enabled by default. To disable, set
#: disable_overlap_scheduler=True" (Overlap Scheduler, https://nvidia.github.io/TensorRT-LLM/latest/torch/features/
#: overlap_scheduler.html; docs/source/features/overlap-scheduler.md in the 1.0 documentation, 2025-09-09). Its 0.x
#: TensorRT engines ("tensorrt-llm-0") are not included. SGLang from 0.4 (its profiles "sglang-0.4" ... "sglang"):
#: "The overlap scheduler is turned on by default" since SGLang v0.4 ("zero-overhead batch scheduler",
#: https://lmsys.org/blog/2024-12-04-sglang-v0-4/, 2024-12-04; ``--disable-overlap-schedule`` turns it off); SGLang
#: 0.3 has no profile of its own and is not included.
OVERLAP_SCHEDULING_ENGINES = ("tensorrt-llm", "sglang")


def scheduler_of(engine: EngineProfile) -> str:
    """The serving simulation's scheduler for an engine profile: its family (``engine_family``: "sglang-0.5.1" ->
    "sglang", "tensorrt-llm-0" -> "tensorrt-llm") where that has a scheduler of its own, else vLLM's."""
    family = engine_family(engine.name)
    return family if family in SCHEDULERS else "vllm"


#: EXPERIMENT (h-load, off; docs/hypotheses/trtllm-eager-context.md): TensorRT-LLM's PyTorch backend runs every step
#: that carries a context request outside CUDA graphs (``PyTorchModelEngine._maybe_get_cuda_graph``: generation-only
#: batches replay a ``DecodingCUDAGraphRunner``), so such a step takes at least the host's launch of it, as SGLang's
#: eager extend does (``eager_context_host_s``); False: its context steps as timed.
TRTLLM_EAGER_CONTEXT = False  # here, not in planner.accuracy.basis: the serving package may not import accuracy


def eager_context_host_s(profile: Any, num_layers: int, moe_layers: int) -> float:
    """EXPERIMENT (h-load, ``TRTLLM_EAGER_CONTEXT``, off; docs/hypotheses/trtllm-eager-context.md):
    the host's time to launch a TensorRT-LLM PyTorch-backend step that carries a context request, seconds; 0 with the
    switch off or for another profile. The backend (profile "tensorrt-llm": ``trtllm-serve``'s default from 1.0, and
    0.x rows served with ``--backend pytorch``) replays a CUDA graph only for generation-only batches
    (``PyTorchModelEngine._maybe_get_cuda_graph``: ``if not self._run_cuda_graphs or not batch.is_generation_only:
    return None``; the runner a ``DecodingCUDAGraphRunner``), unless ``torch_compile_config.enable_piecewise_cuda_graph``
    (not read here), so a context step launches kernel by kernel. Its launch per layer is not published: SGLang's
    (``planner.engines.profiles.SGLANG_HOST_LAYER_S``, ``SGLANG_HOST_MOE_LAYER_S``, sgl-project/sglang pull request
    1401) stands in for it, as ``profiles.PYTORCH_EAGER_COSTS`` does for the backend's eager decode (s183)."""
    from planner.engines.profiles import SGLANG_HOST_LAYER_S, SGLANG_HOST_MOE_LAYER_S

    if not TRTLLM_EAGER_CONTEXT or getattr(profile, "name", "") != "tensorrt-llm":
        return 0.0
    return SGLANG_HOST_LAYER_S * (num_layers - moe_layers) + SGLANG_HOST_MOE_LAYER_S * moe_layers


#: EXPERIMENT (h-mla, off, never to ship; docs/hypotheses/mla-prefill-mechanisms.md): an upper bound on what MLA's
#: prefill module can add. Each prompt step of an MLA model without DSA on a GPU whose MLA context module was measured
#: (``catalogs/reference/mla_module_aic.csv``: H100, H200, B200) takes, on top of the planner's step, layers x that
#: module at the step's prompt tokens (``mla_prefill_module_s``); it double-counts the planner's own MLA GEMMs and
#: attention, so it exceeds what mechanism (a) can be. False: the step as timed.
MLA_PREFILL_MODULE_BOUND = False


def _mla_module_table(switch: bool, gpu: Any, model: Any, gpus: float, kv_precision: Any) -> tuple[str, float] | None:
    """(KV table, attention heads per GPU) of the measured MLA context module an experiment reads: an fp8 table for
    an 8-bit KV cache, bf16 otherwise, the model's heads / ``gpus``; None with its ``switch`` off, for a model without
    MLA or with DSA, or a GPU without a measured table."""
    from planner.engines.kernel_floor import read_mla_rows

    if not switch or model.mla is None or model.sparse_attention is not None:
        return None
    if gpu.name not in {r["gpu"] for r in read_mla_rows()}:
        return None
    kv = "fp8" if "8" in str(getattr(kv_precision, "name", kv_precision) or "") else "bfloat16"
    return kv, model.num_attention_heads / max(float(gpus), 1.0)


def mla_prefill_module_s(gpu: Any, model: Any, gpus: float, kv_precision: Any, tokens: Any) -> np.ndarray | None:
    """EXPERIMENT (h-mla, ``MLA_PREFILL_MODULE_BOUND``): seconds ``model``'s layers of the measured MLA context module
    (vLLM 0.24.0, aiconfigurator 0.12.0; ``planner.engines.kernel_floor.mla_module_time_s``, op "context", one prompt
    of each of ``tokens``) take at attention heads / ``gpus`` per GPU, an fp8 table for an 8-bit KV cache and bf16
    otherwise; None with the switch off, for a model without MLA or with DSA, or a GPU without a measured table."""
    from planner.engines.kernel_floor import mla_module_time_s

    table = _mla_module_table(MLA_PREFILL_MODULE_BOUND, gpu, model, gpus, kv_precision)
    if table is None:
        return None
    kv, heads = table
    t = np.asarray(tokens, dtype=float)
    return model.num_layers * np.array([mla_module_time_s(gpu.name, "context", kv, heads, 1.0, x) for x in t])


#: EXPERIMENT (h-mla, off; docs/hypotheses/mla-prefill-mechanisms.md, Test 3): a prompt step of an MLA model without
#: DSA on a GPU whose MLA context module was measured takes layers x that module (k prompts read as k) in place of the
#: planner's own prefill attention and MLA-projection share (``mla_prefill_module_delta_s``). False: as timed.
MLA_PREFILL_MODULE = False

#: EXPERIMENT (h-ttftp50, off; docs/hypotheses/sglang-piecewise-coverage.md): SGLang 0.5.10+ on NVIDIA replays its
#: piecewise prefill graph only where the server's flags leave it on and the step has at most
#: ``planner.engines.profiles.SGLANG_PIECEWISE_MLA_MAX_TOKENS`` tokens (an MLA model's), and launches the others
#: eagerly (``sglang_piecewise_host_s``). False: every prompt step of those releases graphed.
SGLANG_PIECEWISE_COVERAGE = False


def mla_projection_params_per_layer(model: Any) -> float:
    """Parameters of one MLA layer's projections: q (q_a + q_b, or one q_proj without a q LoRA), kv_a (latent + rope
    key), kv_b (the latent up to the heads' nope keys and values) and o_proj."""
    a, h, d = model.mla, model.num_attention_heads, model.hidden_size
    qk = a.qk_nope_head_dim + a.qk_rope_head_dim
    q = d * a.q_lora_rank + a.q_lora_rank * h * qk if a.q_lora_rank else d * h * qk
    return float(q + d * (a.kv_lora_rank + a.qk_rope_head_dim) + a.kv_lora_rank * h * (a.qk_nope_head_dim + a.v_head_dim)
                 + h * a.v_head_dim * d)  # fmt: skip


def mla_prefill_module_delta_s(
    cat: Any, engine: Any, gpu: Any, model: Any, gpus: float, weight_precision: Any, kv_precision: Any, rows: list
) -> np.ndarray | None:
    """EXPERIMENT (h-mla, ``MLA_PREFILL_MODULE``): per prompt step (k prompts of L tokens, ``rows``), seconds the
    measured MLA context module's layers (``planner.engines.kernel_floor.mla_module_time_s``, op "context", batch k,
    context L; heads / ``gpus`` per GPU; an fp8 table for an 8-bit cache) take beyond the planner's own share of that
    step: its prefill attention term (``operators.attention_time_s`` as ``forward_kernels_time_s`` times it) plus the
    MLA projections' parameter share of its dense-GEMM term (``operators.linear_layers_time_s``). None with the switch
    off, for a model without MLA or with DSA, or a GPU without a measured module."""
    from planner.deploy import deploy
    from planner.engines.kernel_floor import mla_module_time_s
    from planner.model import operators as O
    from planner.model.memory import kv_bytes, kv_replication, state_bytes
    from planner.model.prefill import causal_attention_flop
    from planner.options import DecodeOptions, Options

    table = _mla_module_table(MLA_PREFILL_MODULE, gpu, model, gpus, kv_precision)
    if table is None:
        return None
    kv, heads = table
    o = Options.read(
        DecodeOptions,
        dict(gpus=gpus, batch=1, weight_precision=weight_precision, kv_precision=kv_precision, engine=engine,
             check_fit=False, catalog=cat),
        "decode_step",
    )  # fmt: skip
    context = max(1, round(max(L for _, L in rows)))
    f = deploy(gpu.name, model.name, context, o).facts
    g, mf, p, lim = f.gpu, f.model, f.precision, f.limits
    share = model.num_layers * mla_projection_params_per_layer(model) / float(mf.params_read_per_step)
    dense = O.dense_weight_bytes(mf, p)
    out = []
    for k, L in rows:
        k, L = float(k), max(float(L), 1.0)
        n = k * L
        att_bytes = kv_bytes(mf, p, L, k * kv_replication(mf, gpus)) + state_bytes(mf, k)
        att_flop = O.prefill_attention_timed_flop(mf, lim, k * causal_attention_flop(mf, L), n)
        att = O.attention_time_s(
            g, mf, lim, att_bytes, att_flop, lim.prefill_attention_flop_efficiency * lim.prefill_flop_efficiency,
            lim.prefill_attention_floor_s, gpus, p.kv_bytes_per_element,
        )  # fmt: skip
        gemm = O.linear_layers_time_s(
            g, mf, lim, dense, n, lim.prefill_flop_efficiency, gpus, p.weight_bytes_per_param, k
        )
        module = model.num_layers * mla_module_time_s(gpu.name, "context", kv, heads, k, L)
        out.append(float(module - float(att) - share * float(gemm)))
    return np.array(out)


#: EXPERIMENT (h-mla, None = off; docs/hypotheses/mla-prefill-mechanisms.md, Test 4): seconds an MLA model's MoE
#: layer takes to launch in an SGLang prompt step run eagerly (in place of ``SGLANG_HOST_MOE_LAYER_S``, 0.95 ms, which is
#: DeepSeek-Coder-V2-Lite's); only ever set to a value chosen leaving the judged source out (``bench/mla_host_loso.py``).
SGLANG_MLA_HOST_MOE_LAYER_S: float | None = None
#: h-b200moe (docs/hypotheses/sglang-v3-eager-launch.md; shipped s211, ``SGLANG_V3_EAGER_LAUNCH``): the eager launch
#: time of a DeepSeek-V3-architecture MoE layer (MLA with a q-LoRA), from sgl-project/sglang pull request 14918's "before" run: DeepSeek-R1 (INT8) TP 8, 1,024-token prompts
#: one at a time, median TTFT ``SGLANG_V3_EAGER_TTFT_S``; the planner's TTFT of that run outside the launch floor is
#: ``SGLANG_V3_EAGER_REST_S`` (``bench/sglang_v3_launch.py``, main 987e03e2: host-bound, 58 MoE layers a step), so a
#: MoE layer launches (108.471 - 22.20 - 3 x 0.29) / 58 = 1.472 ms (DeepSeek-Coder-V2-Lite's 0.946 ms before).
SGLANG_V3_EAGER_TTFT_S = 108.471e-3
SGLANG_V3_EAGER_REST_S = 22.20e-3
SGLANG_V3_EAGER_MOE_LAYERS = 58
SGLANG_V3_HOST_MOE_LAYER_S = (
    SGLANG_V3_EAGER_TTFT_S - SGLANG_V3_EAGER_REST_S - 3 * 9.28e-3 / 32
) / SGLANG_V3_EAGER_MOE_LAYERS
#: Shipped in s211 (h-b200moe passed its ship rule: loaded TTFT p50 20.90% -> 19.71%, no worst grew): an eager SGLang
#: prompt step of a DeepSeek-V3-architecture model launches ``SGLANG_V3_HOST_MOE_LAYER_S`` a MoE layer; the ablation
#: ``sglang-v3-eager-launch:off`` (``bench/switch_bootstrap.py``) turns it off. ``SGLANG_MLA_HOST_MOE_LAYER_S``, when
#: set, still takes precedence (h-mla's experiment hook).
SGLANG_V3_EAGER_LAUNCH = True


def mla_host_moe_layer_s(model) -> float | None:
    """The eager launch time of one of ``model``'s MoE layers in an SGLang prompt step where it differs from
    ``SGLANG_HOST_MOE_LAYER_S`` (DeepSeek-Coder-V2-Lite's 0.946 ms): h-mla's experiment value if set, else
    ``SGLANG_V3_HOST_MOE_LAYER_S`` for a DeepSeek-V3-architecture model (``mla_host_moe_layer_applies``); None: no
    difference."""
    if not mla_host_moe_layer_applies(model):
        return None
    if SGLANG_MLA_HOST_MOE_LAYER_S is not None:
        return SGLANG_MLA_HOST_MOE_LAYER_S
    return SGLANG_V3_HOST_MOE_LAYER_S if SGLANG_V3_EAGER_LAUNCH else None


def mla_host_moe_layer_applies(model) -> bool:
    """Whether ``SGLANG_MLA_HOST_MOE_LAYER_S`` prices ``model``'s MoE layers: an MLA model with a q-LoRA (the
    DeepSeek-V3 architecture: DeepSeek-V3/R1/V3.1/V3.2, Kimi-K2); DeepSeek-V2-Lite / Coder-V2-Lite (no q-LoRA) keep
    the 0.946 ms measured on Coder-V2-Lite (h-b200moe narrows h-mla's hook, which took every MLA model)."""
    return model.mla is not None and model.mla.q_lora_rank is not None


def overlaps_steps(engine: Any, scheduler: Any = "vllm", speculative: bool = False) -> bool:
    """Whether an engine schedules each step while the one before runs, by default (``OVERLAP_SCHEDULING_ENGINES``):
    its profile's name when ``engine`` is given (``planner.engines.profiles``: "tensorrt-llm" is the 1.x PyTorch
    backend, "tensorrt-llm-0" the TensorRT engines; "sglang-0.4" and later releases are SGLang's), or a profile whose
    host loop is asynchronous (``host_overlap`` 1: vLLM 0.14+ and the bare ``vllm``, ``profiles.with_vllm_host_loop``;
    s189), else the ``scheduler``'s; SGLang not when it decodes speculatively (``speculative``)."""
    name, profile = str(scheduler or "vllm"), None
    try:
        profile = engine_profile(engine)  # None: the default profile (the current vLLM release's)
        if engine is not None:
            name = profile.name  # a release ("tensorrt-llm==0.9") names its profile
    except PlannerError:
        name = str(engine)
    name = name.strip().lower()
    family = "sglang" if name.startswith("sglang") else name
    if family == "sglang" and speculative:
        return False  # server_args.py (0.5.x): "Overlap scheduler is disabled because of using eagle3 or standalone
        # speculative decoding" (unless SGLANG_ENABLE_SPEC_V2, a beta)
    if family in OVERLAP_SCHEDULING_ENGINES:
        return True
    # vLLM's asynchronous host loop (0.14+, pull request 27614; the bare name's profile): s189
    return family.startswith("vllm") and profile is not None and profile.host_overlap >= 1.0


#: Experiment's figure, not used by the shipped model (only ``SERIAL_FRONT_END_S``, below, off, would apply it): the
#: part of a request's front-end time that one server process does for every request in turn, seconds (a FIFO
#: single server: ``RunBehaviour.frontend_serial_s``): 130.74 s / 10,000 requests = 13.07 ms. Every engine here serves
#: its HTTP API from one process by default and prepares each request there: vLLM 0.11.0 ``--api-server-count``
#: default 1 (``vllm/entrypoints/openai/cli_args.py``; ``vllm/entrypoints/cli/serve.py``: "Single API server (this
#: process)", one uvloop), ``AsyncLLM.add_request`` runs ``Processor.process_inputs`` (tokenizing) in that event
#: loop and its ``output_handler`` task detokenizes every step's outputs in the same loop
#: (``vllm/v1/engine/async_llm.py``); SGLang's one TokenizerManager process (``--tokenizer-worker-num`` 1); TensorRT-
#: LLM's ``trtllm-serve``. The figure: vLLM PR 17546 (njhill, 2025-05-01, "[Perf] API-server scaleout with
#: many-to-many server-engine comms", https://github.com/vllm-project/vllm/pull/17546), "DP=2 before": one API server
#: in front of two data-parallel engines of Llama-3.2-1B on 2 x A100, ShareGPT sent at 120 req/s, 10,000 requests
#: done in 130.74 s: 76.5 req/s, the one API server's ceiling (the PR's scale-out lifts it). It counts a whole
#: ShareGPT request (its output streamed too), so it is an upper bound on the request-preparing part; a request's
#: front end is never less than this part (``RunBehaviour`` clips it to ``frontend_s``).
FRONTEND_SERIAL_S = 130.74 / 10_000
#: Experiment, not used by the shipped model (docs/history.md: "A serial front end: one process preparing
#: requests in turn", s112). The serial part every simulated run gets unless asked (``engine_behaviour``; also read by
#: ``planner.accuracy.frontend.residual_s``), seconds, read at call time: 0, none. No user surface sets it. With
#: ``FRONTEND_SERIAL_S`` the held-out TPOT median went from 17% to 20% and the loaded TPOT p50 / p99 and ITL p99
#: medians each a point worse (docs/history.md: s112), which the ship rule refuses; ``--serial-front-end``
#: (``bench/heldout.py``, ``bench/load_validation.py``, ``bench/frontend_fit.py``) sets it to ``FRONTEND_SERIAL_S``
#: for the experiment.
SERIAL_FRONT_END_S = 0.0


def engine_behaviour(engine: Any, scheduler: Any, asked: RunBehaviour, speculative: Any = None) -> RunBehaviour:
    """How a run goes on this engine: ``asked`` (prefix cache, front end, multi-step scheduling, stream stalls) with
    overlap scheduling on where asked or where the engine overlaps by default (``overlaps_steps``) and
    ``speculative``'s tokens per step (a ``planner.serving.speculative.SpeculativeDecoding``; None: one a step). The
    one rule both paths use: ``predict_benchmark``'s serving runs (the mean rows) and
    ``planner.serving.load.Replica.behaviour`` (percentiles, plan, export, Excel). A speculating run's steps emit
    1 to draft_steps + 1 tokens, the acceptance length on average (``RunBehaviour.draft_steps``). Requests wait in
    turn for one front-end process for ``asked.frontend_serial_s`` of their ``frontend_s``, or when that is 0 for
    ``SERIAL_FRONT_END_S`` (0: never)."""
    try:  # vLLM V0's prefill-only steps (s127), SGLang's input budget (s139) and receive interval (s187) ride on a
        # published row's profile
        profile = engine_profile(engine) if engine is not None else None
    except PlannerError:
        profile = None
    prefill_only = profile is not None and profile.prefill_only_steps
    return replace(
        asked,
        prefill_only_steps=asked.prefill_only_steps or prefill_only,
        max_prefill_tokens=asked.max_prefill_tokens or (profile.max_prefill_tokens if profile is not None else 0),
        recv_interval=max(asked.recv_interval, profile.scheduler_recv_interval if profile is not None else 1),
        context_gate=asked.context_gate or (profile.attention_dp_gate_iters if profile is not None else 0),
        context_gate_quorum=asked.context_gate_quorum
        or (profile.attention_dp_gate_quorum if profile is not None else 0),
        frontend_serial_s=asked.frontend_serial_s or SERIAL_FRONT_END_S,
        async_scheduling=asked.async_scheduling or overlaps_steps(engine, scheduler, speculative is not None),
        tokens_per_step=float(speculative.acceptance_length) if speculative is not None else 1.0,
        draft_steps=int(speculative.draft_steps) if speculative is not None else 0,
    )


def _arr(x: Any) -> np.ndarray:
    return np.asarray(x, dtype=float)


def predict_benchmark(
    gpu: Any,
    model: Any,
    input_len: Any,
    output_len: Any,
    batch: Any = 1,
    *,
    kind: Literal["static", "serving"] = "static",
    num_prompts: Any = None,
    request_rate: Any = None,
    max_num_seqs: Any = None,
    max_num_batched_tokens: Any = None,
    scheduler: Any = None,
    length_range_ratio: Any = None,
    sample_lengths: Any = None,
    cached_fraction: Any = 0.0,
    frontend_s: Any = 0.0,
    async_scheduling: Any = False,
    scheduler_steps: Any = 1,
    speculative: Any = None,
    chunked_prefill: Any = None,
    first_token_decode_step: Any = False,
    **options: Unpack[BenchmarkOptions],
) -> BenchmarkRun:
    """TTFT, TPOT and output rate of a benchmark run (see the module docstring for the two kinds).

    ``batch``: the static batch, or the client's concurrency limit of a serving run (0 or at least
    ``num_prompts``: every prompt sent at once). ``num_prompts`` defaults to ``batch``. ``scheduler``: "vllm"
    (default), "sglang" or "tensorrt-llm" (``SCHEDULERS``). ``length_range_ratio`` (serving runs): the requests'
    lengths vary as a benchmark's ``--random-range-ratio`` draws them (``request_lengths``); None: every request
    has ``input_len`` / ``output_len``. ``sample_lengths`` (serving runs): per run, each request's (prompt, output)
    tokens in the order sent (a dataset's sample, e.g. ``planner.accuracy.datasets.sharegpt_requests``), or None;
    a run given both uses these, not ``length_range_ratio``. ``cached_fraction`` (serving runs): the share of each
    prompt found in the prefix cache (``planner.serving.simulate.RunBehaviour``; e.g. a client that sends the same
    prompts again to a server that caches prefixes). ``frontend_s`` (serving runs): each request's time outside the
    engine, seconds (HTTP, tokenizing), before it reaches the engine and in its TTFT; ``async_scheduling``: the server
    schedules each step while the one before runs (vLLM ``--async-scheduling``; always on for an engine that overlaps
    by default, ``overlaps_steps``); ``scheduler_steps``: vLLM V0's ``--num-scheduler-steps`` (``RunBehaviour``).
    A serving run goes as ``planner.serving.load.latency_under_load`` sends it: the same step table, the same engine
    rule (``engine_behaviour``), arrivals at a rate as ``arrival_times_s`` draws them, medians as its p50.
    ``speculative`` (serving runs): per run (as ``sample_lengths``), a ``planner.serving.speculative.
    SpeculativeDecoding`` or None (``speculative_setup``). ``chunked_prefill`` (serving runs): whether the server splits
    a prompt across steps (True, False), or None: the scheduler's default (``planner.serving.simulate.
    chunked_prefill_default``: TensorRT-LLM runs prompts whole unless ``--enable_chunked_prefill``).
    ``first_token_decode_step`` (static runs): the release prefills all but each prompt's last token and samples the
    first token in a decode step over it (LMDeploy TurboMind before 0.1.0a2, ``planner.engines.profiles.
    first_token_from_decode_step``): TTFT = prefill of L - 1 tokens (none when L = 1) + one decode step of the batch at
    context L; an experiment no shipped prediction or user surface turns on (``planner.accuracy.predict.
    FIRST_TOKEN_FROM_DECODE_STEP``; docs/history.md, s106). Arrays broadcast. Options (the group, precisions, engine, calibration, catalog, errors):
    ``planner.options.BenchmarkOptions``, their help in ``planner.options.Options``.
    """
    if kind not in KINDS:
        raise InvalidInputError(f"kind {kind!r} is not a benchmark kind; use one of {', '.join(KINDS)}")
    if kind == "static" and request_rate is not None:
        raise InvalidInputError("a static batch has no request rate; use kind='serving' with request_rate")
    if kind == "static" and any(x is not None for x in np.ravel(np.asarray(length_range_ratio, dtype=object))):
        raise InvalidInputError("a static batch has one length; use kind='serving' with length_range_ratio")
    if kind == "static" and speculative is not None:
        raise InvalidInputError("a static batch is timed one token a step; use kind='serving' with speculative")
    if kind == "static" and any(x is not None for x in np.ravel(np.asarray(chunked_prefill, dtype=object))):
        raise InvalidInputError("a static batch prefills its prompts together; use kind='serving' with chunked_prefill")
    if kind == "static" and sample_lengths is not None:
        raise InvalidInputError("a static batch has one length; use kind='serving' with sample_lengths")
    if kind == "static" and np.any(np.asarray(cached_fraction, dtype=float) != 0.0):
        raise InvalidInputError(
            "a static batch is timed without a prefix cache; use kind='serving' with cached_fraction"
        )
    for name, value, none in (
        ("frontend_s", frontend_s, 0.0), ("async_scheduling", async_scheduling, False),
        ("scheduler_steps", scheduler_steps, 1),
    ):  # fmt: skip
        if kind == "static" and np.any(np.asarray(value, dtype=float) != none):
            raise InvalidInputError(f"a static batch is timed as one engine call; use kind='serving' with {name}")
    o = Options.read(BenchmarkOptions, options, predict_benchmark)
    input_len = token_counts(input_len, "input_len", o.errors)  # "8k", "8,192": as planner plan --context reads them
    output_len = token_counts(output_len, "output_len", o.errors)
    opts = dict(
        engine=o.engine, catalog=o.catalog, calibration=o.calibration, errors=o.errors,
        parallelism=check_parallelism(o.parallelism),
    )  # fmt: skip
    prec = dict(weight_precision=o.weight_precision, kv_precision=o.kv_precision)
    gpus = o.gpus
    if kind == "static":
        return _static(gpu, model, input_len, output_len, batch, num_prompts, gpus, prec, opts, first_token_decode_step)
    if np.any(np.asarray(first_token_decode_step, dtype=bool)):
        raise InvalidInputError("first_token_decode_step is a static batch's rule; a serving run does not take it")
    return _serving(
        gpu, model, input_len, output_len, batch, num_prompts, request_rate, max_num_seqs,
        max_num_batched_tokens, scheduler, length_range_ratio, gpus, prec, opts, sample_lengths,
        (cached_fraction, frontend_s, async_scheduling, scheduler_steps), speculative, chunked_prefill,
    )  # fmt: skip


def _static(
    gpu, model, input_len, output_len, batch, num_prompts, gpus, prec, opts, decode_first=False
) -> BenchmarkRun:
    inp, out = np.maximum(_arr(input_len), 1.0), np.maximum(_arr(output_len), 1.0)
    b = _arr(batch)
    prompts = b if num_prompts is None else np.maximum(_arr(num_prompts), 1.0)
    conc = np.minimum(b, prompts)
    ttft = _arr(api.prefill(gpu, model, inp, gpus=gpus, batch=conc, **prec, **opts).ttft_s)
    decode_first = np.asarray(decode_first, dtype=bool)
    if np.any(decode_first):  # prefill of L - 1 tokens (none for one) + a decode step of the batch at context L
        head = _arr(api.prefill(gpu, model, np.maximum(inp - 1.0, 1.0), gpus=gpus, batch=conc, **prec, **opts).ttft_s)
        first = _arr(api.decode_step(gpu, model, inp, batch=conc, gpus=gpus, check_fit=False, **prec, **opts).step_s)
        ttft = np.where(decode_first, np.where(inp > 1.0, head, 0.0) + first, ttft)
    ctx = np.floor(inp + out / 2.0)
    # Not one sequence of the whole run on the group (the weights alone may not fit): the engine would not start, so
    # there is nothing to time (raises DoesNotFitError; NaN with errors="coerce"). A batch above it is timed.
    fits = _arr(api.max_batch(gpu, model, inp + out, gpus=gpus, **prec, **opts))
    step = _arr(api.decode_step(gpu, model, ctx, batch=conc, gpus=gpus, check_fit=False, **prec, **opts).step_s)
    ttft, tpot = np.where(fits >= 1, ttft, np.nan), np.where(fits >= 1, step, np.nan)
    duration = ttft + (out - 1.0) * tpot
    with np.errstate(divide="ignore", invalid="ignore"):  # a batch of 0 (a bad row, coerced): NaN, not a warning
        waves = np.ceil(prompts / conc)
        rate = waves * conc * out / (waves * duration)
    run = _finish(ttft, tpot, rate, conc / tpot, waves * duration, conc, ttft, tpot)
    shape = np.shape(run.tpot_s)
    return replace(run, max_batch=np.broadcast_to(fits, shape).astype(float) if shape else float(fits))


def _finish(ttft, tpot, rate, decode_rate, duration, conc, ttft_median, tpot_median) -> BenchmarkRun:
    vals = [
        np.asarray(v, dtype=float) for v in (ttft, tpot, rate, decode_rate, duration, conc, ttft_median, tpot_median)
    ]
    shape = np.broadcast(*vals).shape
    vals = [np.broadcast_to(v, shape).astype(float) for v in vals]
    return BenchmarkRun(*[v.item() if v.ndim == 0 else v for v in vals])


def _batch_grid(cap: int, graph_max_batch: float = 0.0, gap_above: float = 0.0) -> np.ndarray:
    """Batch sizes at which the decode step is computed: 1..64 exactly, then a geometric grid up to ``cap``, plus the
    engine's largest decode graph and the batch after it where both are inside (``graph_max_batch``: the profile's
    ``decode_graph_max_batch``, 0: none), so the eager surplus (``planner.model.decode.eager_surplus_s``) steps up
    between them, not across the grid points around them."""
    exact = np.arange(1, min(cap, EXACT_BATCHES) + 1, dtype=float)
    if cap <= EXACT_BATCHES:
        return exact
    grid = np.r_[exact, np.round(np.geomspace(EXACT_BATCHES, cap, GRID_BATCHES))]
    if EXACT_BATCHES <= graph_max_batch < cap:
        grid = np.r_[grid, math.floor(graph_max_batch), math.floor(graph_max_batch) + 1]
    if gap_above > 0:  # EXPERIMENT (h-p50): each graphed power of two, and the eager batches either side of it
        powers = 2.0 ** np.arange(math.ceil(math.log2(max(gap_above, EXACT_BATCHES))), math.log2(graph_max_batch) + 1)
        edges = np.r_[powers - 1, powers, powers + 1]
        grid = np.r_[grid, edges[(edges >= 1) & (edges <= cap)]]
    return np.unique(grid)


@dataclass(frozen=True)
class ServingSetup:
    """One serving run's deployment, ready to simulate: the step times, the engine's limits, the client."""

    table: StepTable
    scheduler: Scheduler
    cap: int  # the most sequences that can decode at once (slots and KV cache)
    num_prompts: int
    client_concurrency: int | None  # the client's limit (None: it sends every prompt when it arrives)
    #: attention ranks sharing the replica's traffic (``parallelism`` "dp-ep": one per GPU, or as many as the run has
    #: requests in flight when fewer; a pipeline: its micro-batch streams, one per stage; else 1). The setup is one
    #: rank: its cap, prompts, client limit, scheduler and KV cache are that rank's, and its step times those of a step
    #: every rank of the group runs alike (their MoE layers in lockstep, each holding as many sequences: an idle rank's
    #: share of the expert work is counted)
    ranks: int = 1


def check_run_size(num_prompts, max_num_batched_tokens, name: str = "num_prompts") -> None:
    """OutOfRangeError for a run of more than ``MAX_PROMPTS`` requests or a token budget over ``MAX_BATCHED_TOKENS``
    (values per run; None: not given): the simulation's time and memory grow with both."""

    def largest(values) -> float:
        x = np.array([float(v) if v is not None else 0.0 for v in np.ravel(np.asarray(values, dtype=object))])
        return float(np.nan_to_num(x, nan=0.0).max()) if x.size else 0.0

    if (worst := largest(num_prompts)) > MAX_PROMPTS:
        raise OutOfRangeError(f"{name} {worst:,.0f} is above {MAX_PROMPTS:,}, the most a run is simulated with")
    if (worst := largest(max_num_batched_tokens)) > MAX_BATCHED_TOKENS:
        raise OutOfRangeError(f"max_num_batched_tokens {worst:,.0f} is above {MAX_BATCHED_TOKENS:,}, the most accepted")


def serving_setups(
    gpu,
    model,
    input_len,
    output_len,
    batch,
    num_prompts,
    max_num_seqs,
    max_tokens,
    scheduler,
    lengths,
    gpus,
    prec,
    opts,
    chunked_prefill=None,
) -> tuple[tuple[int, ...], list[ServingSetup | None], list]:
    """Deployments of serving runs (arguments broadcast; ``lengths``: per run, each request's (prompt, output) or
    None; ``chunked_prefill``: per run, ``Scheduler.chunked_prefill``), every step table in two model calls: (shape,
    one ``ServingSetup`` or None per run, the flat GPU and model names). None where not one sequence fits or the
    memory plan failed (``errors="coerce"``). ``opts["parallelism"]`` "dp-ep": each setup is one of the group's
    attention ranks (``ServingSetup.ranks``), with its share of the prompts, of the client's concurrency and of the
    KV cache; a pipeline ("pp", "ppN"): one of its micro-batch streams, likewise (and its share of the engine's
    sequence limit unless ``EngineProfile.pipeline_seqs_per_micro_batch``)."""
    cat = opts["catalog"] or default_catalog()
    eng = engine_profile(opts["engine"])
    opts = {**opts, "engine": eng, "catalog": cat, "parallelism": check_parallelism(opts.get("parallelism"))}
    items = np.broadcast_arrays(
        *[np.asarray(x, dtype=object) for x in (gpu, model, input_len, output_len, batch, num_prompts)],
        *[np.asarray(x, dtype=object) for x in (max_num_seqs, max_tokens, gpus, *prec.values(), scheduler)],
    )
    shape = items[0].shape
    flat = [a.ravel() for a in items]
    n = flat[0].size
    lengths = list(np.broadcast_to(np.asarray(lengths, dtype=object) if lengths is not None else None, shape).ravel())
    chunked = [
        None if x is None else bool(x)
        for x in np.broadcast_to(np.asarray(chunked_prefill, dtype=object), shape).ravel()
    ]
    g, m = flat[0], flat[1]
    inp = np.maximum(np.array(flat[2], dtype=float), 1.0)
    out = np.maximum(np.array(flat[3], dtype=float), 1.0)
    client = np.array([0.0 if x is None else float(x) for x in flat[4]])
    prompts = np.array([max(float(p if p is not None else c), 1.0) for p, c in zip(flat[5], client, strict=True)])
    check_run_size(prompts, flat[7])
    precs = dict(weight_precision=flat[9], kv_precision=flat[10])
    # the group (given, or the smallest holding one whole sequence) and how many whole sequences its KV holds
    given = None if all(x is None for x in flat[8]) else np.array(flat[8], dtype=float)
    group, fits, kv_tokens = _memory_by_budget(g, m, inp + out, given, precs, opts, flat[7])
    pools = int(eng.dp_attention_kv_ranks) if opts["parallelism"] == "tp" else 0
    if pools > 1:  # EXPERIMENT (h-dsk042): SGLang's attention-DP ranks, each its own KV pool, steps as tensor parallel
        fits, kv_tokens = _dp_attention_pools(g, m, inp + out, group, precs, opts, flat[7])
    # data-parallel attention or a pipeline: one rank (micro-batch stream) of g is simulated, holding 1/g of the
    # group's sequences and KV cache
    ranks = np.asarray(streams_of(opts["parallelism"], np.where(np.isfinite(group), group, 1.0))) * np.ones(n)
    shared_seqs = is_pipeline(opts["parallelism"]) and not eng.pipeline_seqs_per_micro_batch
    fits, kv_tokens = np.floor(fits / ranks), kv_tokens / ranks
    # ranks with requests: fewer than the group where the run sends fewer prompts, or keeps fewer in flight
    active = np.minimum(ranks, np.where((client > 0) & (client < prompts), client, prompts))
    prompts, client = np.ceil(prompts / active), np.ceil(client / active)
    caps = np.full(n, math.nan)
    sched_seqs = np.zeros(n)
    budgets = np.zeros(n)
    kinds = [str(x or "vllm").lower() for x in flat[11]]
    for i in range(n):
        if kinds[i] not in SCHEDULERS:
            raise InvalidInputError(f"scheduler {flat[11][i]!r} is not known; use one of {', '.join(SCHEDULERS)}")
        if not (np.isfinite(group[i]) and fits[i] >= 1):
            continue  # the memory plan failed (errors="coerce"), or not one sequence fits
        tokens, seqs = _limits(cat, eng, kinds[i], g[i], m[i], kv_tokens[i], flat[6][i], flat[7][i], pools)
        if shared_seqs:  # one limit for every micro-batch in flight: a stream's share of it
            seqs = max(1, int(seqs // ranks[i]))
        seqs = min(seqs, prompts[i], client[i] if 0 < client[i] < prompts[i] else seqs)
        kv_tokens[i] *= context_tokens_factor(cat, eng, m[i], lengths[i], inp[i], out[i])
        block = reservation_block_tokens(kinds[i], eng)
        if block > 1:  # a pool of whole blocks
            kv_tokens[i] = kv_tokens[i] // block * block
        shortest = min(p for p, _ in lengths[i]) if lengths[i] else inp[i]
        caps[i] = min(seqs, max(fits[i], kv_tokens[i] // shortest))  # the most that can decode at once
        sched_seqs[i] = seqs
        budgets[i] = tokens
    setups: list[ServingSetup | None] = [None] * n
    idx = np.flatnonzero(np.isfinite(caps) & np.isfinite(group))
    if len(idx):
        tables = _step_tables(
            g[idx], m[idx], inp[idx], out[idx], caps[idx], budgets[idx], group[idx], ranks[idx], precs, idx, opts
        )
        for table, i in zip(tables, idx, strict=True):
            if table is not None and kinds[i] == "sglang":  # its extend steps launched eagerly (0 where graphed)
                mod = cat.model(m[i])
                host = sglang_prefill_host_s(eng, cat.gpu(g[i]).vendor, mod.num_layers, mod.moe_layers)
                layer_s = mla_host_moe_layer_s(mod) if host > 0 else None  # h-mla, h-b200moe
                if layer_s is not None:
                    from planner.engines.profiles import SGLANG_HOST_MOE_LAYER_S

                    host += (layer_s - SGLANG_HOST_MOE_LAYER_S) * mod.moe_layers
                table = replace(table, prefill_host_s=host) if host > 0 else table
                if host == 0 and SGLANG_PIECEWISE_COVERAGE:  # EXPERIMENT (h-ttftp50): steps the graph does not cover
                    host, above = sglang_piecewise_host_s(
                        eng,
                        cat.gpu(g[i]).vendor,
                        mod.num_layers,
                        mod.moe_layers,
                        mod.mla is not None,
                        sglang_piecewise_refused(mod),
                    )
                    if host > 0:
                        table = replace(table, prefill_host_s=host, prefill_host_above_tokens=above)
            elif table is not None and kinds[i] == "tensorrt-llm":  # EXPERIMENT (h-load): its context steps eager
                mod = cat.model(m[i])
                host = eager_context_host_s(eng, mod.num_layers, mod.moe_layers)
                table = replace(table, prefill_host_s=host) if host > 0 else table
            if table is not None and MLA_PREFILL_MODULE_BOUND:  # EXPERIMENT (h-mla): the MLA module's upper bound
                extra = mla_prefill_module_s(
                    cat.gpu(g[i]), cat.model(m[i]), group[i] / ranks[i], precs["kv_precision"][i], table.prefill_tokens
                )
                if extra is not None:
                    table = replace(table, prefill_s=tuple(float(x) for x in np.add(table.prefill_s, extra)))
            if table is not None and MLA_PREFILL_MODULE:  # EXPERIMENT (h-mla, Test 3): the module in place
                inp_i = float(max(float(flat[2][i]), 1.0))
                k_rows = [(1.0, 1.0)] + [(t / inp_i, inp_i) for t in table.prefill_tokens[1:]]
                delta = mla_prefill_module_delta_s(
                    cat, eng, cat.gpu(g[i]), cat.model(m[i]), float(group[i] / ranks[i]),
                    precs["weight_precision"][i], precs["kv_precision"][i], k_rows,
                )  # fmt: skip
                if delta is not None:
                    table = replace(table, prefill_s=tuple(float(x) for x in np.add(table.prefill_s, delta)))
            if table is not None:
                sched = Scheduler(
                    int(sched_seqs[i]), int(budgets[i]), kind=kinds[i], kv_tokens=float(kv_tokens[i]),
                    chunked_prefill=False if chunked[i] is None and eng.prefill_only_steps else chunked[i],
                    block_tokens=reservation_block_tokens(kinds[i], eng),
                )  # fmt: skip
                conc = int(client[i]) if 0 < client[i] < prompts[i] else None
                setups[i] = ServingSetup(table, sched, int(caps[i]), int(prompts[i]), conc, int(active[i]))
    return shape, setups, [g, m, inp, out]


def _memory_by_budget(g, m, context, given, precs, opts, budgets) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(group, whole sequences that fit, KV cache tokens) per run: one memory plan per token budget the runs' servers
    were given, the engine profiled at that budget (``planner.engines.profiles.profiled_at_token_budget``:
    TensorRT-LLM 1.x sizes its cache after a forward pass of its ``max_num_tokens``); runs given none, and engines
    that profile at their own tokens, share one plan."""
    eng = opts["engine"]
    follows = eng.name in TOKEN_BUDGET_PROFILED
    keys = [int(b) if follows and b is not None else 0 for b in budgets]
    out = [np.full(len(keys), math.nan) for _ in range(3)]
    for key in sorted(set(keys)):
        idx = np.array([i for i, k in enumerate(keys) if k == key])
        sub = {k: np.asarray(v, dtype=object)[idx] for k, v in precs.items()}
        plan = api.memory_plan(
            g[idx], m[idx], context[idx], gpus=None if given is None else given[idx], **sub,
            **_memory_opts({**opts, "engine": profiled_at_token_budget(eng, key or None)}),
        )  # fmt: skip
        for arr, value in zip(out, (plan.gpus, plan.max_batch, plan.kv_cache_tokens), strict=True):
            arr[idx] = _arr(value)
    return out[0], out[1], out[2]


def _serving(
    gpu, model, input_len, output_len, batch, num_prompts, request_rate, max_num_seqs, max_tokens, scheduler,
    range_ratio, gpus, prec, opts, given_lengths=None, run_settings=(0.0, 0.0, False, 1), speculative=None,
    chunked_prefill=None,
) -> BenchmarkRun:  # fmt: skip
    args = np.broadcast_arrays(
        *[np.asarray(x, dtype=object) for x in (input_len, output_len, batch, num_prompts, request_rate, scheduler)],
        np.asarray(range_ratio, dtype=object),
        *[np.asarray(x, dtype=float) for x in run_settings],
    )
    inp_, out_, batch_, prompts_, rate_, sched_, ratio_, cached_, front_, async_, steps_ = [a.ravel() for a in args]
    check_run_size([p if p is not None else b for p, b in zip(prompts_, batch_, strict=True)], max_tokens)
    lengths = np.empty(inp_.size, dtype=object)
    given = _per_run(given_lengths, args[0].shape)
    for i, r in enumerate(ratio_):
        if given[i] is not None:
            lengths[i] = [(max(int(p), 1), max(int(o), 1)) for p, o in given[i]]
        elif r is not None and str(sched_[i] or "vllm").lower() in SCHEDULERS:
            prompts = int(max(float(prompts_[i] if prompts_[i] is not None else batch_[i] or 0), 1.0))
            inp, out = max(float(inp_[i]), 1.0), max(float(out_[i]), 1.0)
            lengths[i] = request_lengths(inp, out, prompts, float(r))
    if speculative is not None:  # a run drafting with MTP serves the model with its MTP layers loaded
        specs0 = _per_run(speculative, args[0].shape, "speculative")
        served = np.broadcast_to(np.asarray(model, dtype=object), args[0].shape).ravel()
        model = np.array(
            [served_model(x, s, opts["catalog"]) for x, s in zip(served, specs0, strict=True)], dtype=object
        ).reshape(args[0].shape)
    shape, setups, (g, m, inp, out) = serving_setups(
        gpu, model, args[0], output_len, batch, num_prompts, max_num_seqs, max_tokens, scheduler,
        lengths.reshape(args[0].shape), gpus, prec, opts, chunked_prefill,
    )  # fmt: skip
    rate = np.broadcast_to(np.array([math.nan if x is None else float(x) for x in rate_]).reshape(args[0].shape), shape)
    rate = rate.ravel()
    lengths = np.broadcast_to(lengths.reshape(args[0].shape), shape).ravel()
    cached, front, overlap, steps = (
        np.broadcast_to(x.reshape(args[0].shape), shape).ravel() for x in (cached_, front_, async_, steps_)
    )
    if not ((cached >= 0.0) & (cached < 1.0)).all():
        raise InvalidInputError("cached_fraction must be at least 0 and below 1, the share of a prompt cached")
    if not ((front >= 0.0) & np.isfinite(front)).all():
        raise InvalidInputError("frontend_s must be a finite number of seconds of 0 or more")
    if not ((steps >= 1) & (steps == np.floor(steps))).all():
        raise InvalidInputError("scheduler_steps must be a whole number of 1 or more")
    scheds = np.broadcast_to(sched_.reshape(args[0].shape), shape).ravel()
    specs = np.empty(args[0].size, dtype=object)
    specs[:] = _per_run(speculative, args[0].shape, "speculative")
    specs = np.broadcast_to(specs.reshape(args[0].shape), shape).ravel()
    weights = np.broadcast_to(np.asarray(prec["weight_precision"], dtype=object), shape).ravel()
    res = np.full((8, len(setups)), math.nan)
    for i, s in enumerate(setups):
        if s is None:
            continue
        s = speculative_setup(s, specs[i], m[i], weights[i], opts["catalog"])
        asked = RunBehaviour(
            float(cached[i]),
            frontend_s=float(front[i]),
            async_scheduling=bool(overlap[i]),
            scheduler_steps=int(steps[i]),
        )
        behaviour = engine_behaviour(opts["engine"], scheds[i], asked, specs[i])
        sent = None
        if not math.isnan(rate[i]) and rate[i] > 0 and math.isfinite(rate[i]):  # one rank takes 1 / ranks of it
            sent = arrival_times_s(s.num_prompts, rate[i] / s.ranks) + behaviour.frontend_s
        mine = lengths[i][:: s.ranks] if lengths[i] is not None else None  # a rank's requests: every ranks-th
        r = simulate(
            s.table, s.scheduler, int(inp[i]), int(out[i]), s.num_prompts,
            arrivals_s=sent, client_concurrency=s.client_concurrency, lengths=mine, behaviour=behaviour,
        )  # fmt: skip
        peak = max(1, min(r.peak_running, s.cap))
        steady = peak / s.table.decode_s(peak, inp[i] + out[i] / 2.0)
        res[:, i] = (
            r.ttft_mean_s,
            r.tpot_mean_s,
            r.run_output_tokens_per_s * s.ranks,
            steady * s.ranks,
            r.duration_s,
            peak * s.ranks,
            *(float(weighted_percentile(x, 50.0)) for x in (r.samples.ttft, r.samples.tpot)),
        )
    if opts["errors"] == "raise" and np.isnan(res[0]).any():
        bad = int(np.flatnonzero(np.isnan(res[0]))[0])
        raise InvalidInputError(
            f"no serving run for {g[bad]} / {m[bad]}: not one sequence of {int(inp[bad] + out[bad])} tokens fits"
        )
    vals = [v.reshape(shape) for v in res]
    return BenchmarkRun(*[v.item() if v.ndim == 0 else v for v in vals])


def speculative_setup(
    setup: ServingSetup, speculative: Any, model: Any, weight_precision: Any = None, catalog: Any = None
) -> ServingSetup:
    """``setup`` decoding speculatively: its decode rows become whole speculative steps
    (``planner.serving.speculative.speculative_table``: draft passes scaled by draft bytes / the target's weight
    bytes, one verify pass); unchanged when ``speculative`` is None. The rule both paths use (``predict_benchmark``,
    ``planner.serving.load.Replica.setup``)."""
    if speculative is None:
        return setup
    return replace(
        setup,
        table=speculative_table(setup.table, speculative, draft_ratio(speculative, model, weight_precision, catalog)),
    )


def draft_ratio(speculative: Any, model: Any, weight_precision: Any = None, catalog: Any = None) -> float:
    """A draft pass's time over the target's decode step of as many sequences (``speculative_table``). MTP: its
    layers' share of the target's layers, draft_layers / num_layers (DeepSeek-R1: 1 / 61), each timed as a decoder
    layer of the target by the same operator model (the decode step at that batch and context: attention over the
    context, the experts that batch touches, the all-reduce), its own output head left in the share the step's head
    and overheads take. Otherwise the draft's bytes over the target's weight bytes (a pass reads the draft's weights
    and runs the target's kinds of kernels)."""
    if speculative.method == "mtp":
        cat = catalog or default_catalog()
        return float(speculative.draft_layers) / float(cat.model(model).num_layers)
    target_bytes = float(api.weight_bytes(model, precision=weight_precision, catalog=catalog))
    return speculative.draft_bytes / target_bytes


def _per_run(given: Any, shape: tuple[int, ...], name: str = "sample_lengths") -> list:
    """``sample_lengths`` (or ``speculative``, ``name``) as one entry per run (None or a list of (prompt, output)
    pairs; None or a speculation), flat in ``shape``'s order: scalar inputs take one run's; array inputs one per run."""
    size = int(np.prod(shape))
    if given is None:
        return [None] * size
    if shape == ():
        return [given]
    if len(given) != size:
        raise InvalidInputError(
            f"{name} has {len(given)} runs; give one {'list of (prompt, output)' if name == 'sample_lengths' else 'entry'} "
            f"per run ({size})"
        )
    return list(given)


#: ``--random-range-ratio`` readers: vLLM (``vllm/benchmarks/datasets.py`` ``RandomDataset``, since 2025) draws
#: uniform integers in [floor(L (1 - r)), ceil(L (1 + r))], mean L; SGLang (``python/sglang/bench_serving.py``
#: ``sample_random_requests``) and vLLM before 2025 draw in [max(int(L r), 1), L], mean L (1 + r) / 2.
RANGE_READERS = ("vllm", "sglang")


def range_ratio_bounds(length: float, range_ratio: float, reader: str) -> tuple[int, int]:
    """The whole-token interval a benchmark given ``--random-...-len`` L and ``--random-range-ratio`` r draws a length
    in, as ``reader`` (``RANGE_READERS``) reads r; at least 1 token."""
    if reader == "vllm":
        return max(math.floor(length * (1 - range_ratio)), 1), max(math.ceil(length * (1 + range_ratio)), 1)
    return max(int(length * range_ratio), 1), max(int(length), 1)


def uniform_lengths(
    prompt_bounds: tuple[int, int], output_bounds: tuple[int, int], num_prompts: int, seed: int, stream: int
) -> list[tuple[int, int]]:
    """Each request's (prompt, output) tokens, uniform integers within the inclusive bounds, drawn from the generator
    seeded [``seed``, ``stream``] (a stream per caller keeps each caller's draws as they were)."""
    rng = np.random.default_rng([seed, stream])
    drawn = [rng.integers(low, high + 1, size=num_prompts) for low, high in (prompt_bounds, output_bounds)]
    return list(zip(drawn[0].tolist(), drawn[1].tolist(), strict=True))


def request_lengths(input_len: float, output_len: float, num_prompts: int, range_ratio: float) -> list[tuple[int, int]]:
    """Each request's (prompt, output) tokens as ``sglang.bench_serving --random-range-ratio r`` draws them: uniform
    integers from r x top (at least 1) to top (``sample_random_requests``), the tops chosen so that the means are
    ``input_len`` / ``output_len`` (what a run's totals give), drawn with a fixed seed (``ARRIVAL_SEED``)."""
    if not 0.0 <= range_ratio <= 1.0:
        raise InvalidInputError(f"length_range_ratio {range_ratio!r} is not a fraction; use 0 to 1")
    prompt_top, output_top = (max(1, round(2.0 * mean / (1.0 + range_ratio))) for mean in (input_len, output_len))
    bounds = (range_ratio_bounds(top, range_ratio, "sglang") for top in (prompt_top, output_top))
    return uniform_lengths(*bounds, num_prompts, seed=ARRIVAL_SEED, stream=1)


def reservation_block_tokens(kind: str, engine: EngineProfile) -> int:
    """The block each request's reservation is rounded up to under scheduler ``kind`` (``Scheduler.block_tokens``):
    TensorRT-LLM's ``GUARANTEED_NO_EVICT`` reserves whole KV blocks of the engine's ``block_size`` (32,
    ``KvCacheConfig.tokens_per_block``) to completion, request by request; other kinds reserve tokens (1)."""
    return int(engine.block_size) if kind == "tensorrt-llm" else 1


def context_tokens_factor(cat, eng, model_name, lengths, input_len: float, output_len: float) -> float:
    """Context tokens the engine's cache holds per token of its logged size, for a model with sliding-window layers
    (the simulation holds a request's whole context, as for full attention): vLLM's hybrid manager
    (``engine.kv_group_padding``) at the run's requests' mean contexts (``vllm_sliding_tokens_factor``); SGLang
    (``memory_fraction_rule`` set) its full-attention pool (``sglang_full_pool_factor``) where the release splits the
    pools for that model (``sglang_splits_sliding_pool``: not gpt-oss before 0.5.10, never Gemma 2/3 up to 0.5.19);
    otherwise 1."""
    # imported here: the Excel add-in's lite bundle takes every module its process imports (docs/excel.md's size)
    from planner.engines.architecture import model_facts
    from planner.engines.sglang import sglang_splits_sliding_pool
    from planner.model.memory import sglang_full_pool_factor, vllm_sliding_tokens_factor

    model = cat.model(model_name)
    facts = model_facts(model)
    if not float(facts.sliding_window_layers) > 0:
        return 1.0
    if eng.kv_group_padding:
        pairs = lengths or [(input_len, output_len)]
        return vllm_sliding_tokens_factor(facts, [p + o / 2.0 for p, o in pairs], eng.block_size)
    if eng.memory_fraction_rule and sglang_splits_sliding_pool(eng.memory_fraction_rule, model.family):
        return sglang_full_pool_factor(facts)
    return 1.0


def _dp_attention_pools(g, m, context, group, precs, opts, budgets) -> tuple[np.ndarray, np.ndarray]:
    """(whole sequences that fit, KV cache tokens) of ``group`` GPUs as SGLang's attention-DP ranks hold them, each
    GPU its own requests' cache beside the replicated attention weights: the memory plan at "dp-ep", summed over the
    ranks (h-dsk042; docs/hypotheses/sglang-dp-attention-kv-pool.md). NaN where the group is not known."""
    known = np.isfinite(group)
    at = np.where(known, group, 1.0)
    _, fits, kv_tokens = _memory_by_budget(g, m, context, at, precs, {**opts, "parallelism": "dp-ep"}, budgets)
    return np.where(known, fits, math.nan), np.where(known, kv_tokens, math.nan)


def _memory_opts(opts: dict) -> dict:
    return {k: opts[k] for k in ("engine", "catalog", "calibration", "errors", "parallelism")}


def _limits(cat, eng, kind, gpu_name, model_name, kv_tokens, seqs, tokens, pools: int = 0) -> tuple[int, int]:
    """(max_num_batched_tokens, max_num_seqs): the given values, else the engine's defaults on that GPU. ``pools`` R
    > 1: SGLang's attention-DP ranks, each with its own default slots from its own pool (``kv_tokens`` / R), R of
    them (0.4.3.post2 ``managers/tp_worker.py`` l.101-109; h-dsk042)."""
    g = cat.gpu(gpu_name)
    if kind == "sglang":  # the profile's release (its memory rule), else the newest read
        rule = eng.memory_fraction_rule or "sglang-0.5.20"
        r = max(int(pools), 1)
        slots = r * sglang_max_running_requests(kv_tokens / r, cat.model(model_name).max_context, rule)
        default_tokens, default_seqs = sglang_chunked_prefill_size(g.memory_bytes / MiB, rule), slots
    else:
        default_tokens, default_seqs = eng.batching_limits(g.memory_bytes, g.engine_device_name)
    return int(tokens or default_tokens) // eng.prefill_chunk_divisor, int(seqs or default_seqs)


def _step_tables(g, m, inp, out, caps, budgets, group, ranks, precs, idx, opts) -> list[StepTable | None]:
    """One ``StepTable`` per run: decode steps on a batch grid at the first and last context, prefill steps of
    whole prompts (1..K of them, K covering the token budget) and of a one-token prompt, all in two model calls.
    With ``ranks`` > 1 (data-parallel attention, a pipeline's streams) a row is one rank's batch, every rank running
    as many: the model is asked for ``ranks`` x the batch on the group (``planner.model.parallel``,
    ``planner.model.pipeline``)."""
    d_rows, p_rows = [], []
    graph_max_batch = float(opts["engine"].decode_graph_max_batch)  # SGLang 0.4's eager steps above it (s123)
    gap_above = float(opts["engine"].decode_graph_gap_above)  # EXPERIMENT (h-p50): eager between the powers of two
    for j in range(len(idx)):
        for b in _batch_grid(int(caps[j]), graph_max_batch, gap_above):
            d_rows += [(j, b, inp[j]), (j, b, inp[j] + out[j])]
        k_max = max(1, math.ceil(budgets[j] / inp[j]))
        p_rows += [(j, 1.0, 1.0)] + [(j, float(k), inp[j]) for k in range(1, k_max + 1)]
    dj = np.array([r[0] for r in d_rows])
    pj = np.array([r[0] for r in p_rows])
    sel = {k: v[idx] for k, v in precs.items()}
    dec = _arr(
        api.decode_step(
            g[dj], m[dj], np.array([r[2] for r in d_rows]), batch=np.array([r[1] for r in d_rows]) * ranks[dj],
            gpus=group[dj], check_fit=False, weight_precision=sel["weight_precision"][dj],
            kv_precision=sel["kv_precision"][dj], **{**opts, "errors": "coerce"},
        ).step_s
    )  # fmt: skip
    # a prefill of k prompts is timed on the group regardless of memory (check_fit=False), as the decode steps are:
    # the rows cover the token budget (8,192 for vLLM), more prompts than a small KV cache holds at once (H100 x 1
    # Llama-3.1-70B fp8: 5 of 800 tokens), which the run's scheduler never prefills together; refused, they left the
    # replica without a step table ("not one fits") though 3 whole requests fit
    pre = _arr(
        api.prefill(
            g[pj], m[pj], np.array([r[2] for r in p_rows]),
            batch=np.array([r[1] for r in p_rows]) * ranks[pj], gpus=group[pj], check_fit=False,
            weight_precision=sel["weight_precision"][pj], kv_precision=sel["kv_precision"][pj],
            **{**opts, "errors": "coerce"},
        ).ttft_s
    )  # fmt: skip
    tables = []
    for j in range(len(idx)):
        grid = _batch_grid(int(caps[j]), graph_max_batch, gap_above)
        dsel = dec[dj == j].reshape(-1, 2)
        psel = pre[pj == j]
        if np.isnan(dsel).any() or np.isnan(psel).any():
            tables.append(None)
            continue
        every = np.arange(1, int(caps[j]) + 1, dtype=float)
        lo, hi = np.interp(every, grid, dsel[:, 0]), np.interp(every, grid, dsel[:, 1])
        tokens = np.r_[0.0, np.arange(1, len(psel)) * inp[j]]
        tables.append(
            StepTable(
                decode_lo_s=tuple(lo.tolist()),
                decode_hi_s=tuple(hi.tolist()),
                ctx_lo_tokens=float(inp[j]),
                ctx_hi_tokens=float(inp[j] + out[j]),
                prefill_tokens=tuple(tokens.tolist()),
                prefill_s=tuple(psel.tolist()),
                shared_s=float(min(lo[0], psel[0])),
            )
        )
    return tables


def benchmark_kind(batching: str) -> tuple[str, bool]:
    """(kind, all at once) from a benchmark table's description of how prompts were sent."""
    text = str(batching or "").lower()
    if "static" in text:
        return "static", False
    if "rate" in text or "poisson" in text:
        return "serving", False
    if any(w in text for w in ("at once", "together", "concurren", "serving", "continuous")):
        return "serving", True
    return "static", False


def mean_context(input_len: float, output_len: float) -> int:
    """The mean context over a generation, ``input + output / 2`` (whole tokens): where TPOT is predicted."""
    return int(input_len + math.floor(output_len / 2))
