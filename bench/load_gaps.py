"""Evidence for the loaded-run gaps that are not a reading of the run (issue 22: docs/model.md, "What is left").

    python bench/load_gaps.py

1. Closed-loop ITL p99 (gpustack, Qwen3-8B on one H100, ShareGPT, 1-8 in flight): each run simulated with outputs
   all at the run's mean and with vLLM's published ShareGPT sample's outputs scaled to it (as validated,
   ``planner.accuracy.datasets``). Equal outputs keep the closed loop in lockstep (the C requests finish in one step
   and the next C prefill together, so no decode ever shares a step with a prompt); with the sample's spread a prompt
   joins the decodes' step, but the step model prices 233 prompt tokens of an 8B model at well under a millisecond
   beyond the decode step, so the p99 stays about one step.
   The mixed step (LD068's three decodes with a 233-token prompt) is printed as one pass and as two: neither comes
   near the published gap. A third column holds the running requests' streams for each new request's front-end time
   (``stream_stall_s`` = ``FRONTEND_S``, fitted on every source, this one included: in-sample), as vLLM's API
   server prepares a request in the event loop that streams the others' tokens.
2. TensorRT-LLM all-at-once runs: simulated and published median TPOT, their ratio and the sequences in flight.
3. The same gpustack documents served by vLLM 0.11.0 and TensorRT-LLM 1.2.0rc1 (perf_public.csv, all at once):
   published / simulated mean TPOT per engine and GPU. Both engines are about 1.65x further off on these H100 runs
   than on the A100 ones, so the H100 excess is common to the source's H100 runs, not a TensorRT-LLM term.
4. Every vLLM run with a published p99 ITL, validated as ``bench/load_validation.py`` does (each source with the
   front-end time fitted on the others), with and without the stream stall: why it is not on by default.
5. Every closed-loop run with a published p99 ITL: the share of its token gaps that a new request can touch,
   (C - 1) x N / (N x (output - 1) / tokens per chunk) (each of N arrivals meets the C - 1 other streams once), beside
   the published p99 - p50 ITL. Where that share is under 1% the p99 cannot see a per-arrival event and the gap is
   1-1.5 ms; above 1% it is 9-51 ms (vLLM 0.10/0.11, TensorRT-LLM 1.2, SGLang 0.5.3 with FP8 weights; SGLang's BF16
   runs 4.4 ms): a stall of the other streams per new request, tens of ms, far beyond the simulated mixed or
   prefill step (section 1). Only one source (gpustack, every run through /v1/chat/completions) publishes it, so no
   value for it can be judged on a source it was not fitted to.
6. Every gpustack TensorRT-LLM run (validated as ``bench/load_validation.py`` does): the simulated peak in flight and
   whether TensorRT-LLM 1.x's default decode CUDA graphs (batch 1-32, 64 or 128, no padding; any step with a prompt
   runs eagerly: ``planner.engines.profiles.tensorrt_llm_decode_graphed``) cover it, and published / simulated
   median ITL per GPU, graphed or eager. The H100 and H200 runs off by x1.4-3.4 are the eager ones; the graphed
   H100 closed loop (LD070, 4 in flight, decode-only steps) is within 5%, as are gpustack's vLLM and SGLang closed
   loops on that H100, so the H100 machine runs captured decode steps as predicted (LD064, 5 in flight, x1.24:
   most of its steps carry a 32K prompt's chunk and so run eagerly). The A100 runs are eager too and within
   ~15%: an eager step costs max(GPU time, the host's time to launch it), and only on the faster GPUs does the
   host's time show. But vLLM 0.11's runs on the same H100 documents are x1.8-4.2 off at batches it does capture
   (last lines), so a host limit of that machine under a burst cannot be told apart from the eager launches. No
   public measurement of either for TensorRT-LLM was found, so no term is added.
7. Closed-loop p99 TTFT: the first wave. ``vllm bench serve`` sends a closed loop's first C requests at once (its
   ``--max-concurrency`` semaphore over requests yielded without delay at an infinite rate:
   ``vllm/benchmarks/serve.py``, ``benchmark``'s ``limited_request_func``), as the simulation does, and the p99 of
   100 requests is np.percentile's 99.01st of 100 sorted values: the second largest, so two slow requests set it.
   Per closed run of C >= 3: published and simulated p99 - p50 TTFT, and the time per request a front end that
   prepares one request at a time would need for the excess, (published - simulated) / (C - 2) (the second
   largest of a first wave waits for C - 2 before it). Beside it, the most such a serial front end can take on the
   same engine release and source, of the model's family (its chat template) and of any model: a burst of N
   requests at once has mean TTFT >= s (N + 1) / 2 and median >= s N / 2 whatever the engine does, so
   s <= 2 mean / (N - 1) over its all-at-once runs (perf_public.csv means, load_public.csv medians: 2 median / N),
   the smallest of them. Every vLLM 0.11 and TensorRT-LLM 1.2 closed run needs more than its bound, SGLang 0.5.3's
   FP8 runs on their own launches tens to thousands of times its BF16 runs (``first_wave_excess``): the tail is not
   a queue in the front end, so none is simulated.
8. TensorRT-LLM all-at-once runs: the sequences decoding in flight, averaged over the run, published and simulated
   alike (no source publishes a peak, so section 2's simulated peak, 514-817 for the ShareGPT bursts, has nothing to
   be compared with). Their sum over a run is every request's latency after its first token, which a result block
   gives only through two estimates (duration = requests / request throughput; ``published_in_flight``): mean ITL x
   (output tokens - requests), exact when every streamed chunk carries one token (``vllm bench serve`` times one
   gap per chunk), and mean TPOT x (output tokens - requests), exact when every output has the same length (the
   random-dataset runs). On the 12 random-dataset runs (TPOT estimate exact) the engine held 0.73-0.95x of the
   simulated sequences; on the 24 Qwen3 and DeepSeek-V3.2 runs the ITL estimate is 0.64-1.01x (median 0.89), under
   the simulation's admission and KV cache (``GUARANTEED_NO_EVICT``: each request's prompt and whole output
   reserved; the cache ``free_gpu_memory_fraction`` 0.9 of what the start-up estimate leaves;
   ``tests/test_tensorrt_llm_admission.py``), while each token came slower (the H100/H200 step, sections 3 and 6).
   gpt-oss-120b (x0.37 / x0.64) and DeepSeek-R1 (x0.73 / x0.52) held fewer by both estimates, their first tokens
   4-23x later than simulated. R1's simulated cache (775k tokens) holds all 1,000 requests of ~420 tokens, and no
   admission rule read in the sources (the capacity policy, max_batch_size 2048, max_num_tokens 8192, the KV
   estimate, the overlap loop) holds requests back from such a cache; gpt-oss-120b's (218k tokens on one H100, 65 GB
   of weights) binds at 514 in flight, and a smaller pool would need a measured start-up log, which no public
   TensorRT-LLM source gives; so nothing is simulated for either. gpt-oss-20b's two estimates disagree (x0.56 /
   x1.12): its median ITL, 0.07 ms, says most chunks carry no new token, so its ITL estimate is too low.
9. Closed-loop p99 TTFT, where the excess lies: the published mean TTFT (the result block's, perf_public.csv) less the
   median, times N, is the time the slowest requests took beyond a typical one; divided by C it is what each request
   of the first wave (C sent at once) would carry if it were theirs alone (a rough reading: a skew of the prompts
   moves it too, below 0 where the mean is under the median), beside the published p99 - p50 (the p99 of 100 is
   the second largest). "launch": the runs one server launch served (one serving-script line of one document and
   one flag set; blocks labelled only by their concurrency, "BS=4", share their section's launch). SGLang 0.5.3's
   FP8 runs whose launch served them alone carry 70-5,716 ms per first-wave request and a p99 - p50 of 101-5,660 ms
   (LD076 aside); the launch that served 1, 2, 4 and 8 in flight in turn (LD088-LD091) carries none (below 0) and
   16-50 ms, though LD090 is LD075's server command, client and C = 4 (p99 62.0 ms against 368.5): the first batch
   of several prompts a new server sees waits (kernels built on first use would do it), a cost of the host and
   build, not of the run's shape. vLLM 0.11's run at 8 in flight on a launch that had served 1 and 2 before
   (LD087) keeps 172 ms: not a new server's cost.
10. Closed-loop ITL p99, where the stall lies: a stall in the engine delays every later token of the requests it
   holds (their latency, so their TPOT, grows with it); a front end that holds the streams while the engine goes on
   delivers the tokens made meanwhile in one later chunk (latency unchanged, fewer chunks than tokens). The result
   block's mean TPOT over mean ITL estimates chunks per token after the first (each request's decode time over its
   tokens, against the same times over its chunks; exact when outputs are equal, a mean over requests otherwise);
   1 minus it, over the share of gaps a new request meets (section 5), is the tokens each held chunk carries beyond
   one, and times the median ITL the stall it implies, beside the published p99 - p50 ITL (a rough reading: one role
   chunk per request and the mean over requests put the ratio at about 1.01 with no held chunk). vLLM 0.11 on
   Qwen3-8B on gpustack's one-H100 host (LD068, LD087): 0.949 and 0.900, 5-10% of the tokens came in a chunk with
   others, ~24-28 ms a held chunk, the size of their p99 - p50 (34-38 ms): the streams are held while the engine
   goes on, as ``stream_stall_s`` simulates. SGLang 0.5.3 (BF16 and FP8) and TensorRT-LLM 1.2 on that host deliver a
   chunk per token (1.011-1.016): their stall is in the engine's steps. vLLM on the multi-GPU hosts (gpt-oss-120b,
   DeepSeek-R1, GLM-4.6) reads 0.976-1.015, at most ~10 ms held against 9-30 ms of p99 - p50: mostly the engine's.
11. SGLang closed loops, the stall by weight precision (s120): per run with a published p99 ITL, its weights and
   draft, the published and simulated (validated) p99 - p50 ITL, and, for a run without a draft whose model has a
   BF16 run of the same release, GPU and source, the host time per layer its excess over that BF16 median would be
   if it were the eager prefill step's alone ((published - BF16's) / the catalog model's layers). SGLang 0.5.3.post3
   runs a prefill (extend) step outside the CUDA graphs (``ForwardMode.is_cuda_graph``: DECODE, TARGET_VERIFY,
   IDLE; ``enable_piecewise_cuda_graph`` False), so the decoding streams wait for every kernel of it to be launched
   from Python, and a block-FP8 linear on Hopper is an activation quantization and a DeepGEMM call where a BF16
   linear is one cuBLAS call (``layers/quantization/fp8_utils.py`` l.139-149, 217-255). Qwen3-8B on one H100:
   BF16 4.4-4.5 ms (simulated 7.8), FP8 16.8-23.3 ms (simulated 5.7): 0.34-0.52 ms a layer of 36. No public
   measurement of that host time was found, and these are one source's rows, so nothing is simulated (docs/
   history.md, s120).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import math
import re
import statistics

import planner.accuracy.under_load as under_load
from planner.accuracy.acceptance import acceptance_range, speculation_handled
from planner.accuracy.datasets import sample_lengths, sharegpt_requests
from planner.accuracy.published import load_decode_rows, read_csv_rows, reference_dir, resolve_model_name
from planner.accuracy.under_load import _replica, sharegpt_prompts
from planner.accuracy.validation import validate_load
from planner.catalog import default_catalog
from planner.engines.profiles import parse_version, tensorrt_llm_decode_graphed
from planner.serving.load import FRONTEND_S, fixed_lengths, latency_under_load

CLOSED_LOOP = ("LD085", "LD086", "LD068", "LD087", "LD069", "LD070")


def main() -> int:
    rows = {r.record_id: r for r in load_decode_rows(reference_dir() / "load_public.csv")}
    print(
        "1. closed loop: ITL p50 / p99 ms, simulated with equal outputs, with the sample's outputs, and with the\n"
        f"   front end holding the streams {FRONTEND_S * 1e3:.1f} ms per new request (in-sample); published"
    )
    for rid in CLOSED_LOOP:
        r = rows[rid]
        prompts = sharegpt_prompts(r, r.num_prompts) or [r.input_len] * r.num_prompts
        cells = []
        sample = [o for _, o in sharegpt_requests(r.num_prompts, None, r.output_len)]
        for outs, stall in (([r.output_len] * r.num_prompts, 0.0), (sample, 0.0), (sample, FRONTEND_S)):
            res = latency_under_load(
                _replica(r, None, None, None), r.input_len, r.output_len, concurrency=r.batch,
                lengths=list(zip(prompts, outs, strict=True)), frontend_s=FRONTEND_S, stream_stall_s=stall,
            )  # fmt: skip
            cells.append(f"{res.itl_s.p50 * 1e3:5.1f} / {res.itl_s.p99 * 1e3:5.1f}")
        published = f"{r.itl_median_s * 1e3:5.1f} / {r.itl_p99_s * 1e3:5.1f}"
        print(f"  {rid} {r.engine:<13} C={r.batch}  " + "   ".join(cells) + f"   published {published}")
    r = rows["LD068"]  # the mixed step cannot be the gap: even as two passes it is two steps, not 41 ms
    table = _replica(r, None, None, None).setup(r.input_len, r.output_len, None, r.batch).table
    ctx, dec = r.input_len + r.output_len / 2, table.decode_s(r.batch - 1, r.input_len + r.output_len / 2)
    mixed, alone = table.step_s(r.batch - 1, ctx, r.input_len), table.step_s(0, 0.0, r.input_len)
    print(
        f"  LD068's step ms: {r.batch - 1} decodes {dec * 1e3:.1f}, with a {r.input_len}-token prompt as one pass "
        f"{mixed * 1e3:.1f}, as two passes {(dec + alone) * 1e3:.1f} (published p99 ITL {r.itl_p99_s * 1e3:.1f})"
    )
    print("\n2. TensorRT-LLM, all at once: median TPOT ms simulated, published, published / simulated; peak in flight")
    for r in rows.values():
        if r.engine != "tensorrt-llm" or r.batch:
            continue  # a ShareGPT run of vLLM's sampler sends its sample's lengths, as validated
        lengths = (r.client == "vllm" and sample_lengths(r)) or fixed_lengths(r.input_len, r.output_len, r.num_prompts)
        res = latency_under_load(_replica(r, None, None, None), r.input_len, r.output_len, lengths=lengths)
        sim, pub = res.tpot_s.p50 * 1e3, r.tpot_median_s * 1e3
        print(
            f"  {r.record_id} {r.model.split('/')[-1][:18]:<18} {r.gpu.split('(')[0].strip():<15} "
            f"{r.input_len:>6}/{r.output_len:<4} {sim:7.1f} {pub:7.1f}  x{pub / sim:5.2f}  {res.peak_running:5}"
        )
    same_documents()
    stall_on_every_vllm_run(list(rows.values()))
    arrival_share(list(rows.values()))
    cuda_graph_split(list(rows.values()))
    first_wave(list(rows.values()))
    in_flight(list(rows.values()))
    first_wave_from_means(list(rows.values()))
    held_or_stalled(list(rows.values()))
    eager_prefill(list(rows.values()))
    return 0


def same_documents() -> None:
    """Section 3, printed: ``same_document_ratios`` per engine and GPU: runs, median, range."""
    print("\n3. gpustack, all at once, same documents: published / simulated mean TPOT (runs, median, range)")
    for (engine, gpu), v in sorted(same_document_ratios().items()):
        print(f"  {engine:<13} {gpu:<15} {len(v):3}  x{statistics.median(v):4.2f}  ({min(v):.2f}-{max(v):.2f})")


#: vLLM V1's largest captured decode batch by default: min(2 x max_num_seqs, 512), sizes 1, 2, 4, multiples of 8 to
#: 256, then of 16 (``VllmConfig._set_cudagraph_sizes``' docstring, vllm/config/vllm.py); a batch between is padded.
VLLM_MAX_CAPTURE = 512


def same_document_ratios() -> dict[tuple[str, str], list[float]]:
    """Section 3: published / simulated mean TPOT of gpustack's all-at-once Qwen3-8B/14B/32B runs (perf_public.csv),
    per (engine, GPU), vLLM and TensorRT-LLM; a run planner cannot fit is left out."""
    ratios: dict[tuple[str, str], list[float]] = {}
    for r, res in same_document_runs():
        key = (r.engine, r.gpu.split("(")[0].strip())
        ratios.setdefault(key, []).append(r.tpot_s / res.tpot_s.mean)
    return ratios


@functools.cache
def same_document_runs() -> tuple:
    """Section 3's runs, each with its simulation: (row, ``latency_under_load`` result) pairs."""
    runs = []
    for r in load_decode_rows(reference_dir() / "perf_public.csv"):
        if r.source_group != "gpustack-performance-lab" or r.batch or r.kind != "serving":
            continue
        if r.engine not in ("vllm", "tensorrt-llm") or math.isnan(r.tpot_s):
            continue
        if not any(f"performance-lab/{m}/" in r.source for m in ("qwen3-8b", "qwen3-14b", "qwen3-32b")):
            continue
        try:
            lengths = fixed_lengths(r.input_len, r.output_len, r.num_prompts)
            res = latency_under_load(_replica(r, None, None, None), r.input_len, r.output_len, lengths=lengths)
        except Exception:  # noqa: BLE001 (a run planner cannot fit, e.g. 32K prompts of Qwen3-32B on one H100)
            continue
        runs.append((r, res))
    return tuple(runs)


