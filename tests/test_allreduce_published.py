"""Published all-reduce rows of GPUs aiconfigurator has not measured (catalogs/reference/allreduce_published.csv,
written by bench/allreduce_published.py): MI300X at 8 GPUs, RCCL all_reduce_perf with and without HIP graphs, AMD
ROCm blog "Understanding RCCL Bandwidth and xGMI Performance on AMD Instinct MI300X" (2025-03-02,
https://rocm.blogs.amd.com/software-tools-optimization/mi300x-rccl-xgmi/README.html); at 2 and 4 GPUs RCCL without
graphs from QuickReduce's README (https://github.com/mk1-project/quickreduce, 2025-03-16). And the mesh fabric a
2- or 4-GPU group of them has: g - 1 of each GPU's 7 links (planner.model.collectives.mesh_group_share)."""

from __future__ import annotations

import importlib.util
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from test_allreduce_table import FIT_ENGINE, TABLE_ENGINE, _facts, _time_us

from planner.catalog import default_catalog
from planner.catalog.schema import Gpu
from planner.engines.allreduce_table import PUBLISHED_FILE_NAME, measured_groups, read_allreduce_table
from planner.model.collectives import mesh_group_share
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
        assert measured_groups("MI300X") == (2, 4, 8)

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

    def test_mi325x_borrows_mi300x_at_every_group(self):
        """MI325X (CDNA 3, the same 7 x 64 GB/s Infinity Fabric) reads MI300X's row at scale 1, at 2, 4 and 8 GPUs
        alike (both meshes: the group's share of links is the same on both)."""
        g, e = _facts("MI325X", TABLE_ENGINE)
        mg, me = _facts("MI300X", TABLE_ENGINE)
        assert e.allreduce_table_row == read_allreduce_table().row("MI300X") and e.allreduce_table_bytes_scale == 1.0
        for n in (2.0, 4.0, 8.0):
            assert allreduce_time_s(g, e, 2.0**26, n, 8192.0) == allreduce_time_s(mg, me, 2.0**26, n, 8192.0)

    def test_plans_name_the_source(self):
        """A plan on 8 x MI300X names RCCL and the blog; on 2 and 4 x MI300X QuickReduce's RCCL run and that it had no
        graphs; MI325X names MI300X's table."""
        at8 = [w for w in plan("MI300X", "llama3.1-70b", 4096, gpus=8).warnings if "all-reduce" in w]
        assert len(at8) == 1 and "RCCL all_reduce_perf" in at8[0] and "2025-03-02" in at8[0]
        for n in (2, 4):
            note = [w for w in plan("MI300X", "llama3.1-70b", 4096, gpus=n).warnings if "all-reduce" in w]
            assert len(note) == 1 and "QuickReduce" in note[0] and "2025-03-16" in note[0]
            assert "without HIP graphs" in note[0]
        mi325 = [w for w in plan("MI325X", "llama3.1-70b", 4096, gpus=8).warnings if "all-reduce" in w]
        assert len(mi325) == 1 and "MI300X's table" in mi325[0]


