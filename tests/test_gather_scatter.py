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


# -- trial 9 F4: the gather inside an NVLink domain the table measured only in part ---------------------------------

GB200, GB300, B300 = "GB200 NVL72", "GB300 NVL72", "B300 288GB"
R1 = dict(weight_precision="nvfp4", parallelism="dp-ep")


def _ttft(gpu: str, gpus: int, engine: str) -> float:
    return planner.api.ttft(gpu, "deepseek-r1", 2048, gpus=gpus, engine=engine, **R1)


@pytest.mark.parametrize("engine", ["tensorrt-llm", "vllm"])
def test_gb200_dp_ep_prompt_at_8_gpus_is_b200s_on_the_same_nvlink_5(engine):
    """GB200 NVL72 and HGX B200 give each GPU the same fifth-generation NVLink, 1.8 TB/s bidirectional (18 links):
    GB200 NVL72, "1,800 GB/s of bidirectional interconnect bandwidth per GPU" (nextpcb.com/blog/nvidia-gb200-nvl72-
    architecture), "NVLink continuous across the whole rack at 1.8 TB/s per GPU" (aiwiki.ai/wiki/nvidia_gb200_nvl72,
    citing NVIDIA's product page); HGX B200, "1.8 TB/s bidirectional bandwidth between any two GPUs in the node",
    nvidia-smi NV18 (docs.vultr.com/inference-cookbook/cuda/getting-started/hardware-overview), "18x 5th Gen NVLink,
    14.4 TB/s aggregated" over 8 GPUs (MLCommons inference v6.0, Nebius nebius_b200_n1.json). NVIDIA's own datasheet
    PDFs were not retrievable here; catalogs/gpus.toml gives both 900e9 B/s a direction. So a dp-ep prompt over 8 GPUs,
    inside both NVLink domains, takes within 10% of B200's time on GB200 (their 4-GPU figures differ by 4-5%: the
    GB200 part's 1,200 W peaks); it took 3.2x B200's (249 against 78 ms, TensorRT-LLM) with the all-to-all form
    standing in for the 8-GPU gather the table lacked."""
    gb200, b200 = _ttft(GB200, 8, engine), _ttft(B200, 8, engine)
    assert gb200 == pytest.approx(b200, rel=0.10)
    assert _ttft(GB200, 4, engine) == pytest.approx(_ttft(B200, 4, engine), rel=0.10)  # the same at 4, measured


def test_the_8_gpu_gather_is_the_same_generations_measured_row():
    """GB200's 8-GPU row is B200's as measured (GB300's B300's); the GPU's own 2- and 4-GPU rows stay as they are."""
    t = read_gather_scatter_table()
    for own, peer in ((GB200, B200), (GB300, B300)):
        for graph in (True, False):  # the mode axis here: all-gather, reduce-scatter
            for size in (2.0**12, 2.0**20, 2.0**29):
                ours = table_allreduce_time_s(t, t.row(own), size, 8.0, graph)
                assert ours == table_allreduce_time_s(t, t.row(peer), size, 8.0, graph)
                assert table_allreduce_time_s(t, t.row(own), size, 4.0, graph) != ours


def test_same_generation_rows_agree_where_both_were_measured():
    """The evidence for borrowing (``_fill_nvlink_domains`` rule 1): at 2 and 4 GPUs, every size and both ops, GB200's
    times are B200's within 0.6-1.2x and their median ratio is within 5% of 1; GB300's against B300's the same. A
    re-derived table where the generations parted would fail here, and the borrowing would have to be revisited."""
    import numpy as np

    t = read_gather_scatter_table()
    for own, peer in ((GB200, B200), (GB300, B300)):
        a, b = t.log_seconds[t.gpus.index(own)], t.log_seconds[t.gpus.index(peer)]
        for g in (2, 4):
            k = t.group_sizes.index(g)
            ratio = np.exp(a[:, k] - b[:, k])
            assert 0.6 < ratio.min() and ratio.max() < 1.2, (own, g)
            assert np.median(ratio) == pytest.approx(1.0, abs=0.05), (own, g)


