"""vLLM's measured all-reduce time per GPU, group size and message size (``catalogs/reference/allreduce_aic.csv``).

``bench/allreduce_extract.py`` writes the table from aiconfigurator 0.12.0's measured vLLM all-reduce database
(Apache-2.0; ``catalogs/reference/LICENSE-aiconfigurator.txt``): bf16, 128 B - 512 MiB, 2/4/8 GPUs (GB300 also 16,
GB200 2 and 4), inside a captured CUDA graph and outside one. The rows are vLLM's dispatch at each size, so above
its custom all-reduce's size limit they are NCCL's (``bench/allreduce_extract.py`` cites the limit and the check).

``read_allreduce_table`` reads it into a ``planner.model.collectives.AllReduceTable``; an engine profile with
``allreduce_table`` set times each all-reduce from it (``planner.model.decode.allreduce_time_s``) on a GPU with a
table of its own, in its fabric domain. Off by default: the what-if workbook's formula computes the latency +
bandwidth form, and Python and the workbook must agree (tests/test_workbook_libreoffice.py).
"""

from __future__ import annotations

import csv
import functools
import math
from pathlib import Path

import numpy as np

from planner.catalog.loader import shipped_catalog_dir
from planner.model.collectives import AllReduceTable

TABLE_FILE_NAME = "allreduce_aic.csv"  # in the shipped reference data (catalogs/reference)
MODES = ("graph", "eager")  # AllReduceTable's mode axis, in order


@functools.cache
def read_allreduce_table(path: str | None = None) -> AllReduceTable:
    """The shipped table (or the CSV at ``path``) as an ``AllReduceTable`` (log seconds; NaN where not measured)."""
    with Path(path or shipped_catalog_dir() / "reference" / TABLE_FILE_NAME).open(newline="") as f:
        rows = list(csv.DictReader(f))
    size_cols = [c for c in rows[0] if c.startswith("us_")]
    gpus = tuple(dict.fromkeys(r["gpu"] for r in rows))
    groups = tuple(sorted({int(r["num_gpus"]) for r in rows}))
    log_s = np.full((len(gpus), len(MODES), len(groups), len(size_cols)), math.nan)
    for r in rows:
        us = np.array([float(r[c]) for c in size_cols])
        log_s[gpus.index(r["gpu"]), MODES.index(r["mode"]), groups.index(int(r["num_gpus"]))] = np.log(us * 1e-6)
    log_s.flags.writeable = False
    return AllReduceTable(gpus, groups, tuple(float(c[3:]) for c in size_cols), log_s)


#: Whether profiles that do not set ``allreduce_table`` use the table (False as shipped; ``bench/heldout.py
#: --allreduce-table`` and ``bench/loso.py --allreduce-table`` set it for the whole run to compare).
DEFAULT_ON = False
