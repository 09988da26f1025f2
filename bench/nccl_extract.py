"""Write NCCL's measured all-gather and reduce-scatter times per message size, group size and GPU (27 kB).

    /work/venvs/aic/bin/python bench/nccl_extract.py          # writes catalogs/reference/gather_scatter_aic.csv
    /work/venvs/aic/bin/python bench/nccl_extract.py OUT.csv  # elsewhere (tests/test_gather_scatter.py)

Source: aiconfigurator 0.12.0 (PyPI ``aiconfigurator``, Apache-2.0, NVIDIA; licence text in
``catalogs/reference/LICENSE-aiconfigurator.txt``), ``aiconfigurator_core/systems/data/<system>/comm/nccl/<newest
version>/nccl_perf.parquet``: NCCL ``all_gather`` and ``reduce_scatter`` latency in ms at 2, 4, 8 GPUs (GB200 and
GB300: 2 and 4), ``nccl_dtype`` half. Its ``message_size`` counts elements of the whole gathered (or scattered)
tensor, not bytes: the int8 rows of the same table take at 2m elements the time the half rows take at m (B200, 8 GPUs,
all_gather: 268,435,456 half 0.761 ms, 536,870,912 int8 0.761 ms), so a row's bytes are 2 x ``message_size``; at
512 MiB a B200 all-gather over 8 GPUs then moves 705 GB/s of output (617 GB/s a link, the bus rate nccl-tests prints).

One CSV row per (GPU, op, group size): the latency in microseconds at each size, 2^9 .. 2^29 bytes (columns
``us_<log2 bytes>``), rounded to 4 significant figures, the columns ``planner.engines.allreduce_table`` reads (op in
the ``mode`` column). Nothing is fitted.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from allreduce_extract import latency_rows, newest_table, write_table  # noqa: E402
from kernel_extract import DATA, SYSTEMS  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "catalogs" / "reference" / "gather_scatter_aic.csv"
#: Sizes tabulated, bytes: 2^9 (the smallest measured, 256 half values) .. 2^29 (512 MiB).
LOG2_SIZES = tuple(range(9, 30))
OPS = {"all_gather": "all_gather", "reduce_scatter": "reduce_scatter"}  # the CSV's mode: the table's op_name
COLUMNS = ("gpu", "aic_system", "nccl_version", "mode", "num_gpus", *(f"us_{p}" for p in LOG2_SIZES))


def table_rows(system: Path, gpu: str) -> list[list[str]]:
    """The CSV rows of one aiconfigurator system (none where it has no NCCL table)."""
    found = newest_table(system / "comm" / "nccl", "nccl_perf.parquet")
    if found is None:
        return []
    folder, d = found
    half = d[d.nccl_dtype == "half"]  # message_size counts half values: 2^(p - 1) of them are 2^p bytes
    return latency_rows(half, "op_name", OPS, LOG2_SIZES, lambda p: 2 ** (p - 1), (gpu, system.name, folder.name))


def main(out: Path = OUT) -> None:
    write_table([r for key, gpu in SYSTEMS.items() for r in table_rows(DATA / key, gpu)], COLUMNS, out)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=OUT, help=f"the CSV to write [default: {OUT}]")
    main(parser.parse_args().out)
