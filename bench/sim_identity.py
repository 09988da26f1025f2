"""Whether this tree's serving simulation gives the same figures as another tree's, bit for bit.

Run: PYTHONPATH=. python bench/sim_identity.py [--baseline main]

A fixed set of ~30 runs (``SCENARIOS``: vLLM, SGLang and TensorRT-LLM schedulers; rate, burstiness, closed loop, burst
and trace arrivals; fixed and varied lengths; a KV cache small enough to preempt; prefix cache; speculative decoding,
fixed and drawn; async, multi-step, prefill-only, stream stalls, a serial front end, the recv interval, the attention-DP
gate) through ``planner.serving.simulate.simulate`` and ``planner.serving.load.latency_under_load``, and the
approximation (``planner.serving.approx.approximate_percentiles``) at 37 rates for 7 deployments, each in a fresh
process per tree (``--dump``: this tree's answers as JSON, every float as ``float.hex``), then compared field by field
with == (nothing approximate). Prints the count of equal runs and every field that differs; exits 1 on any."""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from baseline import baseline_tree  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


def _plain(x):
    """``x`` as JSON-ready values, every float exact (``float.hex``)."""
    if dataclasses.is_dataclass(x):
        return {f.name: _plain(getattr(x, f.name)) for f in dataclasses.fields(x)}
    if isinstance(x, np.ndarray):
        return [_plain(v) for v in x.tolist()]
    if isinstance(x, (tuple, list)):
        return [_plain(v) for v in x]
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (float, np.floating)):
        return float(x).hex()
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    return repr(x)


def _scenarios():
    """(name, thunk) pairs: each thunk runs one scenario and returns its answer."""
    from planner.serving.benchmark import arrival_times_s
    from planner.serving.load import Replica, latency_under_load, lognormal_lengths
    from planner.serving.simulate import RunBehaviour, simulate
    from planner.serving.speculative import SpeculativeDecoding

    one = Replica("H100", "llama3.1-8b", gpus=1, frontend_s=0.0)
    sgl = Replica("H100", "llama3.1-8b", gpus=1, scheduler="sglang")
    trt = Replica("H100", "llama3.1-8b", gpus=1, scheduler="tensorrt-llm")
    big = Replica("H100", "llama3.1-70b", gpus=4)
    spec = Replica("H100", "llama3.1-8b", gpus=1, speculative=SpeculativeDecoding("ngram", 3, 2.0))
    varied = lognormal_lengths(1024, 256, 400)
    out = []

    def lul(name, replica, p, o, **kw):
        out.append((name, lambda: latency_under_load(replica, p, o, **kw)))

    lul("vllm rate", one, 1024, 256, rate_per_s=8.0)
    lul("vllm rate high", one, 2048, 512, rate_per_s=30.0, num_requests=600)
    lul("vllm bursty", one, 1024, 256, rate_per_s=10.0, burstiness=0.3)
    lul("vllm concurrency", one, 1024, 128, concurrency=64)
    lul("vllm concurrency 1", one, 1024, 128, concurrency=1, num_requests=20)
    lul("vllm burst", one, 512, 512, num_requests=500)
    lul("vllm prefix", one, 4096, 64, rate_per_s=5.0, prefix_hit_rate=0.6)
    lul("vllm varied", one, 1024, 256, rate_per_s=6.0, lengths=varied)
    lul("vllm async stall", one, 1024, 256, rate_per_s=8.0, async_scheduling=True, stream_stall_s=0.002)
    lul("vllm multistep", one, 1024, 256, rate_per_s=6.0, scheduler_steps=8)
    lul("vllm warm", one, 2048, 128, concurrency=16, prefix_hit_rate=0.1, warm_prompts=50)
    lul("sglang rate", sgl, 1024, 256, rate_per_s=8.0)
    lul("sglang concurrency", sgl, 2048, 256, concurrency=128)
    lul("sglang varied", sgl, 1024, 256, concurrency=32, lengths=varied)
    lul("trt rate", trt, 1024, 256, rate_per_s=8.0)
    lul("trt burst", trt, 3000, 300, num_requests=300)
    lul("70b tp4 rate", big, 2048, 256, rate_per_s=4.0)
    lul("spec rate", spec, 1024, 256, rate_per_s=6.0)
    lul("spec concurrency", spec, 1024, 512, concurrency=32)
    lul("trace", one, 1024, 256, arrivals_s=arrival_times_s(300, 5.0, 0.5))

    # straight through ``simulate``: tables of a real setup, schedulers and behaviours that load.py does not reach
    setup = one.setup(1024, 256)
    table = setup.table
    rng = np.random.default_rng(7)
    arr = np.cumsum(rng.exponential(1 / 9.0, 800))
    lens = [(int(a), int(b)) for a, b in zip(rng.integers(64, 4000, 800), rng.integers(2, 900, 800), strict=True)]
    small = dict(max_num_seqs=256, max_num_batched_tokens=2048)

    def sim(name, kind, kv, n, **kw):
        from planner.serving.simulate import Scheduler

        s = Scheduler(kind=kind, kv_tokens=kv, **{**small, **kw.pop("sched", {})})
        out.append((name, lambda: simulate(table, s, 1024, 256, n, **kw)))

    sim("sim vllm preempt", "vllm", 60_000, 800, arrivals_s=arr, lengths=lens)
    sim("sim vllm preempt closed", "vllm", 40_000, 600, client_concurrency=200, lengths=lens)
    sim("sim sglang retract", "sglang", 60_000, 800, arrivals_s=arr, lengths=lens)
    sim("sim sglang burst", "sglang", 50_000, 400, lengths=lens)
    sim("sim trt blocks", "tensorrt-llm", 80_000, 800, arrivals_s=arr, lengths=lens, sched={"block_tokens": 32})
    sim("sim trt chunked", "tensorrt-llm", 80_000, 500, client_concurrency=64, lengths=lens,
        sched={"chunked_prefill": True})  # fmt: skip
    b = RunBehaviour(frontend_s=0.02, frontend_serial_s=0.004, cached_fraction=0.3)
    sim("sim serial frontend", "vllm", 200_000, 800, arrivals_s=arr, lengths=lens, behaviour=b)
    b = RunBehaviour(tokens_per_step=2.4, draft_steps=3, async_scheduling=True)
    sim("sim spec drawn", "vllm", 100_000, 600, arrivals_s=arr, lengths=lens, behaviour=b)
    b = RunBehaviour(recv_interval=40, prefill_only_steps=True, max_prefill_tokens=4096)
    sim("sim sglang recv", "sglang", 200_000, 800, arrivals_s=arr, lengths=lens, behaviour=b)
    b = RunBehaviour(context_gate=8, context_gate_quorum=3, async_scheduling=True)
    sim("sim trt gate", "tensorrt-llm", 200_000, 800, arrivals_s=arr, lengths=lens, behaviour=b)
    b = RunBehaviour(scheduler_steps=4, stream_stall_s=0.001)
    sim("sim multistep closed", "vllm", 100_000, 500, client_concurrency=100, lengths=lens, behaviour=b)
    # the vectorized approximation (``planner.serving.approx``) over a range of rates, past capacity included
    from planner.serving.approx import approximate_percentiles

    rates = np.linspace(0.1, 60.0, 37)
    for name, replica, p, o, q in (
        ("approx vllm p99", one, 1024, 256, 99), ("approx vllm p50", one, 4096, 64, 50),
        ("approx sglang p90", sgl, 2048, 512, 90), ("approx trt p99", trt, 1024, 256, 99),
        ("approx 70b p95", big, 2048, 256, 95), ("approx spec p99", spec, 1024, 256, 99),
    ):  # fmt: skip
        out.append((name, lambda r=replica, p=p, o=o, q=q: approximate_percentiles(r, p, o, rates, q)))
    out.append(("approx one rate", lambda: approximate_percentiles(one, 1024, 256, [7.5], 99)))
    trace: list = []
    sim("sim traced", "sglang", 80_000, 300, arrivals_s=arr, lengths=lens, trace=trace)
    out.append(("sim traced steps", lambda: trace))
    return out


