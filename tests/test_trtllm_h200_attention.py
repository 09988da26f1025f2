"""TensorRT-LLM's decode attention on H200 (s152, switch ``trtllm-h200-attention``, shipped): its profiles take
H100's measured decode-attention byte rate x TensorRT-LLM's own H200/H100 ratio.

Known values: catalogs/reference/kernel_curves_aic.csv (H100 2.402 TB/s, H200 2.705 TB/s, vLLM 0.24.0's table) and
the ratio 1.219 of aiconfigurator 0.12.0's TensorRT-LLM 1.3.0rc20 ``generation_attention`` tables (docs/history.md,
s152); catalogs/gpus.toml: H200 4.8 TB/s.
"""

from __future__ import annotations

import pytest

from planner.catalog import default_catalog
from planner.catalog.resolve import gpu_numbers
from planner.engines import kernel_curves, profiles


def _attention(gpu: str, engine: str) -> float:
    g = default_catalog().gpu(gpu)
    return gpu_numbers(g, profiles.engine_profile(engine))["attention_bandwidth_efficiency"]


def test_h200_trtllm_takes_h100_rate_times_ratio():
    """2.402 TB/s x 1.219 / 4.8 TB/s = 0.610 of H200's datasheet (2.928 TB/s) for both TensorRT-LLM profiles."""
    for engine in ("tensorrt-llm", "tensorrt-llm-0"):
        assert _attention("H200 SXM 141GB", engine) * 4.8e12 == pytest.approx(2.402e12 * 1.219, rel=1e-3)


def test_other_gpus_and_engines_untouched():
    """H100 keeps its own curve (2.402 / 3.35 = 0.717) and vLLM on H200 keeps vLLM's (2.705 / 4.8 = 0.564)."""
    assert _attention("H100 SXM 80GB", "tensorrt-llm-0") * 3.35e12 == pytest.approx(2.402e12, rel=1e-3)
    assert _attention("H200 SXM 141GB", "vllm") * 4.8e12 == pytest.approx(2.705e12, rel=1e-3)


def test_ratio_is_tensorrt_llms_not_vllms():
    """The shipped ratio (1.219) lies between vLLM's curve ratio (2.705 / 2.402 = 1.126) and the datasheet's (4.8 /
    3.35 = 1.433)."""
    ref, ratio = kernel_curves.TENSORRT_LLM_ATTENTION_RATIOS["H200 SXM 141GB"]
    assert ref == "H100 SXM 80GB" and 2.705 / 2.402 < ratio < 4.8 / 3.35
