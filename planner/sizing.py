"""Sizing rules of a deployment: pure functions over numbers, no catalog lookups, no I/O.

The capacity model (``planner.api``) says what ONE replica (a tensor-parallel group of GPUs running one copy of
the model) can do: its TPOT at each batch, whether a batch's KV cache fits, its TTFT. This module turns that
into a fleet and a bill:

    batch per replica   the largest batch whose TPOT meets the target and whose KV cache fits
    concurrency         Little's law: requests in flight = rate x (TTFT + output tokens x TPOT)
    replicas            ceil(concurrency / batch per replica) + spare replicas (N+1: spare = 1)
    GPUs                replicas x GPUs per replica, rounded up to whole nodes when bought by the node
    monthly cost        owned: GPUs x (purchase / amortization months + TDP x PUE x $/kWh x 730 h)
                        cloud: GPUs x $/GPU-hour x 730 h

Every argument may be a number or a numpy array; arrays broadcast. Units are in the names: seconds, requests
per second, tokens, US dollars, watts, hours. Counts come back as floats (NaN where undefined).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

ArrayLike = float | np.ndarray

#: Hours in an average month: 8,760 h / 12 = 730 h (the convention cloud providers bill monthly estimates on).
HOURS_PER_MONTH = 730.0
SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600.0


def _f(x: ArrayLike) -> np.ndarray:
    return np.asarray(x, dtype=float)


# -- one replica ----------------------------------------------------------------------------------------


def largest_batch_meeting(tpot_s: ArrayLike, batches: ArrayLike, tpot_target_s: ArrayLike) -> np.ndarray:
    """The largest batch whose TPOT is at most the target, along the last axis; 0 where none is.

    ``tpot_s[..., i]`` is the TPOT at ``batches[i]``, NaN where that batch's KV cache does not fit; so the
    answer is the largest batch that both fits and is fast enough. TPOT need not be monotonic in the batch.
    """
    t = _f(tpot_s)
    b = np.broadcast_to(_f(batches), t.shape)
    target = _f(tpot_target_s)
    target = target[..., None] if target.ndim else target
    ok = np.isfinite(t) & (t <= target)
    return np.max(np.where(ok, b, 0.0), axis=-1)


def concurrency(rate_per_s: ArrayLike, ttft_s: ArrayLike, output_tokens: ArrayLike, tpot_s: ArrayLike) -> np.ndarray:
    """Requests in flight by Little's law: arrival rate x time in the system = rate x (TTFT + output tokens x TPOT).

    20 requests/s, TTFT 0.5 s, 300 output tokens at 40 ms: 20 x (0.5 + 12) = 250 requests in flight.
    """
    return _f(rate_per_s) * (_f(ttft_s) + _f(output_tokens) * _f(tpot_s))


def rate_from_concurrency(
    concurrent: ArrayLike, ttft_s: ArrayLike, output_tokens: ArrayLike, tpot_s: ArrayLike
) -> np.ndarray:
    """Little's law solved for the rate: in-flight requests / (TTFT + output tokens x TPOT), requests per second."""
    return _f(concurrent) / (_f(ttft_s) + _f(output_tokens) * _f(tpot_s))


def prefill_share(ttft_s: ArrayLike, output_tokens: ArrayLike, tpot_s: ArrayLike, batch: ArrayLike) -> np.ndarray:
    """Share of a replica's time spent on prompts: TTFT / (TTFT + output tokens x TPOT / batch).

    A prompt has the replica to itself for its TTFT; a decode step is shared by the whole batch, so each
    request uses output tokens x TPOT / batch of it. This splits the bill between input and output tokens.
    """
    prefill = _f(ttft_s)
    decode = _f(output_tokens) * _f(tpot_s) / _f(batch)
    return prefill / (prefill + decode)


# -- the fleet ------------------------------------------------------------------------------------------


def replicas_needed(
    concurrent: ArrayLike, batch_per_replica: ArrayLike, spare_replicas: ArrayLike = 0, prefill_load: ArrayLike = 0.0
) -> np.ndarray:
    """Replicas to carry ``concurrent`` requests at ``batch_per_replica`` each, plus the spares: ceil(c / b) + spare.

    ``prefill_load`` (rate x TTFT: replica-seconds of prompt processing per second) is a floor: prompts alone
    must not need more than all of the serving replicas' time. At least one serving replica even at zero
    traffic. NaN where the batch is 0 (the replica cannot meet the target).
    """
    b = _f(batch_per_replica)
    with np.errstate(divide="ignore", invalid="ignore"):
        serving = np.maximum(np.maximum(np.ceil(_f(concurrent) / b), np.ceil(_f(prefill_load))), 1.0)
    return np.where(b > 0, serving + _f(spare_replicas), np.nan)


def gpus_to_buy(replicas: ArrayLike, gpus_per_replica: ArrayLike, node_size: ArrayLike = 1) -> np.ndarray:
    """GPUs bought: replicas x GPUs per replica, rounded up to whole nodes of ``node_size`` GPUs."""
    node = _f(node_size)
    return np.ceil(_f(replicas) * _f(gpus_per_replica) / node) * node


def replicas_deployed(gpus: ArrayLike, gpus_per_replica: ArrayLike) -> np.ndarray:
    """Replicas the bought GPUs hold: floor(GPUs / GPUs per replica) (node rounding can leave room for more)."""
    return np.floor(_f(gpus) / _f(gpus_per_replica))


