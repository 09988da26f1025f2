"""A serving benchmark run, step by step: how a continuous-batching engine schedules N requests.

The scheduler is vLLM v1's (``vllm/v1/core/sched/scheduler.py``), which TensorRT-LLM's in-flight batching
resembles: every step has a token budget (``max_num_batched_tokens``); the running requests are scheduled
first, each decoding request taking one token of it, then requests still prefilling take the next chunk of
their prompt; waiting requests are admitted first come first served while budget and a sequence slot
(``max_num_seqs``) remain, their first chunk in the same step. A request's first token comes at the end of
the step that finishes its prompt; it then decodes one token per step until its output is complete.

Requests with identical progress move together as one cohort (all prompts of a run have the same length:
a run's mean lengths), and stretches of decode-only steps between two events (an arrival, a request
finishing) are summed in closed form, so a run costs a few iterations per request, not one per step.

The step time comes from the model (``StepTable``, built by ``planner.benchmark``): decode steps of b
sequences at the mean context, prefill steps of p prompt tokens; a step with both pays the decode step plus
the prefill's work beyond the weights read and overheads that both share (``StepTable.step_s``).

Figures are as ``vllm bench serve`` reports them: TTFT from a request's arrival at the server to its first
token (a client limited to ``--max-concurrency`` sends a request when one finishes, so its own wait is not
counted); TPOT = (latency - TTFT) / (output tokens - 1) per request; output throughput = every output token
over the run's duration (first arrival to last completion).
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass

import numpy as np


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

    def decode_s(self, batch: int, mean_context: float) -> float:
        lo, hi = self.decode_lo_s[batch - 1], self.decode_hi_s[batch - 1]
        span = self.ctx_hi_tokens - self.ctx_lo_tokens
        return lo + (hi - lo) * (mean_context - self.ctx_lo_tokens) / span if span > 0 else lo

    def decode_slope_s(self, batch: int) -> float:
        """d(decode step) / d(mean context), seconds per token of context."""
        span = self.ctx_hi_tokens - self.ctx_lo_tokens
        return (self.decode_hi_s[batch - 1] - self.decode_lo_s[batch - 1]) / span if span > 0 else 0.0

    def step_s(self, batch: int, mean_context: float, prefill_tokens: float) -> float:
        """One step: ``batch`` decoding sequences and ``prefill_tokens`` prompt tokens.

        decode + prefill - shared, at least the larger of the two alone: the weights are read once, decode's
        attention (memory-bound) and the prefill's matmuls (compute-bound) run one after the other.
        """
        dec = self.decode_s(batch, mean_context) if batch > 0 else 0.0
        if prefill_tokens <= 0:
            return dec
        pre = float(np.interp(prefill_tokens, self.prefill_tokens, self.prefill_s))
        return pre if batch <= 0 else max(dec, pre, dec + pre - self.shared_s)


@dataclass(frozen=True)
class Scheduler:
    """A continuous-batching engine's limits: sequences in flight, and tokens per step (chunked prefill).

    ``prefill_first``: SGLang's default (no ``--enable-mixed-chunk``): while prompts wait and fit, a step
    prefills only (up to ``max_num_batched_tokens``, its ``chunked_prefill_size``) and the decoding requests
    wait; else (vLLM v1, TensorRT-LLM) decodes and prompt chunks share a step.
    """

    max_num_seqs: int
    max_num_batched_tokens: int
    prefill_first: bool = False


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


class _Cohort:
    """Requests with the same progress: ``n`` of them, ``done`` prompt tokens computed; once decoding, their
    output so far is the run's decode steps since ``base`` (they all decode in every step)."""

    __slots__ = ("n", "done", "base", "arrivals", "first_s")

    def __init__(self, n: int, done: int, arrivals: list[tuple[float, int]]):
        self.n, self.done, self.base, self.arrivals, self.first_s = n, done, 0, arrivals, math.nan


def _take(groups: deque, k: int) -> list[tuple[float, int]]:
    """The first ``k`` requests of a queue of (arrival time, count) groups."""
    out = []
    while k > 0:
        t, n = groups[0]
        used = min(n, k)
        out.append((t, used))
        k -= used
        if used == n:
            groups.popleft()
        else:
            groups[0] = (t, n - used)
    return out


def _arrived(groups: deque, now: float, limit: int) -> int:
    """How many queued requests have arrived by ``now``, up to ``limit`` (the queue is in arrival order)."""
    total = 0
    for t, n in groups:
        if t > now or total >= limit:
            break
        total += n
    return min(total, limit)


def _split(arrivals: list[tuple[float, int]], k: int) -> tuple[list, list]:
    head, tail, left = [], [], k
    for t, n in arrivals:
        if left >= n:
            head.append((t, n))
            left -= n
        elif left > 0:
            head.append((t, left))
            tail.append((t, n - left))
            left = 0
        else:
            tail.append((t, n))
    return head, tail


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


