"""Weight-only dense GEMMs (W4A16 / W8A16: AWQ, GPTQ, FP8 without fp8 math) at Marlin's measured FLOP ceiling (issue 21,
s140; shipped as switch ``weight-only-gemm``): the shipped fraction against the kernel calls it
is fitted on, against TensorRT-LLM's weight-only table at 64 rows, in the model, and in the workbook under LibreOffice."""

from __future__ import annotations

import csv
import json
import statistics
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from planner.catalog import default_catalog
from planner.catalog.resolve import gpu_numbers
from planner.engines import kernel_curves
from planner.model import operators
from planner.model.facts import EngineFacts, GpuFacts, ModelFacts, field_names

REPO = Path(__file__).resolve().parents[1]
REF = REPO / "catalogs" / "reference"
A100 = "A100 SXM 80GB"


def _rows(name: str) -> list[dict[str, str]]:
    with (REF / name).open(newline="") as f:
        return list(csv.DictReader(f))


def _facts(cls, **values):
    return cls(**{name: values.get(name, 0.0) for name in field_names(cls)})


def _a100_bf16_gemm_flop_per_s() -> float:
    (row,) = [r for r in _rows(kernel_curves.CURVES_FILE_NAME) if r["gpu"] == A100]
    return float(row["gemm_bf16_flop_per_s"])


