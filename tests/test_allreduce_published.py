"""Published all-reduce rows of GPUs aiconfigurator has not measured (catalogs/reference/allreduce_published.csv,
written by bench/allreduce_published.py): MI300X at 8 GPUs, RCCL all_reduce_perf with and without HIP graphs, AMD
ROCm blog "Understanding RCCL Bandwidth and xGMI Performance on AMD Instinct MI300X" (2025-03-02,
https://rocm.blogs.amd.com/software-tools-optimization/mi300x-rccl-xgmi/README.html)."""

from __future__ import annotations

import importlib.util
import math
from pathlib import Path

import pytest
from test_allreduce_table import FIT_ENGINE, TABLE_ENGINE, _facts, _time_us

from planner.catalog import default_catalog
from planner.engines.allreduce_table import PUBLISHED_FILE_NAME, measured_groups, read_allreduce_table
from planner.model.decode import allreduce_time_s
from planner.report import plan

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "catalogs" / "reference" / PUBLISHED_FILE_NAME


def _script():
    spec = importlib.util.spec_from_file_location("allreduce_published", ROOT / "bench" / "allreduce_published.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TestShippedRows:
    def test_file_rederives_from_the_script(self, tmp_path):
        """bench/allreduce_published.py writes the shipped file byte for byte from the blog's printouts."""
        out = tmp_path / "p.csv"
        _script().main(out)
        assert out.read_text() == SHIPPED.read_text()

    def test_points_are_the_blogs(self):
        """The blog's out-of-place times on 8 x MI300X: with graphs (-G 1) 512 B 7.44 us (the catalog's fabric
        latency), 16 KiB 8.71, 1 MiB 19.40, 4 MiB 51.83; without, 64 MiB 429.1, 512 MiB 3026.2."""
        for size, graph, us in [(512, True, 7.44), (2**14, True, 8.71), (2**20, True, 19.40), (2**22, True, 51.83),
                                (2**26, False, 429.1), (2**29, False, 3026.2)]:  # fmt: skip
            assert _time_us("MI300X", size, 8, graph) == pytest.approx(us, rel=1e-9)
        assert default_catalog().gpu("MI300X").interconnect_latency_s == pytest.approx(7.44e-6)
        assert measured_groups("MI300X") == (8,)

    def test_an_independent_rccl_run_agrees_at_large_messages(self):
        """QuickReduce's README (https://github.com/mk1-project/quickreduce, 2025-03-16; RCCL 2.20.5 on 8 x MI300X at
        TensorWave) printed RCCL at 4-64 MiB: 52.13, 83.12, 148.4, 240.4, 426.0 us; the blog's eager row is within
        2% of each (the sizes where a prefill step's all-reduce lies)."""
        quickreduce = {2**22: 52.13, 2**23: 83.12, 2**24: 148.4, 2**25: 240.4, 2**26: 426.0}
        for size, us in quickreduce.items():
            assert _time_us("MI300X", size, 8, graph=False) == pytest.approx(us, rel=0.02)

    def test_eager_dip_below_1_kib_is_smoothed_upward(self):
        """The eager printout is slower at 128-512 B (22.9 us) than at 1 KiB (13.1): the table is made non-decreasing
        (planner.engines.allreduce_table._never_faster_when_larger), so no smaller message takes longer: 128 B - 128 KiB
        pool at 15.5 us (16 KiB printed 13.54). Eager rows time prefill steps (past 512 tokens: messages of 4 MiB and
        more at hidden 4,096), where the printout is kept."""
        times = [_time_us("MI300X", 2.0**p, 8, graph=False) for p in range(7, 30)]
        assert all(a <= b * (1 + 1e-12) for a, b in zip(times, times[1:], strict=False))
        assert times[0] == pytest.approx(times[7]) == pytest.approx(15.54, abs=0.01)
        assert times[15] == pytest.approx(51.72, rel=1e-9)  # 4 MiB, as printed


class TestModelReadsThem:
    def test_mi300x_at_8_gpus_takes_its_own_row(self):
        """8 x MI300X: a decode step's all-reduce (64 tokens x 8,192 x 2 B = 1 MiB) takes the blog's graph time,
        19.40 us; a long prefill (8,192 tokens: 128 MiB) its eager time, 797.4 us. Before, H100's table stood in."""
        g, e = _facts("MI300X", TABLE_ENGINE)
        assert e.allreduce_table_row == read_allreduce_table().row("MI300X") and e.allreduce_table_bytes_scale == 1.0
        assert allreduce_time_s(g, e, 2.0**20, 8.0, 64.0) == pytest.approx(19.40e-6, rel=1e-9)
        assert allreduce_time_s(g, e, 2.0**27, 8.0, 8192.0) == pytest.approx(797.4e-6, rel=1e-9)

    def test_mi325x_borrows_mi300x_and_smaller_groups_take_the_form(self):
        """MI325X (CDNA 3, the same 448 GB/s Infinity Fabric) reads MI300X's row at scale 1; 4 x MI300X, a group the
        blog did not run, takes the latency + bandwidth form, as with the table off."""
        g, e = _facts("MI325X", TABLE_ENGINE)
        assert e.allreduce_table_row == read_allreduce_table().row("MI300X") and e.allreduce_table_bytes_scale == 1.0
        g, e = _facts("MI300X", TABLE_ENGINE)
        fg, fe = _facts("MI300X", FIT_ENGINE)
        assert allreduce_time_s(g, e, 2.0**20, 4.0, 64.0) == allreduce_time_s(fg, fe, 2.0**20, 4.0, 64.0)
        assert not math.isnan(allreduce_time_s(g, e, 2.0**20, 4.0, 64.0))

    def test_plans_name_the_source(self):
        """A plan on 8 x MI300X names RCCL and the blog; on 4 x MI300X it says the form stands in; MI325X names
        MI300X's table."""
        at8 = [w for w in plan("MI300X", "llama3.1-70b", 4096, gpus=8).warnings if "all-reduce" in w]
        assert len(at8) == 1 and "RCCL all_reduce_perf" in at8[0] and "2025-03-02" in at8[0]
        at4 = [w for w in plan("MI300X", "llama3.1-70b", 4096, gpus=4).warnings if "all-reduce" in w]
        assert len(at4) == 1 and "not measured on 4 x MI300X" in at4[0] and "form" in at4[0]
        mi325 = [w for w in plan("MI325X", "llama3.1-70b", 4096, gpus=8).warnings if "all-reduce" in w]
        assert len(mi325) == 1 and "MI300X's table" in mi325[0]
