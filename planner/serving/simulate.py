"""A serving benchmark run, step by step: how a continuous-batching engine schedules N requests.

The scheduler is vLLM v1's (``vllm/v1/core/sched/scheduler.py``), with SGLang's and TensorRT-LLM's variants
(``Scheduler``): every step has a token budget (``max_num_batched_tokens``); the running requests are scheduled
first, each decoding request taking one token of it, then requests still prefilling take the next chunk of
their prompt; waiting requests are admitted first come first served while budget, a sequence slot
(``max_num_seqs``) and KV cache remain, their first chunk in the same step. A request's first token comes at
the end of the step that finishes its prompt; it then decodes one token per step until its output is complete.
KV is held token by token as the engines hold it, not reserved for whole sequences: vLLM preempts the newest
request when a decode finds no free slot, SGLang admits against an estimate of the running requests' future
output and retracts on overflow (``Scheduler``), so at high concurrency more sequences run at once than whole
sequences fit.

Requests with identical progress move together as one cohort (a run of one length, or a run of each length of
a dataset), and stretches of decode-only steps between two events (an arrival, a request finishing, the KV
cache full) are summed in closed form, so a run costs a few iterations per request, not one per step.

The step time comes from the model (``StepTable``, built by ``planner.serving.benchmark``): decode steps of b
sequences at the mean context, prefill steps of p prompt tokens; a step with both pays the decode step plus
the prefill's work beyond the weights read and overheads that both share (``StepTable.step_s``).

Figures are as ``vllm bench serve`` reports them: TTFT from a request's arrival at the server to its first
token (a client limited to ``--max-concurrency`` sends a request when one finishes, so its own wait is not
counted); TPOT = (latency - TTFT) / (output tokens - 1) per request; output throughput = every output token
over the run's duration (first arrival to last completion).
"""

from __future__ import annotations

import heapq
import itertools
import math
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np

from planner.serving.state import Run, arrived, queued, requests


