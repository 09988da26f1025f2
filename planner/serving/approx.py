"""A closed-form approximation of latency under load, vectorized over request rates: for sweeps and Excel ranges.

The simulation (``planner.serving.load``) steps through 1,000 requests, ~0.05 s a scenario; this evaluates a
whole array of rates on one deployment at once, from the same step times (``StepTable``) and limits
(``Scheduler``). Its error against the simulation is measured by ``bench/load_approx.py`` and stated in
docs/model.md ("Latency under load"); use the simulation for a single figure.

Mean field, for Poisson arrivals at rate x of requests of P prompt and O output tokens (vLLM's mixed steps):

    steps      a step lasts tau: B decoding requests at the mean context C = P + O / 2, and the prompts that
               arrived during the step before, k ~ Poisson(x tau): tau = e^-k' decode(B, C) + (1 - e^-k') step(B, C,
               P k' / (1 - e^-k')), k' = x tau (a step with prompts pays the prefill's fixed costs once);
               B = x (O - 1) tau (Little's law over the decode phase), at most the engine's slots. Solved by damped
               fixed-point iteration.
    TPOT       a request's steps average over its O - 1 steps; the requests decoding beside it number about
               N ~ Poisson(B), each having added its prompt's work once: TPOT(N) = decode(N, C) + N x
               (prefill(P) - shared) / (O - 1). Percentile q at N = B + z_q sqrt(B) + (z_q^2 - 1) / 6 (Poisson's, Cornish-Fisher).
    TTFT       the rest of the step it arrives in (uniform: q x tau), its prefill (step(B, C, P), or in chunks of the
               budget left beside the decodes, K - B tokens a step), and the wait for the budget: an M/D/1 queue of
               prompts, service S = P / (K - B) x step(B, C, K - B), load rho = x S, wait percentile
               S / (2 (1 - rho)) x ln(rho / (1 - q)) (exponential tail, P(wait > 0) = rho). An engine that
               schedules a step ahead (``RunBehaviour.async_scheduling``: TensorRT-LLM 1.x, SGLang from 0.4,
               ``planner.serving.load.overlap_scheduling``) admits it one step later: + tau; the front end's
               time (``RunBehaviour.frontend_s``) is added.

Beyond capacity (rho >= 1, or the slots full) every figure is infinite: the queue grows without bound.
"""

from __future__ import annotations

import functools
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

import numpy as np

from planner.serving.simulate import DEFAULT_BEHAVIOUR, RunBehaviour, Scheduler, StepTable

if TYPE_CHECKING:
    from planner.serving.benchmark import ServingSetup
    from planner.serving.load import Replica

#: Fixed-point iterations and damping of the step time (converges to 1e-9 relative well within this).
ITERATIONS = 200
DAMPING = 0.5


def _decode(table: StepTable, batch: np.ndarray, context: float) -> np.ndarray:
    """Decode step of a fractional batch (linear between whole batches; 0 decoders cost nothing)."""
    grid, decode_lo_s, decode_hi_s, _, _ = table.arrays()
    lo = np.interp(batch, grid, decode_lo_s)
    hi = np.interp(batch, grid, decode_hi_s)
    span = table.ctx_hi_tokens - table.ctx_lo_tokens
    frac = (context - table.ctx_lo_tokens) / span if span > 0 else 0.0
    return np.where(batch > 0, lo + (hi - lo) * frac, 0.0)


def _prefill(table: StepTable, tokens: np.ndarray) -> np.ndarray:
    _, _, _, prefill_tokens, prefill_s = table.arrays()
    return np.interp(tokens, prefill_tokens, prefill_s)


def _step(
    table: StepTable, batch: np.ndarray, context: float, tokens: np.ndarray, dec: np.ndarray | None = None
) -> np.ndarray:
    """``StepTable.step_s`` over arrays: decode + prefill - shared, at least the larger alone (``dec``: the decode
    step ``_decode(table, batch, context)`` where the caller has it already)."""
    dec = _decode(table, batch, context) if dec is None else dec
    pre = _prefill(table, tokens)
    both = np.maximum(np.maximum(dec, pre), dec + pre - table.shared_s)
    return np.where(tokens <= 0, dec, np.where(batch <= 0, pre, both))


def approximate_load(
    table: StepTable,
    scheduler: Scheduler,
    prompt_tokens: float,
    output_tokens: float,
    rate_per_s: np.ndarray,
    percentile: float,
    behaviour: RunBehaviour = DEFAULT_BEHAVIOUR,
) -> dict[str, np.ndarray]:
    """TTFT and TPOT at ``percentile`` (0-100), seconds, and the mean decoding batch, for each rate (module
    docstring); infinite beyond capacity. ``behaviour`` (``RunBehaviour``): its ``async_scheduling`` (the engine
    schedules a step ahead), ``frontend_s`` (added to TTFT) and ``tokens_per_step`` a > 1, speculative decoding (``table`` in steps, ``planner.serving.speculative.speculative_table``): a request decodes
    for (O - 1) / a steps, and TPOT is the per-step figure / a.

    Answers are remembered (``APPROX_KEPT`` by every input's value; each call gets its own copies of the arrays):
    ``planner export`` asks the same deployments again for the outlook, the levers and every repeated review
    (examples/budget-review.toml: 49 calls, ~3 s CPU a review once its runs are simulated)."""
    x = np.asarray(rate_per_s, dtype=float)
    out = _approximate_load(
        table, scheduler, float(prompt_tokens), float(output_tokens), x.shape, x.tobytes(),
        float(percentile), behaviour,
    )  # fmt: skip
    return {k: v.copy() for k, v in out.items()}


