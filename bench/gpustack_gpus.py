"""One source's GPUs against each other: gpustack's performance-lab runs of one model, engine and release on two or
more GPUs, published beside predicted (issue 21, s125).

    PYTHONPATH=. python bench/gpustack_gpus.py          # the groups, their ratios, the per-page bias, the copy check
    PYTHONPATH=. python bench/gpustack_gpus.py --rows   # also each row of each group

Rows: the held-out rows of ``source_group`` 'gpustack-performance-lab' (``catalogs/reference/perf_public.csv``),
predicted as ``bench/heldout.py`` predicts them (``predict_decode_rows``, the front-end time voted by the other
sources, ``frontend_s_of_rows`` over every held-out row). A group is one checkpoint (the model cell), weight
precision, engine, release, tensor-parallel size, number of prompts and sequences in flight (0: all at once), and
input and output lengths within 5% of the group's first row; a group is printed when it holds rows of two or more
GPUs. Several rows of one GPU in a group (server settings the key does not keep) count by their median.

Per group and GPU: published and predicted TPOT (ms) and output rate (tok/s, the whole server), the medians of its
rows. Per pair of GPUs (b against a, in the order A100, H100, H200): the published ratio (TPOT_b / TPOT_a; output
rate_b / output rate_a), the predicted ratio, and their quotient q = published ratio / predicted ratio. For TPOT,
q > 1 says GPU b's run was slower, against GPU a's run of the same configuration, than the model says; for the
output rate, q < 1 says the same. A model that is right on GPU a and wrong on GPU b by a factor f gives q = f.

Hardware bounds (the catalog): a run bound by HBM bandwidth gains the bandwidth ratio from a to b, one bound by
dense bf16 FLOP/s the FLOP/s ratio; a run that spends part of its time on the host gains less than both. H100 SXM
against A100 SXM 80GB: 3.35 / 2.039 TB/s = 1.64x, 989 / 312 TFLOP/s = 3.17x; H200 against H100: 4.8 / 3.35 TB/s =
1.43x and the same FLOP/s (same GH100 die; its 141 GB also hold more KV cache).

The TTFT gain (TTFT_a / TTFT_b) of a prefill-bound run (prompts of ``PREFILL_BOUND_TOKENS`` or more: 100 prompts
of 32,000 tokens sent at once spend minutes in prefill) tests the GPUs' compute where no per-step host cost reaches:
it should come near the FLOP/s ratio (more on H100 for an FP8 checkpoint, which A100 runs weight-only).

Then the signed TPOT error (predicted / published - 1) per document page and GPU: a gap of the model on one GPU would
be the same on every page of that GPU. Last, the copy check: rows of two GPUs whose TPOT, TTFT and output rate agree
to the cent (a page that reprints another page's result blocks).

Measured (s125; docs/accuracy.md, "One source's GPUs against each other"): the GLM-4.5-Air H100 page's "Other
Benchmark Cases" were the A100 page's blocks (GPUSTACK-065..072, now read from the H100 page's Conclusion table); the
rest of the H100 bias is four pages (qwen3-14b, qwen3-32b, gpt-oss-20b, glm-4.x: 43 figures at -42% signed TPOT,
the other 75 H100 figures -6%), whose prefill-bound runs reach 0.27-0.33 of bf16 peak where their A100 twins reach
0.55-0.56 and the Qwen3-235B H100 runs match their A100 twins' share.
"""

from __future__ import annotations

import argparse
import math
import re
import statistics
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.accuracy import predict as acc  # noqa: E402
from planner.accuracy.fit import held_out_rows  # noqa: E402
from planner.accuracy.frontend import frontend_s_of_rows  # noqa: E402
from planner.catalog import default_catalog  # noqa: E402
from planner.engines.architecture import param_counts  # noqa: E402

