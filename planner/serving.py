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
    """A continuous-batching engine's limits: sequences in flight, and tokens per step (chunked prefill)."""

    max_num_seqs: int
    max_num_batched_tokens: int


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
    """Requests with the same progress: ``n`` of them, ``done`` prompt tokens computed, ``made`` tokens output."""

    __slots__ = ("n", "done", "made", "arrivals", "first_s")

    def __init__(self, n: int, done: int, arrivals: list[tuple[float, int]]):
        self.n, self.done, self.made, self.arrivals, self.first_s = n, done, 0, arrivals, math.nan


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
    running: list[_Cohort] = []
    ttfts: list[tuple[float, int]] = []
    tpots: list[tuple[float, int]] = []
    now, busy_integral, finished_at = 0.0, 0.0, 0.0
    while running or queue:
        n_run = sum(c.n for c in running)
        if not running and queue[0][0] > now:
            now = queue[0][0]  # idle until the next request arrives
        budget = budget_max
        decoding = [c for c in running if c.done >= plen]
        b = sum(c.n for c in decoding)
        budget -= b
        ctx = sum(c.n * (plen + c.made) for c in decoding) / b if b else 0.0
        prefill, finishing = 0, []
        for c in [c for c in running if c.done < plen]:  # requests still prefilling, in admission order
            if budget <= 0:
                break
            need = plen - c.done
            whole = min(c.n, budget // need)
            if whole == c.n:
                prefill += whole * need
                budget -= whole * need
                finishing.append(c)
                continue
            # the budget ends inside this cohort: split it into finished / partly done / untouched requests
            parts = []
            if whole:
                head, rest = _split(c.arrivals, whole)
                parts.append(_Cohort(whole, plen, head))
                c.arrivals, c.n = rest, c.n - whole
                prefill += whole * need
                budget -= whole * need
            if budget > 0:
                head, rest = _split(c.arrivals, 1)
                parts.append(_Cohort(1, c.done + budget, head))
                c.arrivals, c.n = rest, c.n - 1
                prefill += budget
                budget = 0
            i = running.index(c)
            running[i:i] = parts
            finishing += [p for p in parts if p.done >= plen]
            if c.n == 0:
                running.remove(c)
            break
        for c in finishing:
            c.done = plen
        while budget > 0 and n_run < cap and queue and queue[0][0] <= now:  # admit waiting requests
            k = _arrived(queue, now, cap - n_run)
            whole = min(k, budget // plen)
            if whole:
                c = _Cohort(whole, plen, _take(queue, whole))
                running.append(c)
                finishing.append(c)
                prefill += whole * plen
                budget -= whole * plen
                n_run += whole
            elif k:
                running.append(_Cohort(1, budget, _take(queue, 1)))
                prefill += budget
                n_run += 1
                budget = 0
            if whole < k:
                break
        if b == 0 and prefill == 0:
            if queue:  # nothing runnable until the next arrival
                now = max(now, queue[0][0])
                continue
            break
        steps = 1
        if prefill == 0:  # decode only until the next event: sum the steps in closed form
            steps = min(olen - c.made for c in decoding)
            if queue and n_run < cap:
                steps = min(steps, _steps_until(table, b, ctx, queue[0][0] - now))
            slope = table.decode_slope_s(b)
            dt = steps * table.decode_s(b, ctx) + slope * steps * (steps - 1) / 2.0
        else:
            dt = table.step_s(b, ctx, prefill)
        now += dt
        busy_integral += dt * n_run
        for c in decoding:
            c.made += steps
        for c in finishing:
            c.made, c.first_s = 1, now
            ttfts += [(now - t, n) for t, n in c.arrivals]
        done = [c for c in running if c.made >= olen]
        for c in done:
            running.remove(c)
            finished_at = now
            if olen > 1:
                tpots += [((now - c.first_s) / (olen - 1), c.n)]
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