def simulate(
    table: StepTable,
    scheduler: Scheduler,
    input_len: int,
    output_len: int,
    num_prompts: int,
    *,
    arrivals_s: np.ndarray | None = None,
    client_concurrency: int | None = None,
) -> RunResult:
    """Run ``num_prompts`` requests of ``input_len`` prompt and ``output_len`` output tokens through the engine.

    ``arrivals_s``: when each request reaches the server (sorted); None: all at time 0, or, with
    ``client_concurrency``, that many at time 0 and one more each time a request finishes.
    """
    plen, olen = max(int(input_len), 1), max(int(output_len), 1)
    cap, budget_max = max(int(scheduler.max_num_seqs), 1), max(int(scheduler.max_num_batched_tokens), 1)
    if arrivals_s is not None:
        queue = deque((float(t), 1) for t in arrivals_s)
        to_send = 0
    else:
        first = num_prompts if client_concurrency is None else min(client_concurrency, num_prompts)
        queue, to_send = deque([(0.0, first)]), num_prompts - first
    prefilling: list[_Cohort] = []  # admitted, prompt not finished, in admission order
    decoding: deque[_Cohort] = deque()  # first token out, in the order they got it (the front finishes first)
    n_run = b = nbase = steps_done = 0  # requests in flight, of them decoding, sum of n x base, decode steps so far
    ttfts: list[tuple[float, int]] = []
    tpots: list[tuple[float, int]] = []
    now, busy_integral, finished_at = 0.0, 0.0, 0.0
    while n_run or queue:
        if not n_run and queue[0][0] > now:
            now = queue[0][0]  # idle until the next request arrives
        budget = budget_max if scheduler.prefill_first else budget_max - b
        ctx = plen + (b * steps_done - nbase) / b if b else 0.0  # tokens held by a decoding request, mean
        prefill, finishing, still = 0, [], []
        for c in prefilling:  # requests still prefilling, in admission order
            need = plen - c.done
            whole = min(c.n, budget // need) if budget > 0 else 0
            if whole == c.n:
                prefill += whole * need
                budget -= whole * need
                finishing.append(c)
                continue
            if whole:  # the budget ends inside this cohort: split off the requests it finishes
                head, c.arrivals = _split(c.arrivals, whole)
                finishing.append(_Cohort(whole, plen, head))
                c.n -= whole
                prefill += whole * need
                budget -= whole * need
            if budget > 0:  # and the one it gets part way through
                head, c.arrivals = _split(c.arrivals, 1)
                part = _Cohort(1, c.done + budget, head)
                c.n -= 1
                prefill += budget
                budget = 0
                still.append(part)
            if c.n:
                still.append(c)
        while budget > 0 and n_run < cap and queue and queue[0][0] <= now:  # admit waiting requests
            k = _arrived(queue, now, cap - n_run)
            whole = min(k, budget // plen)
            if whole:
                finishing.append(_Cohort(whole, plen, _take(queue, whole)))
                prefill += whole * plen
                budget -= whole * plen
                n_run += whole
            elif k:
                still.append(_Cohort(1, budget, _take(queue, 1)))
                prefill += budget
                n_run += 1
                budget = 0
            if whole < k:
                break
        prefilling = still
        if b == 0 and prefill == 0:
            if queue:  # nothing runnable until the next arrival
                now = max(now, queue[0][0])
                continue
            break
        steps = 1
        if prefill and scheduler.prefill_first:  # a prefill-only step: the decoding requests wait
            steps, dt = 0, table.step_s(0, 0.0, prefill)
        elif prefill == 0:  # decode only until the next event: sum the steps in closed form
            steps = olen - (steps_done - decoding[0].base)
            if queue and n_run < cap:
                steps = min(steps, _steps_until(table, b, ctx, queue[0][0] - now))
            slope = table.decode_slope_s(b)
            dt = steps * table.decode_s(b, ctx) + slope * steps * (steps - 1) / 2.0
        else:
            dt = table.step_s(b, ctx, prefill)
        now += dt
        busy_integral += dt * n_run
        steps_done += steps
        for c in finishing:  # first token at the end of this step: made = steps_done - base = 1
            c.done, c.base, c.first_s = plen, steps_done - 1, now
            ttfts += [(now - t, n) for t, n in c.arrivals]
            decoding.append(c)
            b += c.n
            nbase += c.n * c.base
        while decoding and steps_done - decoding[0].base >= olen:
            c = decoding.popleft()
            b -= c.n
            nbase -= c.n * c.base
            n_run -= c.n
            finished_at = now
            if olen > 1:
                tpots.append(((now - c.first_s) / (olen - 1), c.n))
            if to_send:
                sent = min(to_send, c.n)
                queue.append((now, sent))
                to_send -= sent
    n_ttft = sum(n for _, n in ttfts)
    n_tpot = sum(n for _, n in tpots)
    duration = finished_at
    return RunResult(
        ttft_mean_s=sum(v * n for v, n in ttfts) / n_ttft if n_ttft else math.nan,
        ttft_median_s=_weighted_median(ttfts),
        tpot_mean_s=sum(v * n for v, n in tpots) / n_tpot if n_tpot else math.nan,
        tpot_median_s=_weighted_median(tpots),
        duration_s=duration,
        run_output_tokens_per_s=num_prompts * olen / duration if duration > 0 else math.nan,
        mean_running=busy_integral / duration if duration > 0 else math.nan,
    )


def _steps_until(table: StepTable, batch: int, mean_context: float, wait_s: float) -> int:
    """Decode steps of ``batch`` sequences until ``wait_s`` has passed (the step in which it passes included)."""
    if wait_s <= 0:
        return 1
    a, s = table.decode_s(batch, mean_context), table.decode_slope_s(batch)
    # n a + s n (n - 1) / 2 >= wait: the smallest such n
    if s <= 0:
        return max(1, math.ceil(wait_s / a))
    half = s / 2.0
    n = (-(a - half) + math.sqrt((a - half) ** 2 + 4.0 * half * wait_s)) / (2.0 * half)
    return max(1, math.ceil(n - 1e-9))
