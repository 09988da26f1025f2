"""Write published all-reduce times of GPUs without aiconfigurator tables in the form of ``allreduce_aic.csv``.

    python bench/allreduce_published.py          # writes catalogs/reference/allreduce_published.csv
    python bench/allreduce_published.py OUT.csv  # elsewhere (tests/test_allreduce_published.py)

MI300X, 8 GPUs: RCCL ``all_reduce_perf`` (rccl-tests develop:448c4c7, RCCL 2.22.3, ROCm 6.3.0) on one 8 x MI300X
node, one process per GPU (``mpirun -np 8 ... -b 8 -e 16G -f 2 -g 1``), float sum, out-of-place time in
microseconds at every power of two from 8 B to 16 GiB, printed twice: with HIP graphs (``-G 1``, as engines replay
a decode step) and without. AMD ROCm blog "Understanding RCCL Bandwidth and xGMI Performance on AMD Instinct
MI300X" (Jayacharan Kolla, Pedram Alizadeh, Gilbert Lee; 2025-03-02),
https://rocm.blogs.amd.com/software-tools-optimization/mi300x-rccl-xgmi/README.html (source file
ROCm/rocm-blogs blogs/software-tools-optimization/mi300x-rccl-xgmi/README.md, read 2026-12-02).

What the rows are and are not:
- RCCL, not the engines' own all-reduce. vLLM and SGLang on ROCm send small messages to their custom all-reduce
  (vLLM's ``CustomAllreduce``; SGLang's via aiter), whose 8-GPU times were not found published in full; at 4 GPUs
  vLLM's custom all-reduce took 7.18 us at 2 KiB, 22.91 us at 1 MiB and 63.86 us at 4 MiB (MI300X, "baseline"
  column of https://github.com/vllm-project/vllm/pull/19744, 2025-06-17). An independent RCCL run on 8 x MI300X
  (QuickReduce README, https://github.com/mk1-project/quickreduce, 2025-03-16, RCCL 2.20.5, TensorWave) agrees with
  the blog's eager row within 1% from 4 MiB to 64 MiB (52.13 / 83.12 / 148.4 / 240.4 / 426.0 us against 51.72 /
  83.68 / 148.8 / 244.1 / 429.1) and is slower at 32 KiB (16.22 against 13.31 us).
- Sizes in bytes. The columns ``us_<p>`` hold the time at 2**p bytes (128 B - 512 MiB, the columns of
  ``allreduce_aic.csv``); the rows of that file are aiconfigurator's ``message_size``, which counts bf16 elements
  (docs/accuracy.md): the model reads them at twice the bytes, a known error left there; these rows are read right.
- 8 GPUs only: no 2- or 4-GPU RCCL run was published with graphs, so a 2- or 4-GPU group of MI300X takes the
  latency + bandwidth form (``planner.model.decode.allreduce_time_s``).
- float32 sums; a bf16 reduction moves the same bytes.
"""

from __future__ import annotations

import csv
import sys
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "catalogs" / "reference" / "allreduce_published.csv"
#: The columns of ``allreduce_aic.csv`` (2^7 .. 2^29 bytes), so both files load into one table.
LOG2_SIZES = tuple(range(7, 30))
COLUMNS = ("gpu", "source", "mode", "num_gpus", *(f"us_{p}" for p in LOG2_SIZES))
SOURCE_MI300X = "rocm-blog-2025-03-02-mi300x-rccl-xgmi"
#: The blog's two all_reduce_perf printouts on 8 x MI300X: message bytes -> out-of-place time (us), as printed.
RCCL_MI300X_GRAPH_US = {
    8: 16.38, 16: 15.75, 32: 6.32, 64: 6.00, 128: 6.53, 256: 6.77, 512: 7.44, 1024: 7.47, 2048: 7.46, 4096: 7.61,
    8192: 7.64, 16384: 8.71, 32768: 9.05, 65536: 9.14, 131072: 9.51, 262144: 10.26, 524288: 14.26, 1048576: 19.40,
    2097152: 35.03, 4194304: 51.83, 8388608: 83.74, 16777216: 149.1, 33554432: 243.4, 67108864: 427.9,
    134217728: 795.3, 268435456: 1534.4, 536870912: 3024.0, 1073741824: 5961.9, 2147483648: 11880,
    4294967296: 23658, 8589934592: 47244, 17179869184: 94182,
}  # fmt: skip
RCCL_MI300X_EAGER_US = {
    8: 16.61, 16: 16.12, 32: 16.56, 64: 17.94, 128: 22.94, 256: 22.93, 512: 22.91, 1024: 13.11, 2048: 13.09,
    4096: 13.27, 8192: 13.30, 16384: 13.54, 32768: 13.31, 65536: 13.77, 131072: 14.14, 262144: 16.87, 524288: 24.41,
    1048576: 27.42, 2097152: 34.81, 4194304: 51.72, 8388608: 83.68, 16777216: 148.8, 33554432: 244.1,
    67108864: 429.1, 134217728: 797.4, 268435456: 1537.1, 536870912: 3026.2, 1073741824: 5970.6,
    2147483648: 11891, 4294967296: 23680, 8589934592: 47278, 17179869184: 94254,
}  # fmt: skip
#: (GPU, source, mode, GPUs, printout) for every row written.
PUBLISHED = (
    ("MI300X", SOURCE_MI300X, "graph", 8, RCCL_MI300X_GRAPH_US),
    ("MI300X", SOURCE_MI300X, "eager", 8, RCCL_MI300X_EAGER_US),
)


def rows() -> list[list[str]]:
    """One CSV row per published printout: its times at 2^7 .. 2^29 bytes, as printed."""
    return [[gpu, src, mode, str(n), *(f"{us[2**p]:g}" for p in LOG2_SIZES)] for gpu, src, mode, n, us in PUBLISHED]


def main(out: Path = OUT) -> None:
    with out.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        w.writerows(rows())
    print(f"{len(PUBLISHED)} rows -> {out}", file=sys.stderr)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)
