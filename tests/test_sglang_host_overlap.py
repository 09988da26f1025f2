"""SGLang's own host cost under its overlap scheduler (issue 21, h-sglhost; EXPERIMENT, off on main;
docs/hypotheses/sglang-host-overlap.md): the per-sequence figure is what SGLang's overlap scheduler hid in
sgl-project/sglang pull request 5608 (catalogs/reference/host_cost_published.csv SGLANG-PD-OVERLAP-16), an SGLang
>= 0.4 row takes it hidden behind the device (the v0.4 blog, https://lmsys.org/blog/2024-12-04-sglang-v0-4/: the
overlap scheduler is on by default), and summed where the row's command turns the overlap scheduler off."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from planner import api
from planner.accuracy import predict, published
from planner.engines import profiles

CSV = Path(__file__).resolve().parents[1] / "catalogs" / "reference" / "host_cost_published.csv"


@pytest.fixture
def switch_on(monkeypatch):
    monkeypatch.setattr(profiles, "SGLANG_HOST_OVERLAP", True)


def test_cost_is_what_the_overlap_hid_in_sglang_pr_5608():
    """3,053.86 -> 3,458.31 tok/s at 16 running requests: 1 / 3053.86 - 1 / 3458.31 s = 38.3 us a sequence a step,
    the file's per_seq_us for the row, both figures quoted from the pull request's log lines."""
    with CSV.open() as f:
        row = {r["record_id"]: r for r in csv.DictReader(f)}["SGLANG-PD-OVERLAP-16"]
    low, high = profiles.SGLANG_PD_OVERLAP_TOK_S
    assert (float(row["figure_low"]), float(row["figure_high"])) == (low, high)
    assert f"{low}" in row["quote"] and f"{high}" in row["quote"]
    assert row["engine"] == "sglang" and "#running-req: 16" in row["quote"]
    assert profiles.SGLANG_OVERLAP_SEQUENCE_COST_S * 1e6 == pytest.approx(float(row["per_seq_us_low"]), abs=0.05)


def test_off_changes_nothing():
    sglang = profiles.ENGINES["sglang"]
    assert profiles.SGLANG_HOST_OVERLAP is False
    assert profiles.with_sglang_host_overlap(sglang, "sglang", "0.5.6") is sglang


@pytest.mark.parametrize(
    "engine, version, off, cost_us, overlap",
    [
        ("sglang", "0.5.6.post2", None, 38.29, 1.0),  # overlap scheduler on by default from 0.4 (v0.4 blog)
        ("sglang", "0.4.0", None, 38.29, 1.0),
        ("SGLang", "v0.5.4.post2", "pp-size", 38.29, 0.0),  # pipeline parallelism turns it off: summed
        ("sglang", "0.5.3.post3", "speculative", 38.29, 0.0),  # EAGLE without spec v2: summed
        ("sglang", "0.3.0", None, 59.0, 0.0),  # before 0.4: kept (vLLM's borrowed 59 us, summed)
        ("sglang", "not logged", None, 59.0, 0.0),  # no release stated: kept
        ("vllm", "0.10.1.1", None, 59.0, 0.0),  # another engine: kept
    ],
)
def test_each_row_gets_its_loop(switch_on, engine, version, off, cost_us, overlap):
    base = profiles.ENGINES["sglang"]  # SGLang's profiles carry vLLM's 59 us summed (``profiles._sglang``)
    assert (base.sequence_overhead_s, base.host_overlap) == (profiles.VLLM_SEQUENCE_OVERHEAD_S, 0.0)
    p = profiles.with_sglang_host_overlap(base, engine, version, off)
    assert p.sequence_overhead_s * 1e6 == pytest.approx(cost_us, abs=0.01)
    assert p.host_overlap == overlap


@pytest.mark.parametrize(
    "engine, command, expected",
    [
        ("SGLang", "python -m sglang.launch_server --tp 8 --disable-overlap-schedule", "disable-overlap-schedule"),
        ("SGLang", "python -m sglang.launch_server --tp 2 --pp-size 4", "pp-size"),
        ("SGLang", "python -m sglang.launch_server --pp-size 1", None),  # one stage: overlap stays on
        ("SGLang", "--speculative-algorithm EAGLE3 --speculative-num-steps 3", "speculative"),
        ("SGLang", "SGLANG_ENABLE_SPEC_V2=1 python -m sglang.launch_server --speculative-algorithm EAGLE", None),
        ("SGLang", "run without --disable-overlap-schedule", None),  # a note saying it was not given
        ("SGLang", "python -m sglang.launch_server --tp 8", None),
        ("vLLM", "vllm serve m --disable-overlap-schedule", None),  # not SGLang's flag there
    ],
)
def test_what_in_the_command_turns_the_overlap_off(engine, command, expected):
    """SGLang's ``server_args.py``: ``--disable-overlap-schedule``; ``_handle_pipeline_parallelism`` ("Pipeline
    parallelism is incompatible with overlap schedule"); EAGLE-family speculative decoding ("Overlap scheduler is
    disabled because of using eagle speculative decoding") unless SGLANG_ENABLE_SPEC_V2."""
    assert published.sglang_overlap_off_of({"engine": engine, "batching": command, "notes": ""}) == expected


