"""vLLM's measured all-reduce table (catalogs/reference/allreduce_aic.csv, planner.engines.allreduce_table) and its
use by the model (planner.model.collectives, planner.model.decode.allreduce_time_s): on by default, the latency +
bandwidth form a way back (``allreduce_table=False``, ``bench/heldout.py --allreduce-fit``)."""

from __future__ import annotations

import csv
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from planner import api
from planner.catalog import default_catalog
from planner.catalog.resolve import gpu_numbers
from planner.engines.allreduce_table import TABLE_FILE_NAME, read_allreduce_table
from planner.engines.profiles import engine_profile
from planner.model.collectives import table_allreduce_time_s
from planner.model.decode import allreduce_time_s
from planner.model.facts import EngineFacts, GpuFacts, field_names
from planner.report import plan

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "catalogs" / "reference" / TABLE_FILE_NAME
AIC_PYTHON = Path("/work/venvs/aic/bin/python")
AIC_DATA = Path("/work/venvs/aic/lib/python3.11/site-packages/aiconfigurator_core/systems/data")
needs_aic = pytest.mark.skipif(not AIC_DATA.is_dir(), reason="aiconfigurator 0.12.0's venv is not on this machine")
TABLE_ENGINE = engine_profile("vllm")
FIT_ENGINE = engine_profile("vllm").with_(allreduce_table=False)


def _time_us(gpu: str, message_bytes: float, gpus: float, graph: bool = True) -> float:
    table = read_allreduce_table()
    return float(table_allreduce_time_s(table, table.row(gpu), message_bytes, gpus, graph)) * 1e6


def _facts(gpu: str, engine) -> tuple[GpuFacts, EngineFacts]:
    n = gpu_numbers(default_catalog().gpu(gpu), engine)
    table = read_allreduce_table() if engine.allreduce_table else None
    g = GpuFacts(**{k: n[k] for k in field_names(GpuFacts) if k in n}, peak_flop_per_s=n["bf16_peak_flop_per_s"])
    e = EngineFacts(**{k: n[k] for k in field_names(EngineFacts) if k in n and k != "allreduce_table"},
                    allreduce_table=table)  # fmt: skip
    return g, e