@contextlib.contextmanager
def _stream_stall(stall_s: float):
    """Validation's simulations with the front end holding the running streams ``stall_s`` per new request."""
    plain = under_load.latency_under_load
    under_load.latency_under_load = functools.partial(plain, stream_stall_s=stall_s)
    try:
        yield
    finally:
        under_load.latency_under_load = plain


def stall_on_every_vllm_run(rows) -> None:
    """Section 4: p99 ITL of every vLLM run that prints one, validated without and with the stream stall."""
    runs = [r for r in rows if r.engine == "vllm" and not math.isnan(r.itl_p99_s)]
    checks = {}
    for stall in (0.0, FRONTEND_S):
        with _stream_stall(stall):
            checks[stall] = {c.record_id: c for c in validate_load(runs).checks if c.quantity == "itl_p99_ms"}
    print(f"\n4. vLLM p99 ITL ms: published, simulated without / with a {FRONTEND_S * 1e3:.1f} ms stream stall")
    for r in runs:
        off, on = checks[0.0][r.record_id], checks[FRONTEND_S][r.record_id]
        how = f"C={r.batch}" if r.batch else f"{r.request_rate} req/s" if r.request_rate else "all at once"
        print(
            f"  {r.record_id} {r.source_group[:34]:<34} {how:<12} {r.itl_p99_s * 1e3:7.1f}  "
            f"{off.predicted:7.1f} ({off.error:+5.0%})  {on.predicted:7.1f} ({on.error:+5.0%})"
        )


