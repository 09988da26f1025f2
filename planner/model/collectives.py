"""Measured collective times: an all-reduce looked up in a table per GPU, group size and message size.

``AllReduceTable`` holds measured all-reduce latencies (``planner.engines.allreduce_table`` reads vLLM's from
``catalogs/reference/allreduce_aic.csv``); ``table_allreduce_time_s`` interpolates it. Pure: no I/O, numbers in and
out, arrays broadcast.
"""

from __future__ import annotations

import bisect
import math
from dataclasses import dataclass

import numpy as np

from planner.model.facts import ArrayLike


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


def _segment(grid: np.ndarray, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(left index, weight of the right point) of ``x`` on an ascending ``grid`` (x within the grid)."""
    j = np.clip(np.searchsorted(grid, x, side="right") - 1, 0, len(grid) - 2)
    return j, (x - grid[j]) / (grid[j + 1] - grid[j])


def table_allreduce_time_s(
    table: AllReduceTable, row: ArrayLike, message_bytes: ArrayLike, gpus: ArrayLike, graph: ArrayLike
) -> np.ndarray:
    """One all-reduce's measured time, seconds; NaN where the table cannot say (no row, a group size outside the
    measured ones or between two of which one was not measured).

    Interpolation: log(time) linear in log2(message bytes) between the measured sizes (a power law between two
    neighbours) and linear in log2(group size) between measured group sizes. Below the smallest size: its time (the
    latency floor). Above the largest (512 MiB): the last segment's bytes per second, linear in bytes. One scenario
    (every argument a scalar) is computed in plain floats, the same steps (``_one_time_s``): a float back.
    """
    if np.ndim(row) == 0 and np.ndim(message_bytes) == 0 and np.ndim(gpus) == 0 and np.ndim(graph) == 0:
        return _one_time_s(table, float(row), float(message_bytes), float(gpus), bool(graph))
    r, b, g, m = np.broadcast_arrays(
        np.asarray(row, dtype=float), np.asarray(message_bytes, dtype=float), np.asarray(gpus, dtype=float),
        np.asarray(graph, dtype=bool),
    )  # fmt: skip
    shape = r.shape
    r, b, g, m = (a.ravel() for a in (r, b, g, m))
    lg_grid = np.log2(np.asarray(table.group_sizes, dtype=float))
    x_grid = np.asarray(table.log2_bytes, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        lg = np.log2(np.maximum(g, 1.0))
        inside = np.isfinite(r) & (lg >= lg_grid[0]) & (lg <= lg_grid[-1])
        ri = np.where(inside, r, 0.0).astype(int)
        mi = np.where(m, 0, 1)
        gj, gw = _segment(lg_grid, np.clip(lg, lg_grid[0], lg_grid[-1]))
        x = np.log2(np.maximum(b, 1.0))
        sj, sw = _segment(x_grid, np.clip(x, x_grid[0], x_grid[-1]))

        def log_time(size_left: np.ndarray, size_w: np.ndarray) -> np.ndarray:
            def at(group: np.ndarray) -> np.ndarray:
                lo = table.log_seconds[ri, mi, group, size_left]
                hi = table.log_seconds[ri, mi, group, size_left + 1]
                return np.where(size_w == 0.0, lo, np.where(size_w == 1.0, hi, lo + (hi - lo) * size_w))

            left, right = at(gj), at(gj + 1)
            return np.where(gw == 0.0, left, np.where(gw == 1.0, right, left + (right - left) * gw))

        t = np.exp(log_time(sj, sw))
        last = len(x_grid) - 2
        t_hi = np.exp(log_time(np.full_like(sj, last), np.ones_like(sw)))
        t_prev = np.exp(log_time(np.full_like(sj, last), np.zeros_like(sw)))
        top = 2.0 ** x_grid[-1]
        slope = (t_hi - t_prev) / (top - 2.0 ** x_grid[-2])  # seconds per byte of the last measured segment
        t = np.where(b > top, t_hi + (b - top) * slope, t)
    return np.where(inside, t, np.nan).reshape(shape)


def _one_segment(grid: tuple[float, ...], x: float) -> tuple[int, float]:
    """``_segment`` of one value (x within the grid)."""
    j = min(max(bisect.bisect_right(grid, x) - 1, 0), len(grid) - 2)
    return j, (x - grid[j]) / (grid[j + 1] - grid[j])


def _one_time_s(table: AllReduceTable, row: float, message_bytes: float, gpus: float, graph: bool) -> float:
    """``table_allreduce_time_s`` of one scenario, in floats (a sweep's array path costs more than the model for
    one scenario)."""
    lg_grid = tuple(math.log2(x) for x in table.group_sizes)
    lg = math.log2(max(gpus, 1.0))
    if row != row or not lg_grid[0] <= lg <= lg_grid[-1]:
        return math.nan
    log_s = table.log_seconds[int(row), 0 if graph else 1]
    gj, gw = _one_segment(lg_grid, lg)
    x_grid = table.log2_bytes

    def log_time(size: int, size_w: float) -> float:
        def at(group: int) -> float:
            lo, hi = float(log_s[group, size]), float(log_s[group, size + 1])
            return lo if size_w == 0.0 else hi if size_w == 1.0 else lo + (hi - lo) * size_w

        if gw == 0.0:
            return at(gj)
        left, right = at(gj), at(gj + 1)
        return right if gw == 1.0 else left + (right - left) * gw

    top = 2.0 ** x_grid[-1]
    if message_bytes > top:
        last = len(x_grid) - 2
        t_hi, t_prev = math.exp(log_time(last, 1.0)), math.exp(log_time(last, 0.0))
        return t_hi + (message_bytes - top) * ((t_hi - t_prev) / (top - 2.0 ** x_grid[-2]))
    sj, sw = _one_segment(x_grid, min(max(math.log2(max(message_bytes, 1.0)), x_grid[0]), x_grid[-1]))
    return math.exp(log_time(sj, sw))