class TestTable:
    def test_shipped_table_is_small(self):
        """The table ships as kilobytes (issue 21: 'kilobytes, not its 114 MB'): 8 GPUs from aiconfigurator and
        MI300X's published rows (tests/test_allreduce_published.py), graph and eager."""
        assert SHIPPED.stat().st_size < 16_000
        table = read_allreduce_table()
        assert len(table.gpus) == 9 and table.gpus[-1] == "MI300X" and table.group_sizes == (2, 4, 8, 16)
        assert read_allreduce_table(str(SHIPPED)).gpus == table.gpus[:-1]  # one file alone: its rows only

    def test_measured_points_are_returned_as_measured(self):
        """aiconfigurator 0.12.0, systems/data/h100_sxm/comm/vllm/0.24.0/custom_allreduce_perf.parquet,
        vLLM_custom_graph: 8 x H100, 1 MiB: 19.39 us; 512 MiB: 4009 us; 2 x H100, 1 MiB: 12.38 us; 4 x H100, 64 KiB:
        5.80 us. vLLM_custom_eager, 8 x H100, 128 MiB: 1272 us (graph: 1091 us). a100_sxm/comm/vllm/0.14.0: 2 x A100,
        4 MiB: 89.68 us (vLLM has left its custom all-reduce for NCCL: 2 MiB took 25.24 us)."""
        assert _time_us("H100 SXM 80GB", 2**20, 8) == pytest.approx(19.39, rel=1e-3)
        assert _time_us("H100 SXM 80GB", 2**29, 8) == pytest.approx(4009, rel=1e-3)
        assert _time_us("H100 SXM 80GB", 2**20, 2) == pytest.approx(12.38, rel=1e-3)
        assert _time_us("H100 SXM 80GB", 2**16, 4) == pytest.approx(5.80, rel=2e-3)
        assert _time_us("H100 SXM 80GB", 2**27, 8, graph=False) == pytest.approx(1272, rel=1e-3)
        assert _time_us("H100 SXM 80GB", 2**27, 8) == pytest.approx(1091, rel=1e-3)
        assert _time_us("A100 SXM 80GB", 2**22, 2) == pytest.approx(89.68, rel=1e-3)
        assert _time_us("A100 SXM 80GB", 2**21, 2) == pytest.approx(25.24, rel=1e-3)

    def test_between_sizes_a_power_law_between_neighbours(self):
        """At 2^20.5 bytes the time is the geometric mean of the 1 MiB and 2 MiB times (log-log interpolation)."""
        mid = _time_us("H100 SXM 80GB", 2**20.5, 8)
        assert mid == pytest.approx(
            math.sqrt(_time_us("H100 SXM 80GB", 2**20, 8) * _time_us("H100 SXM 80GB", 2**21, 8))
        )

    def test_between_group_sizes_log_interpolated(self):
        """6 GPUs sit halfway (in log2) between 4 and 8 only in log2(6) = 2.585: a weight 0.585 on the 8-GPU time."""
        t4, t8 = _time_us("H100 SXM 80GB", 2**24, 4), _time_us("H100 SXM 80GB", 2**24, 8)
        w = math.log2(6) - 2
        assert _time_us("H100 SXM 80GB", 2**24, 6) == pytest.approx(math.exp(math.log(t4) + w * math.log(t8 / t4)))

    def test_beyond_the_table_bytes_at_the_last_rate_and_latency_floor_below(self):
        """1 GiB over 8 x H100: 4009 us + 512 MiB at the 256-512 MiB segment's rate ((4009 - 2117) us per 256 MiB):
        7793 us; 64 B: the 128 B time (4.7 us)."""
        assert _time_us("H100 SXM 80GB", 2**30, 8) == pytest.approx(4009 + (4009 - 2117) * 2, rel=2e-3)
        assert _time_us("H100 SXM 80GB", 64, 8) == pytest.approx(_time_us("H100 SXM 80GB", 128, 8))

    def test_no_value_where_not_measured(self):
        """GB200's table has 2 and 4 GPUs only; no GPU has 32; an unknown row is NaN: the form stands there."""
        table = read_allreduce_table()
        assert math.isnan(_time_us("GB200 NVL72", 2**20, 8))
        assert math.isnan(_time_us("H100 SXM 80GB", 2**20, 32))
        assert math.isnan(float(table_allreduce_time_s(table, math.nan, 2**20, 8, True)))
        assert np.isfinite(table_allreduce_time_s(table, table.row("GB300 NVL72"), 2**20, 16, True))

    def test_numbers_equal_arrays(self):
        """One function for one scenario and for arrays: numbers (Python's math, a float back) give the time of the
        same values in arrays (numpy's) to 1e-15, or its NaN, over every GPU row and none, group sizes 1-32 and
        messages from 0 B to 4 GiB, graph and eager."""
        import itertools

        table = read_allreduce_table()
        rng = np.random.default_rng(21)
        sizes = [*2.0 ** rng.uniform(3, 32, 12), 0.0, 1.0, 128.0, 2.0**20, 2.0**29, 2.0**30]
        rows = [*map(float, range(len(table.gpus))), math.nan]
        for r, b, g, graph in itertools.product(
            rows, sizes, (1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 32.0), (True, False)
        ):
            one = table_allreduce_time_s(table, r, b, g, graph)
            arr = table_allreduce_time_s(table, np.array([r]), np.array([b]), np.array([g]), np.array([graph]))[0]
            assert type(one) is float
            assert one == pytest.approx(arr, rel=1e-15, nan_ok=True), (r, b, g, graph)

    def test_an_array_is_its_elements(self):
        """A whole array of scenarios (row, message and group broadcast together, a number among arrays) gives each
        element's time as that element alone: H100's row at 1 KiB-1 GiB (the last above the table), groups 2-16 and
        one outside (16: H100's table stops at 8; NaN), graph and eager."""
        table = read_allreduce_table()
        row = table.row("H100 SXM 80GB")
        sizes = np.array([2.0**10, 3.0e5, 2.0**20, 7.7e7, 2.0**30])[:, None]
        groups = np.array([2.0, 3.0, 6.0, 8.0, 16.0])
        for graph in (True, False):
            whole = table_allreduce_time_s(table, row, sizes, groups, graph)
            assert whole.shape == (5, 5) and np.isnan(whole[:, -1]).all() and np.isfinite(whole[:, :-1]).all()
            for (i, j), t in np.ndenumerate(whole):
                one = table_allreduce_time_s(table, row, float(sizes[i, 0]), float(groups[j]), graph)
                assert one == pytest.approx(t, rel=1e-15, nan_ok=True), (i, j, graph)


