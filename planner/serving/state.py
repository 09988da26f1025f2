"""The state of a simulated serving run (``planner.serving.simulate``): requests grouped in cohorts of the same progress,
waiting, prefilling or decoding, and the KV cache tokens they hold."""

from __future__ import annotations

import heapq
import itertools
import math
from collections import deque


class Cohort:
    """Requests with the same progress: ``n`` of ``prompt`` prompt and ``olen`` output tokens each (in decode steps
    when a step makes more than one: ``planner.serving.simulate._in_steps``), their TPOT's denominator ``div`` (output
    tokens after the first; None: olen - 1). Their prefill computes ``need`` tokens (the prompt; after a preemption
    the prompt and the ``out0`` outputs made before it), ``done`` of them so far; once decoding, their output so far
    is ``steps - base`` (decode steps of the run)."""

    __slots__ = ("n", "prompt", "olen", "need", "done", "out0", "base", "arrivals", "first_s", "ready_s", "seq", "div")

    def __init__(self, n, prompt, olen, arrivals, ready_s, *, need=None, out0=0, first_s=math.nan, div=None):
        self.n, self.prompt, self.olen, self.arrivals, self.ready_s = n, prompt, olen, arrivals, ready_s
        self.need, self.done, self.out0, self.first_s = need or prompt, 0, out0, first_s
        self.base, self.seq = None, 0
        self.div = olen - 1 if div is None else div

    def fresh_like(self, other: Cohort) -> bool:
        """Whether the two can be admitted as one cohort: new requests of the same lengths."""
        return (
            self.out0 == other.out0 == 0
            and self.prompt == other.prompt
            and self.olen == other.olen
            and self.div == other.div
        )

    def part(self, k: int, **kw) -> Cohort:
        """The last ``k`` requests split off as a cohort of their own (``kw``: what differs)."""
        head, tail = _split(self.arrivals, self.n - k)
        self.arrivals, self.n = head, self.n - k
        c = Cohort(
            k, self.prompt, self.olen, tail, self.ready_s, need=self.need, out0=self.out0, first_s=self.first_s,
            div=self.div,
        )  # fmt: skip
        c.done = self.done
        for name, value in kw.items():
            setattr(c, name, value)
        return c


def _split(arrivals: list[tuple[float, int]], k: int) -> tuple[list, list]:
    """The first ``k`` requests of ``arrivals`` (``(sent at, how many)`` pairs) and the rest."""
    if len(arrivals) == 1:  # (most cohorts: one send time; the loop below, unrolled)
        t, n = arrivals[0]
        if k >= n:
            return [(t, n)], []
        return ([(t, k)], [(t, n - k)]) if k > 0 else ([], [(t, n)])
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


