"""What a benchmark run reports: mean TTFT, mean TPOT and the run's output rate, predicted from the model.

``planner.throughput()`` is the *steady-state decode* rate, batch / TPOT: output tokens per second once every
sequence of the batch is decoding, prefill and ramp-up excluded. A benchmark's "output throughput" is a
*whole run's* rate: every output token over the wall time of the run, prompts' prefill included. That is
``predict_benchmark(...).output_tokens_per_s``; ``.decode_tokens_per_s`` is the steady-state figure again.

Three kinds of run, as engines' benchmark scripts drive them:

- ``kind="static"`` (LMDeploy ``profile_generation``, TensorRT-LLM static-batch tables, vLLM
  ``benchmark_latency``): ``batch`` prompts prefilled together, then ``output_len - 1`` decode steps of the
  whole batch. TTFT = the batch's prefill; TPOT = the decode step at the mean context ``input + output / 2``
  (decode time is linear in the context); output rate = batch x output / (TTFT + (output - 1) x TPOT).
- ``kind="serving"`` without a rate (``benchmark_serving --max-concurrency N``, or all prompts at once):
  a continuous-batching server takes ``batch`` requests at a time. The first wave's prompts prefill in
  order, so request k gets its first token after k of them: mean TTFT = (N + 1) / 2N x the prefill of all N.
  Each request's TPOT carries the prefills of the others that run between its decode steps: (N - 1) / 2 in
  the first wave, N in steady state when more prompts wait (each finished request is replaced by one).
- ``kind="serving"`` with ``request_rate`` (Poisson arrivals, requests/s): the concurrency settles where
  Little's law holds, N = rate x request latency; prefills arriving at ``rate`` take their share of every
  decode step, TPOT = step(N) / (1 - rate x prefill time). Past the server's capacity the queue grows:
  requests wait (num_prompts / 2) x (1 / capacity - 1 / rate) on average, and the run runs at capacity.

Each is a few lines over ``planner.api.decode_step`` and ``planner.api.prefill``: the time terms live there.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Literal

import numpy as np

from planner import api
from planner.errors import InvalidInputError

KINDS = ("static", "serving")
#: Fixed-point iterations of the rate model (concurrency and TPOT converge geometrically; 30 is ample).
RATE_ITERATIONS = 30


@dataclass(frozen=True)
class BenchmarkRun:
    """A benchmark's figures (floats, or arrays when inputs are arrays): means over requests, whole-run rate."""

    ttft_s: Any  # mean time to first token of a request (queueing included)
    tpot_s: Any  # mean time per output token after the first, of a request
    output_tokens_per_s: Any  # the run's output rate: all output tokens / wall time of the run
    decode_tokens_per_s: Any  # steady-state decode: concurrency / decode step (what planner.throughput() gives)
    duration_s: Any  # wall time of the run
    concurrency: Any  # sequences decoding together


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
    gpus: Any = None,
    weight_precision: Any = None,
    kv_precision: Any = None,
    engine: Any = None,
    calibration: Any = None,
    catalog: Any = None,
    errors: api.Errors = "raise",
) -> BenchmarkRun:
    """TTFT, TPOT and output rate of a benchmark run (see the module docstring for the three kinds).

    ``batch``: the static batch, or the server's concurrency limit (``--max-concurrency``; with a rate, the
    most sequences the server runs at once). ``num_prompts`` defaults to ``batch``. Arrays broadcast.
    """
    if kind not in KINDS:
        raise InvalidInputError(f"kind {kind!r} is not a benchmark kind; use one of {', '.join(KINDS)}")
    if kind == "static" and request_rate is not None:
        raise InvalidInputError("a static batch has no request rate; use kind='serving' with request_rate")
    inp = np.maximum(_arr(input_len), 1.0)
    out = np.maximum(_arr(output_len), 1.0)
    b = _arr(batch)
    prompts = b if num_prompts is None else np.maximum(_arr(num_prompts), 1.0)
    conc = np.minimum(b, prompts)
    opts = dict(engine=engine, catalog=catalog, calibration=calibration, errors=errors)
    ctx = np.floor(inp + out / 2.0)

    def whole_step(n: Any) -> np.ndarray:
        d = api.decode_step(
            gpu,
            model,
            ctx,
            batch=n,
            kv_precision=kv_precision,
            gpus=gpus,
            weight_precision=weight_precision,
            check_fit=False,
            **opts,
        )
        return _arr(d.step_s)

    def step(n: Any) -> np.ndarray:
        """Decode step of ``n`` sequences; a fractional mean concurrency interpolates between whole batches."""
        n = np.maximum(_arr(n), 1.0)
        low = np.floor(n)
        if np.all(low == n):
            return whole_step(n)
        return whole_step(low) + (n - low) * (whole_step(low + 1.0) - whole_step(low))

    one = api.prefill(gpu, model, inp, gpus=gpus, weight_precision=weight_precision, kv_precision=kv_precision, **opts)
    one_prefill = _arr(one.ttft_s)
    if kind == "static":
        ttft = _arr(
            api.prefill(
                gpu,
                model,
                inp,
                gpus=gpus,
                weight_precision=weight_precision,
                kv_precision=kv_precision,
                batch=conc,
                **opts,
            ).ttft_s
        )
        tpot = step(conc)
        duration = ttft + (out - 1.0) * tpot
        waves = np.ceil(prompts / conc)
        return _finish(ttft, tpot, waves * conc * out / (waves * duration), conc / tpot, waves * duration, conc)
    if request_rate is None:
        return _serving_at_once(gpu, model, inp, out, conc, prompts, one_prefill, step, opts, gpus, weight_precision)
    return _serving_at_rate(_arr(request_rate), out, b, prompts, one_prefill, step)