def arrival_share(rows) -> None:
    """Section 5: per closed-loop run with a p99 ITL, the share of token gaps a new request meets (module docstring)
    and the published p99 - p50 ITL."""
    print("\n5. closed loop: share of token gaps a new request meets, published ITL p50 / p99 and p99 - p50, ms")
    for r in rows:
        if not 0 < r.batch < (r.num_prompts or 0) or math.isnan(r.itl_p99_s):
            continue
        per_chunk = 1.0 if r.speculation is None else sum(acceptance_range(r.speculation, None)[:2]) / 2
        share = (r.batch - 1) * per_chunk / max(r.output_len - 1, 1)
        p50, p99 = r.itl_median_s * 1e3, r.itl_p99_s * 1e3
        print(
            f"  {r.record_id} {r.engine:<13} {r.model.split('/')[-1][:16]:<16} {r.weight_precision or '-':<5} C={r.batch:<2} "
            f"{share:6.2%}  {p50:5.1f} / {p99:5.1f}  {p99 - p50:5.1f}"
        )


def cuda_graph_split(rows) -> None:
    """Section 6: every gpustack TensorRT-LLM run, validated as ``bench/load_validation.py`` does, with the simulated
    peak of requests in flight and whether TensorRT-LLM 1.x's default decode CUDA graphs cover that batch
    (``planner.engines.profiles.tensorrt_llm_decode_graphed``: 1-32, 64, 128, no padding); then published / simulated
    median ITL (TPOT where the ITL median is blank) per GPU, graphed or not."""
    print("\n6. gpustack TensorRT-LLM: published / simulated median ITL (TPOT if no ITL) by GPU and CUDA-graph cover")
    trt = [r for r in rows if r.engine == "tensorrt-llm" and r.source_group == "gpustack-performance-lab"]
    checks = {(c.record_id, c.quantity): c for c in validate_load(trt).checks}
    groups: dict[tuple[str, bool], list[float]] = {}
    for r in trt:
        lengths = (r.client == "vllm" and sample_lengths(r)) or fixed_lengths(r.input_len, r.output_len, r.num_prompts)
        res = latency_under_load(
            _replica(r, None, None, None), r.input_len, r.output_len, concurrency=r.batch or None, lengths=lengths
        )
        graphed = tensorrt_llm_decode_graphed(max(res.peak_running, 1))
        c = checks.get((r.record_id, "itl_median_ms"))
        if c is None or math.isnan(c.error):
            c = checks[(r.record_id, "tpot_median_ms")]
        gpu = r.gpu.split("(")[0].strip()
        groups.setdefault((gpu, graphed), []).append(c.published / c.predicted)
        print(
            f"  {r.record_id} {r.model.split('/')[-1][:18]:<18} {gpu:<15} peak {res.peak_running:5} "
            f"{'graphed' if graphed else 'eager  '}  {c.quantity[:4]} x{c.published / c.predicted:5.2f}"
        )
    for (gpu, graphed), v in sorted(groups.items()):
        kind = "graphed" if graphed else "eager"
        print(f"  {gpu:<15} {kind:<8} {len(v):3} runs  x{statistics.median(v):4.2f}  ({min(v):.2f}-{max(v):.2f})")
    print("  vLLM 0.11 on the same documents (section 3's runs), simulated peak in flight within its captured sizes")
    print(f"  (min(2 x max_num_seqs, {VLLM_MAX_CAPTURE}), padded) or above, published / simulated mean TPOT:")
    vllm: dict[tuple[str, bool], list[float]] = {}
    for r, res in same_document_runs():
        if r.engine == "vllm":
            key = (r.gpu.split("(")[0].strip(), res.peak_running <= VLLM_MAX_CAPTURE)
            vllm.setdefault(key, []).append(r.tpot_s / res.tpot_s.mean)
    for (gpu, graphed), v in sorted(vllm.items()):
        kind = "graphed" if graphed else "eager"
        print(f"  {gpu:<15} {kind:<8} {len(v):3} runs  x{statistics.median(v):4.2f}  ({min(v):.2f}-{max(v):.2f})")


