"""Copy MI300X's measured block-FP8 GEMM times out of AMD's aiter tuning tables (issue 21, Build 2: a GPU without
aiconfigurator tables timed from its own published kernel measurements).

    python bench/aiter_extract.py                 # writes catalogs/reference/gemm_fp8_block_mi300x_aiter.csv
    python bench/aiter_extract.py --repo PATH     # from another clone of github.com/ROCm/aiter

Source: ROCm/aiter (MIT, Advanced Micro Devices; licence text in ``catalogs/reference/LICENSE-aiter.txt``) ships, per
model, the CK block-scale FP8 GEMM kernel its tuner picked for each (M, N, K) with the time it measured (``us``):
``aiter/configs/model_configs/a8w8_blockscale_tuned_gemm_{qwen3_vl_235b,qwen3_vl_32b,qwen36_27b}.csv``, added by pull
request 3324 (https://github.com/ROCm/aiter/pull/3324, merged 2026-05-26; its description: "Hardware: AMD MI300X
(gfx942, 304 CUs)", AITER 0.1.13.post1, TP 2/4/8 shapes of Qwen3-VL-235B-A22B-FP8, Qwen3-VL-32B-FP8 and
Qwen3.6-27B-FP8, M = 16-80,000). Read at commit d6486abc8d (2026-05-28: the same rows with LF line endings; a later
commit, 6b831fb287, changed the 235B file for GLM-5.1 tunings on "MI300X/MI325", so it is not used, nor the other
gfx942 / 304-CU tables, whose commits name an MI325X, which has the same 304 CUs: ds_v3 84493f0e5b).

Also MI300X's fused MoE: ``aiter/configs/model_configs/qwen3_235b_bf16_tuned_fmoe.csv`` at commit ca781d8197 (pull
request 3384, 2026-06-01, "update mi300x moe qwen bf16 configs": "add qwen3_235b BF16 fmoe TP=8 (inter_dim=192) tuned
on MI300X"; its 32 rows of 304 CUs all come from that commit): aiter's two-stage CK fused MoE of Qwen3-235B-A22B in
bf16 (hidden 4,096, 128 experts, top-8, experts 384 wide at TP 4 and 192 at TP 8), 1-32,768 tokens, the whole call's
time (``us``: both stages). Written to ``catalogs/reference/moe_bf16_mi300x_aiter.csv`` (tokens, hidden_size,
inter_dim (one expert's width on one GPU), experts, topk, us); tests/test_moe_gemm_rate.py holds the borrowed MoE
curves to it.

Kept (GEMMs): rows of gfx942 with 304 CUs, the fastest time per (M, N, K) over the three files, M <= 16,384 and N, K >= 1,024
(``bench/kernel_extract.py``'s GEMM filter: an LLM layer's shapes). Written: m, n, k, us (4 significant figures).
``planner.engines.kernel_floor.own_gemm_fit`` fits the operator model's GEMM curve to them
(``planner.engines.kernel_curves.AITER_GEMM_MI300X``, not applied; tests/test_amd_published_rates.py re-derives it).
"""

from __future__ import annotations

import argparse
import csv
import io
import subprocess
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "catalogs" / "reference" / "gemm_fp8_block_mi300x_aiter.csv"
REPO = Path("/work/.mirror/ROCm+aiter/repo")
COMMIT = "d6486abc8d"
TABLES = tuple(
    f"aiter/configs/model_configs/a8w8_blockscale_tuned_gemm_{m}.csv"
    for m in ("qwen3_vl_235b", "qwen3_vl_32b", "qwen36_27b")
)
MOE_OUT = OUT.with_name("moe_bf16_mi300x_aiter.csv")
MOE_COMMIT, MOE_TABLE = "ca781d8197", "aiter/configs/model_configs/qwen3_235b_bf16_tuned_fmoe.csv"
MOE_COLUMNS = ("token", "model_dim", "inter_dim", "expert", "topk", "us")
GFX, CUS = "gfx942", 304
M_MAX, NK_MIN = 16384, 1024


def read_table(repo: Path, path: str, commit: str = COMMIT) -> list[dict[str, str]]:
    """One tuning table at ``commit`` (``git show``, so a bare mirror does)."""
    text = subprocess.run(
        ["git", "-C", str(repo), "show", f"{commit}:{path}"], check=True, capture_output=True, text=True
    ).stdout
    return list(csv.DictReader(io.StringIO(text)))


def fastest(rows: list[dict[str, str]]) -> dict[tuple[int, int, int], float]:
    """The fastest measured time (us) per (M, N, K) of gfx942 / 304-CU rows inside the layer filter."""
    best: dict[tuple[int, int, int], float] = {}
    for r in rows:
        if r["gfx"] != GFX or int(r["cu_num"]) != CUS:
            continue
        key = (int(r["M"]), int(r["N"]), int(r["K"]))
        if key[0] > M_MAX or key[1] < NK_MIN or key[2] < NK_MIN:
            continue
        best[key] = min(best.get(key, float("inf")), float(r["us"]))
    return best


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repo", type=Path, default=REPO, help="a clone (or bare mirror) of github.com/ROCm/aiter")
    ap.add_argument("--out", type=Path, default=OUT)
    args = ap.parse_args()
    best = fastest([r for t in TABLES for r in read_table(args.repo, t)])
    with args.out.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["m", "n", "k", "us"])
        for (m, n, k), us in sorted(best.items()):
            w.writerow([m, n, k, f"{us:.4g}"])
    print(f"wrote {len(best)} GEMMs to {args.out}")
    moe = [r for r in read_table(args.repo, MOE_TABLE, MOE_COMMIT) if int(r["cu_num"]) == CUS]
    with MOE_OUT.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["tokens", "hidden_size", "inter_dim", "num_experts", "topk", "us"])
        for r in sorted(moe, key=lambda r: (int(r["inter_dim"]), int(r["token"]))):
            w.writerow([*(r[c] for c in MOE_COLUMNS[:-1]), f"{float(r['us']):.4g}"])
    print(f"wrote {len(moe)} fused-MoE calls to {MOE_OUT}")


if __name__ == "__main__":
    main()