def _finish(ttft, tpot, rate, decode_rate, duration, conc) -> BenchmarkRun:
    vals = [np.asarray(v, dtype=float) for v in (ttft, tpot, rate, decode_rate, duration, conc)]
    shape = np.broadcast(*vals).shape
    vals = [np.broadcast_to(v, shape).astype(float) for v in vals]
    return BenchmarkRun(*[v.item() if v.ndim == 0 else v for v in vals])


def _serving_at_once(gpu, model, inp, out, conc, prompts, one_prefill, step, opts, gpus, weight_precision):
    """``prompts`` requests, at most ``conc`` at a time, all waiting at the start."""
    wave_prefill = _arr(
        api.prefill(gpu, model, inp, gpus=gpus, weight_precision=weight_precision, batch=conc, **opts).ttft_s
    )
    first_ttft = wave_prefill * (conc + 1.0) / (2.0 * conc)
    decode = step(conc)
    steps = np.maximum(out - 1.0, 1.0)
    first_tpot = decode + (conc - 1.0) / 2.0 * one_prefill / steps
    steady_tpot = decode + conc * one_prefill / steps  # every finished request's place refilled
    later = prompts - conc  # requests that start when an earlier one ends: one prefill step, no queue
    later_ttft = one_prefill + decode / 2.0
    ttft = (conc * first_ttft + later * later_ttft) / prompts
    tpot = (conc * first_tpot + later * steady_tpot) / prompts
    first_end = wave_prefill + (out - 1.0) * first_tpot
    duration = first_end + later / conc * (later_ttft + (out - 1.0) * steady_tpot)
    return _finish(ttft, tpot, prompts * out / duration, conc / decode, duration, conc)


def _serving_at_rate(rate, out, max_conc, prompts, one_prefill, step):
    """Poisson arrivals at ``rate``: Little's law for the concurrency, prefills' share of every step."""

    def latency(n, served):
        tpot = step(n) / (1.0 - np.minimum(served * one_prefill, 0.9))  # share of time spent on new prompts
        return one_prefill + (out - 1.0) * tpot, tpot

    capacity = np.zeros(np.broadcast(rate, out, max_conc, one_prefill).shape)
    for _ in range(RATE_ITERATIONS):  # requests/s completed at the concurrency limit
        capacity = max_conc / latency(max_conc, capacity)[0]
    served = np.minimum(rate, capacity)
    n = np.ones_like(capacity)
    for _ in range(RATE_ITERATIONS):
        n = np.clip(served * latency(n, served)[0], 1.0, max_conc)
    lat, tpot = latency(n, served)
    saturated = rate > served * (1.0 + 1e-6)
    wait = np.where(saturated, prompts / 2.0 * (1.0 / served - 1.0 / rate), 0.0)
    ttft = one_prefill + tpot / 2.0 + wait  # a new prompt waits half a step on average, then prefills
    duration = prompts / served + lat
    return _finish(ttft, tpot, prompts * out / duration, n / step(n), duration, n)


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
