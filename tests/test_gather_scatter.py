"""Data-parallel attention's MoE as the engines run it by default: an all-gather of the group's tokens before the
experts and a reduce-scatter of their outputs after, each at NCCL's measured time
(catalogs/reference/gather_scatter_aic.csv; s180).

Source of the rule: NVIDIA/TensorRT-LLM ``tensorrt_llm/_torch/modules/fused_moe/fused_moe_cutlass.py``,
``select_alltoall_method_type``: ``if mapping.moe_ep_size <= top_k: return AlltoallMethodType.NotEnabled``, and then
``allgather(...)`` before the experts and ``reducescatter(...)`` after (``reducescatter_or_allreduce``). Measured
values: aiconfigurator 0.12.0's ``systems/data/b200_sxm/comm/nccl/2.29.2/nccl_perf.parquet``, B200, 8 GPUs, half:
all_gather of 268,435,456 values (512 MiB) 0.7614 ms, reduce_scatter 0.7665 ms.
"""

from __future__ import annotations

import math
import subprocess
from pathlib import Path

import pytest

import planner
from planner.engines.allreduce_table import GATHER_SCATTER_FILE_NAME, read_gather_scatter_table
from planner.model.collectives import table_allreduce_time_s

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ROOT / "catalogs" / "reference" / GATHER_SCATTER_FILE_NAME
AIC_PYTHON = Path("/work/venvs/aic/bin/python")
AIC_DATA = Path("/work/venvs/aic/lib/python3.11/site-packages/aiconfigurator_core/systems/data")
needs_aic = pytest.mark.skipif(not AIC_DATA.is_dir(), reason="aiconfigurator 0.12.0's venv is not on this machine")
B200 = "B200 180GB"
QWEN = dict(weight_precision="nvfp4", kv_precision="fp8", parallelism="dp-ep", check_fit=False)


def test_the_table_holds_the_measured_times():
    t = read_gather_scatter_table()
    row = t.row(B200)
    assert table_allreduce_time_s(t, row, 2.0**29, 8.0, True) == pytest.approx(0.7614e-3, rel=1e-3)  # all_gather
    assert table_allreduce_time_s(t, row, 2.0**29, 8.0, False) == pytest.approx(0.7665e-3, rel=1e-3)  # reduce_scatter
    assert math.isnan(t.row("MI300X"))  # no NCCL table: the all-to-all form stands there


def test_a_tensorrt_llm_dep_step_gathers_and_scatters_the_groups_tokens():
    """Qwen3-235B-A22B NVFP4 on 4 x B200, 768 sequences a rank: each of its 94 MoE layers all-gathers 4 x 768 tokens
    x 4,096 values at 0.5625 B (NVFP4 with its scales, quantized before the gather) and reduce-scatters them in bf16."""
    step = planner.decode_step(B200, "Qwen3-235B-A22B", 1536, batch=3072, gpus=4, engine="tensorrt-llm", **QWEN)
    t = read_gather_scatter_table()
    values = 3072 * 4096.0
    layer = table_allreduce_time_s(t, t.row(B200), values * 0.5625, 4.0, True)
    layer += table_allreduce_time_s(t, t.row(B200), values * 2.0, 4.0, False)
    assert step.communication_s == pytest.approx(94 * layer, rel=1e-9)


def test_vllm_gathers_in_bf16_and_tensorrt_llm_on_mnnvl_all_to_alls_above_top_k():
    """vLLM's default ``all2all_backend`` "allgather_reducescatter" (vllm/config/parallel.py) gathers unquantized bf16
    tokens: its Qwen3 step moves 2 / 0.5625 of TensorRT-LLM's gathered bytes. TensorRT-LLM on a multi-node NVLink
    domain (GB200 NVL72) with the experts over more GPUs than a token's top-k (gpt-oss-120b: 4) takes the MNNVL
    all-to-all; on B200 (no MNNVL) it gathers there too, though above top-k a gather moves more than the all-to-all
    would. A profile without the gather all-to-alls everywhere."""
    from dataclasses import replace

    from planner.engines.profiles import engine_profile
    from planner.model import parallel

    trtllm, vllm = engine_profile("tensorrt-llm"), engine_profile("vllm")
    assert (vllm.moe_exchange, trtllm.moe_exchange) == ("gather", "gather-quantized")

    def step(gpu, engine, model: str, gpus: int, precision: str | None):
        options = {**QWEN, "weight_precision": precision}
        return planner.decode_step(gpu, model, 1536, batch=768 * gpus, gpus=gpus, engine=engine, **options)

    t = read_gather_scatter_table()
    values = 3072 * 4096.0
    layer = table_allreduce_time_s(t, t.row(B200), values * 2.0, 4.0, True)
    layer += table_allreduce_time_s(t, t.row(B200), values * 2.0, 4.0, False)
    assert step(B200, vllm, "Qwen3-235B-A22B", 4, "nvfp4").communication_s == pytest.approx(94 * layer, rel=1e-9)

    from planner.deploy import deploy
    from planner.options import Options

    d = deploy("GB200 NVL72", "gpt-oss-120b", 1536, Options(batch=8 * 768, gpus=8, engine=trtllm, parallelism="dp-ep"))
    f = d.facts
    alltoall = 36 * parallel.expert_alltoall_time_s(f.gpu, f.limits, f.model, 768.0, 8.0)
    assert step("GB200 NVL72", trtllm, "gpt-oss-120b", 8, None).communication_s == pytest.approx(alltoall, rel=1e-9)
    b200 = step(B200, trtllm, "gpt-oss-120b", 8, None).communication_s
    no_gather = replace(trtllm, moe_exchange="alltoall")
    # without MNNVL B200 gathers all 8 ranks' tokens, more bytes than 4 copies of a rank's: the gather costs more
    assert step(B200, no_gather, "gpt-oss-120b", 8, None).communication_s < 0.8 * b200


@needs_aic
def test_table_rederives(tmp_path):
    """bench/nccl_extract.py in the aiconfigurator venv writes the shipped file byte for byte."""
    out = tmp_path / "t.csv"
    subprocess.run([str(AIC_PYTHON), str(ROOT / "bench" / "nccl_extract.py"), str(out)], check=True)
    assert out.read_text() == SHIPPED.read_text()
