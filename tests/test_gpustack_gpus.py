"""gpustack's pages compared across GPUs (``bench/gpustack_gpus.py``, s125): the rows read each page's own runs."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import pytest

from planner.accuracy.published import load_decode_rows, resolve_gpu_name
from planner.catalog import default_catalog

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "bench"))

import gpustack_gpus as gg  # noqa: E402


def _gpustack_rows():
    cat = default_catalog()
    return [(r, resolve_gpu_name(r.gpu, cat)) for r in load_decode_rows() if r.source_group == gg.SOURCE_GROUP]


class TestRowsReadTheirOwnPage:
    def test_no_result_block_is_on_two_gpus(self):
        """No two rows of different GPUs carry the same TPOT, TTFT and output rate: the GLM-4.5-Air H100 page
        reprints the A100 page's 'Other Benchmark Cases' blocks (h100.md l.322-543 = a100.md l.316-539), which
        the H100 rows no longer read."""
        seen: dict[tuple, set[str]] = {}
        for r, gpu in _gpustack_rows():
            key = tuple(round(x, 2) for x in (r.tpot_s * 1e3, r.ttft_s * 1e3, r.throughput_tokens_per_s))
            if not any(math.isnan(x) for x in key):
                seen.setdefault(key, set()).add(gpu)
        assert not [k for k, gpus in seen.items() if len(gpus) > 1]

    @pytest.mark.parametrize(
        "record_id, tpot_ms", [("GPUSTACK-065", 176.99), ("GPUSTACK-068", 214.38), ("GPUSTACK-069", 200.08)]
    )
    def test_glm_45_air_h100_cases_read_the_pages_conclusion(self, record_id, tpot_ms):
        """glm-4.5-air/h100.md l.21 and l.24: the H100 page's own Mean TPOT for the very long and short prompts
        (vLLM baseline 176.99 / 214.38 ms; the SGLang FP8 TP 4 + EP 4 'Optimized' column 200.08 ms), not the A100
        blocks' 305.47 / 153.00 / 276.41 ms; the table prints no TTFT."""
        r = next(r for r, _ in _gpustack_rows() if r.record_id == record_id)
        assert r.tpot_s * 1e3 == pytest.approx(tpot_ms) and math.isnan(r.ttft_s)
        assert r.weight_precision == ("fp8" if r.engine == "sglang" else "bf16")


class TestPairRatios:
    def test_a_model_off_by_f_on_one_gpu_gives_q_f(self):
        """A model right on GPU a and 1.5x too fast on GPU b (its TPOT 1 / 1.5 of the run's) gives TPOT q 1.5
        and output-rate q 1 / 1.5."""
        a = {"tpot_pub_ms": 100.0, "tpot_pred_ms": 100.0, "rate_pub": 1000.0, "rate_pred": 1000.0}
        a |= {"ttft_pub_s": 10.0, "ttft_pred_s": 10.0}
        b = {"tpot_pub_ms": 60.0, "tpot_pred_ms": 40.0, "rate_pub": 1600.0, "rate_pred": 2400.0}
        b |= {"ttft_pub_s": 5.0, "ttft_pred_s": 5.0}
        p = gg.pair_ratios(a, b)
        assert p["tpot_q"] == pytest.approx(1.5) and p["rate_q"] == pytest.approx(1 / 1.5)
        assert p["ttft_pub"] == pytest.approx(2.0) and p["ttft_q"] == pytest.approx(1.0)

    def test_hardware_bounds_of_h100_over_a100(self):
        """The catalog's H100 SXM over A100 SXM 80GB: 3.35 / 2.039 TB/s and 989.4 / 312 TFLOP/s dense bf16."""
        bw, flop = gg.hardware_bounds("A100 SXM 80GB", "H100 SXM 80GB")
        assert bw == pytest.approx(3.35 / 2.039) and flop == pytest.approx(989.4 / 312)