def release(row) -> str:
    """The engine release a row states, as "engine x.y.z" (a pre-release such as rc1 kept, .postN dropped)."""
    parsed = parse_version(row.engine_version)
    if parsed is None:
        return f"{row.engine} {row.engine_version}"
    pre = f"{parsed.pre[0]}{parsed.pre[1]}" if parsed.pre else ""
    return f"{row.engine} {'.'.join(map(str, parsed.release[:3]))}{pre}"


def family(row) -> str:
    """The model's family as its name starts ("Qwen3", "gpt", "GLM", "DeepSeek"): the chat template a front end renders
    is the family's, so a bound is read within one."""
    return re.match(r"[A-Za-z]+\d*", row.model.split("/")[-1]).group(0)


def serial_front_end_bounds(source_group: str = "gpustack-performance-lab") -> dict[tuple[str, str], tuple[float, str]]:
    """Section 7: per engine release (``release``) and model family (``family``; "" for any), the most time a front end
    preparing one request at a time can take per request on ``source_group``'s runs, seconds, and the run that bounds
    it: over its all-at-once runs of at least 100 prompts, the smallest 2 x mean TTFT / (N - 1) (perf_public.csv) or
    2 x median TTFT / N (load_public.csv): the k-th request of a burst reaches the engine no sooner than k x s after it
    was sent."""
    bounds: dict[tuple[str, str], tuple[float, str]] = {}
    for name, stat in (("perf_public.csv", "mean"), ("load_public.csv", "median")):
        for r in load_decode_rows(reference_dir() / name):
            at_once = r.kind == "serving" and not r.batch and (r.num_prompts or 0) >= 100
            if r.source_group != source_group or not at_once or (r.request_rate and math.isfinite(r.request_rate)):
                continue
            ttft = r.ttft_s if stat == "mean" else r.ttft_median_s
            if math.isnan(ttft):
                continue
            s = 2.0 * ttft / (r.num_prompts - 1 if stat == "mean" else r.num_prompts)
            for key in ((release(r), family(r)), (release(r), "")):
                if s < bounds.get(key, (math.inf, ""))[0]:
                    bounds[key] = (s, r.record_id)
    return bounds


