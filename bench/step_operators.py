"""A published run's steps by operator: where the model's step time goes for one row (issue 21).

    PYTHONPATH=. python bench/step_operators.py GPUSTACK-214 VUL-008          # rows of catalogs/reference/perf_public.csv
    PYTHONPATH=. python bench/step_operators.py VUL-008 --batch 64 128 512    # decode steps at other batches

Per row: the run as predicted (``predict_decode_rows``, each source's front-end time left out as ``bench/heldout.py``
does) beside the published figures; then a decode step at the run's concurrency (or ``--batch``) at the mean
context, and a prefill step of the token budget in whole prompts, each split into the terms
``planner.model.decode.decode_step`` and ``planner.model.prefill.prefill_step`` add: the dense GEMMs
(``operators.linear_layers_time_s``), the MoE grouped GEMMs (``expert_layers_time_s``, with the per-layer time against
aiconfigurator's measured fused-MoE call in ``bench/moe_large_tokens.py``), attention (with the Mamba-2/linear
layers' state read and written: ``memory.decode_attention_bytes``), the tensor-parallel all-reduces
(``decode.tp_communication_s``: per all-reduce beside it, against ``catalogs/reference/allreduce_aic.csv``), the per-step,
per-layer and per-MoE-layer overheads and the engine's per-sequence cost (the part an asynchronous host loop leaves
exposed: vLLM 0.14+, s189). ``step_terms`` returns the parts and their
sum, which equals the model's step (tests/test_step_operators.py).

Measured (s69, main 8d2620b): the held-out worst TPOT rows that are too slow are not a step time that scales wrongly
with tokens.
- GPUSTACK-214 (Qwen3-235B-A22B FP8, 4 x H100, vLLM 0.11.0, 984 x 128/4 at once, budget 16,384 tokens): TPOT +342%
  (553 vs 125 ms) but the run's output rate +6% (682 vs 644 tok/s): the simulated steps take the run's time. A prefill
  step of 16,384 tokens is 689 ms (MoE 3,782 us/layer, +11% over aiconfigurator's measured fused-MoE call at that
  shape, bench/moe_large_tokens.py; all-reduces 256 ms); a decode step of 984 sequences 115 ms, 8% under the
  published TPOT. Published mean TTFT is 5.62 s of a 6.11 s run: nearly every first token came at the end and
  the three decode steps after it at ~125 ms, where the simulation decodes each request in steps that carry 16k
  prompt tokens. A schedule or front-end (stream) effect of this burst, not an operator's time.
- VUL-006/008/009 (Nemotron-3-Nano FP8, 2 x B200, vLLM 0.16.0): the kernels of a 512-sequence decode step sum to
  8.6 ms (Mamba-2 state and attention 2.8 ms) + 1.8 ms overheads; the per-sequence cost (59 us, fitted on one
  source's A100 host) adds 30.2 ms. Without it VUL-008 is -21%, but the held-out gpustack vLLM runs with
  --async-scheduling (GPUSTACK-098..155, gpt-oss) go from -8..+36% to -15..-64%: the cost is the host's, and
  async scheduling does not hide it there, so no engine-version rule follows from these rows.
  (s101) With the SSM state in fp32 as config.json names it (vLLM copies mamba_ssm_cache_dtype) and the quantized
  checkpoint's bf16 mixers, a 400-sequence step is 34.6 ms: kernels, all-reduces and per-step costs 11.0 ms, the
  per-sequence cost 23.6 ms against a published 15.46 ms TPOT; vLLM 0.14+'s async scheduling as max(device, host) was
  tried and not shipped (docs/history.md, s101).
- Reading aiconfigurator's all-reduce ``message_size`` as bf16 elements (its collector's tensor is [size // 4096,
  4096]; A100's jump to NCCL then sits at vLLM's 8 MiB custom limit) was tried again (as 9b92a10, reverted in
  1ebeceb): TPOT 20% -> 23% median (worst 342 -> 268%), TTFT 37 -> 39%; not kept.
- (s79) The same reading against aiconfigurator's own steps by operator (``bench/aic_step_operators.py``; figures in
  docs/accuracy.md, "The all-reduce reading, re-checked by operator"): read right, the all-reduces agree with its own;
  the decode kernels are short in MoE (DeepSeek-R1 8 x H200, 1,000 sequences: 354 against 815 us a layer) and in MLA
  (9.9 against its measured module's 24.0 ms, 2.4x at every batch), and the per-sequence cost (59 ms there) hides it.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.accuracy.frontend import frontend_s_of_rows  # noqa: E402
from planner.accuracy.predict import _profile_for, predict_decode_rows  # noqa: E402
from planner.accuracy.published import load_decode_rows, resolve_gpu_name, resolve_model_name  # noqa: E402
from planner.catalog import default_catalog  # noqa: E402
from planner.deploy import deploy  # noqa: E402
from planner.model import decode as D  # noqa: E402
from planner.model import operators as O  # noqa: E402
from planner.model.decode import experts_touched  # noqa: E402
from planner.model.memory import (  # noqa: E402
    decode_attention_bytes,
    decode_attention_flop,
    kv_bytes,
    kv_replication,
    state_bytes,
)
from planner.model.prefill import causal_attention_flop  # noqa: E402
from planner.options import DecodeOptions, Options  # noqa: E402

#: How ``step_terms`` lays a MoE model's experts: None, as the row's profile says (split over the group unless
#: ``planner.engines.profiles.EXPERT_PARALLEL_FROM_ROWS`` reads the row's expert parallelism); "split", each expert
#: over the tensor-parallel group; "whole", whole experts on each GPU (expert parallelism with tensor-parallel attention)
EXPERTS: str | None = None


def _facts(row, context: float):
    """(gpu, model, precision, limits, gpus) facts of a row's deployment, its release's engine profile (its experts
    laid as ``EXPERTS`` says)."""
    cat = default_catalog()
    engine = _profile_for(row, None)
    if EXPERTS is not None:
        engine = replace(engine, experts_whole=float(EXPERTS == "whole"))
    o = Options.read(
        DecodeOptions,
        dict(gpus=row.gpus, batch=1, weight_precision=row.weight_precision, kv_precision=row.kv_precision,
             engine=engine, check_fit=False),
        "decode_step",
    )  # fmt: skip
    whole = max(1, round(context))  # deploy takes whole tokens; a run's mean context can be fractional (233 + 221 / 2)
    d = deploy(resolve_gpu_name(row.gpu, cat), resolve_model_name(row.model, cat), whole, o)
    f = d.facts
    return f.gpu, f.model, f.precision, f.limits, float(d.gpus_safe)


def step_terms(row, *, prefill: bool, batch: float, tokens: float) -> dict[str, float]:
    """One step of ``row``'s deployment split into the model's terms, seconds, and their sum ("step").

    Decode (``prefill`` False): ``batch`` sequences at a context of ``tokens``, kernels at the CUDA-graph batch.
    Prefill: ``batch`` prompts of ``tokens`` tokens in one pass (the fixed prefill latency under "overhead")."""
    return facts_step_terms(_facts(row, tokens), prefill=prefill, batch=batch, tokens=tokens)


def facts_step_terms(facts, *, prefill: bool, batch: float, tokens: float) -> dict[str, float]:
    """``step_terms`` of a deployment's (gpu, model, precision, limits, gpus) facts."""
    g, m, p, lim, gpus = facts
    dense = O.dense_weight_bytes(m, p)
    if prefill:
        rows, eff = tokens * batch, lim.prefill_flop_efficiency
        touched = experts_touched(m, rows)
        experts = O.expert_weight_bytes(m, p, touched)
        att_bytes = kv_bytes(m, p, tokens, batch * kv_replication(m, gpus)) + state_bytes(m, batch)
        att_flop = batch * causal_attention_flop(m, tokens)
        att_eff, att_floor = lim.prefill_attention_flop_efficiency, lim.prefill_attention_floor_s
        comm_tokens, overhead = rows, D.step_overhead_s(m, lim, rows) + lim.prefill_latency_s
        per_sequence = 0.0
        head_rows = batch  # the output head on each prompt's last token (model.operators.prefill_head_skipped)
    else:
        rows, eff = O.cuda_graph_batch(batch), lim.decode_flop_efficiency
        touched = experts_touched(m, batch)
        experts = O.expert_weight_bytes(m, p, touched)
        att_bytes = decode_attention_bytes(m, p, tokens, batch, kv_replication(m, gpus))
        att_bytes = att_bytes * O.decode_kv_read_factor(m, lim, gpus)
        att_flop = decode_attention_flop(m, tokens, batch)
        att_eff, att_floor = lim.attention_flop_efficiency, lim.attention_floor_s
        comm_tokens, overhead = batch, D.step_overhead_s(m, lim, batch) + D.eager_surplus_s(m, lim, batch)
        per_sequence = lim.sequence_overhead_s * batch
        head_rows = None  # decode: every sequence's logits
    moe = float(m.moe_layers) > 0
    terms = {
        # weight-only dense GEMMs at the GPU's weight-only fraction, as the model's steps (s140)
        "dense GEMMs": O.linear_layers_time_s(g, m, lim, dense, rows, eff, gpus, p.weight_bytes_per_param, head_rows),
        "MoE GEMMs": O.expert_layers_time_s(g, lim, experts, m, rows, eff, gpus, None, touched) if moe else 0.0,
        "attention+state": O.attention_time_s(
            g, m, lim, att_bytes, att_flop, att_eff * eff, att_floor, gpus, p.kv_bytes_per_element
        ),
        "all-reduces": D.tp_communication_s(m, g, lim, comm_tokens, gpus),
        "overhead": overhead,
        "per sequence": per_sequence,
    }
    terms = {k: float(v) for k, v in terms.items()}
    if not prefill:  # the host time an asynchronous loop leaves exposed (vLLM 0.14+, s189), as the model's step
        device = sum(v for k, v in terms.items() if k not in ("overhead", "per sequence"))
        terms["per sequence"] = float(D.step_costs_s(m, lim, device, batch)) - terms["overhead"]
    terms["step"] = sum(terms.values())
    terms["_moe_layers"], terms["_layers"] = float(m.moe_layers), float(m.num_layers)
    return terms


