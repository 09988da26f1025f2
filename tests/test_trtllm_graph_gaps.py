"""TensorRT-LLM 1.x's decode batches between its default CUDA graphs run eagerly (h-p50, switch
``planner.engines.profiles.TRTLLM_SERVE_EAGER_GRAPH_GAPS``, off; docs/hypotheses/trtllm-graph-gaps.md).

Sources:
- ``DecodeCudaGraphConfig`` (https://nvidia.github.io/TensorRT-LLM/1.3.0rc27/llm-api/reference/
  DecodeCudaGraphConfig.html): ``enable_padding: bool = False`` ("If true, batches are rounded up to the nearest
  cuda_graph_batch_size"); with neither ``batch_sizes`` nor ``max_batch_size`` "a default max_batch_size of 128 is
  used";
- ``CudaGraphConfig._generate_cuda_graph_batch_sizes`` (NVIDIA/TensorRT-LLM ``tensorrt_llm/llmapi/llm_args.py``, the
  1.0-1.2 form): without padding ``list(range(1, 32)) + [32, 64, 128]``;
- ``PyTorchModelEngine._maybe_get_cuda_graph`` (``tensorrt_llm/_torch/pyexecutor/model_engine.py``): a generation
  batch of a size not captured gets no graph when padding is off;
- the eager surplus per layer: SGLang's published one (sgl-project/sglang pull request 1401;
  ``catalogs/reference/eager_decode_published.csv``), the planner's ``PYTORCH_EAGER_COSTS``.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from planner.engines import profiles
from planner.engines.profiles import TENSORRT_LLM, with_trtllm_serve_eager_decode
from planner.model.decode import eager_surplus_s, uncaptured_gap
from planner.serving.benchmark import _batch_grid

CAPTURED = [*range(1, 33), 64, 128]


def test_the_gaps_are_the_sizes_the_default_graphs_leave_out():
    gaps = [b for b in range(1, 129) if uncaptured_gap(float(b), 32.0, 128.0)]
    assert gaps == [b for b in range(1, 129) if b not in CAPTURED]
    assert gaps[:2] == [33, 34] and 63 in gaps and 64 not in gaps and 65 in gaps and 127 in gaps
    assert not uncaptured_gap(48.0, 0.0, 128.0)  # off: every batch up to the largest graph graphed
    got = uncaptured_gap(np.array([32.0, 33.0, 64.0, 100.0, 128.0]), 32.0, 128.0)
    assert got.tolist() == [False, True, False, True, False]


def test_the_switch_is_off_on_main_and_sets_the_gaps_on_default_graphs_only(monkeypatch):
    assert not profiles.TRTLLM_SERVE_EAGER_GRAPH_GAPS
    assert with_trtllm_serve_eager_decode(TENSORRT_LLM, True) is TENSORRT_LLM
    monkeypatch.setattr(profiles, "TRTLLM_SERVE_EAGER_GRAPH_GAPS", True)
    eager = with_trtllm_serve_eager_decode(TENSORRT_LLM, True)
    assert eager.decode_graph_max_batch == 128 and eager.decode_graph_gap_above == 32
    assert eager.eager_layer_s == pytest.approx(profiles.SGLANG_EAGER_LAYER_S)
    assert with_trtllm_serve_eager_decode(TENSORRT_LLM, False) is TENSORRT_LLM  # an options file: its own graphs
    monkeypatch.setattr(profiles, "TRTLLM_SERVE_EAGER_GRAPH_GAPS", False)
    monkeypatch.setattr(profiles, "TRTLLM_SERVE_EAGER_ABOVE_GRAPHS", True)  # s183's rule alone: no gaps
    assert with_trtllm_serve_eager_decode(TENSORRT_LLM, True).decode_graph_gap_above == 0


def test_a_qwen3_32b_step_pays_64_dense_layers_in_a_gap_only():
    """Qwen3-32B: 64 dense layers x 0.069 ms = 4.44 ms a step at batch 33-63 and 65-127 (and above 128)."""
    model = SimpleNamespace(num_layers=64, moe_layers=0)
    limits = SimpleNamespace(
        eager_layer_s=profiles.SGLANG_EAGER_LAYER_S,
        eager_moe_layer_s=profiles.SGLANG_EAGER_MOE_LAYER_S,
        decode_graph_max_batch=128.0,
        decode_graph_gap_above=32.0,
    )
    for batch, eager in ((16, False), (48, True), (64, False), (100, True), (128, False), (200, True)):
        assert float(eager_surplus_s(model, limits, batch)) == pytest.approx(4.44e-3 if eager else 0.0, abs=1e-5)


def test_the_batch_grid_holds_each_graphed_power_and_its_eager_neighbours():
    grid = _batch_grid(512, 128.0, 32.0)
    assert {63, 64, 65, 127, 128, 129} <= set(grid.tolist())
    assert set(_batch_grid(512, 128.0).tolist()) >= {128, 129}  # s183's grid unchanged