class TestShippedNumbers:
    def test_the_fraction_is_the_median_marlin_call_over_the_a100_bf16_gemm_rate(self):
        """215 Marlin W4A16 fused-MoE calls (SGLang 0.5.10 on A100, >= 64 rows per expert, width >= 1,024), median
        143.9 TFLOP/s (2 x tokens x top-k x 3 x hidden x width / latency, re-derived here), over the A100's fitted
        bf16 GEMM rate 250.5 TFLOP/s: 0.574 (``MARLIN_FLOP_FRACTION``)."""
        calls = _rows(kernel_curves.MARLIN_FILE_NAME)
        assert len(calls) == 215
        rates = []
        for c in calls:
            tokens, topk, hidden, width = (float(c[k]) for k in ("num_tokens", "topk", "hidden_size", "width"))
            assert width >= 1024 and float(c["rows_per_expert"]) == tokens * topk / float(c["num_experts"]) >= 64
            assert width == float(c["inter_size"]) // float(c["moe_tp_size"])
            rate = 2.0 * tokens * topk * 3.0 * hidden * width / (float(c["latency_ms"]) * 1e-3)
            assert rate / 1e12 == pytest.approx(float(c["tflops"]), abs=6e-4)
            assert "aiconfigurator 0.12.0" in c["source"] and "a100_sxm/moe/sglang/0.5.10" in c["source"]
            rates.append(rate)
        median = statistics.median(rates)
        assert median / 1e12 == pytest.approx(143.9, abs=0.05)
        assert _a100_bf16_gemm_flop_per_s() / 1e12 == pytest.approx(250.5, abs=0.05)
        assert kernel_curves.MARLIN_FLOP_FRACTION == pytest.approx(median / _a100_bf16_gemm_flop_per_s(), abs=5e-4)

    def test_marlins_rate_is_flat_from_64_rows_per_expert(self):
        """The ceiling is one rate, not a trend in rows: at whole 64-row slabs (Marlin runs a problem in slabs of at
        most 64 rows) the medians at 64-128 rows per expert (143.3 TFLOP/s) and at 1,024-4,096 (150.0) are within
        6% of each other; a partial slab costs a whole one (80 and 96 rows: 94.6 and 111.6 TFLOP/s)."""
        calls = [c for c in _rows(kernel_curves.MARLIN_FILE_NAME) if float(c["rows_per_expert"]) % 64 == 0]
        low = statistics.median(float(c["tflops"]) for c in calls if float(c["rows_per_expert"]) <= 128)
        high = statistics.median(float(c["tflops"]) for c in calls if float(c["rows_per_expert"]) >= 1024)
        assert high / low == pytest.approx(1.0, abs=0.06)
        partial = [float(c["tflops"]) for c in _rows(kernel_curves.MARLIN_FILE_NAME) if c["rows_per_expert"] == "80.0"]
        assert statistics.median(partial) < 0.7 * low

    def test_tensorrt_llm_weight_only_table_as_cited(self):
        """TensorRT-LLM 1.0.0's weight-only / bf16 GEMM time on A100 (median over n, k >= 4,096; 63 shapes a row
        count), as ``kernel_curves.WEIGHT_ONLY_FILE_NAME``'s comment cites it."""
        table = {int(r["rows"]): r for r in _rows(kernel_curves.WEIGHT_ONLY_FILE_NAME)}
        cited = {1: (0.373, 0.556), 32: (0.454, 0.578), 64: (0.675, 0.664), 128: (0.899, 0.858), 256: (1.045, 1.003)}
        for m, (int4, int8) in cited.items():
            assert float(table[m]["int4_over_bf16"]) == int4
            assert float(table[m]["int8_over_bf16"]) == int8
        assert all(r["shapes"] == "63" and "trtllm/1.0.0" in r["source"] for r in table.values())

    @pytest.mark.parametrize("column, bytes_per_param", [("int4_over_bf16", 0.515625), ("int8_over_bf16", 1.0)])
    def test_the_fraction_gives_tensorrt_llms_ratio_at_64_rows(self, column, bytes_per_param):
        """At 64 rows both kernels are at their dequantizing mainloop's limit (TensorRT-LLM int4 139, int8 138
        TFLOP/s): the A100's curves with the fraction give an 8,192 x 8,192 weight-only GEMM at 0.656 of the bf16
        one's time, TensorRT-LLM measures 0.675 (int4) and 0.664 (int8) over its layer-sized shapes: within 5%."""
        n_ = gpu_numbers(default_catalog().gpu(A100))
        gpu = _facts(
            GpuFacts,
            bandwidth_bytes_per_s=n_["bandwidth_bytes_per_s"],
            peak_flop_per_s=n_["bf16_peak_flop_per_s"],
            bf16_peak_flop_per_s=n_["bf16_peak_flop_per_s"],
        )
        names = ("gemm_bandwidth_efficiency", "gemm_flop_efficiency", "gemm_floor_s")
        limits = _facts(EngineFacts, bandwidth_efficiency=1.0, roofline_overlap=1.0, **{f: n_[f] for f in names})
        m, n, k = 64, 8192, 8192
        flop = 2.0 * m * n * k
        sixteen = operators.gemm_time_s(gpu, limits, 2.0 * n * k, flop, 0.0, 1.0, 1.0)
        weight_only = operators.gemm_time_s(
            gpu, limits, bytes_per_param * n * k, flop, 0.0, kernel_curves.MARLIN_FLOP_FRACTION, 1.0
        )
        (row,) = [r for r in _rows(kernel_curves.WEIGHT_ONLY_FILE_NAME) if r["rows"] == "64"]
        assert weight_only / sixteen == pytest.approx(float(row[column]), rel=0.05)


def _a100(weight_bytes: float, fraction: float, peak: float = 312e12):
    """A100 SXM's GEMM curves (the shipped file's) and a Qwen3-8B-sized dense model: 6.95e9 params streamed a step of
    which 0.62e9 kept 16-bit (its 151,936 x 4,096 output head), 36 layers."""
    n_ = gpu_numbers(default_catalog().gpu(A100))
    gpu = _facts(
        GpuFacts, bandwidth_bytes_per_s=n_["bandwidth_bytes_per_s"], peak_flop_per_s=peak, bf16_peak_flop_per_s=312e12
    )
    names = ("gemm_bandwidth_efficiency", "gemm_flop_efficiency", "gemm_fp8_flop_efficiency", "gemm_floor_s")
    limits = _facts(
        EngineFacts,
        bandwidth_efficiency=1.0,
        roofline_overlap=1.0,
        weight_only_flop_fraction=fraction,
        **{f: n_[f] for f in names},
    )
    model = _facts(ModelFacts, params_read_per_step=6.95e9, params_read_kept_16bit=0.62e9, num_layers=36.0)
    dense = (6.95e9 - 0.62e9) * weight_bytes + 0.62e9 * 2.0
    return gpu, model, limits, dense