@pytest.mark.parametrize("gpu", [GB200, GB300])
@pytest.mark.parametrize("tokens", [1.0, 64.0, 2048.0])
def test_the_exchange_never_shrinks_with_the_group_inside_the_domain(gpu, tokens):
    """vLLM's gather (all ranks' tokens to every rank) over 2 .. 72 GPUs of an NVL72 rack, the same tokens a rank:
    non-decreasing in the group, and finite (no all-to-all stand-in) up to 72, the NVLink domain."""
    from planner.deploy import deploy
    from planner.engines.profiles import engine_profile
    from planner.model import parallel
    from planner.options import Options

    d = deploy(gpu, "deepseek-r1", 2048, Options(batch=8, gpus=8, engine=engine_profile("vllm"), **R1))
    f = d.facts
    gathered = [
        parallel.moe_gather_scatter_time_s(f.limits, f.model, f.precision, tokens, float(g)) for g in range(2, 73)
    ]
    assert all(math.isfinite(x) for x in gathered)
    assert all(b >= a for a, b in zip(gathered, gathered[1:], strict=False))
    exchange = [parallel.ep_communication_s(f.gpu, f.limits, f.model, f.precision, tokens, float(g)) for g in (4, 8)]
    assert exchange[1] == pytest.approx(f.model.moe_layers * gathered[6], rel=1e-12)  # 8 GPUs: the gather, not the
    assert exchange[0] <= exchange[1]  # all-to-all form


def test_beyond_the_domain_the_cross_node_path_stays():
    """B200 at 16 GPUs spans two 8-GPU nodes: no 16-GPU gather is made up for it, the all-to-all at the scale-out
    link's rate stands (many times the in-node 8), and GB200's rack past 72 GPUs the same."""
    t = read_gather_scatter_table()
    assert math.isnan(table_allreduce_time_s(t, t.row(B200), 2.0**20, 16.0, True))
    assert math.isnan(table_allreduce_time_s(t, t.row(GB200), 2.0**20, 73.0, True))
    assert _ttft(B200, 16, "vllm") > 5 * _ttft(B200, 8, "vllm")


def _warnings(gpu: str, gpus: int, engine: str = "vllm", model: str = "deepseek-r1", **options) -> list[str]:
    p = planner.report.plan(gpu, model, 2048, gpus=gpus, engine=engine, **{**R1, **options})
    return list(p.warnings)


def test_the_warning_names_the_moe_exchange_not_the_all_reduce():
    """A dp-ep plan has no all-reduce (attention is not split): what stands in for its MoE all-gather / reduce-scatter
    is what it warns of, as the all-reduce warning words its own ("all-reduce not measured on ...")."""
    at8 = _warnings(GB200, 8)
    assert not any("all-reduce not measured" in w for w in at8)
    (moe,) = [w for w in at8 if w.startswith("MoE all-gather / reduce-scatter not measured on 8 x GB200 NVL72")]
    assert "has 2, 4 GPUs" in moe and "B200 180GB's measured 8-GPU times stand in" in moe
    (at16,) = [w for w in _warnings(GB200, 16) if w.startswith("MoE all-gather / reduce-scatter")]
    assert "at 16 GPUs extended from its 4- and 8-GPU times" in at16
    (b200,) = [w for w in _warnings(B200, 16) if w.startswith("MoE all-gather / reduce-scatter")]
    assert "beyond the 8-GPU NVLink domain the all-to-all latency + bandwidth form" in b200
    assert any("more than one 8-GPU node" in w for w in _warnings(B200, 16))  # the spans-nodes warning stays
    assert not any(w.startswith("MoE all-gather") for w in _warnings(B200, 8) + _warnings(GB200, 4))  # measured
    # TensorRT-LLM's MNNVL all-to-all above top-k (8) is the engine's own exchange, not a stand-in: no note
    assert not any(w.startswith("MoE all-gather") for w in _warnings(GB200, 16, "tensorrt-llm"))
    (mi300x,) = [
        w
        for w in _warnings("MI300X", 8, weight_precision="fp8")
        if w.startswith("MoE all-gather / reduce-scatter not measured on 8 x MI300X")
    ]
    assert "the all-to-all latency + bandwidth form stands in" in mi300x
    tp = _warnings(GB200, 8, parallelism="tp")
    assert not any(w.startswith("MoE all-gather") for w in tp)  # tensor parallel all-reduces, no exchange


def test_the_excel_function_reads_the_same_gather():
    """The Excel TTFT (default engine) calls the same core: its milliseconds are api.ttft's at 8 x GB200 dp-ep."""
    from planner.excel.functions import TTFT

    assert TTFT(GB200, "deepseek-r1", 2048, 8, "nvfp4", None, "dp-ep") == pytest.approx(
        planner.api.ttft(GB200, "deepseek-r1", 2048, gpus=8, **R1) * 1e3, rel=1e-9
    )