SOURCE_GROUP = "gpustack-performance-lab"
#: GPUs in the order a pair is read (b against a: the later one against the earlier).
GPU_ORDER = ("A100 SXM 80GB", "H100 SXM 80GB", "H200 SXM 141GB")
#: The figures compared per GPU: published and predicted TPOT (ms), output rate (tok/s) and TTFT (s).
QUANTITIES = ("tpot_pub_ms", "tpot_pred_ms", "rate_pub", "rate_pred", "ttft_pub_s", "ttft_pred_s")
#: Prompts of at least this many tokens make a run's TTFT a prefill-bound figure (100 prompts of 32,000 tokens at
#: once: minutes of prefill, where no per-step host cost counts).
PREFILL_BOUND_TOKENS = 16_000
#: Lengths within this fraction of the group's first row are one configuration.
LENGTH_TOLERANCE = 0.05


def page_of(source: str) -> str:
    """The document page of a row's source address ('qwen3-14b/h100'), or the address itself."""
    m = re.search(r"performance-lab/(.+?)\.md", source)
    return m.group(1) if m else source


def gpustack_figures() -> list[dict]:
    """One dict per held-out gpustack row: the row's keys and its published and predicted TPOT (ms) and output
    rate (tok/s); NaN where the row has no published figure or the planner no prediction."""
    cat = default_catalog()
    held = held_out_rows(acc.load_decode_rows())
    rows = [r for r in held if r.source_group == SOURCE_GROUP]
    pred = acc.predict_decode_rows(rows, catalog=cat, frontend_s=frontend_s_of_rows(held))
    out = []
    for i, r in enumerate(rows):
        try:
            gpu = acc.resolve_gpu_name(r.gpu, cat)
        except acc.PlannerError:
            continue
        out.append(
            {
                "row": r,
                "gpu": gpu,
                "page": page_of(r.source),
                "tpot_pub_ms": r.tpot_s * 1e3,
                "tpot_pred_ms": pred.tpot_s[i] * 1e3,
                "rate_pub": r.throughput_tokens_per_s,
                "rate_pred": pred.throughput_tokens_per_s[i],
                "ttft_pub_s": r.ttft_s,
                "ttft_pred_s": pred.ttft_s[i],
            }
        )
    return out


def _key(r: acc.DecodeRow) -> tuple:
    return (r.model, r.weight_precision or "", r.engine, r.engine_version, r.gpus, r.batch)


def _near(a: acc.DecodeRow, b: acc.DecodeRow) -> bool:
    """Lengths and numbers of prompts within ``LENGTH_TOLERANCE`` (gpustack's H100 runs of Qwen3-235B sent 984 of
    the A100 runs' 1,000 prompts)."""

    def close(x: float, y: float) -> bool:
        return abs(x - y) <= LENGTH_TOLERANCE * max(x, y, 1)

    pairs = ((a.input_len, b.input_len), (a.output_len, b.output_len), (a.num_prompts or 0, b.num_prompts or 0))
    return all(close(x, y) for x, y in pairs)


def groups(figures: list[dict]) -> list[list[dict]]:
    """Rows of one configuration (``_key`` equal, lengths within ``LENGTH_TOLERANCE``) on two or more GPUs."""
    by_key: dict[tuple, list[list[dict]]] = defaultdict(list)
    for f in figures:
        for g in by_key[_key(f["row"])]:
            if _near(g[0]["row"], f["row"]):
                g.append(f)
                break
        else:
            by_key[_key(f["row"])].append([f])
    return [g for gs in by_key.values() for g in gs if len({f["gpu"] for f in g}) > 1]


def _median(values: list[float]) -> float:
    values = [v for v in values if not math.isnan(v)]
    return statistics.median(values) if values else math.nan


def per_gpu(group: list[dict]) -> dict[str, dict[str, float]]:
    """GPU -> the medians of its rows' published and predicted TPOT (ms) and output rate (tok/s)."""
    out = {}
    for gpu in sorted({f["gpu"] for f in group}, key=GPU_ORDER.index):
        fs = [f for f in group if f["gpu"] == gpu]
        out[gpu] = {k: _median([f[k] for f in fs]) for k in QUANTITIES}
        out[gpu]["ids"] = ",".join(f["row"].record_id.removeprefix("GPUSTACK-") for f in fs)
    return out


