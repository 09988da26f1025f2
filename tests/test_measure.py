"""The measuring path of `planner calibrate --measure`, on CPU with a tiny shape (skipped without PyTorch)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

torch = pytest.importorskip("torch")

from planner.accuracy.calibration import load_calibration  # noqa: E402
from planner.accuracy.fit import fit_time_factors  # noqa: E402
from planner.accuracy.measure import TINY_SHAPE, measure  # noqa: E402
from planner.cli import main  # noqa: E402


class TestMeasureOnCpu:
    result = None

    @classmethod
    def measured(cls):
        if cls.result is None:
            cls.result = measure(device="cpu", batches=(1, 4), contexts=(64, 256), repeats=2)
        return cls.result

    def test_one_row_per_batch_and_context(self):
        """Batches (1, 4) x contexts (64, 256) give four steady-state rows with positive step times."""
        r = self.measured()
        assert [(row.batch, row.input_len) for row in r.rows] == [(1, 64), (4, 64), (1, 256), (4, 256)]
        assert all(row.tpot_s > 0 and row.output_len == 0 for row in r.rows)

    def test_cpu_uses_the_tiny_shape_and_a_measured_device_entry(self):
        """On CPU the catalog shape is shrunk (2 layers, hidden 256) and the device is a measured catalog entry."""
        r = self.measured()
        shape = r.catalog.model(r.model)
        assert (shape.num_layers, shape.hidden_size) == (TINY_SHAPE["num_layers"], TINY_SHAPE["hidden_size"])
        assert r.catalog.gpu(r.gpu).hbm_bandwidth_bytes_per_s == r.bandwidth_bytes_per_s > 0

    def test_rows_can_be_fitted(self):
        """The measured rows go through the same fit as a measurements file, giving factors within bounds."""
        r = self.measured()
        fit = fit_time_factors(r.rows, "vllm", ("bandwidth_efficiency", "step_overhead_s"), catalog=r.catalog)
        assert 0 < fit.factors["bandwidth_efficiency"] <= 1 and fit.factors["step_overhead_s"] >= 0

    def test_calibrate_measure_writes_a_calibration_file(self, tmp_path):
        """`planner calibrate --measure --device cpu` prints the measurements and writes a calibration entry."""
        out = tmp_path / "cal.toml"
        result = CliRunner().invoke(main, ["calibrate", "--measure", "--device", "cpu", "-o", str(out)])
        assert result.exit_code == 0, result.output
        assert "copy bandwidth" in result.output
        (entry,) = load_calibration(out).entries
        assert entry.gpu == "CPU (measured)" and entry.bandwidth_efficiency is not None