def utilization(concurrent: ArrayLike, replicas: ArrayLike, batch_per_replica: ArrayLike) -> np.ndarray:
    """Share of the fleet's batch slots in use: concurrent requests / (replicas x batch per replica)."""
    return _f(concurrent) / (_f(replicas) * _f(batch_per_replica))


def headroom(concurrent: ArrayLike, replicas: ArrayLike, batch_per_replica: ArrayLike) -> np.ndarray:
    """Share of the fleet's batch slots still free: 1 - utilization (0.25: a quarter of the slots are idle)."""
    return 1.0 - utilization(concurrent, replicas, batch_per_replica)


# -- money ----------------------------------------------------------------------------------------------


def amortized_usd_per_gpu_month(purchase_usd: ArrayLike, amortization_months: ArrayLike) -> np.ndarray:
    """Straight-line amortization: purchase price / months (no residual value, no interest)."""
    return _f(purchase_usd) / _f(amortization_months)


def power_usd_per_gpu_month(
    tdp_w: ArrayLike, pue: ArrayLike, usd_per_kwh: ArrayLike, hours: ArrayLike = HOURS_PER_MONTH
) -> np.ndarray:
    """Electricity at full board power: TDP / 1000 x PUE x $/kWh x hours. 700 W, PUE 1.3, $0.12: $79.72 a month."""
    return _f(tdp_w) / 1000.0 * _f(pue) * _f(usd_per_kwh) * _f(hours)


def cloud_usd_per_gpu_month(usd_per_gpu_hour: ArrayLike, hours: ArrayLike = HOURS_PER_MONTH) -> np.ndarray:
    """Rented around the clock: $/GPU-hour x hours. $2.99 x 730 h = $2,182.70 a month."""
    return _f(usd_per_gpu_hour) * _f(hours)


def tokens_per_month(rate_per_s: ArrayLike, tokens_per_request: ArrayLike) -> np.ndarray:
    """Tokens served in a month at a steady rate: rate x tokens per request x 730 h x 3600 s."""
    return _f(rate_per_s) * _f(tokens_per_request) * SECONDS_PER_MONTH


def usd_per_million_tokens(monthly_usd: ArrayLike, monthly_tokens: ArrayLike) -> np.ndarray:
    """Dollars per million tokens: monthly cost / monthly tokens x 1e6."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return _f(monthly_usd) / _f(monthly_tokens) * 1e6


# -- one option, end to end -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Replica:
    """What one replica does at its chosen batch (from the capacity model): the input of ``size``."""

    gpus: float  # tensor-parallel group size
    batch: float  # sequences per replica (0: no batch meets the TPOT target)
    tpot_s: float  # at that batch and the sizing context
    ttft_s: float  # of a high-percentile prompt
    ttft_mean_s: float  # of a mean prompt (for Little's law)


@dataclass(frozen=True)
class Fleet:
    """A sized deployment; each field may be an array when the rates are."""

    concurrency_peak: np.ndarray
    concurrency_average: np.ndarray
    replicas_needed: np.ndarray  # serving + spare
    gpus: np.ndarray  # bought (rounded to nodes) or rented
    replicas: np.ndarray  # that the GPUs hold
    usd_per_gpu_month: np.ndarray
    monthly_usd: np.ndarray
    utilization_average: np.ndarray
    headroom_peak: np.ndarray
    usd_per_million_input: np.ndarray
    usd_per_million_output: np.ndarray
    prompt_bound: np.ndarray  # True where prompt processing (rate x TTFT), not batch slots, sets the replicas


def size(
    replica: Replica,
    peak_rate_per_s: ArrayLike,
    average_rate_per_s: ArrayLike,
    output_tokens_mean: float,
    prompt_tokens_mean: float,
    spare_replicas: float,
    node_size: float,
    usd_per_gpu_month: float,
) -> Fleet:
    """Size the fleet for a peak rate and cost it; utilization and cost per token at the average rate.

    Little's law uses the mean prompt's TTFT and the mean output length; the batch (and its TPOT) was chosen
    for the high-percentile sequence length, so every slot can hold a long request.
    """
    peak = concurrency(peak_rate_per_s, replica.ttft_mean_s, output_tokens_mean, replica.tpot_s)
    avg = concurrency(average_rate_per_s, replica.ttft_mean_s, output_tokens_mean, replica.tpot_s)
    prompt_load = _f(peak_rate_per_s) * replica.ttft_mean_s
    need = replicas_needed(peak, replica.batch, spare_replicas, prompt_load)
    with np.errstate(divide="ignore", invalid="ignore"):
        prompt_bound = np.ceil(prompt_load) > np.ceil(peak / replica.batch)
    gpus = gpus_to_buy(need, replica.gpus, node_size)
    held = replicas_deployed(gpus, replica.gpus)
    monthly = gpus * _f(usd_per_gpu_month)
    share_in = prefill_share(replica.ttft_mean_s, output_tokens_mean, replica.tpot_s, replica.batch)
    per_in = usd_per_million_tokens(monthly * share_in, tokens_per_month(average_rate_per_s, prompt_tokens_mean))
    per_out = usd_per_million_tokens(
        monthly * (1.0 - share_in), tokens_per_month(average_rate_per_s, output_tokens_mean)
    )
    return Fleet(
        peak,
        avg,
        need,
        gpus,
        held,
        np.broadcast_to(_f(usd_per_gpu_month), np.shape(gpus)),
        monthly,
        utilization(avg, held, replica.batch),
        headroom(peak, held, replica.batch),
        per_in,
        per_out,
        prompt_bound,
    )