def pair_ratios(a: dict[str, float], b: dict[str, float]) -> dict[str, float]:
    """Published and predicted ratios b / a of TPOT and output rate, and each quotient published / predicted."""
    r = {
        "tpot_pub": b["tpot_pub_ms"] / a["tpot_pub_ms"],
        "tpot_pred": b["tpot_pred_ms"] / a["tpot_pred_ms"],
        "rate_pub": b["rate_pub"] / a["rate_pub"],
        "rate_pred": b["rate_pred"] / a["rate_pred"],
        "ttft_pub": a["ttft_pub_s"] / b["ttft_pub_s"],
        "ttft_pred": a["ttft_pred_s"] / b["ttft_pred_s"],
    }
    r["tpot_q"] = r["tpot_pub"] / r["tpot_pred"]
    r["rate_q"] = r["rate_pub"] / r["rate_pred"]
    r["ttft_q"] = r["ttft_pub"] / r["ttft_pred"]
    return r


def hardware_bounds(a: str, b: str) -> tuple[float, float]:
    """(HBM bandwidth ratio, dense bf16 FLOP/s ratio) of GPU b over GPU a, from the catalog."""
    cat = default_catalog()
    ga, gb = cat.gpu(a), cat.gpu(b)
    return (
        gb.hbm_bandwidth_bytes_per_s / ga.hbm_bandwidth_bytes_per_s,
        gb.peak_flop_per_s["bf16"] / ga.peak_flop_per_s["bf16"],
    )


def _f(x: float, fmt: str) -> str:
    """``x`` formatted, or a dash as wide as the format's width for NaN."""
    width = re.match(r"[+]?(\d*)", fmt).group(1)
    return "-".rjust(int(width or 0)) if math.isnan(x) else format(x, fmt)


def _short(gpu: str) -> str:
    return gpu.split()[0]


def group_lines(gs: list[list[dict]], show_rows: bool) -> tuple[list[str], dict[tuple[str, str], list[dict]]]:
    """The printed lines per group, and every pair's ratios by (GPU a, GPU b)."""
    lines, pairs = [], defaultdict(list)
    head = (
        f"{'':4}{'GPU':6}{'TPOT pub':>10}{'pred':>8}{'err':>7}{'rate pub':>10}{'pred':>8}{'err':>7}   rows (GPUSTACK-)"
    )
    for g in sorted(gs, key=lambda g: (g[0]["row"].model, g[0]["row"].engine, g[0]["row"].input_len)):
        r = g[0]["row"]
        lines.append(
            f"{r.model} ({r.weight_precision or 'as checkpoint'}), {r.engine} {r.engine_version.split(' (')[0]}, "
            f"TP{r.gpus}, {r.num_prompts} prompts {'at once' if r.batch == 0 else f'{r.batch} in flight'}, "
            f"{r.input_len}/{r.output_len}"
        )
        lines.append(head)
        gpus = per_gpu(g)
        for gpu, v in gpus.items():
            err_t = v["tpot_pred_ms"] / v["tpot_pub_ms"] - 1
            err_r = v["rate_pred"] / v["rate_pub"] - 1
            lines.append(
                f"{'':4}{_short(gpu):6}{_f(v['tpot_pub_ms'], '10.1f')}{_f(v['tpot_pred_ms'], '8.1f')}"
                f"{_f(100 * err_t, '+6.0f')}%{_f(v['rate_pub'], '10.0f')}{_f(v['rate_pred'], '8.0f')}"
                f"{_f(100 * err_r, '+6.0f')}%   {v['ids']}"
            )
            if show_rows:
                for f in (f for f in g if f["gpu"] == gpu):
                    lines.append(f"{'':10}{f['row'].record_id} {f['page']}: {f['row'].source}")
        names = list(gpus)
        for i, a in enumerate(names):
            for b in names[i + 1 :]:
                p = pair_ratios(gpus[a], gpus[b])
                pairs[(a, b)].append({**p, "group": g})
                lines.append(
                    f"    {_short(b)}/{_short(a)}: TPOT published {_f(p['tpot_pub'], '.2f')}, predicted "
                    f"{_f(p['tpot_pred'], '.2f')}, q {_f(p['tpot_q'], '.2f')}; output rate published "
                    f"{_f(p['rate_pub'], '.2f')}, predicted {_f(p['rate_pred'], '.2f')}, q {_f(p['rate_q'], '.2f')}; "
                    f"TTFT gain (a / b) published {_f(p['ttft_pub'], '.2f')}, predicted {_f(p['ttft_pred'], '.2f')}"
                )
        lines.append("")
    return lines, pairs