class TestModel:
    def _time(self, rows, weight_bytes, fraction, peak=312e12):
        gpu, model, limits, dense = _a100(weight_bytes, fraction, peak)
        return operators.linear_layers_time_s(gpu, model, limits, dense, rows, 1.0, 1.0, weight_bytes)

    def test_compute_bound_weight_only_gemms_run_at_the_fraction(self):
        """4,096 rows of int4 weights: compute-bound either way, so the time (less the floors) grows by
        read / ((read - kept) / 0.574 + kept) = 1 / 0.597: 6.95 / (6.33 / 0.574 + 0.62)."""
        floors = (4 * 36 + 1) * gpu_numbers(default_catalog().gpu(A100))["gemm_floor_s"]
        before = self._time(4096.0, 0.515625, 0.0) - floors
        after = self._time(4096.0, 0.515625, kernel_curves.MARLIN_FLOP_FRACTION) - floors
        scale = 6.95e9 / ((6.95e9 - 0.62e9) / kernel_curves.MARLIN_FLOP_FRACTION + 0.62e9)
        assert after / before == pytest.approx(1.0 / scale, rel=1e-12)
        assert scale == pytest.approx(0.597, abs=0.001)

    def test_a_decode_step_of_few_rows_stays_bound_by_its_bytes(self):
        """8 rows of int4 weights: 3.9 GB streamed at 1.47 TB/s (2.7 ms) against 0.11 TFLOP at 144 TFLOP/s
        (0.8 ms): the fraction moves nothing."""
        assert self._time(8.0, 0.515625, kernel_curves.MARLIN_FLOP_FRACTION) == self._time(8.0, 0.515625, 0.0)

    @pytest.mark.parametrize(
        "weight_bytes, peak",
        [(2.0, 312e12), (1.0, 624e12)],  # bf16 weights; W8A8 at the int8 peak (SmoothQuant): not weight-only
    )
    def test_sixteen_bit_weights_and_8_bit_math_are_not_weight_only(self, weight_bytes, peak):
        at = self._time(2048.0, weight_bytes, kernel_curves.MARLIN_FLOP_FRACTION, peak)
        assert at == self._time(2048.0, weight_bytes, 0.0, peak)

    def test_without_the_precision_nothing_is_weight_only(self):
        gpu, model, limits, dense = _a100(0.515625, kernel_curves.MARLIN_FLOP_FRACTION)
        plain = operators.linear_layers_time_s(gpu, model, replace(limits, weight_only_flop_fraction=0.0), dense,
                                               2048.0, 1.0, 1.0)  # fmt: skip
        assert operators.linear_layers_time_s(gpu, model, limits, dense, 2048.0, 1.0, 1.0) == plain


class TestShipped:
    def test_on_for_a100_curve_gpus_only(self, monkeypatch):
        """A100 SXM and a GPU borrowing its curves (A100 40GB) get 0.574; H100 (Hopper, no Marlin table) 0; the
        ablation (``WEIGHT_ONLY_GEMM_GPUS`` None) gives every GPU 0.574."""
        cat = default_catalog()
        got = {g: kernel_curves.kernel_factors(cat.gpu(g), cat)["weight_only_flop_fraction"] for g in
               (A100, "A100 SXM 40GB", "H100 SXM 80GB")}  # fmt: skip
        assert got == {A100: 0.574, "A100 SXM 40GB": 0.574, "H100 SXM 80GB": 0.0}
        monkeypatch.setattr(kernel_curves, "WEIGHT_ONLY_GEMM_GPUS", None)
        assert kernel_curves.kernel_factors(cat.gpu("H100 SXM 80GB"), cat)["weight_only_flop_fraction"] == 0.574


