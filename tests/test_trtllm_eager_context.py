"""TensorRT-LLM's PyTorch backend launches a step that carries a context request kernel by kernel (h-load, switch
``planner.serving.benchmark.TRTLLM_EAGER_CONTEXT``, off; docs/hypotheses/trtllm-eager-context.md).

``PyTorchModelEngine._maybe_get_cuda_graph`` replays a ``DecodingCUDAGraphRunner`` for generation-only batches only,
so a context step (alone or mixed with decodes) takes max(device, host launch), the launch of an overlapping loop
starting while the step before runs, as SGLang's eager extend does (tests/test_sglang_prefill_host.py). The launch
per layer is SGLang's published one (``SGLANG_HOST_LAYER_S``, ``SGLANG_HOST_MOE_LAYER_S``), borrowed."""

from __future__ import annotations

import pytest

from planner.catalog import default_catalog
from planner.engines.profiles import SGLANG_HOST_LAYER_S, engine_profile
from planner.serving import benchmark
from planner.serving.benchmark import eager_context_host_s
from planner.serving.simulate import RunBehaviour, Scheduler, StepTable, simulate

#: A flat table: a decode step 5 ms at any batch, a prompt step 10 ms of device time at any size, launched in 30 ms.
TABLE = StepTable(
    decode_lo_s=(0.005,) * 64, decode_hi_s=(0.005,) * 64, ctx_lo_tokens=0.0, ctx_hi_tokens=1.0,
    prefill_tokens=(1.0, 2e5), prefill_s=(0.010, 0.010), shared_s=0.005, prefill_host_s=0.030,
)  # fmt: skip
TRTLLM_SCHED = Scheduler(max_num_seqs=64, max_num_batched_tokens=8192, kind="tensorrt-llm")


@pytest.fixture
def switch_on(monkeypatch):
    monkeypatch.setattr(benchmark, "TRTLLM_EAGER_CONTEXT", True)


def test_off_by_default_and_only_the_pytorch_backend(switch_on):
    """The PyTorch backend's profile ("tensorrt-llm") gets the launch of its layers; the TensorRT engines
    ("tensorrt-llm-0"), vLLM and SGLang none from this rule."""
    r1 = default_catalog().model("deepseek-ai/DeepSeek-R1-0528")  # 3 dense + 58 MoE layers
    assert eager_context_host_s(engine_profile("tensorrt-llm"), r1.num_layers, r1.moe_layers) == pytest.approx(
        0.0557, abs=1e-4
    )
    assert eager_context_host_s(engine_profile("tensorrt-llm"), 36, 0) == pytest.approx(36 * SGLANG_HOST_LAYER_S)
    for other in ("tensorrt-llm==0.9", "vllm", "sglang"):
        assert eager_context_host_s(engine_profile(other), 36, 0) == 0.0


def test_switch_off_gives_no_floor():
    assert benchmark.TRTLLM_EAGER_CONTEXT is False
    assert eager_context_host_s(engine_profile("tensorrt-llm"), 36, 0) == 0.0


def _second(behaviour: RunBehaviour) -> tuple[float, float]:
    """A decodes from its prompt step on in 5 ms steps; B arrives at 32 ms and enters a mixed step beside A's decode:
    (B's TTFT, the mixed step's length), seconds."""
    trace: list = []
    out = simulate(
        TABLE, TRTLLM_SCHED, 0, 0, 2, arrivals_s=[0.0, 0.032], lengths=[(100, 20), (100, 2)], behaviour=behaviour,
        trace=trace,
    )  # fmt: skip
    step = [s for s in trace if s.prefill_tokens and s.start_s > 0][0]
    assert step.batch == 1  # A decodes in the same step: a mixed step
    return max(out.samples.ttft[0].tolist()), step.dt_s


def test_a_mixed_step_is_no_shorter_than_its_launch_less_the_step_before():
    """A's prompt step, on an idle engine, takes the whole 30 ms launch; its decodes run 30-35, 35-40 ms. B arrives at
    32 ms; with the overlap it joins the second step that starts after it, 40 ms, whose launch began with the 35-40
    step: 30 - 5 = 25 ms (its device time, 10 + 5 - 5 shared, is shorter): TTFT 65 - 32 = 33 ms. Without overlap B joins
    the step at 35 ms, which takes the whole launch: 35 + 30 - 32 = 33 ms."""
    assert _second(RunBehaviour(async_scheduling=True)) == pytest.approx((0.033, 0.025))
    assert _second(RunBehaviour()) == pytest.approx((0.033, 0.030))


def test_a_step_without_prompt_tokens_keeps_its_time():
    """Decode-only steps replay a graph: the floor never touches them (every gap of A's after its first is 5 ms)."""
    out = simulate(TABLE, TRTLLM_SCHED, 100, 8, 1, behaviour=RunBehaviour(async_scheduling=True))
    assert max(abs(g - 0.005) for g in out.samples.itl[0].tolist()) < 1e-12