def pair_summary(pairs: dict[tuple[str, str], list[dict]]) -> list[str]:
    """Per pair of GPUs: the median quotients over groups, and the groups whose published output-rate gain falls
    below the bandwidth ratio (a gain no GPU-bound run of GPU b can miss)."""
    lines = ["== per pair of GPUs: median over groups (q: published ratio / predicted ratio)"]
    for (a, b), ps in sorted(pairs.items(), key=lambda kv: (GPU_ORDER.index(kv[0][0]), GPU_ORDER.index(kv[0][1]))):
        bw, flop = hardware_bounds(a, b)
        tq = [p["tpot_q"] for p in ps if not math.isnan(p["tpot_q"])]
        rq = [p["rate_q"] for p in ps if not math.isnan(p["rate_q"])]
        gains = [p["rate_pub"] for p in ps if not math.isnan(p["rate_pub"])]
        below = sum(1 for x in gains if x < bw)
        lines.append(
            f"  {_short(b)} against {_short(a)} ({len(ps)} groups; bandwidth {bw:.2f}x, bf16 FLOP/s {flop:.2f}x): "
            f"TPOT q median {_f(_median(tq), '.2f')} ({len(tq)}), output-rate q median {_f(_median(rq), '.2f')} "
            f"({len(rq)}); published output-rate gain median {_f(_median(gains), '.2f')}x, below the bandwidth "
            f"ratio in {below} of {len(gains)}"
        )
        by_page = defaultdict(list)
        for p in ps:
            by_page[tuple(sorted({f["page"] for f in p["group"] if f["gpu"] in (a, b)}))].append(p)
        for pages, pp in sorted(by_page.items()):
            tq = [p["tpot_q"] for p in pp if not math.isnan(p["tpot_q"])]
            gains = [p["rate_pub"] for p in pp if not math.isnan(p["rate_pub"])]
            fill = [p["ttft_pub"] for p in pp if p["group"][0]["row"].input_len >= PREFILL_BOUND_TOKENS]
            fill = [x for x in fill if not math.isnan(x)]
            lines.append(
                f"    {' / '.join(pages):44} prefill-bound TTFT gain {', '.join(f'{x:.2f}' for x in fill) or '-'}x; "
                f"TPOT q median {_f(_median(tq), '.2f')} ({len(tq)}), published "
                f"output-rate gain {_f(min(gains, default=math.nan), '.2f')}-{_f(max(gains, default=math.nan), '.2f')}x"
            )
    return lines


def page_lines(figures: list[dict]) -> list[str]:
    """Median signed TPOT error per page and GPU, all-at-once runs and the rest apart."""
    lines = ["== signed TPOT error (predicted / published - 1) per page, median (figures)"]
    by = defaultdict(list)
    for f in figures:
        if math.isnan(f["tpot_pub_ms"]) or math.isnan(f["tpot_pred_ms"]):
            continue
        kind = "all at once" if f["row"].batch == 0 else "closed loop"
        by[(f["gpu"], f["page"], kind)].append(f["tpot_pred_ms"] / f["tpot_pub_ms"] - 1)
    for (gpu, page, kind), errs in sorted(by.items(), key=lambda kv: (GPU_ORDER.index(kv[0][0]), kv[0][1:])):
        lines.append(f"  {_short(gpu):5} {page:28} {kind:12} {100 * statistics.median(errs):+5.0f}% ({len(errs)})")
    return lines