#: Run in a process of its own (fresh catalog caches): the what-if workbook of A100 and H100 x Qwen3-8B, recalculated
#: by LibreOffice, every probed cell against the model for int4 and fp8 weights on A100 (weight-only) and fp8 on H100
#: (fp8 math). Prints a JSON summary.
PARITY_SCRIPT = r"""
import json, sys
sys.path.insert(0, "tests")
from pathlib import Path
from planner.workbook.build import build_whatif
from planner.workbook.calc import SCENARIOS, calc_rows, scenario_col
import workbook_support as ws
tmp = Path(sys.argv[1])
spec = build_whatif(gpus=["A100 SXM 80GB", "H100 SXM 80GB"], models=["Qwen3-8B"], load=False)
cases = {
    "a100-int4": dict(gpu="A100 SXM 80GB", model="Qwen3-8B", context=2048, batch=256, weight_precision="int4"),
    "a100-fp8": dict(gpu="A100 SXM 80GB", model="Qwen3-8B", context=4096, batch=64, weight_precision="fp8"),
    "h100-fp8": dict(gpu="H100 SXM 80GB", model="Qwen3-8B", context=2048, batch=256, weight_precision="fp8"),
}
books = ws.recalculate_inputs(spec, cases, tmp)
factors = ws.stored_rate_factors(spec)
c = calc_rows(lever_kv="fp8", lever_weights="fp8")
out = {}
for name, inputs in cases.items():
    per = {key: {**ws.scenario_inputs(inputs, key), "rate_factor": factors[key]} for key, _, _ in SCENARIOS}
    wrong = []
    for p in spec.probes:
        got, want = books[name][p.sheet][p.ref].value, ws.expected_probe(inputs, p, per)
        if not ws.agrees(got, want, p.scale):
            wrong.append(f"{p.sheet}!{p.ref} {p.scenario} {p.quantity}: sheet {got!r}, model {want!r}")
    calc = books[name]["Calc"]
    col = scenario_col("base")
    out[name] = dict(probes=len(spec.probes), wrong=wrong[:10], d_wo=calc[f"{col}{c.row_of['d_wo']}"].value,
                     p_wo=calc[f"{col}{c.row_of['p_wo']}"].value)
print(json.dumps(out))
"""


class TestWorkbookParity:
    def test_the_workbook_computes_the_weight_only_rate_as_the_model_does(self, tmp_path):
        """Every probed cell of the what-if workbook equals the model (1e-9) for Qwen3-8B with
        int4 and fp8 weights on A100 (weight-only: the Calc rows d_wo and p_wo at 0.595, read / ((read -
        kept) / 0.574 + kept) at each block's params) and fp8 on H100 (fp8 math: 1)."""
        from workbook_support import require_libreoffice

        require_libreoffice()
        run = subprocess.run(
            [sys.executable, "-c", PARITY_SCRIPT, str(tmp_path)],
            cwd=REPO,
            capture_output=True,
            text=True,
            timeout=1800,
            env={**__import__("os").environ, "PYTHONPATH": str(REPO)},
        )
        assert run.returncode == 0, run.stderr[-3000:]
        out = json.loads(run.stdout.strip().splitlines()[-1])
        for name, r in out.items():
            assert r["probes"] > 50 and r["wrong"] == [], (name, r["wrong"])
        assert out["a100-int4"]["d_wo"] < 0.7 and out["a100-fp8"]["d_wo"] < 0.7
        assert out["h100-fp8"]["d_wo"] == 1.0


def test_model_doc_states_the_weight_only_rate():
    """docs/model.md's "dense GEMMs" bullet states the shipped rule (s140 shipped it without a word there, s150):
    Marlin's 0.574 of the bf16 rate on A100-curve GPUs, from 143.9 over 250.5 TFLOP/s."""
    from doc_support import stated

    fraction, marlin, bf16 = stated(
        "docs/model.md", r"compute at Marlin's measured ceiling, ([\d.]+) of the bf16 GEMM rate.*?: ([\d.]+) TFLOP/s over ([\d.]+), s140"
    )  # fmt: skip
    assert float(fraction) == kernel_curves.MARLIN_FLOP_FRACTION == round(float(marlin) / float(bf16), 3)
    assert kernel_curves.WEIGHT_ONLY_GEMM_GPUS == frozenset({"A100 SXM 80GB"})  # "a GPU whose curves are A100's"