class TestModel:
    def test_on_as_shipped_off_for_the_ideal_engine_and_the_fit(self):
        """Every shipped engine with kernel curves reads the table (H100's row, scale 1); "ideal" (no kernel curves)
        and a profile with ``allreduce_table=False`` keep the latency + bandwidth form."""
        for name in ("vllm", "sglang", "trtllm"):
            assert engine_profile(name).allreduce_table
            n = gpu_numbers(default_catalog().gpu("H100"), engine_profile(name))
            assert n["allreduce_table_row"] == read_allreduce_table().row("H100 SXM 80GB")
            assert n["allreduce_table_bytes_scale"] == 1.0
        for engine in (engine_profile("ideal"), FIT_ENGINE):
            assert math.isnan(gpu_numbers(default_catalog().gpu("H100"), engine)["allreduce_table_row"])

    def test_the_run_wide_switch_restores_the_fit(self, monkeypatch):
        """``FIT_INSTEAD`` (bench/heldout.py --allreduce-fit) turns the table off for every profile."""
        from planner.engines import allreduce_table

        monkeypatch.setattr(allreduce_table, "FIT_INSTEAD", True)
        assert math.isnan(gpu_numbers(default_catalog().gpu("H100"), engine_profile("vllm"))["allreduce_table_row"])

    def test_decode_step_takes_the_graph_time_and_a_long_prefill_the_eager_one(self):
        """With the table: 64 tokens x hidden 8,192 x 2 B = 1 MiB over 8 x H100 = 19.39 us (graph: a decode step);
        8,192 tokens x 8,192 x 2 B = 128 MiB = 1272 us (eager: beyond vLLM's largest captured size, 512 tokens)."""
        g, e = _facts("H100", TABLE_ENGINE)
        assert allreduce_time_s(g, e, 2.0**20, 8.0, 64.0) == pytest.approx(19.39e-6, rel=1e-3)
        assert allreduce_time_s(g, e, 2.0**27, 8.0, 8192.0) == pytest.approx(1272e-6, rel=1e-3)
        assert allreduce_time_s(g, e, 2.0**27, 1.0, 8192.0) == 0.0

    def test_gpu_without_a_table_borrows_the_nearest_scaled_by_its_fabric(self):
        """MI355X (CDNA 4) has no table: MI300X's (allreduce_table.NEAREST_TABLE, the same mesh) at the message x
        448 / 537.6 GB/s (the catalog's Infinity Fabric figures); H100 NVL (Hopper, a 300 GB/s bridged pair) takes H100 SXM's at
        x 1.5: 16 MiB over 2 GPUs as 24 MiB over 2 x H100 SXM. A plan says so."""
        g, e = _facts("MI355X", TABLE_ENGINE)
        assert e.allreduce_table_bytes_scale == pytest.approx(448 / 537.6)
        assert allreduce_time_s(g, e, 2.0**24, 8.0, 1024.0) == pytest.approx(
            _time_us("MI300X", 2.0**24 * 448 / 537.6, 8, graph=False) * 1e-6
        )
        g, e = _facts("H100 NVL 94GB", TABLE_ENGINE)
        assert allreduce_time_s(g, e, 2.0**24, 2.0, 64.0) == pytest.approx(
            _time_us("H100 SXM 80GB", 1.5 * 2**24, 2) * 1e-6
        )
        assert allreduce_time_s(g, e, 2.0**24, 4.0, 64.0) == allreduce_time_s(*_facts("H100 NVL 94GB", FIT_ENGINE),
                                                                                 2.0**24, 4.0, 64.0)  # fmt: skip
        warnings = plan("MI355X", "llama3.1-70b", 4096, gpus=8).warnings
        assert any("all-reduce not measured on MI355X" in w and "MI300X's table" in w for w in warnings)
        assert not any("all-reduce" in w for w in plan("H100", "llama3.1-70b", 4096, gpus=8).warnings)

    def test_prefill_and_arrays_use_it_through_the_api(self):
        """Llama-3.1-70B on 4 x H100, 2,048 tokens: TTFT moves by exactly the all-reduce difference, 2 x 80 layers x
        (eager table at 32 MiB - the form), the same for a scalar call and inside an array."""
        plain = api.prefill("H100", "llama3.1-70b", 2048, gpus=4, engine=FIT_ENGINE).ttft_s
        table = api.prefill("H100", "llama3.1-70b", 2048, gpus=4).ttft_s
        g, e = _facts("H100", FIT_ENGINE)
        form = allreduce_time_s(g, e, 2048 * 8192 * 2.0, 4.0, 2048.0)
        measured = _time_us("H100 SXM 80GB", 2048 * 8192 * 2.0, 4, graph=False) * 1e-6
        assert table - plain == pytest.approx(160 * (measured - form), rel=1e-6)
        many = api.prefill(np.array(["H100", "MI355X"]), "llama3.1-70b", 2048, gpus=4, engine=TABLE_ENGINE).ttft_s
        assert many[0] == pytest.approx(table)
        assert many[1] == pytest.approx(api.prefill("MI355X", "llama3.1-70b", 2048, gpus=4).ttft_s)
        assert many[1] != pytest.approx(api.prefill("MI355X", "llama3.1-70b", 2048, gpus=4, engine=FIT_ENGINE).ttft_s)