def prefill_flop(model, input_tokens: int, prompts: int) -> float:
    """FLOP of prefilling ``prompts`` prompts of ``input_tokens`` each: 2 x the active parameters less the input
    embedding and output head (the head runs on the last token only) per token, plus causal attention's QK^T and PV,
    2 x 2 FLOP x n^2 / 2 x query heads x head_dim per layer. Assumes dense attention over the whole prompt
    (Qwen3, GLM; ``prefill_share_lines`` leaves out MLA, sparse and sliding-window models)."""
    body = param_counts(model)[1] - 2 * model.vocab_size * model.hidden_size
    attention = 2 * input_tokens**2 * model.num_attention_heads * model.head_dim * model.num_layers
    return prompts * (2 * body * input_tokens + attention)


def prefill_share_lines(figures: list[dict]) -> list[str]:
    """Per prefill-bound run (prompts of ``PREFILL_BOUND_TOKENS`` or more, all at once): its prefill FLOP over the
    run's duration (prompts x mean output / output rate) and the GPUs' dense bf16 peak, the fraction of peak it ran
    at (an upper bound: the run's decode steps are counted as prefill time)."""
    cat = default_catalog()
    lines = ["== prefill-bound runs: prefill FLOP / (duration x GPUs x dense bf16 FLOP/s)"]
    for f in sorted(figures, key=lambda f: (f["row"].model, GPU_ORDER.index(f["gpu"]), f["row"].record_id)):
        r = f["row"]
        if r.input_len < PREFILL_BOUND_TOKENS or r.batch != 0 or math.isnan(f["rate_pub"]) or not r.num_prompts:
            continue
        try:
            model = cat.model(acc.resolve_model_name(r.model, cat))
        except acc.PlannerError:
            continue
        if model.mla or model.sparse_attention or model.sliding_window:
            continue  # MLA, DSA or windowed layers: prefill_flop's dense attention does not hold
        duration_s = r.num_prompts * r.output_len / f["rate_pub"]
        flop = prefill_flop(model, r.input_len, r.num_prompts)
        peak = r.gpus * cat.gpu(f["gpu"]).peak_flop_per_s["bf16"]
        lines.append(
            f"  {r.record_id:13} {_short(f['gpu']):5} {f['page']:24} {r.engine:13} {model.name:24} "
            f"TP{r.gpus} {r.weight_precision or '':5} {flop:.2e} FLOP in {duration_s:7.1f} s: {flop / duration_s / peak:.2f}"
        )
    return lines


def copies(figures: list[dict]) -> list[str]:
    """Rows of different GPUs whose published TPOT, TTFT and output rate are equal to the cent."""
    seen: dict[tuple, list[dict]] = defaultdict(list)
    for f in figures:
        r = f["row"]
        key = tuple(round(x, 2) for x in (r.tpot_s * 1e3, r.ttft_s * 1e3, r.throughput_tokens_per_s))
        if not any(math.isnan(x) for x in key):
            seen[key].append(f)
    out = [
        "  " + " = ".join(f"{f['row'].record_id} ({_short(f['gpu'])}, {f['page']})" for f in fs)
        for fs in seen.values()
        if len({f["gpu"] for f in fs}) > 1
    ]
    return ["== copy check: rows of two GPUs with equal TPOT, TTFT and output rate", *(out or ["  none"])]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", action="store_true", help="also print each row of each group with its address")
    args = parser.parse_args()
    figures = gpustack_figures()
    gs = groups(figures)
    lines, pairs = group_lines(gs, args.rows)
    print(f"gpustack held-out rows: {len(figures)}; configurations on two or more GPUs: {len(gs)}\n")
    print("\n".join(lines))
    print("\n".join(pair_summary(pairs)))
    print()
    print("\n".join(page_lines(figures)))
    print()
    print("\n".join(prefill_share_lines(figures)))
    print()
    print("\n".join(copies(figures)))


if __name__ == "__main__":
    main()
