"""Is the per-sequence step cost an engine's? Fitted leaving whole sources out, judged on the left-out source only.

    PYTHONPATH=. python bench/sequence_cost_loso.py            # the table (a few minutes: one prediction per value)
    PYTHONPATH=. python bench/sequence_cost_loso.py --grid 0 59 120
    PYTHONPATH=. python bench/sequence_cost_loso.py --overlap --grid 0 59 90 120 160 200 250 300   # s188

``EngineProfile.sequence_overhead_s`` (per sequence per decode step: the CPU's per-request work, sampling and
detokenizing) ships at 59 us for every vLLM V1 and SGLang profile, fitted on one source's vLLM 0.10.1.1 rows
(dennislee22, not among the rows here), and 0 for TensorRT-LLM and LMDeploy. The engines' documents say SGLang from 0.4
and TensorRT-LLM 1.x run that work while the GPU computes the next step (``planner.engines.profiles``); vLLM V1 runs it
between steps by default. This script asks the published serving rows whether a value per engine family does better
than the shipped one, without judging a value on rows it was chosen on: for each family (vLLM, SGLang) and each source
of that family's held-out serving TPOT rows (``bench/heldout.py``'s rows, the fit sources excluded), the value of
``--grid`` with the smallest median |log(predicted / published)| over the family's *other* sources is chosen, and only
the left-out source's errors at that value are reported, beside the shipped value's errors on the same rows. Nothing
is written; a value would be shipped only if the left-out figures improve.
"""

from __future__ import annotations

import argparse
import math
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from planner.accuracy import predict as acc  # noqa: E402
from planner.accuracy.fit import FIT_SOURCE_GROUPS  # noqa: E402
from planner.accuracy.frontend import frontend_s_of_rows  # noqa: E402
from planner.catalog import default_catalog  # noqa: E402
from planner.engines import profiles  # noqa: E402

#: Candidate per-sequence costs, microseconds (the shipped 59 among them).
GRID_US = (0.0, 20.0, 40.0, 59.0, 80.0, 120.0, 160.0)
FAMILIES = ("vllm", "sglang")


def family_of(profile_name: str) -> str | None:
    """The engine family whose profiles a candidate value replaces ("vllm", "sglang"), else None (not varied)."""
    return next((f for f in FAMILIES if profile_name.startswith(f)), None)


def predict_tpot_at(rows: list, cost_s: float, fronts: list[float]) -> list[float]:
    """Each row's predicted TPOT, seconds, with every vLLM and SGLang profile's per-sequence cost set to ``cost_s``."""
    saved = dict(profiles.ENGINES)
    try:
        for name, p in saved.items():
            if family_of(name):
                profiles.ENGINES[name] = p.with_(sequence_overhead_s=cost_s)
        pred = acc.predict_decode_rows(rows, catalog=default_catalog(), frontend_s=fronts)
    finally:
        profiles.ENGINES.clear()
        profiles.ENGINES.update(saved)
    return [float(x) for x in pred.tpot_s]


def _median_abs(errs: list[float]) -> float:
    return statistics.median(abs(e) for e in errs) if errs else math.nan


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--grid", nargs="*", type=float, default=list(GRID_US), help="candidate values, microseconds")
    parser.add_argument(
        "--overlap",
        action="store_true",
        help="price each overlapped loop (SGLang >= 0.4, TensorRT-LLM 1.x, vLLM >= 0.14) as max(device, host), s118's "
        "reading (profiles.PUBLISHED_HOST_COST_READINGS {'overlap'}), the candidate cost its host part",
    )
    args = parser.parse_args()
    if args.overlap:
        profiles.PUBLISHED_HOST_COST = True
        profiles.PUBLISHED_HOST_COST_READINGS = frozenset({"overlap"})
    shipped_us = profiles.VLLM_SEQUENCE_OVERHEAD_S * 1e6
    grid = sorted(set(args.grid) | {shipped_us})
    rows = [
        r
        for r in acc.load_decode_rows()
        if r.source_group not in FIT_SOURCE_GROUPS and r.kind == "serving" and not math.isnan(r.tpot_s)
    ]
    fams = []
    for r in rows:
        try:
            fams.append(family_of(acc._profile_for(r, None).name))
        except acc.PlannerError:
            fams.append(None)
    keep = [i for i, f in enumerate(fams) if f]
    rows, fams = [rows[i] for i in keep], [fams[i] for i in keep]
    fronts = frontend_s_of_rows(rows)
    logerr: dict[float, list[float]] = {}
    for us in grid:
        pred = predict_tpot_at(rows, us * 1e-6, fronts)
        logerr[us] = [
            math.log(p / r.tpot_s) if p > 0 and r.tpot_s > 0 else math.nan for p, r in zip(pred, rows, strict=True)
        ]
    print(f"serving TPOT rows: {len(rows)} (held-out sources, vLLM and SGLang profiles); grid {grid} us")
    print("family  left-out source                      rows  chosen on the others   left-out |error| median / worst"
          "   shipped 59 us on them")  # fmt: skip
    for fam in FAMILIES:
        idx = [i for i, f in enumerate(fams) if f == fam]
        sources = sorted({rows[i].source_group for i in idx})
        all_out, all_ship = [], []
        for s in sources:
            mine = [i for i in idx if rows[i].source_group == s and not math.isnan(logerr[shipped_us][i])]
            others = [i for i in idx if rows[i].source_group != s]

            def score(us: float, on: list[int] = others) -> float:
                vals = [abs(logerr[us][i]) for i in on if not math.isnan(logerr[us][i])]
                return statistics.median(vals) if vals else math.inf

            chosen = min(grid, key=score) if others else shipped_us
            out = [math.expm1(logerr[chosen][i]) for i in mine]
            ship = [math.expm1(logerr[shipped_us][i]) for i in mine]
            all_out += out
            all_ship += ship
            print(
                f"{fam:7s} {s[:36]:36s} {len(mine):5d}  {chosen:6.0f} us"
                f"              {_median_abs(out):5.0%} / {max(map(abs, out), default=math.nan):5.0%}"
                f"          {_median_abs(ship):5.0%} / {max(map(abs, ship), default=math.nan):5.0%}"
            )
        print(
            f"{fam:7s} {'all left-out figures':36s} {len(all_out):5d}  {'':9s}"
            f"              {_median_abs(all_out):5.0%} / {max(map(abs, all_out), default=math.nan):5.0%}"
            f"          {_median_abs(all_ship):5.0%} / {max(map(abs, all_ship), default=math.nan):5.0%}"
        )


if __name__ == "__main__":
    main()
