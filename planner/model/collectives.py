"""Measured collective times: an all-reduce looked up in a table per GPU, group size and message size.

``AllReduceTable`` holds measured all-reduce latencies (``planner.engines.allreduce_table`` reads vLLM's from
``catalogs/reference/allreduce_aic.csv``); ``table_allreduce_time_s`` interpolates it. Pure: no I/O, numbers in and
out, arrays broadcast.
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from planner.model import ops
from planner.model.facts import ArrayLike
from planner.model.rows import Rows, per_row


@dataclass(frozen=True, eq=False)
class AllReduceTable:
    """Measured all-reduce latencies: ``log_seconds[row, mode, group, size]`` = log(seconds) of one all-reduce of
    2**``log2_bytes[size]`` bytes over ``group_sizes[group]`` GPUs on the GPU ``gpus[row]``, mode 0 inside a captured
    CUDA graph, 1 outside one (eager); NaN where not measured. Group sizes and sizes ascending."""

    gpus: tuple[str, ...]
    group_sizes: tuple[int, ...]
    log2_bytes: tuple[float, ...]
    log_seconds: np.ndarray

    def row(self, gpu_name: str) -> float:
        """The row of ``gpu_name`` as a float (NaN when the table has none): the form ``EngineFacts`` carries."""
        return float(self.gpus.index(gpu_name)) if gpu_name in self.gpus else float("nan")

    @functools.cached_property
    def log2_group_sizes(self) -> tuple[float, ...]:
        """log2 of ``group_sizes``: the interpolation's grid."""
        return tuple(math.log2(g) for g in self.group_sizes)

    @functools.cached_property
    def log_seconds_lists(self) -> list:
        """``log_seconds`` as nested Python lists of floats (the same numbers): one scenario's lookups index these,
        as numpy's indexing of one element costs more than the rest of the interpolation."""
        return self.log_seconds.tolist()


def mesh_group_share(link_share: ArrayLike, gpus: ArrayLike) -> ArrayLike:
    """The share of a GPU's aggregate fabric bandwidth that a group of ``gpus`` GPUs in its domain can use:
    min(1, (g - 1) x link / aggregate) on a fully connected mesh (``link_share`` = link / aggregate > 0: each GPU has
    one link to each peer, and a group's collective runs over the g - 1 links to its members), 1 on a switched fabric
    (``link_share`` 0: NVSwitch gives any group every link). 8 x MI300X: 7 / 7; a pair: 1 / 7 (one 64 GB/s link of
    448); 4 GPUs: 3 / 7. One GPU is taken as a pair (its all-reduce is 0 anyway)."""
    return ops.where(link_share > 0, ops.minimum(1.0, ops.maximum(gpus - 1.0, 1.0) * link_share), 1.0)


def _segment(grid: tuple[float, ...], x: ArrayLike) -> tuple[ArrayLike, ArrayLike]:
    """(left index, weight of the right point) of ``x`` on an ascending ``grid``, x clipped to the grid."""
    x = ops.minimum(ops.maximum(x, grid[0]), grid[-1])
    j = ops.minimum(ops.searchsorted_right(grid, x), len(grid) - 1) - 1
    left = ops.take(grid, j)
    return j, (x - left) / (ops.take(grid, j + 1) - left)


def _lerp(lo: ArrayLike, hi: ArrayLike, w: ArrayLike) -> ArrayLike:
    """lo + (hi - lo) x w, exactly ``lo`` at w = 0 and ``hi`` at w = 1 (a point of the grid: the neighbour, which
    may be NaN where not measured, plays no part)."""
    return ops.where(w == 0.0, lo, ops.where(w == 1.0, hi, lo + (hi - lo) * w))


def table_allreduce_time_s(
    table: AllReduceTable, row: ArrayLike, message_bytes: ArrayLike, gpus: ArrayLike, graph: ArrayLike
) -> ArrayLike:
    """One all-reduce's measured time, seconds; NaN where the table cannot say (no row, a group size outside the
    measured ones or between two of which one was not measured).

    Interpolation: log(time) linear in log2(message bytes) between the measured sizes (a power law between two
    neighbours), then linear in log2(group size) between measured group sizes. Below the smallest size: its time
    (the latency floor). Above the largest (512 MiB): the last segment's bytes per second, linear in bytes. Numbers
    or numpy arrays (broadcast), through ``planner.model.ops``: one scenario in Python floats, a float back. A
    sweep's arguments per (GPU, model, context) pair (``planner.model.rows.Rows``) are read once per pair
    (``per_row``), not gathered per scenario.
    """
    args = (row, message_bytes, gpus, graph)
    if type(row) is float and type(message_bytes) is float and type(gpus) is float and type(graph) is bool:
        index = int  # one scenario of Python numbers, as planner's scalar path gives (no checks below)
    elif any(isinstance(a, Rows) for a in args):  # a sweep's pairs: once per pair
        return per_row(lambda *a: table_allreduce_time_s(table, *a), *args)
    elif all(ops.zero_dim(a) for a in args):  # one scenario: Python numbers (numpy's own
        # would cost more than the rest)
        row, message_bytes, gpus, graph = float(row), float(message_bytes), float(gpus), bool(graph)
        index = int
    else:
        row, message_bytes, gpus = (np.asarray(a, dtype=float) for a in (row, message_bytes, gpus))
        index = functools.partial(np.asarray, dtype=np.intp)
    group_grid, size_grid = table.log2_group_sizes, table.log2_bytes
    lg = ops.log2(ops.maximum(gpus, 1.0))
    inside = (row == row) & (lg >= group_grid[0]) & (lg <= group_grid[-1])
    gj, gw = _segment(group_grid, lg)
    sj, sw = _segment(size_grid, ops.log2(ops.maximum(message_bytes, 1.0)))
    r, mode = index(ops.where(inside, row, 0.0)), index(ops.where(graph, 0, 1))

    def corner(group: ArrayLike, size: ArrayLike) -> ArrayLike:  # the measured log(time) at a grid point
        if index is int:
            return table.log_seconds_lists[r][mode][group][size]
        return table.log_seconds[r, mode, group, size]

    lower = corner(gj, sj), corner(gj + 1, sj)  # at size sj, group gj and gj + 1
    upper = corner(gj, sj + 1), corner(gj + 1, sj + 1)
    t = ops.exp(_lerp(_lerp(lower[0], upper[0], sw), _lerp(lower[1], upper[1], sw), gw))  # in size, then in group
    top = 2.0 ** size_grid[-1]
    # Above the largest size, sj is the last segment and sw 1 (t is that size's time): extended at the segment's
    # seconds per byte.
    slope = (t - ops.exp(_lerp(lower[0], lower[1], gw))) / (top - 2.0 ** size_grid[-2])
    t = ops.where(message_bytes > top, t + (message_bytes - top) * slope, t)
    return ops.where(inside, t, math.nan)