#: How many answers of ``approximate_load`` are kept (a review of examples/budget-review.toml asks 49).
APPROX_KEPT = 1024


@functools.lru_cache(maxsize=APPROX_KEPT)
def _approximate_load(
    table: StepTable,
    scheduler: Scheduler,
    prompt_tokens: float,
    output_tokens: float,
    shape: tuple[int, ...],
    rates: bytes,
    percentile: float,
    behaviour: RunBehaviour,
) -> dict[str, np.ndarray]:
    """``approximate_load`` for hashable inputs (the rates as a shape and their float64 bytes, so equal keys are the same
    bits); its arrays are read-only."""
    x = np.frombuffer(rates, dtype=float).reshape(shape)
    a = max(behaviour.tokens_per_step, 1.0)
    p, o = float(prompt_tokens), 1.0 + (max(float(output_tokens), 1.0) - 1.0) / a
    ctx = p + o / 2.0
    slots = float(min(scheduler.max_num_seqs, len(table.decode_lo_s)))
    budget = float(scheduler.max_num_batched_tokens)
    tau = _decode(table, np.ones_like(x), ctx) + 0.0
    batch = np.zeros_like(x)
    for _ in range(ITERATIONS):
        batch = np.minimum(x * (o - 1.0) * tau, slots)
        arrive = x * tau  # prompts arriving during a step, Poisson: a share 1 - e^-k of steps has any
        some = -np.expm1(-arrive)
        with np.errstate(divide="ignore", invalid="ignore"):
            tokens = np.minimum(np.where(some > 0, p * arrive / some, 0.0), budget)
        dec = _decode(table, batch, ctx)  # (once: ``_step`` takes it too)
        new = (1.0 - some) * dec + some * _step(table, batch, ctx, tokens, dec)
        tau = DAMPING * tau + (1.0 - DAMPING) * new
    q = float(percentile) / 100.0
    z = NormalDist().inv_cdf(min(max(q, 1e-9), 1 - 1e-9))
    n = np.maximum(batch + z * np.sqrt(batch) + (z * z - 1.0) / 6.0, 0.0)  # Poisson quantile (Cornish-Fisher)
    extra = np.maximum(_prefill(table, np.full_like(x, p)) - table.shared_s, 0.0)
    tpot = _decode(table, np.maximum(n, 1.0), ctx) + n * extra / max(o - 1.0, 1.0)
    left = np.maximum(budget - batch, 1.0)  # prompt tokens a step can take beside the decodes
    chunks = np.ceil(p / left)
    dec = _decode(table, batch, ctx)
    beside = _step(table, batch, ctx, left, dec)  # a step of the prompt tokens the decodes leave room for
    own = np.where(chunks <= 1, _step(table, batch, ctx, np.full_like(x, p), dec), chunks * beside)
    service = np.minimum(p, left) / left * beside * np.maximum(chunks, 1.0)
    rho = x * service
    with np.errstate(divide="ignore", invalid="ignore"):
        wait = np.where(rho > 1 - q, service / (2 * (1 - rho)) * np.log(rho / (1 - q)), 0.0)
    ttft = q * tau + own + wait + (tau if behaviour.async_scheduling else 0.0) + behaviour.frontend_s
    over = (rho >= 1) | (x * (o - 1.0) * tau > slots) | (x * tau * p > left)
    inf = np.inf
    out = {
        "ttft_s": np.where(over, inf, ttft),
        "tpot_s": np.where(over, inf, tpot / a),
        "batch": np.where(over, inf, batch),
    }
    for v in out.values():
        v.flags.writeable = False
    return out


def approximate_percentiles(
    replica: Replica, prompt_tokens: float, output_tokens: float, rates_per_s: Any, percentile: float = 99
) -> dict[str, np.ndarray]:
    """TTFT and TPOT (``"ttft_s"``, ``"tpot_s"``) at ``percentile``, seconds, and the mean decoding batch, of one
    replica at each rate of ``rates_per_s`` (one deployment, every rate at once); infinite beyond capacity. The
    approximation of the module docstring, TTFT with the replica's front-end time (``Replica.frontend_s``) added;
    ``planner.serving.load.latency_under_load`` simulates one rate."""
    setup = replica.setup(prompt_tokens, output_tokens)
    return approximate_setup_load(setup, prompt_tokens, output_tokens, rates_per_s, percentile, replica.behaviour())


def approximate_setup_load(
    setup: ServingSetup,
    prompt_tokens: float,
    output_tokens: float,
    rates_per_s: Any,
    percentile: float,
    behaviour: RunBehaviour = DEFAULT_BEHAVIOUR,
) -> dict[str, np.ndarray]:
    """``approximate_load`` of a replica's ``setup`` at its rates (requests/s): with several attention ranks
    (``ServingSetup.ranks``) each takes 1 / ranks of a rate, and the mean decoding batch is the ranks' sum."""
    rates = np.asarray(rates_per_s, dtype=float) / setup.ranks
    out = approximate_load(setup.table, setup.scheduler, prompt_tokens, output_tokens, rates, percentile, behaviour)
    out["batch"] = out["batch"] * setup.ranks
    return out