def _line(label: str, t: dict[str, float]) -> str:
    parts = [f"{k} {v * 1e3:.2f}" for k, v in t.items() if not k.startswith("_") and k != "step"]
    extra = ""
    if t["_moe_layers"] > 0:
        extra += f"; MoE {t['MoE GEMMs'] / t['_moe_layers'] * 1e6:.0f} us/layer"
    if t["all-reduces"] > 0:
        extra += f"; {t['all-reduces'] / (2 * t['_layers']) * 1e6:.0f} us/all-reduce"
    return f"  {label}: {t['step'] * 1e3:.2f} ms = " + ", ".join(parts) + extra


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("ids", nargs="+", help="record ids (catalogs/reference/perf_public.csv)")
    ap.add_argument("--batch", type=int, nargs="*", help="decode batches (default: the run's concurrency)")
    ap.add_argument(
        "--experts",
        choices=["split", "whole", "both"],
        help="lay the MoE experts split over the group, whole on each GPU (expert parallelism), or print both "
        "(default: as the row's profile says)",
    )
    args = ap.parse_args(argv)
    global EXPERTS
    every = load_decode_rows()
    front = dict(zip([r.record_id for r in every], frontend_s_of_rows(every), strict=True))
    known = {r.record_id: r for r in every}
    for rid in args.ids:
        if rid not in known:
            raise SystemExit(f"no row {rid!r} in the published rows; give a record id such as GPUSTACK-214")
        r = known[rid]
        pred = predict_decode_rows([r], frontend_s=[front[rid]])
        print(f"{rid}: {r.gpus} x {r.gpu.split(' (')[0]} {r.engine} {r.engine_version.split(' ')[0]} {r.model}")
        print(
            f"  {r.input_len}/{r.output_len} tokens, concurrency {r.batch or 'all'} of {r.num_prompts} prompts; "
            f"TPOT {pred.tpot_s[0] * 1e3:.1f} ms predicted / {r.tpot_s * 1e3:.1f} published, TTFT "
            f"{pred.ttft_s[0]:.3f} / {r.ttft_s:.3f} s, output {pred.throughput_tokens_per_s[0]:.0f} / "
            f"{r.throughput_tokens_per_s:.0f} tok/s"
        )
        concurrency = min(r.batch or r.num_prompts or 1, r.num_prompts or r.batch or 1)
        layouts = ["split", "whole"] if args.experts == "both" else [args.experts]
        for EXPERTS in layouts:
            lay = "" if EXPERTS is None else f", experts {EXPERTS}"
            for b in args.batch or [concurrency]:
                ctx = r.input_len + r.output_len / 2.0
                t = step_terms(r, prefill=False, batch=float(b), tokens=ctx)
                print(_line(f"decode {b} at {ctx:.0f} tokens{lay}", t))
            budget = r.max_num_batched_tokens or 8192
            prompts = max(1.0, float(budget // max(r.input_len, 1)))
            t = step_terms(r, prefill=True, batch=prompts, tokens=float(r.input_len))
            print(_line(f"prefill {prompts:.0f} x {r.input_len} tokens{lay}", t))
        EXPERTS = None
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