def dump() -> dict:
    answers = {}
    for name, thunk in _scenarios():
        try:
            answers[name] = _plain(thunk())
        except Exception as e:  # an error is an answer too: both trees must give it
            answers[name] = f"error: {type(e).__name__}: {e}"
    return answers


def _run(tree: Path) -> dict:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    proc = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--dump"], env=env, cwd=tree, capture_output=True, text=True
    )
    if proc.returncode:
        raise SystemExit(f"{tree}: {proc.stderr}")
    return json.loads(proc.stdout)


def _diff(a, b, path=""):
    if type(a) is not type(b):
        yield f"{path}: {a!r} != {b!r}"
    elif isinstance(a, dict):
        for k in sorted(set(a) | set(b)):
            yield from _diff(a.get(k), b.get(k), f"{path}.{k}")
    elif isinstance(a, list):
        if len(a) != len(b):
            yield f"{path}: {len(a)} items != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b, strict=False)):
            yield from _diff(x, y, f"{path}[{i}]")
    elif a != b:
        yield f"{path}: {a!r} != {b!r}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--baseline", default="main", help="git revision to compare against [main]")
    ap.add_argument("--dump", action="store_true", help="print this tree's answers as JSON")
    args = ap.parse_args()
    if args.dump:
        json.dump(dump(), sys.stdout)
        return
    with baseline_tree(args.baseline) as base:
        ours, theirs = _run(ROOT), _run(base)
    bad = 0
    for name in theirs:
        diffs = list(_diff(theirs[name], ours.get(name), name))
        bad += bool(diffs)
        for d in diffs[:5]:
            print("DIFFERS", d)
        if isinstance(theirs[name], str) and theirs[name].startswith("error"):
            print("both error:" if theirs[name] == ours.get(name) else "error:", name, theirs[name][:120])
    print(f"{len(theirs) - bad} of {len(theirs)} scenarios identical bit for bit (this tree against {args.baseline})")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