class TestTwoAndFourGpus:
    """QuickReduce's README (https://github.com/mk1-project/quickreduce, commit 910e892, 2025-03-16), RCCL column of
    "All-Reduce Latency across 2xMI300X" and "4xMI300X" (RCCL 2.20.5, 8 x MI300X at TensorWave, no HIP graphs)."""

    PAIR_US = {2**15: 17.15, 2**20: 37.22, 2**22: 105.1, 2**26: 1464.3}
    FOUR_US = {2**15: 18.17, 2**20: 39.40, 2**22: 70.61, 2**26: 761.2}

    def test_model_takes_the_printed_times(self):
        """A pair's 64 MiB all-reduce takes 1,464.3 us (the latency + bandwidth form with one aggregate fabric figure
        gave 453 us: -69%); 4 GPUs' 761.2 us; 1 MiB 37.22 / 39.40 us; eager and inside a graph alike."""
        g, e = _facts("MI300X", TABLE_ENGINE)
        for n, printed in ((2.0, self.PAIR_US), (4.0, self.FOUR_US)):
            for size, us in printed.items():
                assert allreduce_time_s(g, e, float(size), n, 8192.0) == pytest.approx(us * 1e-6, rel=1e-9)
                assert allreduce_time_s(g, e, float(size), n, 64.0) == pytest.approx(us * 1e-6, rel=1e-9)

    def test_beyond_the_printed_sizes(self):
        """Below 32 KiB the 32 KiB time (the latency floor: 17.15 us at 128 B on a pair); above 64 MiB the 32-64 MiB
        segment's seconds per byte: a pair's 128 MiB 1,464.3 + (1,464.3 - 739.0) x 2 = 2,914.9 us."""
        assert _time_us("MI300X", 128, 2) == pytest.approx(17.15, rel=1e-9)
        assert _time_us("MI300X", 2**27, 2, graph=False) == pytest.approx(1464.3 + 2 * (1464.3 - 739.0), rel=1e-9)
        assert _time_us("MI300X", 2**27, 4, graph=False) == pytest.approx(761.2 + 2 * (761.2 - 388.6), rel=1e-9)

    def test_bus_bandwidth_follows_the_links_a_group_has(self):
        """At 64 MiB the bus bandwidth 2 (g-1)/g x bytes / time is a like share of the links each group has: 46 GB/s of
        one 64 GB/s link on a pair (72%), 132 of 3 x 64 on 4 GPUs (69%), 274 of 7 x 64 on 8 (61%, the blog's eager
        429.1 us); of the 448 GB/s aggregate the pair would be 10%."""
        for n, links, share in ((2, 1, 0.72), (4, 3, 0.69), (8, 7, 0.61)):
            bus = 2 * (n - 1) / n * 2**26 / (_time_us("MI300X", 2**26, n, graph=False) * 1e-6)
            assert bus / (links * 64e9) == pytest.approx(share, abs=0.005), n


