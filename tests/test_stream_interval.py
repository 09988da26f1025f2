"""TensorRT-LLM 1.x's stream_interval and SGLang's --stream-interval (s189, shipped): the PyTorch executor builds a streamed request's response once
every ``stream_interval`` iterations (NVIDIA/TensorRT-LLM pull request 5284, "feat: Support stream_interval": "The
iteration interval to create responses under the streaming mode"), so a published run whose options set it pays the
per-sequence host cost (vLLM's 59 us, borrowed: ``TENSORRT_LLM_SEQUENCE_OVERHEAD_S``) once every that many steps.
SGLang's scheduler builds a request's output (``Scheduler.stream_output``) only when ``len(output_ids) %
stream_interval == 1`` (sglang 0.5.12, ``scheduler_output_processor_mixin.py``), so the same reading applies."""

from __future__ import annotations

import pytest

from planner.accuracy import predict as acc
from planner.accuracy.published import load_decode_rows, reference_dir
from planner.engines import profiles


@pytest.fixture(scope="module")
def load_rows():
    return {r.record_id: r for r in load_decode_rows(reference_dir() / "load_public.csv")}


def test_the_interval_is_read_from_the_runs_options(load_rows):
    """InferenceX's TensorRT-LLM runs quote their dsr1-fp8.yml ("stream_interval: 10"); its SGLang runs give
    --stream-interval on the command line; a run without either has none."""
    assert load_rows["IXA022"].stream_interval == 10
    assert load_rows["IXA058"].stream_interval == 10
    assert load_rows["IXA013"].stream_interval == 10  # SGLang, --stream-interval 10
    assert load_rows["LD047"].stream_interval is None  # gpustack's trtllm-serve with no options


def test_a_run_with_it_pays_the_host_cost_once_every_interval(load_rows):
    interval = acc._profile_for(load_rows["IXA022"], None)
    default = acc._profile_for(load_rows["LD047"], None)  # TensorRT-LLM 1.2.0rc1, interval 1
    assert default.sequence_overhead_s == profiles.TENSORRT_LLM_SEQUENCE_OVERHEAD_S == pytest.approx(59e-6)
    assert interval.sequence_overhead_s == pytest.approx(59e-6 / 10, rel=1e-12)


@pytest.mark.parametrize(
    "engine, version, interval",
    [
        ("tensorrt-llm", "0.13.0", 10),  # the 0.x TensorRT engines' C++ executor: no Python response loop
        ("vllm", "0.16.0", 10),
        ("tensorrt-llm", "1.2.0", 1),
        ("tensorrt-llm", "1.2.0", None),
    ],
)
def test_other_rows_keep_their_profile(engine, version, interval):
    base = profiles.ENGINES["tensorrt-llm"]
    assert profiles.with_stream_interval(base, engine, version, interval) is base


def test_sglang_runs_read_their_stream_interval_and_pay_the_cost_once_every_interval(load_rows):
    """InferenceX's SGLang H200 runs (--stream-interval 10) and B200 / B300 runs (30); its AMD runs set none."""
    h200, b300, mi355x = load_rows["IXA013"], load_rows["IXA007"], load_rows["IXA048"]
    assert (h200.stream_interval, b300.stream_interval, mi355x.stream_interval) == (10, 30, None)
    plain = acc._profile_for(mi355x, None).sequence_overhead_s
    assert plain == pytest.approx(59e-6)
    assert acc._profile_for(h200, None).sequence_overhead_s == pytest.approx(plain / 10, rel=1e-12)
    assert acc._profile_for(b300, None).sequence_overhead_s == pytest.approx(plain / 30, rel=1e-12)
    base = profiles.ENGINES["sglang"]
    assert profiles.with_stream_interval(base, "vllm", "0.16.0", 10) is base
    assert profiles.with_stream_interval(base, "sglang", "0.5.12", 1) is base