def first_wave_excess(rows) -> list[tuple]:
    """Section 7: per closed-loop run of C >= 3 with a published p99 TTFT, (row, published p99 - p50, simulated
    p99 - p50, (published - simulated) / (C - 2)), seconds; simulated as validated, with ``FRONTEND_S`` (a shift of
    every TTFT, so no part of a difference)."""
    out = []
    for r in rows:
        if (
            not 3 <= r.batch < (r.num_prompts or 0)
            or math.isnan(r.ttft_p99_s)
            or (r.problem and not speculation_handled(r))
        ):
            continue
        p = under_load.predict_percentiles(r, frontend_s=FRONTEND_S)
        published = r.ttft_p99_s - r.ttft_median_s
        simulated = (p["ttft_p99_ms"] - p["ttft_median_ms"]) / 1e3
        out.append((r, published, simulated, (published - simulated) / (r.batch - 2)))
    return out


def first_wave(rows) -> None:
    """Section 7, printed (module docstring)."""
    print("\n7. closed loop p99 TTFT: p99 - p50 published / simulated, ms; serial front-end time it needs per request,")
    print("   and the most the same release's bursts allow, of the model's family and of any model (bounding run)")
    bounds = serial_front_end_bounds()
    for r, published, simulated, need in first_wave_excess(rows):
        same, by = bounds.get((release(r), family(r)), (math.nan, "none"))
        any_model, by_any = bounds.get((release(r), ""), (math.nan, "none"))
        print(
            f"  {r.record_id} {release(r):<22} {r.model.split('/')[-1][:16]:<16} C={r.batch:<2} "
            f"{published * 1e3:6.1f} / {simulated * 1e3:5.1f}  needs {need * 1e3:6.1f}  allowed <= "
            f"{same * 1e3:5.1f} ({by}), {any_model * 1e3:5.1f} ({by_any})"
        )