def test_an_overlapped_sglang_step_takes_the_larger_of_device_and_host(switch_on):
    """Summed: device + 59 us x b (main); overlapped: max(device, 38.3 us x b). Llama-3.1-8B on one H100 at 128 tokens
    of context: batch 8 is device-bound (the host hides whole), batch 1,024 host-bound (the step is the host time:
    39.2 ms of host against 27.4 ms of device)."""
    base = profiles.ENGINES["sglang"]
    over = profiles.with_sglang_host_overlap(base, "sglang", "0.5.6")
    c = profiles.SGLANG_OVERLAP_SEQUENCE_COST_S
    steps = {}
    for batch in (8, 1024):
        a = api.decode_step("H100 SXM 80GB", "llama-3.1-8b", 128, batch=batch, gpus=1, engine=base, check_fit=False)
        b = api.decode_step("H100 SXM 80GB", "llama-3.1-8b", 128, batch=batch, gpus=1, engine=over, check_fit=False)
        device = a.step_s - profiles.VLLM_SEQUENCE_OVERHEAD_S * batch
        assert b.step_s == pytest.approx(max(device, c * batch), rel=1e-9)
        steps[batch] = (device, c * batch)
    assert steps[8][0] > steps[8][1] and steps[1024][0] < steps[1024][1]  # both sides of the max were tested


def test_published_rows_read_their_commands(switch_on):
    """GPUSTACK-064 (SGLang v0.5.4.post2 with ``--pp-size 4``) keeps the cost summed; a gpustack v0.5.4.post2 row
    without the flag takes it hidden; a 0.3.0 row (sglang-v0.3.0-vs-vllm) keeps main's 59 us summed."""
    rows = predict.load_decode_rows()
    by_id = {r.record_id: r for r in rows}
    pp = by_id["GPUSTACK-064"]
    assert pp.sglang_overlap_off == "pp-size"
    plain = next(
        r
        for r in rows
        if r.engine.lower() == "sglang" and "0.5.4.post2" in r.engine_version and r.sglang_overlap_off is None
    )
    old = next(r for r in rows if r.engine.lower() == "sglang" and r.engine_version.startswith("0.3.0"))
    got = {k: predict._profile_for(r, None) for k, r in (("pp", pp), ("plain", plain), ("old", old))}
    assert (got["pp"].sequence_overhead_s, got["pp"].host_overlap) == (profiles.SGLANG_OVERLAP_SEQUENCE_COST_S, 0.0)
    assert (got["plain"].sequence_overhead_s, got["plain"].host_overlap) == (
        profiles.SGLANG_OVERLAP_SEQUENCE_COST_S,
        1.0,
    )
    assert (got["old"].sequence_overhead_s, got["old"].host_overlap) == (profiles.VLLM_SEQUENCE_OVERHEAD_S, 0.0)


@pytest.mark.parametrize(
    "reading, off, cost_us, overlap",
    [
        ("cost", None, 38.29, 0.0),  # SGLang's figure summed, the overlap not read
        ("overlap", None, 59.0, 1.0),  # the borrowed 59 us (``profiles._sglang``) hidden
        ("overlap", "speculative", 59.0, 0.0),  # ... summed where the command turns the overlap off
    ],
)
def test_ablations_take_one_part_each(monkeypatch, reading, off, cost_us, overlap):
    monkeypatch.setattr(profiles, "SGLANG_HOST_OVERLAP", reading)
    p = profiles.with_sglang_host_overlap(profiles.ENGINES["sglang"], "sglang", "0.5.6", off)
    assert p.sequence_overhead_s * 1e6 == pytest.approx(cost_us, abs=0.01)
    assert p.host_overlap == overlap