@dataclass(frozen=True)
class StepTable:
    """Step times of one deployment and run shape, tabulated from the model (seconds).

    ``decode_lo_s[b - 1]`` / ``decode_hi_s[b - 1]``: a decode step of b sequences whose mean context is
    ``ctx_lo_tokens`` / ``ctx_hi_tokens`` (linear in between: decode time is linear in the context).
    ``prefill_s``: a step that prefills ``prefill_tokens`` prompt tokens alone (interpolated in between).
    ``shared_s``: what a decode step and a prefill step both pay once when they run as one step (the
    weights read, per-step overheads): the smaller of a one-sequence decode step and a one-token prefill.
    """

    decode_lo_s: tuple[float, ...]
    decode_hi_s: tuple[float, ...]
    ctx_lo_tokens: float
    ctx_hi_tokens: float
    prefill_tokens: tuple[float, ...]
    prefill_s: tuple[float, ...]
    shared_s: float
    #: the host's time to launch a prefill step kernel by kernel, seconds: a prefill step run outside any CUDA graph
    #: (SGLang's extend before 0.5.10, and on AMD: ``planner.engines.profiles.sglang_prefill_host_s``; with
    #: ``planner.serving.benchmark.TRTLLM_EAGER_CONTEXT``, TensorRT-LLM's PyTorch context steps, prefill-only or mixed:
    #: ``planner.serving.benchmark.eager_context_host_s``) takes at least this long, less what the step before it
    #: hides under an overlapping scheduler (``simulate``); 0: none.
    prefill_host_s: float = 0.0
    #: ``prefill_host_s`` applies only to a step of more prompt tokens than this (SGLang's piecewise prefill graph covers
    #: the smaller ones: ``planner.serving.benchmark.SGLANG_PIECEWISE_COVERAGE``, EXPERIMENT h-ttftp50); 0: every step
    prefill_host_above_tokens: float = 0.0
    #: ``prefill_alone_s`` answers by prompt tokens: a run's steps prefill the same few chunk sizes again and again
    #: (the same ``numpy.interp`` on the same numbers, asked once). Not compared, hashed or given.
    _prefill_memo: dict = field(default_factory=dict, init=False, repr=False, compare=False)
    #: the tables as arrays, made once (``arrays``): ``numpy.interp`` given a tuple converts it on every call, and the
    #: vectorized approximation (``planner.serving.approx``) asks a table thousands of times. Not compared or given.
    _arrays: dict = field(default_factory=dict, init=False, repr=False, compare=False)

    def arrays(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(batch grid 1..n, ``decode_lo_s``, ``decode_hi_s``, ``prefill_tokens``, ``prefill_s``) as float arrays."""
        if not self._arrays:
            n = len(self.decode_lo_s)
            self._arrays["all"] = (
                np.arange(1, n + 1, dtype=float),
                np.asarray(self.decode_lo_s, dtype=float),
                np.asarray(self.decode_hi_s, dtype=float),
                np.asarray(self.prefill_tokens, dtype=float),
                np.asarray(self.prefill_s, dtype=float),
            )
        return self._arrays["all"]

    def prefill_alone_s(self, prefill_tokens: float) -> float:
        """A step that prefills ``prefill_tokens`` prompt tokens alone: ``prefill_s`` interpolated linearly."""
        pre = self._prefill_memo.get(prefill_tokens)
        if pre is None:
            if len(self._prefill_memo) >= 4096:  # a run of many distinct prompt chunks: keep memory bounded
                self._prefill_memo.clear()
            pre = self._prefill_memo[prefill_tokens] = float(
                np.interp(prefill_tokens, self.prefill_tokens, self.prefill_s)
            )
        return pre

    def decode_s(self, batch: int, mean_context: float) -> float:
        i = min(batch, len(self.decode_lo_s)) - 1  # (the table covers every batch the run can reach)
        lo, hi = self.decode_lo_s[i], self.decode_hi_s[i]
        span = self.ctx_hi_tokens - self.ctx_lo_tokens
        return lo + (hi - lo) * (mean_context - self.ctx_lo_tokens) / span if span > 0 else lo

    def decode_slope_s(self, batch: int) -> float:
        """d(decode step) / d(mean context), seconds per token of context."""
        span = self.ctx_hi_tokens - self.ctx_lo_tokens
        i = min(batch, len(self.decode_lo_s)) - 1
        return (self.decode_hi_s[i] - self.decode_lo_s[i]) / span if span > 0 else 0.0

    def step_s(self, batch: int, mean_context: float, prefill_tokens: float) -> float:
        """One step: ``batch`` decoding sequences and ``prefill_tokens`` prompt tokens.

        decode + prefill - shared, at least the larger of the two alone: the weights are read once, decode's
        attention (memory-bound) and the prefill's matmuls (compute-bound) run one after the other.
        """
        dec = self.decode_s(batch, mean_context) if batch > 0 else 0.0
        if prefill_tokens <= 0:
            return dec
        pre = self.prefill_alone_s(prefill_tokens)
        return pre if batch <= 0 else max(dec, pre, dec + pre - self.shared_s)


class TracedStep(NamedTuple):
    """One scheduled step of a traced run (``simulate(trace=...)``): it started at ``start_s`` and took ``dt_s`` (a
    stretch of ``steps`` decode-only steps summed in closed form; 0 for SGLang's prefill-only step), with ``batch``
    requests decoding and ``prefill_tokens`` prompt tokens computed; ``firsts``: (sent at the engine, how many,
    prompt tokens computed) of the requests whose first token it made."""

    start_s: float
    dt_s: float
    steps: int
    batch: int
    prefill_tokens: int
    firsts: tuple[tuple[float, int, int], ...]


#: SGLang's estimate of the output a running request has still to produce, as a fraction of what it may: 0.7 at
#: start and after an idle spell, falling by (0.7 - 0.7 x 0.14) / 600 each decode step to 0.7 x 0.14
#: (``python/sglang/srt/global_config.py``: default_init_new_token_ratio, default_min_new_token_ratio_factor,
#: default_new_token_ratio_decay_steps; ``--schedule-conservativeness`` 1).
SGLANG_NEW_TOKEN_RATIO = (0.7, 0.7 * 0.14, 600)
#: SGLang clips a request's output at this many tokens in its memory estimates (``CLIP_MAX_NEW_TOKENS``).
SGLANG_CLIP_NEW_TOKENS = 4096
#: After a retraction SGLang keeps this many decode steps of KV free per running request (``retract_decode_steps``).
SGLANG_RETRACT_STEPS = 20
#: EXPERIMENT (h-r3, docs/hypotheses/burst-tpot-skew.md): SGLang latches admission once it stops for want of KV (the
#: ``PrefillAdder``'s ``NO_TOKEN``: a waiting prompt plus its whole output does not fit beside ``new_token_ratio`` x
#: the running requests' remaining output) or of a sequence slot: ``running_batch.batch_is_full`` is set and
#: ``get_new_batch_prefill`` starts no prefill batch (a chunked request's next chunk aside) until a request leaves the
#: running batch (finished or retracted) or nothing runs (0.5.5.post1 ``managers/scheduler.py`` l.1661-1667,
#: l.1726-1742, l.1784-1786, l.1815-1825, l.1907-1909, l.1938-1943); the ratio's decay alone does not reopen it.
#: False: admission is tried again at every step (the shipped reading).
SGLANG_ADMISSION_LATCH = False

#: SGLang's ``max_prefill_tokens``: the prompt tokens of whole requests one prefill batch takes, beside the chunk
#: budget (``chunked_prefill_size``, the scheduler's ``max_num_batched_tokens``). ``PrefillAdder`` starts
#: ``rem_input_tokens`` at it, refuses a request whose prompt exceeds what is left of it once the batch holds one
#: (``AddReqResult.OTHER``) and closes the batch when it is spent (``budget_state``); only the chunk budget cuts a
#: prompt (0.4.4 ``managers/schedule_policy.py`` l.333-337, 464, 483-502; ``server_args.py`` l.69: 16,384; not raised
#: by ``--chunked-prefill-size``, ``managers/tp_worker.py`` l.108).
SGLANG_MAX_PREFILL_TOKENS = 16384

#: What a prefill (extend) step adds to SGLang's receive counter (``RunBehaviour.recv_interval``): the environment's
#: ``SGLANG_SCHEDULER_RECV_SKIPPER_WEIGHT_DEFAULT``, 1000, against 1 for a decode step or an idle loop
#: (``sglang/srt/environ.py`` l.229-232 of the 0.5.12 wheel, l.232-235 of 0.5.9; ``managers/scheduler_recv_skipper.py``
#: ``SchedulerRecvSkipper.handle``): the loop after a prefill reads its socket whatever the interval.
RECV_WEIGHT_EXTEND = 1000


def _quorum_s(queue, quorum: int) -> float:
    """When the queue (in arrival order) holds ``quorum`` requests: the ready time of the one that makes it that
    many (``RunBehaviour.context_gate_quorum``); inf where it never does or ``quorum`` is 0."""
    if quorum <= 0:
        return math.inf
    total = 0
    for c in queue:
        total += c.n
        if total >= quorum:
            return c.ready_s
    return math.inf


@dataclass(frozen=True)
class Scheduler:
    """A continuous-batching engine's limits and rules: sequences in flight, tokens per step, KV cache tokens.

    ``kind="vllm"`` (vLLM v1, ``vllm/v1/core/sched/scheduler.py``): decodes and prompt chunks share a step. KV is taken as tokens are computed: a waiting request is admitted
    when its prompt chunk fits in the free KV (nothing reserved for its output); when a decode step finds no free
    slot, the newest running request is preempted (``self.running.pop()``), its KV freed, and it waits at the
    head of the queue to recompute its prompt and output so far; no request is admitted in a step that
    preempted.

    ``kind="sglang"`` (``python/sglang/srt/managers/schedule_policy.py`` ``PrefillAdder``; no
    ``--enable-mixed-chunk``): while prompts wait and fit, a step prefills only (up to ``max_num_batched_tokens``,
    its ``chunked_prefill_size``, and whole prompts after the step's first only within ``SGLANG_MAX_PREFILL_TOKENS``)
    and the decoding requests wait. A request is admitted while the tokens held,
    plus ``new_token_ratio`` x the output each running request has still to produce, plus its own prompt and
    whole output (clipped at ``SGLANG_CLIP_NEW_TOKENS``) fit (``SGLANG_NEW_TOKEN_RATIO``); a decode step without
    a free slot retracts the newest requests until ``SGLANG_RETRACT_STEPS`` steps fit, and the ratio becomes
    (output so far + 20 x running) / their whole outputs (``ScheduleBatch.retract_decode`` up to SGLang 0.4;
    later versions retract until one step fits).

    ``kind="tensorrt-llm"``: vLLM's steps, and the default capacity policy ``GUARANTEED_NO_EVICT``: a request is
    admitted only when its prompt and whole output fit beside the whole outputs of the running ones, so none is
    ever paused (TensorRT-LLM docs, "Useful Runtime Options": Capacity Scheduler Policy). Without chunked context
    (its default, ``UNCHUNKED_KINDS``) a prompt joins a step only whole, within what the step's token budget has
    left; the first that does not fit waits, and those behind it with it.

    ``kv_tokens``: the KV cache of the whole group, tokens (infinite: never binds). ``chunked_prefill``: whether a
    prompt may be split across steps at the token budget; None: the kind's default (``chunked_prefill_default``).
    ``block_tokens``: the block a reserving kind rounds each request's reservation up to, tokens (1: token-exact).
    TensorRT-LLM's ``GUARANTEED_NO_EVICT`` admits a request while every admitted request's blocks to completion fit,
    each request's ceil((prompt + max new tokens) / tokens_per_block) blocks (``KVCacheManager::
    getRemainingBlocksToCompletion``, cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp, through
    ``NoEvictScheduledBlocksManager``, scheduledBlocksManager.h; ``tokens_per_block`` 32, ``KvCacheConfig``), so a
    217 + 201-token request takes 14 blocks, 448 token slots: ``planner.serving.state.Run.pad``.
    """

    max_num_seqs: int
    max_num_batched_tokens: int
    kind: str = "vllm"
    kv_tokens: float = math.inf
    chunked_prefill: bool | None = None
    block_tokens: int = 1

    @property
    def chunks_prompts(self) -> bool:
        """Whether this scheduler splits a prompt across steps (``chunked_prefill``, else the kind's default)."""
        return chunked_prefill_default(self.kind) if self.chunked_prefill is None else bool(self.chunked_prefill)


#: Schedulers that by default never split a prompt across steps. TensorRT-LLM: 1.x's ``BaseLlmArgs``
#: ``enable_chunked_prefill: bool = Field(default=False, description="Enable chunked prefill.")``
#: (``tensorrt_llm/llmapi/llm_args.py``, NVIDIA/TensorRT-LLM commit fcd3f316, "Several options from ExecutorConfig,
#: expanded here"), the 0.x executor's ``ExecutorConfig`` ``enableChunkedContext`` false by default likewise; a
#: context request then runs whole in one step (``max_num_tokens`` 8192 by default, the same file). vLLM V1 chunks
#: by default; SGLang chunks at ``chunked_prefill_size``.
UNCHUNKED_KINDS = ("tensorrt-llm",)


def chunked_prefill_default(kind: str) -> bool:
    """Whether a scheduler of ``kind`` splits prompts across steps unless told otherwise (``UNCHUNKED_KINDS``)."""
    return kind not in UNCHUNKED_KINDS


@dataclass(frozen=True)
class RunResult:
    """A run's figures as a benchmark client reports them (seconds, tokens/s)."""

    ttft_mean_s: float
    ttft_median_s: float
    tpot_mean_s: float  # NaN when every request has one output token
    tpot_median_s: float
    duration_s: float
    run_output_tokens_per_s: float  # all output tokens / duration
    mean_running: float  # time-averaged sequences in flight
    peak_running: int = 0  # the most sequences in flight at once
    preemptions: int = 0  # requests preempted (vLLM) or retracted (SGLang), counted each time
    samples: Samples | None = None  # every request's (and token gap's) figures, for percentiles


@dataclass(frozen=True)
class Samples:
    """A run's figures as weighted samples (``values[i]`` occurs ``counts[i]`` times; requests of a cohort share
    them), seconds: TTFT, TPOT and end-to-end latency per request, ITL per output token after a request's first
    (the steps between two of its tokens: a decode step, or a decode step and the prefill-only steps before it)."""

    ttft: tuple[np.ndarray, np.ndarray]
    tpot: tuple[np.ndarray, np.ndarray]
    itl: tuple[np.ndarray, np.ndarray]
    e2e: tuple[np.ndarray, np.ndarray]
    requests: int  # completed
    output_tokens: int
    input_tokens: int


def _pairs(pairs: list[tuple[float, int]], shift_s: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    if not pairs:
        return np.zeros(0), np.zeros(0, dtype=np.int64)
    # (value, count) pairs flattened into one float array (counts are whole and far below 2**53: exact as floats)
    flat = np.fromiter(itertools.chain.from_iterable(pairs), dtype=float, count=2 * len(pairs))
    return flat[0::2] + shift_s, flat[1::2].astype(np.int64)


def weighted_percentile(samples: tuple[np.ndarray, np.ndarray], q: float | np.ndarray) -> np.ndarray:
    """``np.percentile(values repeated counts times, q)`` (linear interpolation, what ``vllm bench serve`` prints)
    without repeating them: the k-th smallest of N is the group whose running count first exceeds k."""
    values, counts = samples
    q = np.asarray(q, dtype=float)
    if not len(values) or counts.sum() == 0:
        return np.full(q.shape, math.nan)
    order = np.argsort(values, kind="stable")
    v, cum = values[order], np.cumsum(counts[order])
    pos = q / 100.0 * (cum[-1] - 1)
    lo, hi = np.floor(pos), np.ceil(pos)
    v_lo = v[np.searchsorted(cum, lo, side="right")]
    v_hi = v[np.searchsorted(cum, hi, side="right")]
    return v_lo + (v_hi - v_lo) * (pos - lo)


def _weighted_median(pairs: list[tuple[float, int]]) -> float:
    pairs = sorted(pairs)
    total = sum(n for _, n in pairs)
    if not total:
        return math.nan
    half, seen = total / 2.0, 0
    for v, n in pairs:
        seen += n
        if seen >= half:
            return v
    return pairs[-1][0]


def _count(tokens: float, per: float) -> int:
    """How many of ``per`` tokens fit in ``tokens`` (a large number when ``tokens`` is infinite)."""
    if tokens <= 0:
        return 0
    return 1 << 62 if math.isinf(tokens) else int(tokens // per)


@dataclass(frozen=True)
class RunBehaviour:
    """How the client and the engine behave in one run beyond the scheduler's limits: what ``simulate`` reads besides
    the step times, the scheduler, the requests and their arrivals. Frozen and hashable (part of
    ``planner.serving.load.RunKey``); values are normalised as they are stored (floats, a bool, K >= 1), so equal
    settings give equal keys.

    - ``cached_fraction``: the share of each prompt found in the prefix cache (its KV held, not computed: the prefill
      computes the rest, at least one token; a preempted request recomputes all); clipped to 0-1 by ``simulate``.
    - ``warm_prompts`` N and ``warm_fraction``: the run's first N requests find ``warm_fraction`` of their prompt
      cached (the larger of it and ``cached_fraction``), the rest ``cached_fraction``: a sweep whose runs send one
      fixed-seed sample to one server that caches prefixes, so a run's first N prompts are an earlier run's (0: none).
    - ``frontend_s``: each request's time outside the engine (HTTP, tokenizing, detokenizing), seconds, added to its
      TTFT and latency and before a closed-loop client's next request.
    - ``frontend_serial_s``: the part of ``frontend_s`` that one server process does for every request in turn
      (``planner.serving.benchmark.FRONTEND_SERIAL_S``; at most ``frontend_s``): requests wait for it in the order sent,
      a FIFO single server (``planner.serving.state.queued``), so a request reaches the engine at
      d_i = max(sent_i + ``frontend_s``, d_(i-1) + ``frontend_serial_s``) and its TTFT counts the wait; a burst of N
      reaches it over N x ``frontend_serial_s``. 0: every request's front end runs in parallel (a pure delay).
    - ``async_scheduling``: the engine schedules each step while the one before it runs (vLLM ``--async-scheduling``,
      ``vllm/v1/engine/core.py`` ``step_with_batch_queue``: step k+1 is scheduled when step k is launched), so a
      request that arrives while the engine is busy joins the second step that starts after it arrives, not the
      first: one step more to its first token. An idle engine schedules an arrival at once.
    - ``scheduler_steps`` K > 1: vLLM V0's multi-step scheduling (``--num-scheduler-steps``, vLLM 0.5.5-0.7, without
      chunked prefill): a step that admits prompts prefills only (V0 ``Scheduler._schedule_default`` schedules the
      running decodes only when no prefill was scheduled), and a decode step runs as a window of K steps of the same
      batch (``MultiStepModelRunner``), its tokens streamed to the client at the window's end: an arrival waits for
      the window to end, a request finishing inside it is received at its end with the steps left run for nothing,
      and the benchmark's ITL is one gap per window (K tokens in one chunk).
    - ``prefill_only_steps``: a step that admits prompts prefills only and the decoding requests wait it out, their
      next gap that step's length (vLLM V0 without chunked prefill: ``Scheduler._schedule_default``, vllm/core/
      scheduler.py v0.6.3 l.1022-1027, v0.7.3 l.1240-1245, runs ``_schedule_running`` only ``if
      len(prefills.seq_groups) == 0``), as SGLang's steps and V0 multi-step (``scheduler_steps`` > 1) always do.
      Set for published vLLM V0 rows through ``planner.engines.profiles.with_v0_default_scheduler`` (s127).
    - ``stream_stall_s``: how long the server's front end holds the running requests' token streams for each new
      request it prepares, seconds (``planner.serving.load.latency_under_load``: vLLM's API server prepares a request
      in the event loop that streams the others' tokens). The steps go on; each request decoding in the step that
      admits n new requests sees that step's gap n x ``stream_stall_s`` longer (the tokens made meanwhile reach it in
      one later chunk, so its other gaps are as simulated). ITL only: TTFT, TPOT and latency are the engine's.
    - ``tokens_per_step`` a > 1: speculative decoding (``planner.serving.speculative``; the table's decode rows are
      whole speculative steps): a request of o output tokens decodes for ceil((o - 1) / a) steps, each streamed as
      one chunk (one ITL), its TPOT is its own decode time over its own o - 1, and each step adds a tokens of KV per
      request.
    - ``draft_steps`` k >= 1 (with a > 1): each step's accepted tokens vary as a draft's do, 1 to k + 1 with mean a
      (``acceptance_draws``: each drafted token accepted with the same probability while the ones before it were),
      so a request decodes for the steps its own draws take to reach o - 1; 0: exactly ceil((o - 1) / a) steps.
    - ``max_prefill_tokens`` N > 0: SGLang's input budget per prefill batch where the server's command sets
      ``--max-prefill-tokens N`` (``ServerArgs.max_prefill_tokens``); 0: ``SGLANG_MAX_PREFILL_TOKENS``. Set for
      published rows through ``planner.engines.profiles.with_row_max_prefill_tokens`` (s139); 0 on every plan.
    - ``recv_interval`` N > 1: SGLang's ``--scheduler-recv-interval N`` (``SchedulerRecvSkipper``, 0.5.3 on): the
      scheduler reads newly arrived requests only when a counter reaches N, and the counter adds 1 for each decode step,
      ``RECV_WEIGHT_EXTEND`` after a prefill step and 1 per idle loop (microseconds: read as at once), so while it
      decodes an arrival waits for the next read, 0 to N decode steps. 1: every loop reads (the default). Set for
      published rows through ``planner.engines.profiles.with_row_scheduler_recv_interval`` (s187); 1 on every plan.
    - ``context_gate`` T > 1: TensorRT-LLM's attention-DP balancing (``attention_dp_config: {enable_balance: true,
      timeout_iters: T}`` with ``enable_attention_dp``): each iteration ``PyExecutor._balance_adp_requests``
      (tensorrt_llm/_torch/pyexecutor/py_executor.py, called by ``_schedule``) drops the rank's new context requests
      unless every rank has one, counting the iteration; at the T-th count, or when a rank has no generation request,
      the counter goes back to 0 and the context requests of that iteration are scheduled. The counter runs whether
      or not anything waits, so a prompt enters only at every T-th step since the last release (or at once when the
      rank decodes nothing); what the gate step's budget cannot take waits for the next gate. The simulated rank
      stands for each, and the other ranks' arrivals are not simulated: "every rank has one" is read as this rank
      holding ``context_gate_quorum`` Q waiting prompts (a new request goes to a rank holding fewer than the
      expected active requests, ``ExecutorRequestQueue._balance_requests_across_ranks``, so in a closed loop to a
      rank that just finished one, at random: R ranks all hold one after about R x H_R arrivals, H_R = 1 + 1/2 +
      ... + 1/R, which is Q = ceil(H_R) a rank; 0: never). 0: no gate (the default: ``enable_balance`` is False).
      Set for published rows through ``planner.engines.profiles.with_row_attention_dp_gate`` (h-trt); 0 on every
      plan.
    """

    cached_fraction: float = 0.0
    frontend_s: float = 0.0
    async_scheduling: bool = False
    scheduler_steps: int = 1
    stream_stall_s: float = 0.0
    tokens_per_step: float = 1.0
    draft_steps: int = 0
    frontend_serial_s: float = 0.0
    prefill_only_steps: bool = False
    max_prefill_tokens: int = 0
    recv_interval: int = 1
    context_gate: int = 0
    context_gate_quorum: int = 0
    warm_prompts: int = 0
    warm_fraction: float = 0.0

    def __post_init__(self) -> None:
        for name, kind in (("cached_fraction", float), ("frontend_s", float), ("frontend_serial_s", float),
                           ("async_scheduling", bool), ("stream_stall_s", float), ("tokens_per_step", float),
                           ("prefill_only_steps", bool), ("warm_fraction", float)):  # fmt: skip
            object.__setattr__(self, name, kind(getattr(self, name)))
        object.__setattr__(self, "warm_prompts", max(int(self.warm_prompts), 0))
        if not self.warm_prompts:  # no warm prompts: one key for every fraction
            object.__setattr__(self, "warm_fraction", 0.0)
        object.__setattr__(self, "frontend_serial_s", max(min(self.frontend_serial_s, self.frontend_s), 0.0))
        object.__setattr__(self, "scheduler_steps", max(int(self.scheduler_steps), 1))
        object.__setattr__(self, "draft_steps", max(int(self.draft_steps), 0))
        object.__setattr__(self, "max_prefill_tokens", max(int(self.max_prefill_tokens), 0))
        object.__setattr__(self, "recv_interval", max(int(self.recv_interval), 1))
        object.__setattr__(self, "context_gate", int(self.context_gate) if int(self.context_gate) > 1 else 0)
        object.__setattr__(
            self, "context_gate_quorum", max(int(self.context_gate_quorum), 0) if self.context_gate else 0
        )


#: A run with none of ``RunBehaviour``'s settings: no prefix cache, no front end, one step per schedule, one token.
DEFAULT_BEHAVIOUR = RunBehaviour()


def simulate(
    table: StepTable,
    scheduler: Scheduler,
    input_len: int,
    output_len: int,
    num_prompts: int,
    *,
    arrivals_s: np.ndarray | None = None,
    client_concurrency: int | None = None,
    lengths: list[tuple[int, int]] | None = None,
    behaviour: RunBehaviour = DEFAULT_BEHAVIOUR,
    trace: list | None = None,
) -> RunResult:
    """Run ``num_prompts`` requests of ``input_len`` prompt and ``output_len`` output tokens through the engine.

    ``arrivals_s``: when each request reaches the server (sorted); None: all at time 0, or, with
    ``client_concurrency``, that many at time 0 and one more each time a request finishes (``vllm bench serve`` starts
    every request's task at once at an infinite rate and its ``--max-concurrency`` semaphore lets the first C through
    together: ``vllm/benchmarks/serve.py``, ``benchmark``, ``limited_request_func``). ``lengths``: each
    request's (prompt, output) tokens, in the order they are sent (a dataset of varied lengths); None: all alike. ``behaviour``: how the client and engine
    behave beyond the scheduler's limits (prefix cache, front end, overlap and multi-step scheduling, stream stalls,
    speculative decoding; ``RunBehaviour``). ``trace``: a list to which each scheduled step appends a ``TracedStep``
    (when it ran, its decoding requests and prompt tokens, the requests whose first token it made), for reading a
    request's TTFT part by part (``bench/closed_ttft_parts.py``); None: nothing kept.
    """
    if lengths is None:
        lengths = [(max(int(input_len), 1), max(int(output_len), 1))] * num_prompts
    else:  # whole tokens, at least one (callers pass lists of int pairs: numpy was no faster on them)
        lengths = [(max(int(p), 1), max(int(o), 1)) for p, o in lengths[:num_prompts]]
    num_prompts = len(lengths)
    prompts, outputs = zip(*lengths, strict=True) if lengths else ((), ())
    total_out = sum(outputs)
    how = behaviour
    lengths = _in_steps(lengths, how.tokens_per_step, how.draft_steps)
    hit = min(max(how.cached_fraction, 0.0), 1.0)
    warm, warm_hit = how.warm_prompts, max(hit, min(max(how.warm_fraction, 0.0), 1.0))  # the first ``warm`` requests
    sg = scheduler.kind == "sglang"  # prefill-only steps, a decaying estimate of the running requests' output
    window = how.scheduler_steps  # decode steps per schedule (vLLM V0 multi-step)
    prefill_first = sg or window > 1 or how.prefill_only_steps  # a step that prefills runs no decodes
    reserve = scheduler.kind in ("sglang", "tensorrt-llm")  # admission keeps KV back for outputs to come
    clip = SGLANG_CLIP_NEW_TOKENS if sg else math.inf
    cap, budget_max = max(int(scheduler.max_num_seqs), 1), max(int(scheduler.max_num_batched_tokens), 1)
    chunks = scheduler.chunks_prompts  # False: a prompt runs whole in one step (one longer than a step's budget
    # still runs, in chunks: an engine that cannot chunk refuses it at its max_num_tokens, which the budget is)
    per_step = how.tokens_per_step  # KV tokens a decode step adds per request
    blocks = max(int(scheduler.block_tokens), 1) if reserve else 1  # reservations in whole blocks of this many tokens
    run = Run(float(scheduler.kv_tokens) if scheduler.kv_tokens else math.inf, per_step, blocks)
    serial = how.frontend_serial_s  # one front-end process, a request at a time (0: none)
    free_s = -math.inf  # when that front end is next free

    def send(start: int, count: int, t: float | None) -> None:
        """Requests ``start`` .. ``start + count - 1``, sent together at ``t`` (None: each at its ``arrivals_s``), join
        the queue: each in turn through the serial front end (``queued``) when there is one, else a cohort per run of
        equal lengths (``requests``) or per arrival (``arrived``); the first ``warm`` of the run with ``warm_hit``."""
        nonlocal free_s
        if start < warm < start + count:  # the warm ones first, then the rest, each at its own hit
            send(start, warm - start, t)
            send(warm, start + count - warm, t)
            return
        share = warm_hit if start < warm else hit
        sent_s = arrivals_s[start : start + count] if t is None else [t] * count
        if serial > 0.0:
            cohorts, free_s = queued(lengths[start : start + count], sent_s, serial, free_s, share)
            run.queue.extend(cohorts)
        elif t is None:
            run.queue.extend(arrived(lengths[start : start + count], sent_s, share))
        else:
            run.queue.extend(requests(lengths, start, count, t, share))

    if arrivals_s is not None:
        sent = num_prompts
        send(0, sent, None)
    else:
        sent = num_prompts if client_concurrency is None else min(client_concurrency, num_prompts)
        send(0, sent, 0.0)
    ratio0, ratio_min, decay_steps = SGLANG_NEW_TOKEN_RATIO
    ratio = ratio0
    latch = sg and SGLANG_ADMISSION_LATCH  # SGLang's batch_is_full: no admission until a request leaves
    latched = False
    ttfts: list[tuple[float, int]] = []
    tpots: list[tuple[float, int]] = []
    itls: list[tuple[float, int]] = []
    e2es: list[tuple[float, int]] = []
    stall = 0.0  # prefill-only steps (SGLang) since the decoding requests' last token: part of their next gap
    # (stall when they joined, how many): requests whose first token a prefill-only step made since the last decode
    # step; their first gap counts only the stall after it, so a request's ITL, as its TPOT, starts at its first token
    joined: list[tuple[float, int]] = []
    now = busy_integral = finished_at = last_dt = 0.0
    seen_s = -math.inf  # async scheduling: arrivals up to this time were seen when this step was scheduled
    peak = stuck = finished = 0
    async_scheduling, stream_stall_s = how.async_scheduling, how.stream_stall_s
    interval = how.recv_interval  # SGLang reads its socket when ``polled`` reaches it (1: every loop)
    polled, received_s = 0, (math.inf if interval == 1 else -math.inf)  # arrivals up to received_s have been read
    gate, since, opened = how.context_gate, 0, True  # attention-DP balancing: steps since its counter's last reset
    quorum = how.context_gate_quorum
    # the loop's constants and the run's containers (changed in place, never replaced; ``run.prefilling`` is) as
    # locals, and ``StepTable.decode_s`` / ``decode_slope_s`` inline below (the same operations in the same order)
    queue, running, heap = run.queue, run.running, run.heap
    dec_lo, dec_hi, ctx_lo = table.decode_lo_s, table.decode_hi_s, table.ctx_lo_tokens
    rows, span = len(dec_lo), table.ctx_hi_tokens - ctx_lo
    wait_steps = int(async_scheduling)
    while running or queue:
        if not running:
            ratio = ratio0  # SGLang resets its estimate when idle
            latched = False  # (and an empty running batch is not full)
            if queue[0].ready_s > now:  # idle until the next request arrives: no step in flight to launch behind
                last_dt = 0.0
            now = max(now, queue[0].ready_s)  # idle until the next request arrives
            seen_s = now
            polled = interval  # an idle loop takes microseconds: the arrival is read at once
        if interval > 1 and polled >= interval:
            received_s, polled = now, 0
        cutoff = min(seen_s if async_scheduling else now, received_s)  # the latest arrival this step can hold
        if gate:  # TensorRT-LLM's attention-DP balancing: prompts enter at the gate, when nothing decodes, or when
            # this rank holds as many waiting as every rank's having one takes (``context_gate_quorum``)
            opened = run.b == 0 or since + 1 >= gate or _quorum_s(queue, quorum) <= now
            if not opened:
                cutoff = -math.inf
        budget, preempted = budget_max, False
        kv_held = run.dec_prompt + run.a * (run.b * run.steps - run.nbase) - run.b  # ``Run.held``, inline
        if run.prefilling:
            kv_held = kv_held + sum(c.n * c.done for c in run.prefilling)
        if not sg and run.b:  # vLLM: the running decodes take a slot each first, preempting if none is free
            # (``Run.preempt`` called only when its first test would preempt: else it changes nothing)
            if not reserve and run.kv - kv_held < per_step * run.b:
                preempted = run.preempt(per_step, now, decoding_only=False)
                kv_held = run.held()
            budget -= 0 if prefill_first else run.b
        b = run.b
        free = run.kv - kv_held - (0 if reserve else b * per_step)
        if reserve:  # what is kept back for the running requests' outputs (all of it: TensorRT-LLM)
            owed = per_step * (run.dec_olen - (b * run.steps - run.nbase))  # (``Run.made``)
            if run.prefilling:
                owed += sum(c.n * (per_step * (c.olen - c.out0) + c.need - c.done) for c in run.prefilling)
            free -= (ratio if sg else 1.0) * owed + run.unheld_reserved()  # (the rest of their reservations' blocks)
        prefill, finishing, still = 0, [], []
        # SGLang's input budget (``SGLANG_MAX_PREFILL_TOKENS``): whole prompts after the batch's first must fit in it
        inputs = (how.max_prefill_tokens or SGLANG_MAX_PREFILL_TOKENS) if sg else math.inf
        fresh = 0  # requests admitted for the first time in this step (a preempted one was prepared before)
        for c in run.prefilling:  # requests still prefilling, in admission order
            need = c.need - c.done  # (a chunked request's KV was kept back when it was admitted, if ``reserve``)
            whole = min(c.n, budget // need, _count(math.inf if reserve else free, need)) if budget > 0 else 0
            if whole:  # the first ``whole`` of this cohort finish their prompt in this step
                finishing.append(c)
                prefill, budget = prefill + whole * need, budget - whole * need
                inputs -= whole * need
                free -= 0 if reserve else whole * need
                if whole == c.n:
                    continue
                c = c.part(c.n - whole)
                run.start(c, new=False)
            chunk = int(min(budget, budget if reserve else free)) if budget > 0 else 0
            if chunk > 0:  # the next one gets part way through; the others of its cohort wait
                if c.n > 1:
                    still.append(c.part(c.n - 1))
                    run.start(still[-1], new=False)
                c.done += chunk
                prefill, budget = prefill + chunk, 0
                free -= 0 if reserve else chunk
            still.append(c)
        while (
            not preempted and not latched and budget > 0 and run.n_run < cap and queue
            and queue[0].ready_s <= cutoff
        ):  # fmt: skip
            head = queue[0]
            need = head.need
            # how many can enter as one cohort, counted no further than one past what the budget takes (the queue can
            # hold thousands): ``k`` is read only as min(k, budget // need), k > 0 and whole < k, which a count of
            # min(k, that limit) answers alike (whole <= budget // need < the limit)
            k = run.waiting(cutoff, min(cap - run.n_run, max(budget // need, 1) + 1))
            per = need + (per_step * min(head.olen - head.out0, clip) + run.pad(head) if reserve else 0)  # KV it needs
            fit = _count(free, per)
            others = min(k, budget // need)
            if inputs < math.inf:  # the batch's first prompt always enters; the others while the input budget holds
                others = min(others, 1 + max(inputs - need, 0) // need if prefill == 0 else max(inputs, 0) // need)
            whole = min(others, fit)
            if latch and fit < others:  # the next one does not fit: NO_TOKEN sets batch_is_full
                latched = True
            if whole:
                c = run.take(whole)
                fresh += _fresh(c)
                c.done = need
                run.start(c)
                finishing.append(c)
                prefill += whole * need
                budget -= whole * need
                inputs -= whole * need
                free -= whole * per
            elif (
                k and fit and budget > 0 and (chunks or need > budget_max) and (prefill == 0 or need <= inputs)
            ):  # a budget-sized chunk of the next
                c = run.take(1)
                fresh += _fresh(c)
                chunk = int(min(budget, budget if reserve else free))
                c.done = chunk
                run.start(c)
                still.append(c)
                prefill += chunk
                free -= per if reserve else chunk
                budget = 0
            if whole < k or not whole:
                break
        run.prefilling = still
        if latch and run.n_run >= cap and queue:  # every slot taken: batch_is_full too
            latched = True
        if (
            sg and prefill == 0 and run.b and run.kv - run.held() < run.b * per_step
        ):  # a decode step: retract if no slot
            if run.preempt(SGLANG_RETRACT_STEPS, now, decoding_only=True):
                latched = False  # the running batch shrank
                if run.dec_olen:
                    ratio = min(1.0, (run.made() + SGLANG_RETRACT_STEPS * run.b) / run.dec_olen)
        b = run.b
        if b == 0 and prefill == 0:
            if run.prefilling:  # prompts part way through hold the KV the others need: the newest gives way
                c = run.prefilling[-1]
                n = c.n
                queue.appendleft(c.part(n, ready_s=now, done=0))
                run.drop(c, n)
                run.preemptions += n
                continue
            stuck += 1  # nothing ran: the next arrival is ahead, or a step preempted every request
            if stuck > 2:
                break  # nothing can run (a request longer than the KV cache): no figures, below
            continue
        stuck = 0
        steps = 1
        held = fresh * stream_stall_s  # the front end held the running requests' streams this long
        # mean tokens of a decoding request's context (``Run.made`` inline)
        ctx = (run.dec_prompt + (b * run.steps - run.nbase)) / b if b else 0.0
        if prefill and prefill_first:  # a prefill-only step: the decoding requests wait
            steps, dt = 0, table.step_s(0, 0.0, prefill)
            # launched kernel by kernel: no shorter than the host's launch, of which an overlapping loop launches the
            # part the step before it takes while that step runs
            if table.prefill_host_s > dt and prefill > table.prefill_host_above_tokens:
                dt = max(dt, table.prefill_host_s - (last_dt if async_scheduling else 0.0))
            stall += dt + held if b else 0.0
        elif prefill == 0:  # decode only until the next event: sum the steps in closed form
            i = (b if b < rows else rows) - 1  # (b > 0 here) one step and its slope: ``StepTable.decode_s``,
            lo, hi = dec_lo[i], dec_hi[i]  # ``decode_slope_s``
            one = lo + (hi - lo) * (ctx - ctx_lo) / span if span > 0 else lo
            slope = (hi - lo) / span if span > 0 else 0.0
            steps = run.next_finish() - run.steps
            if window > 1:
                steps = window  # the whole window runs; arrivals wait for its end
            elif queue and run.n_run < cap:
                head = queue[0]
                if head.ready_s > cutoff:  # async: it joins the step after the one that starts after it arrives
                    wait = head.ready_s - now
                    n = 1 if wait <= 0 else _steps_after(one, slope, wait) + wait_steps
                    if interval > 1:  # read at the first of the scheduler's reads at or after its arrival
                        first = max(interval - polled, 1)
                        n = first if n <= first else first + -(-(n - first) // interval) * interval
                    if gate:  # it enters at the first gate at or after it could, or when the quorum is waiting
                        first = gate if opened else gate - 1 - since
                        n = first if n <= first else first + -(-(n - first) // gate) * gate
                        if (q := _quorum_s(queue, quorum) - now) < math.inf:
                            n = min(n, 1 if q <= 0 else _steps_after(one, slope, q) + wait_steps)
                    steps = min(steps, n)
                elif sg and not latched:  # (latched: nothing enters before a request leaves, the next event)
                    steps = 1  # the reservation shrinks as new_token_ratio decays: check again each step
            kv_held = run.dec_prompt + run.a * (b * run.steps - run.nbase) - b  # (``Run.held``)
            if run.prefilling:
                kv_held = kv_held + sum(c.n * c.done for c in run.prefilling)
            room = run.kv - kv_held
            if math.isfinite(room):  # (``_count`` of a finite room)
                steps = max(1, min(steps, int(room // (b * per_step)) if room > 0 else 0))
            steps = int(steps)
            dt = steps * one + slope * steps * (steps - 1) / 2.0
            if sg:
                ratio = max(ratio - (ratio0 - ratio_min) / decay_steps * steps, ratio_min)
            gap = dt if window > 1 else dt / steps  # one chunk of tokens per request per window
            if joined:  # each cohort waited out only the prefill-only steps after the one that made its first token
                itls.extend(_first_gaps(gap, stall, joined, b))
                joined = []
            else:
                itls.append((gap + stall, b))
            if window == 1 and steps > 1:
                itls.append((dt / steps, b * (steps - 1)))
            stall = 0.0
        else:
            dt = table.step_s(b, ctx, prefill)
            # a mixed step launched kernel by kernel (h-load, TensorRT-LLM's PyTorch backend with
            # ``TRTLLM_EAGER_CONTEXT``): no shorter than its launch, less the step before's
            if prefill > table.prefill_host_above_tokens and table.prefill_host_s > dt:
                dt = max(dt, table.prefill_host_s - (last_dt if async_scheduling else 0.0))
            if b:
                itls.append((dt + stall + held, b))
                stall = 0.0
        seen_s = now + dt - (dt / steps if steps > 1 else dt)  # the last step's start: the next is scheduled then
        last_dt = dt / steps if steps > 1 else dt  # the step the next one's launch overlaps
        started, now = now, now + dt
        busy_integral += dt * run.n_run
        if run.n_run > peak:
            peak = run.n_run
        run.steps += steps
        polled += RECV_WEIGHT_EXTEND if prefill else steps
        if gate:  # the gate's step set the counter to 0; every other step adds 1
            since = steps - 1 if opened else since + steps
        firsts = []
        for c in finishing:  # the next token at the end of this step
            if math.isnan(c.first_s):
                c.first_s = now
                ttfts += [(now - t, n) for t, n in c.arrivals]
                if trace is not None:
                    firsts += [(t, n, c.need) for t, n in c.arrivals]
            run.decode(c)
        if trace is not None:
            trace.append(TracedStep(started, dt, steps, b if steps else 0, prefill, tuple(firsts)))
        while heap:  # the cohorts that finish at this step (``Run.next_finish``'s stale entries dropped, inline)
            step, seq = heap[0]
            c = running.get(seq)
            if c is None or c.base is None or c.base + c.olen != step:
                heapq.heappop(heap)
                continue
            if step > run.steps:
                break
            heapq.heappop(heap)
            n, c.n = c.n, 0
            run.drop(c, n)
            latched = False  # a request left the running batch: SGLang admits again
            finished_at, finished = now, finished + n
            if c.olen > 1:
                tpots.append(((now - c.first_s) / c.div, n))
            e2es += [(now - t, k) for t, k in c.arrivals]
            if sent < num_prompts:
                more = min(num_prompts - sent, n)
                send(sent, more, now + how.frontend_s)
                sent += more
        if steps == 0 and run.b > b:  # a prefill-only step: its first tokens start decoding now
            joined.append((stall, run.b - b))
    n_ttft = sum(n for _, n in ttfts)
    n_tpot = sum(n for _, n in tpots)
    duration = finished_at if finished == num_prompts else math.nan  # a run that cannot finish has no figures
    if math.isnan(duration):
        ttfts, tpots, itls, e2es, n_ttft, n_tpot = [], [], [], [], 0, 0
    samples = Samples(
        ttft=_pairs(ttfts, how.frontend_s),
        tpot=_pairs(tpots),
        itl=_pairs([(v, n) for v, n in itls if n > 0]),
        e2e=_pairs(e2es, how.frontend_s),
        requests=finished if n_ttft else 0,
        output_tokens=total_out if n_ttft else 0,
        input_tokens=sum(prompts) if n_ttft else 0,
    )
    return RunResult(  # TTFT from the client's send: the front end's time included, as in ``samples``
        ttft_mean_s=sum(v * n for v, n in ttfts) / n_ttft + how.frontend_s if n_ttft else math.nan,
        ttft_median_s=_weighted_median(ttfts) + how.frontend_s,
        tpot_mean_s=sum(v * n for v, n in tpots) / n_tpot if n_tpot else math.nan,
        tpot_median_s=_weighted_median(tpots),
        duration_s=duration,
        run_output_tokens_per_s=total_out / duration if duration > 0 else math.nan,
        mean_running=busy_integral / duration if duration > 0 else math.nan,
        peak_running=peak,
        preemptions=run.preemptions,
        samples=samples,
    )


def _first_gaps(gap_s: float, stall_s: float, joined: list[tuple[float, int]], b: int) -> list[tuple[float, int]]:
    """The (gap, requests) of a decode step of ``b`` requests after prefill-only steps that stalled it ``stall_s``:
    gap_s + stall_s for the requests decoding before them, gap_s + stall_s - s_j for each cohort of n_j that joined
    (its first token made) when the stall stood at s_j (``joined``, oldest first). Assumption: requests that left
    the decoders since (preempted) were the newest, as vLLM preempts the last admitted, so cohorts are trimmed from
    the newest when they outnumber ``b``."""
    out: list[tuple[float, int]] = []
    left = b
    for s_j, n_j in reversed(joined):
        n = min(n_j, left)
        if n > 0:
            out.append((gap_s + stall_s - s_j, n))
            left -= n
    if left > 0:
        out.append((gap_s + stall_s, left))
    return out


def _fresh(c) -> int:
    """How many of cohort ``c``'s requests are new (not preempted and queued again): a preempted cohort is ready
    at its preemption, later than its requests' arrival, or has output made before."""
    return c.n if c.out0 == 0 and c.arrivals and c.ready_s <= c.arrivals[0][0] else 0


#: Seed of the accepted-token draws of a speculative run (``acceptance_draws``): the same run every call.
ACCEPTANCE_SEED = 0
#: Draws made at once by ``_in_steps`` (a bound on its memory: 8 bytes a draw).
DRAW_BLOCK = 1 << 20


def acceptance_probability(mean_tokens: float, draft_steps: int) -> float:
    """The probability alpha that a drafted token is accepted (its draft predecessors accepted) for which a step of k
    = ``draft_steps`` drafted tokens emits ``mean_tokens`` a on average: a = (1 - alpha^(k + 1)) / (1 - alpha), the
    expected tokens a step generates in Leviathan, Kalman and Matias (Fast Inference from Transformers via
    Speculative Decoding, ICML 2023, arXiv 2211.17192, section 3.3; acceptances i.i.d.), solved by bisection (a rises
    with alpha from 1 at 0 to k + 1 at 1)."""
    a, k = float(mean_tokens), int(draft_steps)
    if k < 1 or not 1.0 <= a <= k + 1.0:
        raise ValueError(f"a mean of {mean_tokens!r} tokens a step needs 1 <= a <= draft_steps + 1 ({k + 1})")
    lo, hi = 0.0, 1.0
    for _ in range(60):
        mid = (lo + hi) / 2.0
        if sum(mid**j for j in range(k + 1)) < a:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


def acceptance_draws(rng: np.random.Generator, alpha: float, draft_steps: int, size: int) -> np.ndarray:
    """``size`` steps' emitted tokens per sequence: 1 + the drafted tokens accepted, min(G, k) with G geometric (each
    accepted with probability ``alpha`` while the ones before it were), so P(L = l) = alpha^(l - 1) (1 - alpha) for
    l <= k and alpha^k for l = k + 1; mean (1 - alpha^(k + 1)) / (1 - alpha) (``acceptance_probability``)."""
    if alpha <= 0.0:
        return np.ones(size, dtype=np.int64)
    if alpha >= 1.0:
        return np.full(size, draft_steps + 1, dtype=np.int64)
    return np.minimum(rng.geometric(1.0 - alpha, size), draft_steps + 1)


def _in_steps(lengths: list[tuple[int, int]], tokens_per_step: float, draft_steps: int = 0) -> list[tuple]:
    """Each request's (prompt, output) with the output counted in decode steps after the first token, as
    (prompt, 1 + steps, o - 1): o - 1 is its TPOT's denominator. ``tokens_per_step`` a = 1: unchanged pairs (a step
    a token). a > 1 (speculative decoding): ceil((o - 1) / a) steps, or, with ``draft_steps`` k >= 1 and a < k + 1, the
    steps its own draws (``acceptance_draws``, seeded with ``ACCEPTANCE_SEED``, drawn request by request in the order
    sent) take to add up to o - 1."""
    a = float(tokens_per_step)
    if not a >= 1.0 or math.isinf(a):
        raise ValueError(f"tokens_per_step {tokens_per_step!r} is not a finite number of 1 or more")
    if a == 1.0:
        return lengths
    k = int(draft_steps)
    if k < 1 or a >= k + 1:
        return [(p, 1 + math.ceil((o - 1) / a - 1e-9), o - 1) for p, o in lengths]
    alpha = acceptance_probability(a, k)
    rng = np.random.default_rng([ACCEPTANCE_SEED, k])
    out: list[tuple] = []
    start = 0
    while start < len(lengths):  # blocks of requests whose draws fit ``DRAW_BLOCK`` (one request at least)
        stop, total = start, 0
        while stop < len(lengths) and (stop == start or total + lengths[stop][1] - 1 <= DRAW_BLOCK):
            total += lengths[stop][1] - 1
            stop += 1
        need = np.array([o - 1 for _, o in lengths[start:stop]], dtype=np.int64)
        made = np.r_[0, np.cumsum(acceptance_draws(rng, alpha, k, int(need.sum())))]  # at most o - 1 steps each
        starts = np.r_[0, np.cumsum(need)[:-1]]  # where each request's draws begin
        short = made[1:] - np.repeat(made[starts], need) < np.repeat(need, need)  # a step that leaves it short
        counted = np.r_[0, np.cumsum(short)]
        steps = np.where(need > 0, counted[starts + need] - counted[starts] + 1, 0)
        out += [(p, 1 + int(s), o - 1) for (p, o), s in zip(lengths[start:stop], steps.tolist(), strict=True)]
        start = stop
    return out


def _steps_until(table: StepTable, batch: int, mean_context: float, wait_s: float) -> int:
    """Decode steps of ``batch`` sequences until ``wait_s`` has passed (the step in which it passes included)."""
    if wait_s <= 0:
        return 1
    return _steps_after(table.decode_s(batch, mean_context), table.decode_slope_s(batch), wait_s)


def _steps_after(a: float, s: float, wait_s: float) -> int:
    """Decode steps until ``wait_s`` has passed (that in which it passes included) when the first takes ``a`` seconds
    and each the next ``s`` more (``_steps_until`` given the step and its slope)."""
    if wait_s <= 0:
        return 1
    # n a + s n (n - 1) / 2 >= wait: the smallest such n
    if s <= 0:
        return max(1, math.ceil(wait_s / a))
    half = s / 2.0
    n = (-(a - half) + math.sqrt((a - half) ** 2 + 4.0 * half * wait_s)) / (2.0 * half)
    return max(1, math.ceil(n - 1e-9))