def published_in_flight(record_id: str) -> tuple[float, float]:
    """Sequences decoding in flight, averaged over a load_public.csv run, from the result block of the perf_public.csv
    row its notes name ("Percentiles of perf_public.csv GPUSTACK-145's result block"): (mean ITL, mean TPOT) x (output
    tokens - requests) / duration, duration = requests / request throughput (section 8 says when each is exact).
    NaNs where the notes name no such row."""
    load = {r["record_id"]: r for r in read_csv_rows(reference_dir() / "load_public.csv")}
    perf = {r["record_id"]: r for r in read_csv_rows(reference_dir() / "perf_public.csv")}
    named = re.search(r"perf_public\.csv (\S+)'s result block", load[record_id]["notes"])
    row = perf.get(named.group(1)) if named else None
    if row is None:
        return math.nan, math.nan
    tokens = float(re.search(r"Total generated tokens: (\d+)", row["quote"]).group(1))
    requests = float(re.search(r"Successful requests: (\d+)", row["quote"]).group(1))
    duration_s = requests / float(row["request_throughput_req_s"])
    gaps = (tokens - requests) / duration_s / 1e3
    return float(row["itl_ms"]) * gaps, float(row["tpot_ms"]) * gaps


def in_flight(rows) -> None:
    """Section 8, printed: every TensorRT-LLM all-at-once run, sequences decoding in flight (time-averaged) estimated
    from mean ITL and from mean TPOT, published (``published_in_flight``) and simulated as validated (the run's
    requests and front-end time) with the same two formulas, their ratios, and the simulated peak."""
    print("\n8. TensorRT-LLM, all at once: sequences decoding in flight, time-averaged, published / simulated alike")
    print("   (from mean ITL; from mean TPOT)")
    for r in rows:
        if r.engine != "tensorrt-llm" or r.batch:
            continue
        pub_itl, pub_tpot = published_in_flight(r.record_id)
        lengths = under_load.run_requests(r) or fixed_lengths(r.input_len, r.output_len, r.num_prompts)
        res = latency_under_load(
            _replica(r, None, None, None), r.input_len, r.output_len, lengths=lengths, num_requests=len(lengths)
        )
        gaps = (res.output_tokens_per_s * res.duration_s - res.completed) / res.duration_s
        sim_itl, sim_tpot = res.itl_s.mean * gaps, res.tpot_s.mean * gaps
        print(
            f"  {r.record_id} {r.model.split('/')[-1][:18]:<18} {r.gpu.split('(')[0].strip():<15} "
            f"{r.input_len:>6}/{r.output_len:<4} ITL {pub_itl:5.0f} / {sim_itl:5.0f} x{pub_itl / sim_itl:4.2f}   "
            f"TPOT {pub_tpot:5.0f} / {sim_tpot:5.0f} x{pub_tpot / sim_tpot:4.2f}   (simulated peak {res.peak_running})"
        )


