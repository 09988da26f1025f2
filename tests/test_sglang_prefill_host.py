"""SGLang's eager extend (prefill) steps: no shorter than the host's launch of their layers (h-sgl).

SGLang replays its CUDA graphs for decode batches only (``ModelRunner._forward_raw``: ``forward_mode.is_cuda_graph``);
an extend batch runs ``forward_extend`` kernel by kernel unless a piecewise graph is on, which is off by default up to
0.5.9 (``enable_piecewise_cuda_graph`` False) and on from 0.5.10 except on ROCm (``_handle_piecewise_cuda_graph``).
CUDA runs each kernel as it is launched, so such a step takes max(device, host launch); under the overlap loop
(``event_loop_overlap``: ``run_batch`` of step k + 1 before ``pop_and_process`` of step k) the launch starts while the
step before runs, so that step hides as much of it. ``StepTable.prefill_host_s``, ``sglang_prefill_host_s``."""

from __future__ import annotations

import pytest

from planner.catalog import default_catalog
from planner.engines.profiles import (
    SGLANG,
    SGLANG_0510,
    SGLANG_055,
    SGLANG_HOST_LAYER_S,
    SGLANG_HOST_MOE_LAYER_S,
    sglang_prefill_host_s,
)
from planner.serving.simulate import RunBehaviour, Scheduler, StepTable, simulate

#: A flat table: a decode step 5 ms at any batch, a prefill step 10 ms of device time at any size, launched in 30 ms.
TABLE = StepTable(
    decode_lo_s=(0.005,) * 64, decode_hi_s=(0.005,) * 64, ctx_lo_tokens=0.0, ctx_hi_tokens=1.0,
    prefill_tokens=(1.0, 2e5), prefill_s=(0.010, 0.010), shared_s=0.005, prefill_host_s=0.030,
)  # fmt: skip
SGLANG_SCHED = Scheduler(max_num_seqs=64, max_num_batched_tokens=8192, kind="sglang")
OVERLAP = RunBehaviour(async_scheduling=True)


def test_the_host_time_per_layer_is_pull_request_1401s_eager_step():
    """Llama-3-8B's eager decode step at batch 1, 9.28 ms over 32 dense layers; DeepSeek-Coder-V2-Lite's, 4 x 6.22 ms,
    less one dense layer over its 26 MoE layers (catalogs/reference/eager_decode_published.csv)."""
    assert SGLANG_HOST_LAYER_S == pytest.approx(0.29e-3)
    assert SGLANG_HOST_MOE_LAYER_S == pytest.approx((24.88e-3 - 0.29e-3) / 26)
    r1 = default_catalog().model("deepseek-ai/DeepSeek-R1-0528")  # 3 dense + 58 MoE layers
    assert sglang_prefill_host_s(SGLANG_055, "NVIDIA", r1.num_layers, r1.moe_layers) == pytest.approx(0.0557, abs=1e-4)


def test_only_releases_and_devices_that_run_extend_eagerly():
    """0.5.5-0.5.9 eager on NVIDIA; 0.5.10 on (piecewise graphs) only off NVIDIA; another engine never."""
    assert sglang_prefill_host_s(SGLANG_055, "NVIDIA", 36, 0) == pytest.approx(36 * SGLANG_HOST_LAYER_S)
    assert sglang_prefill_host_s(SGLANG_0510, "NVIDIA", 36, 0) == 0.0
    assert sglang_prefill_host_s(SGLANG, "NVIDIA", 36, 0) == 0.0
    assert sglang_prefill_host_s(SGLANG, "AMD", 36, 0) == pytest.approx(36 * SGLANG_HOST_LAYER_S)


def test_closed_loop_of_one_pays_the_launch_in_full():
    """C = 1 with a 20 ms front end: the engine is idle when each request arrives, so its prefill takes the 30 ms
    launch, not the 10 ms of device work: TTFT 20 + 30 = 50 ms for every request."""
    out = simulate(
        TABLE, SGLANG_SCHED, 100, 3, 3, client_concurrency=1, behaviour=RunBehaviour(async_scheduling=True, frontend_s=0.020)
    )  # fmt: skip
    assert out.samples.ttft[0].tolist() == pytest.approx([0.050] * len(out.samples.ttft[0]))
    assert out.samples.ttft[1].sum() == 3


def _second(behaviour: RunBehaviour, table: StepTable = TABLE) -> tuple[float, float]:
    """A decodes from its prefill on in 5 ms steps; B arrives at 32 ms: (B's TTFT, B's prefill step), seconds."""
    trace: list = []
    out = simulate(
        table, SGLANG_SCHED, 0, 0, 2, arrivals_s=[0.0, 0.032], lengths=[(100, 20), (100, 2)], behaviour=behaviour,
        trace=trace,
    )  # fmt: skip
    step = [s for s in trace if s.prefill_tokens and s.start_s > 0][0]
    return max(out.samples.ttft[0].tolist()), step.dt_s


def test_an_overlapping_loop_hides_the_step_before():
    """A's prefill, on an idle engine, takes the whole 30 ms launch; its decode steps run 30-35, 35-40 ms. B arrives
    at 32 ms and, read when the 30-35 step ends, runs in the second step that starts after it (40 ms); its launch began
    with the 35-40 step, which hides 5 ms of it: a 25 ms step, TTFT 65 - 32 = 33 ms. Without overlap B's prefill
    starts at 35 ms and takes the whole 30 ms: TTFT 33 ms as well."""
    assert _second(OVERLAP) == pytest.approx((0.033, 0.025))
    assert _second(RunBehaviour()) == pytest.approx((0.033, 0.030))


def test_no_floor_no_change():
    """``prefill_host_s`` 0 (a graphed prefill, another engine): the 10 ms device step, as before: B's prefill at 40
    ms under overlap (TTFT 50 - 32 = 18 ms), at 35 ms without (13 ms)."""
    graphed = StepTable(
        decode_lo_s=TABLE.decode_lo_s, decode_hi_s=TABLE.decode_hi_s, ctx_lo_tokens=0.0, ctx_hi_tokens=1.0,
        prefill_tokens=TABLE.prefill_tokens, prefill_s=TABLE.prefill_s, shared_s=TABLE.shared_s,
    )  # fmt: skip
    assert _second(OVERLAP, graphed) == pytest.approx((0.018, 0.010))
    assert _second(RunBehaviour(), graphed) == pytest.approx((0.013, 0.010))