class TestMeshFabric:
    """A fully connected mesh (AMD Infinity Fabric: one link to each of 7 peers; AMD ROCm blog 2025-03-02, 'connected
    to its seven peer GPUs via xGMI links', 64 GB/s each) gives a group of g GPUs g - 1 links; NVSwitch gives any
    group all of them."""

    def test_catalog_facts(self):
        """MI300X / MI325X: 7 x 64 GB/s = 448; MI350X / MI355X: 7 x 76.8 = 537.6 ('(N-1) x 76.8 GB/s', vLLM #39080);
        H100 SXM (NVSwitch): none."""
        cat = default_catalog()
        for name, link in (("MI300X", 64e9), ("MI325X", 64e9), ("MI350X", 76.8e9), ("MI355X", 76.8e9)):
            g = cat.gpu(name)
            assert (g.mesh_links_per_gpu, g.mesh_link_bytes_per_s) == (7, link) and g.mesh_source
            assert g.mesh_links_per_gpu * g.mesh_link_bytes_per_s == pytest.approx(g.interconnect_bytes_per_s)
        assert cat.gpu("H100").mesh_links_per_gpu is None

    def test_a_mesh_that_does_not_add_up_is_refused(self):
        """Links x rate must be the catalog's aggregate: one clear line otherwise."""
        g = default_catalog().gpu("MI300X").model_dump()
        with pytest.raises(ValueError, match="should equal interconnect_bytes_per_s"):
            Gpu.model_validate({**g, "mesh_link_bytes_per_s": 76.8e9})
        with pytest.raises(ValueError, match="go together"):
            Gpu.model_validate({**g, "mesh_link_bytes_per_s": None})

    def test_group_share(self):
        """1/7 of the aggregate on a pair, 3/7 on 4 GPUs, all of it on 8; 1 on a switched fabric."""
        assert mesh_group_share(1 / 7, 2.0) == pytest.approx(1 / 7)
        assert mesh_group_share(1 / 7, 4.0) == pytest.approx(3 / 7)
        assert mesh_group_share(1 / 7, 8.0) == pytest.approx(1.0)
        assert mesh_group_share(0.0, 2.0) == 1.0
        shares = mesh_group_share(np.array([1 / 7, 0.0, 1 / 7]), np.array([2.0, 2.0, 8.0]))
        assert shares == pytest.approx([1 / 7, 1.0, 1.0])

    def test_the_form_uses_the_links_of_the_group(self):
        """With the table off, a pair of MI300X runs at one 64 GB/s link x the efficiency, 4 GPUs at 3 links; H100 SXM
        (NVSwitch) at its whole 450 GB/s whatever the group."""
        g, e = _facts("MI300X", FIT_ENGINE)
        eff, lat = e.interconnect_efficiency, e.allreduce_latency_s
        assert allreduce_time_s(g, e, 2.0**26, 2.0) == pytest.approx(lat + 2**26 / (64e9 * eff), rel=1e-12)
        assert allreduce_time_s(g, e, 2.0**26, 4.0) == pytest.approx(lat + 1.5 * 2**26 / (192e9 * eff), rel=1e-12)
        assert allreduce_time_s(g, e, 2.0**26, 8.0) == pytest.approx(lat + 1.75 * 2**26 / (448e9 * eff), rel=1e-12)
        h, he = _facts("H100", FIT_ENGINE)
        heff, hlat = he.interconnect_efficiency, he.allreduce_latency_s
        assert allreduce_time_s(h, he, 2.0**26, 2.0) == pytest.approx(hlat + 2**26 / (450e9 * heff), rel=1e-12)

    def test_a_mesh_gpu_borrowing_a_switched_table_scales_by_the_links_of_the_group(self):
        """A mesh GPU reading a switched GPU's rows (a user's CDNA part with no table of its nearest architecture
        falls back to H100 SXM's NVSwitch table): at 8 GPUs each message x 450 / 537.6 GB/s; a pair of MI355X has
        one 76.8 GB/s link, so x 450 / 76.8 (7 times the bytes), 4 GPUs x 7 / 3."""
        g, e = _facts("MI355X", TABLE_ENGINE)
        switched = replace(
            e,
            allreduce_table_row=read_allreduce_table().row("H100 SXM 80GB"),
            allreduce_table_bytes_scale=450 / 537.6,
            allreduce_table_link_share=0.0,
        )
        for n, factor in ((8, 1.0), (4, 7 / 3), (2, 7.0)):
            looked_up = _time_us("H100 SXM 80GB", 2**20 * 450 / 537.6 * factor, n) * 1e-6
            assert allreduce_time_s(g, switched, 2.0**20, float(n), 64.0) == pytest.approx(looked_up, rel=1e-12), n

    def test_cdna4_borrows_mi300x_rows_at_its_link_bandwidth(self):
        """MI355X (no table of its own) reads MI300X's RCCL rows, the same mesh: every group's links are 76.8 against
        64 GB/s (catalogs/gpus.toml), so each message x 448 / 537.6 = 64 / 76.8 at 2, 4 and 8 GPUs."""
        g, e = _facts("MI355X", TABLE_ENGINE)
        assert e.allreduce_table_bytes_scale == pytest.approx(448 / 537.6)
        for n in (2, 4, 8):
            looked_up = _time_us("MI300X", 2**20 * 64 / 76.8, n) * 1e-6
            assert allreduce_time_s(g, e, 2.0**20, float(n), 64.0) == pytest.approx(looked_up, rel=1e-12), n

    def test_plan_names_the_links(self):
        """A plan on 2 x MI355X says which table and bandwidths it scaled by: MI300X's, 64 / 77 GB/s over 1 of its 7
        mesh links."""
        note = [w for w in plan("MI355X", "llama3.1-70b", 4096, gpus=2).warnings if "all-reduce" in w]
        assert len(note) == 1 and "MI300X's table" in note[0] and "64 / 77 GB/s over 1 of its 7 mesh links" in note[0]
