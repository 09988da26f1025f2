"""Leave-one-source-out accuracy of the time factors (``planner.accuracy.holdout``): in-sample and held-out, per group.

    python bench/loso.py                  # the table (about 20 s)
    python bench/loso.py --worst 15       # and the 15 worst held-out figures
    python bench/loso.py --write-residuals  # regenerate catalogs/reference/heldout_residuals.csv (planner.accuracy.ranges)
    python bench/loso.py --first-token-decode-step  # LMDeploy 0.1.0a1's first token from a decode step (not shipped)
    python bench/loso.py --bootstrap [N]  # the held-out 'all' median / worst with 90% intervals over N (1,000) resamples
                                          # of whole source folds (the fits are not redone per resample)

The rows are those the protocol fits (static batches and batch-1 latency of vLLM, LMDeploy and TensorRT-LLM;
``planner.accuracy.holdout`` states the rules). Columns: "before" is the factors ``planner.engines.profiles`` ships (on rows its
fit saw, that is in-sample too), "in-sample" the fit on all rows, "held-out" each source's rows predicted by the
fit on the other sources; aiconfigurator's and llm-analysis's errors (``bench/heldout_aic_cache.json``,
``bench/heldout_la_cache.json``) on the rows each predicts, beside the planner's held-out errors on those rows. Median / worst |predicted / measured - 1| (figures).
"""

from __future__ import annotations

import argparse
import csv
import math
import sys
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import heldout  # noqa: E402  (aiconfigurator's cached answers, goals, stats)

from planner.accuracy import holdout as ho  # noqa: E402
from planner.accuracy import predict as acc  # noqa: E402
from planner.accuracy import ranges  # noqa: E402
from planner.accuracy.fit import ttft_is_prefill  # noqa: E402
from planner.catalog import default_catalog  # noqa: E402

QUANTITIES = {"TTFT": "TTFT, batch 1", "static-batch throughput": "static-batch throughput"}


def checks(result: ho.HeldOut) -> list[dict]:
    """One dict per measured figure: quantity, errors before / in-sample / held-out, groups, the row."""
    cat = default_catalog()
    before = acc.predict_decode_rows(result.rows, catalog=cat)
    out = []
    for i, r in enumerate(result.rows):
        model = cat.model(acc.resolve_model_name(r.model, cat))
        gpu = acc.resolve_gpu_name(r.gpu, cat)
        values = ho.row_values(r, cat)
        groups = {
            "GPU": gpu,
            "TP": f"TP{r.gpus}",
            "size": values["size"],
            "MoE": values["moe"],
            "engine": r.engine,
            "source": ho.fold_of(r),
        }
        for q, pub, attr in (
            ("TPOT", r.tpot_s, "tpot_s"),
            ("TTFT", r.ttft_s if ttft_is_prefill(r) else math.nan, "ttft_s"),
            ("static-batch throughput", r.throughput_tokens_per_s, "throughput_tokens_per_s"),
        ):
            if math.isnan(pub):
                continue
            err = {k: getattr(p, attr)[i] / pub - 1.0 for k, p in (("before", before), ("in", result.in_sample))}
            out.append(
                {"q": q, "row": r, "gpu": gpu, "model": model, **groups, **err, "planner": result.held_out_error(i, q)}
            )
    return out


