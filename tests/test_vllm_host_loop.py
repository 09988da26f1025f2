"""vLLM's host loop by release (s189, shipped): from 0.14 vLLM schedules the next step while the device runs the current
one by default (vllm-project/vllm pull request 27614, "[Core] Enable async scheduling by default", in 0.14.0), so its
per-sequence host work (the published V1 loop's 21.485 us, catalogs/reference/host_cost_published.csv) hides behind
the device step; earlier V1 releases run it after the step unless started with --async-scheduling (the fitted 59 us,
summed). Plans with the bare engine name are the current release's; the workbook computes the same step."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from planner import api
from planner.accuracy import predict as acc
from planner.accuracy.published import load_decode_rows, reference_dir
from planner.engines import profiles
from planner.engines.profiles import (
    VLLM_ASYNCHRONOUS_LOOP,
    VLLM_SYNCHRONOUS_LOOP,
    engine_profile,
    vllm_schedules_asynchronously,
    with_vllm_host_loop,
)

REFERENCE = Path(__file__).resolve().parents[1] / "catalogs" / "reference"


def loop_of(profile) -> dict[str, float]:
    return {"sequence_overhead_s": profile.sequence_overhead_s, "host_overlap": profile.host_overlap}


@pytest.mark.parametrize(
    "version, flag, asynchronous",
    [
        ("0.13.0", False, False),  # the last release before pull request 27614
        ("0.14.0", False, True),  # async scheduling on by default
        ("0.14.1 (V1 engine, async scheduling default)", False, True),
        ("0.16.0", False, True),
        ("0.11.0", True, True),  # --async-scheduling on an earlier V1 release
        ("0.7.3", True, False),  # V0 has no asynchronous loop
        ("rocm/vllm-dev:nightly (V0 engine: VLLM_USE_V1=0) 0.9.0", False, False),
        (None, False, False),  # a release not stated: every such published row predates 0.14
        ("not stated (vLLM CI performance benchmark, build 9515)", False, False),
    ],
)
def test_the_release_and_its_command_choose_the_loop(version, flag, asynchronous):
    assert vllm_schedules_asynchronously(version, flag) is asynchronous


def test_the_two_loops_are_the_fitted_and_the_published_cost():
    assert VLLM_SYNCHRONOUS_LOOP == {"sequence_overhead_s": 59e-6, "host_overlap": 0.0}
    assert VLLM_ASYNCHRONOUS_LOOP == {"sequence_overhead_s": pytest.approx(21.485e-6, rel=1e-9), "host_overlap": 1.0}


def test_a_plan_with_the_bare_name_is_the_current_release():
    assert loop_of(engine_profile("vllm")) == VLLM_ASYNCHRONOUS_LOOP
    assert loop_of(engine_profile("vllm==0.16.0")) == VLLM_ASYNCHRONOUS_LOOP
    assert loop_of(engine_profile("vllm==0.13.0")) == VLLM_SYNCHRONOUS_LOOP
    assert loop_of(engine_profile("vllm==0.10.1.1")) == VLLM_SYNCHRONOUS_LOOP


def test_a_cost_set_by_hand_is_kept():
    own = engine_profile("vllm").with_(sequence_overhead_s=30e-6)
    assert with_vllm_host_loop(own, "vllm", "0.11.0") is own
    sync = engine_profile("vllm==0.11.0")
    assert with_vllm_host_loop(sync, "sglang", "0.5.3") is sync  # another engine's reading is not this one


def test_the_step_takes_the_larger_of_device_and_host_time():
    """Asynchronous: max(device + per-step costs, 21.485 us x batch); the per-sequence time alone set to 0 gives the
    device part. Llama-3.2-1B on one H100 at 64 tokens: at batch 8 the device time is larger, at 1,024 the host's
    22 ms (the device part ~5 ms)."""
    current = engine_profile("vllm")
    no_host = current.with_(sequence_overhead_s=0.0)
    for batch, host_bound in ((8, False), (1024, True)):
        step = api.decode_step(
            "H100 SXM 80GB", "llama-3.2-1b", 64, batch=batch, gpus=1, engine=current, check_fit=False
        )
        device = api.decode_step(
            "H100 SXM 80GB", "llama-3.2-1b", 64, batch=batch, gpus=1, engine=no_host, check_fit=False
        ).step_s
        host = 21.485e-6 * batch
        assert step.step_s == pytest.approx(max(device, host), rel=1e-9)
        assert (host > device) is host_bound


def _row(record_id: str, file: str):
    return next(r for r in load_decode_rows(reference_dir() / file) if r.record_id == record_id)


@pytest.mark.parametrize(
    "record_id, file, loop",
    [
        ("VUL-005", "perf_public.csv", VLLM_ASYNCHRONOUS_LOOP),  # vLLM 0.16.0 on B200 (Vultr's cookbook)
        ("LD005", "load_public.csv", VLLM_ASYNCHRONOUS_LOOP),  # vLLM 0.14.1 on H200 (the Phase 0 report)
        ("GPUSTACK-098", "perf_public.csv", VLLM_ASYNCHRONOUS_LOOP),  # vLLM 0.11.0 with --async-scheduling
        ("GPUSTACK-238", "perf_public.csv", VLLM_SYNCHRONOUS_LOOP),  # vLLM 0.11.0 without it
    ],
)
def test_published_rows_run_their_releases_loop(record_id, file, loop):
    assert loop_of(acc._profile_for(_row(record_id, file), None)) == loop


def test_rows_without_a_vllm_profile_keep_the_synchronous_loop():
    """mlc-llm and llm-awq rows (LMDeploy's W4A16 comparison, a fitted source) run on vLLM's profile: their release is
    not vLLM's, so they keep the loop every fit was made with."""
    rows = [r for r in load_decode_rows(REFERENCE / "perf_public.csv") if r.engine in profiles.ENGINES_WITHOUT_PROFILE]
    assert rows
    assert all(loop_of(acc._profile_for(r, None)) == VLLM_SYNCHRONOUS_LOOP for r in rows)


def test_the_published_cost_is_the_host_cost_tables_median():
    with (REFERENCE / "host_cost_published.csv").open() as f:
        ids = {r["record_id"] for r in csv.DictReader(f)}
    assert {"VLLM-V1PRE-256", "VLLM-V1-TT-NOOP-BEFORE", "VLLM-V1-TT-NOOP-AFTER"} <= ids