def _launch(row, notes: dict) -> tuple[str, str, str]:
    """(document, serving-script line, block label) a gpustack row names: one server launch. A label that only
    names the concurrency ("BS=4") shares its section's launch; any other (an attention backend, a draft) is a
    server command of its own. ("", record id, "") where the notes name no script."""
    doc = re.search(r"docs/performance-lab/\S+?\.md", notes[row.record_id])
    line = re.search(r"serving script at line (\d+)", notes[row.record_id])
    label = re.search(r"block: ([^;]+);", row.dataset)
    own = label.group(1).strip() if label else ""
    if re.fullmatch(r"(BS|batch size)\s*=?\s*\d+|not labelled in the block", own, re.IGNORECASE):
        own = ""
    return (doc.group(0), line.group(1), own) if doc and line else ("", row.record_id, "")


def first_wave_means(rows) -> list[tuple]:
    """Section 9: per closed-loop run with a published p99 TTFT and a result block naming its mean, (row, (mean -
    median) x N / C, p99 - p50, the record ids of its server launch), seconds."""
    perf = {r["record_id"]: r for r in read_csv_rows(reference_dir() / "perf_public.csv")}
    notes = {r["record_id"]: r["notes"] for r in read_csv_rows(reference_dir() / "load_public.csv")}
    closed = [r for r in rows if 1 <= r.batch < (r.num_prompts or 0) and not math.isnan(r.ttft_p99_s)]
    launches: dict[tuple[str, str, str], list[str]] = {}
    for r in closed:
        launches.setdefault(_launch(r, notes), []).append(r.record_id)
    out = []
    for r in closed:
        named = re.search(r"perf_public\.csv (\S+)'s result block", notes[r.record_id])
        row = perf.get(named.group(1)) if named else None
        if row is None or not row["ttft_ms"]:
            continue
        per_wave = (float(row["ttft_ms"]) / 1e3 - r.ttft_median_s) * r.num_prompts / r.batch
        out.append((r, per_wave, r.ttft_p99_s - r.ttft_median_s, tuple(launches[_launch(r, notes)])))
    return out


def first_wave_from_means(rows) -> None:
    """Section 9, printed (module docstring)."""
    print("\n9. closed loop p99 TTFT from the published mean: (mean - median) x N / C per first-wave request, ms;")
    print("   published p99 - p50; the runs of its server launch")
    for r, per_wave, excess, runs in first_wave_means(rows):
        print(
            f"  {r.record_id} {release(r):<22} {r.model.split('/')[-1][:16]:<16} C={r.batch:<2} "
            f"{per_wave * 1e3:8.1f}  {excess * 1e3:8.1f}  launch: {' '.join(runs)}"
        )


