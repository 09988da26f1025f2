"""The published host cost switch (issue 21 item 3, s118; EXPERIMENT, off on main): its per-sequence figure is the
median of the published vLLM V1 synchronous whole-loop figures (catalogs/reference/host_cost_published.csv), each
release gets its loop's reading, and an overlapped loop's decode step takes max(device, host)."""

from __future__ import annotations

import csv
import statistics
from dataclasses import replace
from pathlib import Path

import pytest

from planner import api
from planner.engines import profiles

CSV = Path(__file__).resolve().parents[1] / "catalogs" / "reference" / "host_cost_published.csv"
#: V1's synchronous loop measured whole (scheduler, input preparation, output processing): the pre-release at 256
#: (vllm#10634) and Tenstorrent's no-op model before and after its runner fix (tenstorrent/vllm#305).
V1_SYNC_WHOLE_LOOP = ("VLLM-V1PRE-256", "VLLM-V1-TT-NOOP-BEFORE", "VLLM-V1-TT-NOOP-AFTER")


@pytest.fixture
def switch_on(monkeypatch):
    monkeypatch.setattr(profiles, "PUBLISHED_HOST_COST", True)


def test_cost_is_the_median_of_v1_synchronous_whole_loop_figures():
    """19.53 / 23.44, 35.94, 19.38 us a sequence: median 21.485 us."""
    with CSV.open() as f:
        rows = {r["record_id"]: r for r in csv.DictReader(f)}
    figures = [float(rows[i][k]) for i in V1_SYNC_WHOLE_LOOP for k in ("per_seq_us_low", "per_seq_us_high")]
    assert all(rows[i]["scope"] == "whole engine loop" for i in V1_SYNC_WHOLE_LOOP)
    assert profiles.PUBLISHED_V1_SEQUENCE_COST_S == pytest.approx(statistics.median(figures) * 1e-6, rel=1e-9)
    assert profiles.PUBLISHED_V1_SEQUENCE_COST_S == pytest.approx(21.485e-6, rel=1e-9)


def test_off_changes_nothing():
    vllm = profiles.ENGINES["vllm"]
    assert profiles.with_published_host_cost(vllm, "vllm", "0.14.1") is vllm


@pytest.mark.parametrize(
    "engine, version, async_flag, cost_us, overlap",
    [
        ("vllm", "0.10.1.1", False, 21.485, 0.0),  # V1, synchronous
        ("vllm", "0.11.0", True, 21.485, 1.0),  # --async-scheduling
        ("vllm", "0.14.1", False, 21.485, 1.0),  # async by default (vllm PR 27614)
        ("vllm", "0.6.0", False, 59.0, 0.0),  # V0: the fitted value kept
        ("vllm", "rocm/vllm-dev:nightly (V0 engine: VLLM_USE_V1=0) 0.9.0", False, 59.0, 0.0),
        ("sglang", "0.5.3", False, 21.485, 1.0),  # overlap scheduler from 0.4
        ("sglang", "0.3.0", False, 59.0, 0.0),
        ("tensorrt-llm", "1.2.0rc1", False, 21.485, 1.0),  # 1.x overlap scheduler
    ],
)
def test_each_release_gets_its_loop(switch_on, engine, version, async_flag, cost_us, overlap):
    # the default profile with the synchronous loop (the bare name's is the asynchronous one since s189)
    vllm = profiles.with_vllm_host_loop(profiles.ENGINES["vllm"], "vllm", None)
    base = vllm if engine != "tensorrt-llm" else profiles.ENGINES["tensorrt-llm"]
    p = profiles.with_published_host_cost(base, engine, version, async_flag)
    assert p.sequence_overhead_s == pytest.approx(cost_us * 1e-6, rel=1e-9)
    assert p.host_overlap == overlap


def test_overlapped_step_takes_the_larger_of_device_and_host():
    """Summed: device + c x b; overlapped: max(device, c x b). At batch 256 on H100 with a 200 us per-sequence cost the
    host (51.2 ms) exceeds the device time, at batch 8 the device time wins."""
    sync = profiles.ENGINES["vllm"].with_(sequence_overhead_s=200e-6, host_overlap=0.0)
    over = replace(sync, host_overlap=1.0)
    for batch in (8, 256):
        a = api.decode_step("H100 SXM 80GB", "llama-3.1-8b", 2048, batch=batch, gpus=1, engine=sync, check_fit=False)
        b = api.decode_step("H100 SXM 80GB", "llama-3.1-8b", 2048, batch=batch, gpus=1, engine=over, check_fit=False)
        host = 200e-6 * batch
        device = a.step_s - host
        assert b.step_s == pytest.approx(max(device, host), rel=1e-9)
    assert device < host  # batch 256: host-bound, so the case above tested the max's other side too
