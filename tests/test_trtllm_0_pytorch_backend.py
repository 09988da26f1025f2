"""TensorRT-LLM 0.x served by ``trtllm-serve --backend pytorch``: the PyTorch backend, every decode step eager (s183);
and 1.x's decode above its default graphs, eager (measured, not shipped).

Sources:
- ``PyTorchConfig.use_cuda_graph: bool = False`` (NVIDIA/TensorRT-LLM ``tensorrt_llm/_torch/pyexecutor/config.py`` at
  commit 9b931c0f6305aefa3660e6fb84a76a42c0eef167, the build dstack's DeepSeek-R1 rows name), and the 0.x
  ``trtllm-serve`` builds it with ``PyTorchConfig(enable_overlap_scheduler=True)`` alone (``tensorrt_llm/commands/
  serve.py``, ``get_llm_args``): no decode graph unless an options file asks;
- the eager surplus per layer: SGLang's published one (sgl-project/sglang pull request 1401, 2024-09-12;
  ``catalogs/reference/eager_decode_published.csv``): Llama-3-8B 7.06 -> 9.28 ms over 32 dense layers, DeepSeek-Coder-
  V2-Lite 6.22 ms graphed and "4x faster" than eager over 27 layers, 26 of them MoE;
- DeepSeek-R1's config.json: 61 layers, ``first_k_dense_replace`` 3 (58 MoE layers).
"""

from __future__ import annotations

import csv
from types import SimpleNamespace

import pytest

from planner.accuracy.predict import _profile_for, predict_decode_rows
from planner.accuracy.published import (
    load_decode_rows,
    pytorch_backend_of,
    read_csv_rows,
    reference_dir,
    trtllm_serve_default_graphs,
)
from planner.catalog import default_catalog
from planner.engines import profiles
from planner.engines.architecture import model_facts
from planner.engines.profiles import (
    TENSORRT_LLM,
    TENSORRT_LLM_0,
    trtllm_0_pytorch_profile,
    with_trtllm_serve_eager_decode,
)
from planner.model.decode import eager_surplus_s

#: The shipped rows' cells, by record_id.
CELLS = {r["record_id"]: r for r in read_csv_rows(reference_dir() / "perf_public.csv")}
ROWS = {r.record_id: r for r in load_decode_rows() if r.record_id.startswith(("DSTK-", "TRT"))}

#: SGLang pull request 1401's figures, seconds
LLAMA3_8B_GRAPHED, LLAMA3_8B_EAGER, CODER_V2_LITE_GRAPHED = 7.06e-3, 9.28e-3, 6.22e-3
DENSE_EAGER_S = (LLAMA3_8B_EAGER - LLAMA3_8B_GRAPHED) / 32
MOE_EAGER_S = (4 * CODER_V2_LITE_GRAPHED - CODER_V2_LITE_GRAPHED - DENSE_EAGER_S) / 26


def _cells(record_id: str) -> dict[str, str]:
    return dict(CELLS[record_id])


def test_the_server_command_names_the_backend_not_the_benchmark_client():
    cells = _cells("DSTK-025")  # "--backend trt-llm" (the client) and "trtllm-serve --backend pytorch" (the server)
    assert "--backend trt-llm" in cells["batching"]
    assert pytorch_backend_of(cells)
    assert not pytorch_backend_of({"batching": "bench_serving.py --backend trt-llm; server: trtllm-serve --tp_size 8"})
    assert pytorch_backend_of({"notes": "trtllm-serve deepseek --backend=pytorch --tp_size 8"})


def test_a_0x_pytorch_row_decodes_eagerly_on_the_pytorch_backends_profile():
    eng = _profile_for(ROWS["DSTK-025"], None)  # TensorRT-LLM 0.17.post1.dev, trtllm-serve --backend pytorch
    assert eng.name == TENSORRT_LLM.name
    assert eng.decode_graph_max_batch < 1  # no batch replays a graph
    assert eng.eager_layer_s == pytest.approx(DENSE_EAGER_S)
    assert eng.eager_moe_layer_s == pytest.approx(MOE_EAGER_S)


def test_a_0x_row_on_tensorrt_engines_keeps_its_profile():
    engine_rows = [r for r in load_decode_rows() if r.engine == "tensorrt-llm" and r.engine_version.startswith("0.")]
    row = next(r for r in engine_rows if not r.pytorch_backend)
    eng = _profile_for(row, None)
    assert eng.name == "tensorrt-llm-0" and eng.decode_graph_max_batch == 0