def chunks_per_token(rows) -> list[tuple]:
    """Section 10: per closed-loop run of C >= 2 with a published p99 ITL and a result block naming its means, (row,
    mean TPOT / mean ITL, share of gaps a new request meets, implied stall seconds (NaN where the ratio is 1 or
    more: no chunk carried more than one token), published p99 - p50 ITL seconds)."""
    perf = {r["record_id"]: r for r in read_csv_rows(reference_dir() / "perf_public.csv")}
    notes = {r["record_id"]: r["notes"] for r in read_csv_rows(reference_dir() / "load_public.csv")}
    out = []
    for r in rows:
        if not 2 <= r.batch < (r.num_prompts or 0) or math.isnan(r.itl_p99_s) or r.speculation is not None:
            continue
        named = re.search(r"perf_public\.csv (\S+)'s result block", notes[r.record_id])
        row = perf.get(named.group(1)) if named else None
        if row is None or not row["tpot_ms"] or not row["itl_ms"]:
            continue
        ratio = float(row["tpot_ms"]) / float(row["itl_ms"])
        share = (r.batch - 1) / max(r.output_len - 1, 1)
        stall = (1.0 - ratio) / share * r.itl_median_s if ratio < 1.0 else math.nan
        out.append((r, ratio, share, stall, r.itl_p99_s - r.itl_median_s))
    return out


def held_or_stalled(rows) -> None:
    """Section 10, printed (module docstring)."""
    print("\n10. closed loop ITL: mean TPOT / mean ITL (chunks per token), share of gaps a new request meets, the")
    print("    stall a held stream implies, ms, and the published p99 - p50 ITL, ms")
    for r, ratio, share, stall, excess in chunks_per_token(rows):
        print(
            f"  {r.record_id} {release(r):<22} {r.model.split('/')[-1][:16]:<16} {r.weight_precision or '-':<5} "
            f"C={r.batch:<2} {ratio:6.3f}  {share:6.2%}  {stall * 1e3:6.1f}  {excess * 1e3:6.1f}"
        )


def eager_prefill_excess(rows) -> list[tuple]:
    """Section 11: per SGLang closed-loop run with a published p99 ITL, (row, published p99 - p50 ITL, simulated p99 -
    p50 ITL as validated, host time per layer or NaN), seconds. The host time per layer is (published - the median
    published p99 - p50 of the BF16 runs of the same release, GPU, source and model without its "-FP8" suffix) / the
    catalog model's layers, for a run without a draft whose weights are not BF16; NaN otherwise."""
    closed = [
        r for r in rows if r.engine == "sglang" and 2 <= r.batch < (r.num_prompts or 0) and not math.isnan(r.itl_p99_s)
    ]
    checks = {(c.record_id, c.quantity): c for c in validate_load(closed).checks}

    def key(r) -> tuple:
        return (release(r), r.gpu.split("(")[0].strip(), r.source_group, re.sub(r"-FP8$", "", r.model, flags=re.I))

    bf16: dict[tuple, list[float]] = {}
    for r in closed:
        if r.weight_precision == "bf16" and r.speculation is None:
            bf16.setdefault(key(r), []).append(r.itl_p99_s - r.itl_median_s)
    cat = default_catalog()
    out = []
    for r in closed:
        p50, p99 = checks.get((r.record_id, "itl_median_ms")), checks.get((r.record_id, "itl_p99_ms"))
        if p50 is None or p99 is None or math.isnan(p50.error) or math.isnan(p99.error):
            continue
        published = r.itl_p99_s - r.itl_median_s
        simulated = (p99.predicted - p50.predicted) / 1e3
        per_layer = math.nan
        if r.speculation is None and r.weight_precision != "bf16" and key(r) in bf16:
            layers = cat.model(resolve_model_name(r.model, cat)).num_layers
            per_layer = (published - statistics.median(bf16[key(r)])) / layers
        out.append((r, published, simulated, per_layer))
    return out


def eager_prefill(rows) -> None:
    """Section 11, printed (module docstring)."""
    print("\n11. SGLang closed loops: weights, draft, p99 - p50 ITL published / simulated, ms, and the host time per")
    print("    layer the excess over the same model's BF16 runs would be in an eager prefill step, ms")
    for r, published, simulated, per_layer in eager_prefill_excess(rows):
        draft = "EAGLE-3" if r.speculation is not None else "-"
        print(
            f"  {r.record_id} {release(r):<14} {r.model.split('/')[-1][:16]:<16} {r.weight_precision or '-':<5} "
            f"{draft:<8} C={r.batch:<2} {published * 1e3:6.1f} / {simulated * 1e3:5.1f}  "
            + (f"{per_layer * 1e3:5.2f}" if not math.isnan(per_layer) else "    -")
        )


if __name__ == "__main__":
    argparse.ArgumentParser(description=__doc__.split("\n\n")[0]).parse_args()  # --help: usage, exit 0
    raise SystemExit(main())
