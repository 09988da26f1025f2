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
- MI300X, 2 and 4 GPUs: RCCL's column of QuickReduce's README (https://github.com/mk1-project/quickreduce, commit
  910e892, 2025-03-16: "All-Reduce Latency across 2xMI300X" and "4xMI300X", ROCm 6.2.41134, RCCL 2.20.5, 8 x MI300X
  at TensorWave; fp16, microseconds, 32 KiB - 64 MiB), written as ``eager`` rows (QuickReduce's benchmark launches
  each all-reduce; no graph run was printed) with blank cells outside the printed sizes. In a fully connected mesh a
  group of g GPUs has g - 1 of each GPU's 7 links: a pair's 64 MiB takes 1,464.3 us (46 GB/s of bus bandwidth, of one
  64 GB/s link), 4 GPUs' 761.2 us (132 of 192), against 426.0-429.1 us on 8. How the model reads the blanks and the
  graph rows it lacks: ``planner.engines.allreduce_table.read_allreduce_table``.
- float32 sums; a bf16 reduction moves the same bytes.
"""

from __future__ import annotations

import argparse
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
SOURCE_QUICKREDUCE = "quickreduce-readme-2025-03-16-rccl-mi300x"
#: QuickReduce's README, RCCL column: message bytes (32K .. 64M as printed, K and M binary) -> time (us).
_KIB = 2**10
RCCL_MI300X_2GPU_US = {
    32 * _KIB: 17.15, 64 * _KIB: 17.52, 128 * _KIB: 18.31, 256 * _KIB: 20.73, 512 * _KIB: 25.97, 2**20: 37.22,
    2**21: 59.14, 2**22: 105.1, 2**23: 195.2, 2**24: 376.3, 2**25: 739.0, 2**26: 1464.3,
}  # fmt: skip
RCCL_MI300X_4GPU_US = {
    32 * _KIB: 18.17, 64 * _KIB: 18.23, 128 * _KIB: 29.42, 256 * _KIB: 29.98, 512 * _KIB: 32.27, 2**20: 39.40,
    2**21: 48.87, 2**22: 70.61, 2**23: 115.7, 2**24: 205.4, 2**25: 388.6, 2**26: 761.2,
}  # fmt: skip
#: (GPU, source, mode, GPUs, printout) for every row written.
PUBLISHED = (
    ("MI300X", SOURCE_MI300X, "graph", 8, RCCL_MI300X_GRAPH_US),
    ("MI300X", SOURCE_MI300X, "eager", 8, RCCL_MI300X_EAGER_US),
    ("MI300X", SOURCE_QUICKREDUCE, "eager", 2, RCCL_MI300X_2GPU_US),
    ("MI300X", SOURCE_QUICKREDUCE, "eager", 4, RCCL_MI300X_4GPU_US),
)


def rows() -> list[list[str]]:
    """One CSV row per published printout: its times at 2^7 .. 2^29 bytes, as printed (blank: not printed)."""
    return [
        [gpu, src, mode, str(n), *(f"{us[2**p]:g}" if 2**p in us else "" for p in LOG2_SIZES)]
        for gpu, src, mode, n, us in PUBLISHED
    ]


def main(out: Path = OUT) -> None:
    with out.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(COLUMNS)
        w.writerows(rows())
    print(f"{len(PUBLISHED)} rows -> {out}", file=sys.stderr)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=OUT, help=f"the CSV to write [default: {OUT}]")
    main(parser.parse_args().out)