def test_deepseek_r1_pays_about_42_ms_a_step_eagerly():
    """3 dense x 0.069 ms + 58 MoE x 0.715 ms = 41.7 ms a step, at any batch."""
    eng = _profile_for(ROWS["DSTK-025"], None)
    cat = default_catalog()
    facts = model_facts(cat.model("deepseek-r1"))
    limits = SimpleNamespace(
        eager_layer_s=eng.eager_layer_s,
        eager_moe_layer_s=eng.eager_moe_layer_s,
        decode_graph_max_batch=eng.decode_graph_max_batch,
    )
    expected = 3 * DENSE_EAGER_S + 58 * MOE_EAGER_S
    assert expected == pytest.approx(41.7e-3, abs=0.1e-3)
    for batch in (4, 128):
        assert float(eager_surplus_s(facts, limits, batch)) == pytest.approx(expected)


def test_the_rows_tpot_rises_by_the_eager_surplus_at_batch_four():
    """dstack's DSTK-025 (4 in flight, 3,200 / 800 tokens on 8 x H200): its published mean TPOT is 55.12 ms
    (Deepseek-R1/raw_data/online_results.csv line 26); graphed, the planner gave about 10 ms, eager about 54 ms."""
    row = ROWS["DSTK-025"]
    eager = float(predict_decode_rows([row]).tpot_s[0])
    graphed = float(predict_decode_rows([row], engine=TENSORRT_LLM).tpot_s[0])
    assert eager - graphed == pytest.approx(3 * DENSE_EAGER_S + 58 * MOE_EAGER_S, rel=0.25)
    assert eager == pytest.approx(55.12e-3, rel=0.15)


# -- TensorRT-LLM 1.x's decode above its default graphs (s183; measured, not shipped: docs/history.md) --------------


def test_a_plain_trtllm_serve_runs_on_its_default_graphs():
    assert trtllm_serve_default_graphs(_cells("GPUSTACK-145"))  # trtllm-serve openai/gpt-oss-20b
    assert not trtllm_serve_default_graphs({"batching": "trtllm-serve m --extra_llm_api_options opts.yml"})
    assert not trtllm_serve_default_graphs({"notes": "trtllm-serve m; cuda_graph_config: enable_padding: true"})
    assert not trtllm_serve_default_graphs({"batching": "trtllm-bench --model m throughput"})


def test_eager_decode_above_128_is_off_on_main_and_applies_to_1x_default_graphs_only(monkeypatch):
    assert with_trtllm_serve_eager_decode(TENSORRT_LLM, True) is TENSORRT_LLM
    monkeypatch.setattr(profiles, "TRTLLM_SERVE_EAGER_ABOVE_GRAPHS", True)
    eager = with_trtllm_serve_eager_decode(TENSORRT_LLM, True)
    assert eager.decode_graph_max_batch == 128  # CudaGraphConfig: max_batch_size 0 read as 128
    assert eager.eager_moe_layer_s == pytest.approx(MOE_EAGER_S)
    assert with_trtllm_serve_eager_decode(TENSORRT_LLM, False) is TENSORRT_LLM
    assert with_trtllm_serve_eager_decode(TENSORRT_LLM_0, True) is TENSORRT_LLM_0
    no_graphs = trtllm_0_pytorch_profile()
    assert with_trtllm_serve_eager_decode(no_graphs, True) is no_graphs  # the 0.x PyTorch backend has none at all


def test_validate_says_the_eager_cost_is_borrowed(tmp_path):
    """`planner validate` on a user's file holding DSTK-025 and a TensorRT-engine row: only the former carries the
    caveat, in the "Predicted with a caveat" list."""
    from click.testing import CliRunner

    from planner.cli import main

    cells = _cells("DSTK-025")
    columns = [k for k in cells if k is not None]
    path = tmp_path / "runs.csv"
    with path.open("w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=columns, extrasaction="ignore")
        w.writeheader()
        w.writerow(cells)
        w.writerow({**cells, "record_id": "MINE-1", "batching": "trtllm-build engine; trtllm-serve engine_dir"})
    out = CliRunner().invoke(main, ["validate", "--decode", str(path)]).output
    caveats = out.split("Predicted with a caveat:", 1)[1].split("\n\n", 1)[0]
    assert "DSTK-025: served by trtllm-serve --backend pytorch (TensorRT-LLM 0.x)" in caveats
    assert "SGLang's published eager launch cost" in caveats and "MINE-1" not in caveats
