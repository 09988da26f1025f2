"""Write vLLM's measured all-reduce time per message size, group size and GPU as a small table (about 10 kB).

    /work/venvs/aic/bin/python bench/allreduce_extract.py          # writes catalogs/reference/allreduce_aic.csv
    /work/venvs/aic/bin/python bench/allreduce_extract.py OUT.csv  # elsewhere (tests/test_allreduce_table.py)

Source: aiconfigurator 0.12.0 (PyPI ``aiconfigurator``, Apache-2.0, NVIDIA; licence text in
``catalogs/reference/LICENSE-aiconfigurator.txt``), ``aiconfigurator_core/systems/data/<system>/comm/vllm/<newest
version>/custom_allreduce_perf.parquet``: bf16 all-reduce latency in ms measured through vLLM's own all-reduce
(``kernel_source`` ``vLLM_custom_graph``: inside a captured CUDA graph, as a decode step runs it;
``vLLM_custom_eager``: outside one, as a step with more tokens than the largest captured size runs it) at 2, 4, 8
(GB300: 16; GB200: 2 and 4) GPUs and messages of 128 B - 512 MiB, powers of two.

The rows are what vLLM's dispatch does at each size, not only its custom kernel: above the custom all-reduce's size
limit (``CustomAllreduce`` max_size 8 MiB; per world size on SM 9.0: 64 MiB at 2 GPUs, 32 MiB at 4, 256 KiB at 8
when symmetric memory is available, ``CUSTOM_ALL_REDUCE_MAX_SIZES`` in
vllm/distributed/device_communicators/all_reduce_utils.py, vllm-project/vllm @00d618aa) vLLM hands the tensor to
NCCL (or NCCL's symmetric-memory all-reduce), and the table's rows there equal aiconfigurator's NCCL all-reduce table
of the same GPU (``comm/nccl/<version>/nccl_perf.parquet``, ``op_name`` all_reduce, half) within 8%:
A100 from 4 MiB, H100 at 8 GPUs from 64 MiB (``tests/test_allreduce_table.py`` checks it where the venv exists).

One CSV row per (GPU, mode, group size): the latency in microseconds at each size (columns ``us_<log2 bytes>``),
rounded to 4 significant figures. Nothing is fitted; ``planner.engines.allreduce_table`` interpolates it.
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent))

from kernel_extract import AIC_VERSION, DATA, SYSTEMS, latest  # noqa: E402

OUT = Path(__file__).resolve().parents[1] / "catalogs" / "reference" / "allreduce_aic.csv"
#: Message sizes tabulated: 2^7 .. 2^29 bytes (128 B - 512 MiB), every size aiconfigurator measured.
LOG2_SIZES = tuple(range(7, 30))
MODES = {"graph": "vLLM_custom_graph", "eager": "vLLM_custom_eager"}
COLUMNS = ("gpu", "aic_system", "vllm_version", "mode", "num_gpus", *(f"us_{p}" for p in LOG2_SIZES))


def table_rows(system: Path, gpu: str) -> list[list[str]]:
    """The CSV rows of one aiconfigurator system (none where it has no vLLM all-reduce table)."""
    found = newest_table(system / "comm" / "vllm", "custom_allreduce_perf.parquet")
    if found is None:
        return []
    folder, d = found
    return latency_rows(d, "kernel_source", MODES, LOG2_SIZES, lambda p: 2**p, (gpu, system.name, folder.name))


def newest_table(path: Path, name: str) -> tuple[Path, pd.DataFrame] | None:
    """(the newest version folder under ``path``, its table ``name``), or None where there is none."""
    folder = latest(path)
    if folder is None or not (folder / name).exists():
        return None
    return folder, pd.read_parquet(folder / name)


def latency_rows(d, column: str, modes: dict[str, str], log2_sizes, message_of, lead: tuple) -> list[list[str]]:
    """One CSV row per (mode, group size) of a measured latency table ``d``: ``lead`` (GPU, system, version), the
    mode, the group size and the latency in microseconds at each of ``log2_sizes`` (the table's ``message_size``
    ``message_of(p)``; blank where not measured), the rows of mode m those whose ``column`` is ``modes[m]``."""
    out = []
    for mode, value in modes.items():
        rows = d[d[column] == value]
        for g in sorted(rows.num_gpus.unique()):
            s = rows[rows.num_gpus == g].set_index("message_size").latency
            us = [f"{float(s.loc[message_of(p)]) * 1e3:.4g}" if message_of(p) in s.index else "" for p in log2_sizes]
            out.append([*lead, mode, str(int(g)), *us])
    return out


def write_table(rows: list[list[str]], columns: tuple[str, ...], out: Path) -> None:
    """Write ``rows`` under ``columns`` to ``out`` and say how many (the extraction scripts' common end)."""
    with out.open("w", newline="") as f:
        w = csv.writer(f)
        w.writerow(columns)
        w.writerows(rows)
    print(f"{len(rows)} rows (aiconfigurator {AIC_VERSION}) -> {out}", file=sys.stderr)


def main(out: Path = OUT) -> None:
    write_table([r for key, gpu in SYSTEMS.items() for r in table_rows(DATA / key, gpu)], COLUMNS, out)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("out", nargs="?", type=Path, default=OUT, help=f"the CSV to write [default: {OUT}]")
    main(parser.parse_args().out)