def report(cs: list[dict], bootstrap: int = 0) -> str:
    """The per-quantity tables; with ``bootstrap`` resamples, the held-out "all" median and worst with their 90%
    intervals over resamples of whole source folds (each fold's held-out errors as they are: no refit per resample)."""
    lines = []
    head = (
        f"{'':<36}{'before':>20}{'in-sample':>20}{'held-out':>20}{'held-out, aic rows':>22}{'aiconfigurator':>20}"
        f"{'held-out, la rows':>22}{'llm-analysis':>20}"
    )
    for q in ("TPOT", "TTFT", "static-batch throughput"):
        qc = [c for c in cs if c["q"] == q]
        if not qc:
            continue
        goal = heldout.GOALS[q]
        lines += ["", f"== {q}: median / worst |error| (figures); goal {goal[0]:.0%} / {goal[1]:.0%}", head]

        def line(label: str, g: list[dict]) -> str:
            text = (
                f"{label:<36}{heldout.stats([c['before'] for c in g]):>20}{heldout.stats([c['in'] for c in g]):>20}"
                f"{heldout.stats([c['planner'] for c in g]):>20}"
            )
            for tool in ("aic", "la"):
                both = [c for c in g if not math.isnan(c.get(tool, math.nan))]
                text += f"{heldout.stats([c['planner'] for c in both]):>22}{heldout.stats([c[tool] for c in both]):>20}"
            return text

        lines.append(line("all", qc))
        if bootstrap:
            lines.append(heldout.bootstrap_line([c["planner"] for c in qc], [c["source"] for c in qc], bootstrap))
        for by in ("GPU", "TP", "size", "MoE", "engine", "source"):
            groups = defaultdict(list)
            for c in qc:
                groups[c[by]].append(c)
            lines += [line(f"  {by} {label}"[:36], groups[label]) for label in sorted(groups)]
    return "\n".join(lines)


def factors_line(fit: ho.JointFit) -> str:
    shared = ", ".join(f"{k} {v:.4g}" for k, v in fit.shared.items())
    own = "; ".join(f"{e}: " + ", ".join(f"{k} {v:.4g}" for k, v in d.items()) for e, d in fit.engines.items())
    return f"fit on all rows: {shared}; {own}"


def write_residuals(result: ho.HeldOut, path: Path) -> None:
    """The held-out residual quantiles per region and each dimension's widening (``planner.accuracy.holdout.residual_table``)."""
    table = ho.residual_table(result)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=list(table[0]), lineterminator="\n")
        w.writeheader()
        w.writerows(table)
    print(f"wrote {path}")
    print(
        "widening per uncovered dimension: "
        + ", ".join(f"{r['dimension']} x{r['widen']}" for r in table if r["value"] == "*" and r["widen"])
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--worst", type=int, default=0, help="also list the N worst held-out figures")
    parser.add_argument("--write-residuals", action="store_true", help="regenerate the held-out residuals file")
    parser.add_argument(
        "--first-token-decode-step",
        action="store_true",
        help="read LMDeploy releases before 0.1.0a2 as sampling the first token in a decode step "
        "(planner.accuracy.predict.FIRST_TOKEN_FROM_DECODE_STEP; not shipped: docs/history.md, s106)",
    )
    heldout.add_bootstrap_option(parser)
    heldout.add_allreduce_fit_option(parser)
    args = parser.parse_args()
    heldout.use_allreduce_fit(args)
    acc.FIRST_TOKEN_FROM_DECODE_STEP = args.first_token_decode_step
    result = ho.leave_one_source_out(acc.load_decode_rows())
    cs = checks(result)
    note = heldout.attach(cs, "aic", run=False) + "; " + heldout.attach(cs, "la", run=False)
    folds = sorted(result.folds)
    print(f"fitted rows: {len(result.rows)} from {len(folds)} source folds, each held out in turn: {', '.join(folds)}")
    print(factors_line(result.fit))
    print(note)
    print(report(cs, args.bootstrap))
    if args.worst:
        print(f"\n== {args.worst} worst held-out figures")
        for c in sorted(cs, key=lambda c: -abs(c["planner"]))[: args.worst]:
            r = c["row"]
            print(
                f"{c['planner']:+6.0%} {c['q']:<24}{r.record_id:<14}{c['source'][:28]:<29}{c['GPU'][:14]:<15}"
                f"{c['model'].name[:22]:<23}TP{r.gpus} batch {r.batch} {r.input_len}/{r.output_len}"
            )
    if args.write_residuals:
        write_residuals(result, ranges.residuals_file())


if __name__ == "__main__":
    main()