class Run:
    """A run's state: requests waiting (``queue``), prefilling and decoding (``running``, in admission order), the
    decode steps so far, and the KV tokens they hold."""

    def __init__(self, kv_tokens: float, tokens_per_step: float = 1.0, block_tokens: int = 1):
        self.kv = kv_tokens
        self.a = float(tokens_per_step)  # output tokens a decode step adds per request (speculative decoding: > 1)
        self.block = max(int(block_tokens), 1)  # a reservation's whole blocks (``pad``); 1: token-exact
        self.padded = 0.0  # the running requests' ``pad``, all together
        self.queue: deque[Cohort] = deque()
        self.running: dict[int, Cohort] = {}
        self.prefilling: list[Cohort] = []
        self.heap: list[tuple[int, int]] = []  # (decode step at which a decoding cohort finishes, its seq)
        self.seq = self.n_run = self.b = self.nbase = self.dec_prompt = self.dec_olen = self.steps = 0
        self.preemptions = 0

    def made(self) -> int:
        """Output tokens made so far by the decoding requests, all together."""
        return self.b * self.steps - self.nbase

    def held(self) -> float:
        """KV tokens held: prompts and outputs fed back of decoding requests (``a`` tokens a step), computed prompt of
        prefilling ones."""
        held = self.dec_prompt + self.a * (self.b * self.steps - self.nbase) - self.b
        if not self.prefilling:  # (most steps: skips the sum; adding its 0 would change nothing)
            return held
        return held + sum(c.n * c.done for c in self.prefilling)

    def pad(self, c: Cohort) -> float:
        """Token slots one request of ``c`` reserves beyond its prompt and whole output, x = ``need`` + ``a`` x (olen -
        out0): ceil(x / B) x B - x for blocks of B = ``block`` tokens (``Scheduler.block_tokens``: TensorRT-LLM's
        ``GUARANTEED_NO_EVICT`` reserves whole blocks to completion), 0 when B is 1."""
        if self.block <= 1:
            return 0.0
        x = c.need + self.a * (c.olen - c.out0)
        return math.ceil(x / self.block - 1e-9) * self.block - x

    def unheld_reserved(self) -> float:
        """Token slots the running requests' whole-block reservations take beyond what ``held`` and the outputs still
        to come count: their ``pad``, and each decoding request's newest token (made, not yet fed back, so not in
        ``held``, while a reservation to completion counts its every token). 0 when ``block`` is 1."""
        return self.padded + self.b if self.block > 1 else 0.0

    def start(self, c: Cohort, *, new: bool = True) -> None:
        """``c`` joins the running set (``new``: admitted now; else split off a running cohort)."""
        self.seq += 1
        c.seq = self.seq
        self.running[c.seq] = c
        if new:
            self.n_run += c.n
            if self.block > 1:
                self.padded += c.n * self.pad(c)

    def decode(self, c: Cohort) -> None:
        """``c`` made its next token at the end of the last step (its prefill done): from now on it decodes."""
        c.done, c.base = c.need, self.steps - (c.out0 + 1)
        self.b += c.n
        self.nbase += c.n * c.base
        self.dec_prompt += c.n * c.prompt
        self.dec_olen += c.n * c.olen
        heapq.heappush(self.heap, (c.base + c.olen, c.seq))

    def drop(self, c: Cohort, k: int) -> None:
        """``k`` requests of ``c`` (already taken off ``c.n``) leave the running set (finished or preempted)."""
        self.n_run -= k
        if self.block > 1:
            self.padded -= k * self.pad(c)
        if c.base is not None:
            self.b -= k
            self.nbase -= k * c.base
            self.dec_prompt -= k * c.prompt
            self.dec_olen -= k * c.olen
        if c.n == 0:
            del self.running[c.seq]
            if c.base is None:
                self.prefilling.remove(c)

    def preempt(self, headroom: int, now: float, decoding_only: bool) -> bool:
        """Preempt the newest running requests until ``headroom`` free tokens per decoding request are left; each
        goes back to the head of the queue to recompute what it had (``Cohort.need``). Whether any was."""
        hit = False
        while self.running and self.kv - self.held() < headroom * self.b:
            c = next((c for c in reversed(self.running.values()) if c.base is not None or not decoding_only), None)
            if c is None:
                break
            excess = headroom * self.b - (self.kv - self.held())
            if c.base is None:  # prefilling: frees what it computed
                k = c.n if c.done <= 0 else min(c.n, math.ceil(excess / c.done))
                back = c.part(k, ready_s=now, done=0)
            else:
                made = self.steps - c.base
                k = min(c.n, math.ceil(excess / (c.prompt + self.a * made - 1 + headroom)))
                back = c.part(k, ready_s=now, out0=made, need=c.prompt + round(self.a * made), done=0)
            self.drop(c, k)
            self.queue.appendleft(back)
            self.preemptions += k
            hit = True
        return hit

    def waiting(self, now: float, limit: int) -> int:
        """How many requests at the head of the queue are ready and can be admitted as one cohort (at most ``limit``)."""
        total, first = 0, self.queue[0] if self.queue else None
        for c in self.queue:
            if c.ready_s > now or total >= limit or (total and not c.fresh_like(first)):
                break
            total += c.n
        return min(total, limit)

    def take(self, k: int) -> Cohort:
        """The first ``k`` requests of the queue as one cohort (``waiting`` says how many can be)."""
        first = self.queue[0]
        if first.n > k:
            out = first.part(first.n - k)  # the queue keeps the later requests
            out, self.queue[0] = self.queue[0], out
            return out
        out = self.queue.popleft()
        while out.n < k:
            c = self.queue[0]
            used = min(c.n, k - out.n)
            if used < c.n:
                self.queue[0] = c.part(c.n - used)
            else:
                self.queue.popleft()
            out.arrivals += c.arrivals
            out.n += used
        return out

    def next_finish(self) -> int:
        """The decode step at which the first decoding cohort finishes (stale heap entries dropped)."""
        heap, running = self.heap, self.running
        while heap:
            step, seq = heap[0]
            c = running.get(seq)
            if c is not None and c.base is not None and c.base + c.olen == step:
                return step
            heapq.heappop(heap)
        return math.inf