@needs_aic
class TestAgainstThePackage:
    def test_table_rederives(self, tmp_path):
        """bench/allreduce_extract.py in the aiconfigurator venv writes the shipped file byte for byte."""
        out = tmp_path / "t.csv"
        subprocess.run([str(AIC_PYTHON), str(ROOT / "bench" / "allreduce_extract.py"), str(out)], check=True)
        assert out.read_text() == SHIPPED.read_text()

    def test_above_the_custom_limit_the_rows_are_nccl(self):
        """Above vLLM's custom all-reduce size limit the measured vLLM rows equal aiconfigurator's NCCL all-reduce
        table (nccl_perf.parquet, all_reduce, half) within 8% (A100, 4 GPUs, 4 MiB: 118 vs 111 us): A100 from 4 MiB,
        H100 at 8 GPUs from 64 MiB."""
        code = (
            "import pandas as pd, json, sys;"
            "d=pd.read_parquet(sys.argv[1]);d=d[(d.op_name=='all_reduce')&(d.nccl_dtype=='half')];"
            "print(json.dumps({f'{g},{m}':float(t) for g,m,t in zip(d.num_gpus,d.message_size,d.latency)}))"
        )
        import json

        for system, gpu, nccl, gpus, low in (
            ("a100_sxm", "A100 SXM 80GB", "2.27.3", (2, 4, 8), 2**22),
            ("h100_sxm", "H100 SXM 80GB", "2.29.2", (8,), 2**26),
        ):
            path = AIC_DATA / system / "comm" / "nccl" / nccl / "nccl_perf.parquet"
            got = subprocess.run([str(AIC_PYTHON), "-c", code, str(path)], check=True, capture_output=True, text=True)
            nccl_ms = json.loads(got.stdout)
            for g in gpus:
                for p in range(int(math.log2(low)), 29):
                    if f"{g},{2**p}" in nccl_ms:
                        assert _time_us(gpu, 2**p, g) == pytest.approx(nccl_ms[f"{g},{2**p}"] * 1e3, rel=0.08)

    def test_the_package_reads_message_size_as_elements(self):
        """aiconfigurator 0.12.0 times its own all-reduce at tokens x hidden ELEMENTS of its table, not bytes: Qwen3-32B
        (hidden 5,120, 64 layers: the package's model_configs/Qwen--Qwen3-32B_config.json) on 2 x H100, vLLM, a decode
        step of 64 sequences (bench/aic_step_operators.py) spends 436.6 us on ``generation_ar_1``, 6.82 us a call, the
        vLLM graph table (6.32 / 8.34 us at 2^18 / 2^19) interpolated linearly at 64 x 5,120 = 327,680 ``message_size``;
        at 655,360 (the bytes) it is 9.35 us.
        The planner reads the shipped table as bytes (docs/accuracy.md, "The all-reduce reading, re-checked")."""
        code = (
            "import json,math,sys;sys.path.insert(0,sys.argv[1]);import aic_step_operators as a;import pandas as pd;"
            "e=a.handle('Qwen/Qwen3-32B','h100_sxm','vllm',2,None,None,None,None);"
            "op={n:us for n,us,_ in a.decode_ops(e,64,1000,1000)};"
            "d=pd.read_parquet(sys.argv[2]);d=d[(d.kernel_source=='vLLM_custom_graph')&(d.num_gpus==2)];"
            "t=dict(zip(d.message_size,d.latency*1e3));"
            "lo=lambda m:2**int(math.log2(m));"
            "f=lambda m:t[lo(m)]+(m-lo(m))/lo(m)*(t[2*lo(m)]-t[lo(m)]);"
            "print(json.dumps({'call_us':op['generation_ar_1']/64,'elements_us':f(64*5120),'bytes_us':f(64*5120*2)}))"
        )
        table = AIC_DATA / "h100_sxm" / "comm" / "vllm" / "0.24.0" / "custom_allreduce_perf.parquet"
        got = subprocess.run(
            [str(AIC_PYTHON), "-c", code, str(ROOT / "bench"), str(table)], check=True, capture_output=True, text=True
        )
        import json

        us = json.loads(got.stdout.strip().splitlines()[-1])
        assert us["call_us"] == pytest.approx(6.82, abs=0.01)
        assert us["call_us"] == pytest.approx(us["elements_us"], rel=0.01)
        assert us["bytes_us"] > 1.3 * us["call_us"]


def test_table_file_rows_have_every_size():
    """Every row has 23 sizes, 128 B - 512 MiB, all positive, and 512 MiB takes over 10x the 128 B latency floor
    (a row read from the wrong column or unit would not)."""
    with SHIPPED.open(newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        us = [float(r[f"us_{p}"]) for p in range(7, 30)]
        assert all(x > 0 for x in us), r["gpu"]
        assert us[-1] > 10 * us[0], r["gpu"]


if __name__ == "__main__":
    sys.exit(pytest.main([__file__]))