def requests(lengths, start: int, count: int, t: float, cached_fraction: float = 0.0) -> list[Cohort]:
    """Cohorts for requests ``start`` .. ``start + count - 1`` sent at ``t``: one per run of equal lengths (each
    (prompt, output) or (prompt, output in steps, TPOT's denominator): ``Cohort``). A prompt whose
    ``cached_fraction`` is in the prefix cache computes the rest (whole tokens, at least one)."""
    out: list[Cohort] = []
    for key, run in itertools.groupby(lengths[start : start + count]):
        n = sum(1 for _ in run)
        p, o = key[0], key[1]
        out.append(Cohort(n, p, o, [(t, n)], t, need=cached_need(p, cached_fraction), div=_div(key)))
    return out


def _div(lengths: tuple) -> int | None:
    """A request's TPOT denominator where its lengths carry one (a third entry), else None (output - 1)."""
    return lengths[2] if len(lengths) > 2 else None


def arrived(lengths, arrivals_s, cached_fraction: float = 0.0) -> list[Cohort]:
    """A cohort for each request, sent at its own time (``arrivals_s[i]``, seconds): ``requests(lengths, i, 1, t)`` for
    each, built in one pass (an open-loop run of thousands of requests)."""
    return [  # (``cached_need`` and ``_div`` inline: thousands of requests a run)
        Cohort(
            1,
            key[0],
            key[1],
            [(t, 1)],
            t,
            need=max(key[0] - int(key[0] * cached_fraction), 1),
            div=key[2] if len(key) > 2 else None,
        )
        for key, t in zip(lengths, map(float, arrivals_s), strict=False)  # (fewer arrivals: fewer sent)
    ]


def queued(lengths, sent_s, serial_s: float, free_s: float, cached_fraction: float = 0.0) -> tuple[list[Cohort], float]:
    """A cohort for each request sent at ``sent_s[i]`` (seconds, in the order sent) that then waits its turn at a
    front end serving one request at a time for ``serial_s`` seconds each (a FIFO single server, free from
    ``free_s``): it reaches the engine at d_i = max(sent_i, d_(i-1) + serial_s), d_(-1) = ``free_s`` - serial_s. The
    send time stays its arrival (TTFT counts the wait); ``ready_s`` is d_i. Returns the cohorts and when the front end
    is next free (the last d_i + ``serial_s``). ``sent_s`` already counts each request's own ``serial_s``: an idle
    front end delays nothing beyond it."""
    out: list[Cohort] = []
    d = free_s - serial_s
    for key, t in zip(lengths, map(float, sent_s), strict=False):
        d = max(t, d + serial_s)
        out.append(Cohort(1, key[0], key[1], [(t, 1)], d, need=cached_need(key[0], cached_fraction), div=_div(key)))
    return out, d + serial_s


def cached_need(prompt: int, cached_fraction: float) -> int:
    """Prompt tokens a prefill computes when ``cached_fraction`` of the prompt is in the prefix cache: the rest, whole
    tokens, at least one."""
    return max(prompt - int(prompt * cached_fraction), 1)
