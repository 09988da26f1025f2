"""Held-out rows whose source contradicts itself (catalogs/reference/source_conflicts.csv, issue 21, s122 / s128).

A flag may cite only the source's own figures, never the planner's error: every flagged row must exist and be
held out, its page must be the row's own source, each flagged quantity's stored value must be one of the cited
figures (the row's own block), one cited figure must be printed in the row's quote, and an ``own_stall`` flag must
meet the stall rule on its cited figures (peak output over mean above 10, or mean over median above 3 with the p99
past 20x the median: docs/accuracy.md, "The worst figures, one by one")."""

from __future__ import annotations

import math

import pytest

from planner.accuracy import source_conflicts as sc
from planner.accuracy.fit import FIT_SOURCE_GROUPS
from planner.accuracy.published import load_decode_rows, read_csv_rows, reference_dir
from planner.errors import InvalidInputError

CONFLICTS = sc.source_conflicts()
ROWS = {r.record_id: r for r in load_decode_rows()}
#: Each row's quote (the source's text the row is read from), by record_id.
QUOTES = {r["record_id"]: r["quote"] for r in read_csv_rows(reference_dir() / "perf_public.csv")}


def _stored(row, quantity: str) -> float:
    """The row's figure that bench/heldout.py compares for ``quantity``, in the CSV's unit (ms, tok/s)."""
    return {"TPOT": row.tpot_s * 1e3, "TTFT": row.ttft_s * 1e3}.get(quantity, row.throughput_tokens_per_s)


def _cites(conflict: sc.SourceConflict, value: float) -> bool:
    """Whether a cited figure is ``value`` (as printed, or printed in seconds where the row keeps ms)."""
    return any(math.isclose(f.value * k, value, rel_tol=1e-9) for f in conflict.figures for k in (1.0, 1e3))


def test_the_flags_are_s122s_class_b_rows_less_the_ones_s125_read_again_and_s146s_two():
    """s122's 22 (b) rows less GPUSTACK-065..072 (s125: eight A100 blocks copied onto the H100 page, a reading
    error fixed, not a page against itself), s146's two A100 TTFTs of the quantization study
    (GPUSTACK-Q001, Q004), and s181's five Vultr Nemotron-Super runs above 50 in flight (VUL-014..018: ~50 prompts
    at every concurrency, one workload, two results): 21 rows, 33 figures."""
    assert len(CONFLICTS) == 21
    assert sum(len(c.quantities) for c in CONFLICTS.values()) == 33
    assert sorted(r for r in CONFLICTS if r.startswith("VUL-01")) == [f"VUL-{i:03d}" for i in range(14, 19)]
    assert not {f"GPUSTACK-{i:03d}" for i in range(65, 73)} & set(CONFLICTS)
    kinds = {k: sorted(r for r, c in CONFLICTS.items() if c.kind == k) for k in sc.KINDS}
    assert kinds["own_stall"] == ["GPUSTACK-131", "GPUSTACK-249"]
    assert kinds["own_log"] == ["XWQ235-001"]
    assert len(kinds["own_sibling"]) == 18 and "VUL-001" in kinds["own_sibling"]
    assert {"GPUSTACK-Q001", "GPUSTACK-Q004"} <= set(kinds["own_sibling"])


@pytest.mark.parametrize("record_id, method", [("GPUSTACK-Q001", "BF16"), ("GPUSTACK-Q004", "AWQ")])
def test_the_quantization_studys_a100_ttft_is_below_its_own_h100_and_the_a100s_compute_floor(record_id, method):
    """The gpustack quantization study (vLLM v0.9.2, 1,000 ShareGPT prompts at once) prints a mean TTFT on its A100
    below the same method's on its H100 (BF16 3,412.85 against 5,172.78 ms; AWQ 3,950.64 against 8,794.29), though
    the H100 has 3.17x the dense bf16 FLOP/s (989.4 against 312 TFLOP/s, catalogs/gpus.toml), and below the A100's
    floor for the burst's prefill: 217,393 prompt tokens (s122's reading) x 2 x Qwen3-8B's linear weights
    (36 layers x (2 x 4,096^2 + 2 x 4,096 x 1,024 + 3 x 4,096 x 12,288) = 6.95 B) = 3.02 PFLOP, 9.7 s at the full
    peak, so a first-come-first-served mean of at least half of it (4.8 s)."""
    from planner.catalog import default_catalog

    cat = default_catalog()
    m = cat.model("Qwen/Qwen3-8B")
    kv = m.num_kv_heads * m.head_dim
    linear = m.num_layers * (2 * m.hidden_size**2 + 2 * m.hidden_size * kv + 3 * m.hidden_size * m.intermediate_size)
    assert math.isclose(linear, 6.95e9, rel_tol=0.01)
    a100 = cat.gpu("A100 SXM 80GB").peak_flop_per_s["bf16"]
    h100 = cat.gpu("H100 SXM 80GB").peak_flop_per_s["bf16"]
    floor_mean_s = 217_393 * 2 * linear / a100 / 2
    assert 4.7 < floor_mean_s < 4.9
    by = {f.label: f.value for f in CONFLICTS[record_id].figures}
    own, h100_run = by[f"Mean TTFT (ms), A100 80GB {method}"], by[f"Mean TTFT (ms), H100 80GB {method}"]
    assert own == ROWS[record_id].ttft_s * 1e3
    assert own < h100_run and h100 / a100 > 3
    assert own / 1e3 < floor_mean_s


@pytest.mark.parametrize("record_id", sorted(CONFLICTS))
def test_a_flag_cites_its_own_rows_source(record_id):
    c = CONFLICTS[record_id]
    assert record_id in ROWS, f"{record_id}: no such row"
    row = ROWS[record_id]
    assert row.source_group not in FIT_SOURCE_GROUPS, f"{record_id}: not a held-out row"
    assert c.kind in sc.KINDS
    assert c.page == row.source.split("#")[0], f"{record_id}: cites {c.page}, the row's source is {row.source}"
    for q in c.quantities:
        assert not math.isnan(_stored(row, q)), f"{record_id}: has no {q} to flag"
        assert _cites(c, _stored(row, q)), f"{record_id}: its own {q} {_stored(row, q)} is not among the figures"
    assert any(f.text in QUOTES[record_id] for f in c.figures), f"{record_id}: no cited figure is in the row's quote"
    assert all(f.where.strip() for f in c.figures)
    assert len({f.value for f in c.figures}) >= 2, f"{record_id}: a conflict takes two figures"
    text = f"{c.explanation} {' '.join(f.label for f in c.figures)}".lower()
    assert "planner" not in text and "predict" not in text, f"{record_id}: cites the model, not the source"


@pytest.mark.parametrize("record_id", sorted(r for r, c in CONFLICTS.items() if c.kind == "own_stall"))
def test_a_stall_flag_meets_the_stall_rule_on_its_own_block(record_id):
    """GPUSTACK-131 (a100.md l.129-130): peak 5,848.00 over mean 265.99 tok/s = 22x; GPUSTACK-249
    (h100-latency.md l.296-298): mean TTFT 269.33 over median 40.70 = 6.6x, p99 5,700.99 = 140x the median."""
    c, row = CONFLICTS[record_id], ROWS[record_id]
    first = {}
    for f in c.figures:  # the row's own block is cited first; a sibling block's figures come after it
        first.setdefault(f.label, f.value)
    peak, mean_rate = first.get("Peak output token throughput (tok/s)"), first.get("Output token throughput (tok/s)")
    rate_stall = bool(peak and mean_rate == row.throughput_tokens_per_s and peak / mean_rate > 10)
    latency_stall = False
    for name in ("TTFT", "TPOT"):
        mean, median, p99 = (first.get(f"{s} {name} (ms)") for s in ("Mean", "Median", "P99"))
        if mean and median and p99 and math.isclose(mean, _stored(row, name)):
            latency_stall |= mean / median > 3 and p99 / median > 20
    assert rate_stall or latency_stall


def test_a_tp_sibling_flag_shows_the_column_against_itself():
    """The TensorRT-LLM 0.13 overview's GH200 FP8 column: every flagged TP 2 cell is under a third of the page's
    H100 FP8 TP 2 and more than 5x under its own TP 4 cell (Llama-3.1-70B 500/2000: 851.46 against 4,347.69 and
    9,090.78, l.116-117)."""
    trt = {r: c for r, c in CONFLICTS.items() if r.startswith("TRT013-")}
    assert len(trt) == 10
    for r, c in trt.items():
        by = {f.label.split(",")[0]: f.value for f in c.figures}
        own = by["GH200 120GB FP8 TP 2"]
        assert own == ROWS[r].throughput_tokens_per_s
        assert own / by["H100 80GB HBM3 FP8 TP 2"] < 1 / 3 and by["GH200 120GB FP8 TP 4"] / own > 5, r


def test_flagged_names_the_quantity_the_heldout_table_compares():
    assert sc.flagged("GPUSTACK-131", "serving throughput") and sc.flagged("TRT013-160", "serving throughput")
    assert sc.flagged("VUL-001", "TTFT") and not sc.flagged("VUL-001", "TPOT")
    assert not sc.flagged("GPUSTACK-130", "TTFT")


def test_a_figure_that_does_not_parse_is_refused():
    with pytest.raises(InvalidInputError, match="label = number @ where"):
        sc.parse_figures("Mean TTFT (ms) 269.33 (l.296); Median TTFT (ms) = 40.70 @ l.297", "test")
    with pytest.raises(InvalidInputError, match="at least two"):
        sc.parse_figures("Mean TTFT (ms) = 269.33 @ l.296", "test")
    (one, two) = sc.parse_figures("a = 1,083.48 @ l.115; b = 851.46 @ l.116", "test")
    assert (one.value, one.text, one.where, two.label) == (1083.48, "1,083.48", "l.115", "b")


def test_a_kind_outside_the_four_is_refused(tmp_path, monkeypatch):
    (tmp_path / sc.CONFLICTS_FILE).write_text(
        "record_id,kind,quantities,page,figures,explanation,found_by\n"
        "VUL-001,own_error,TTFT,https://x,a = 1 @ l.1; b = 2 @ l.2,the planner is far,test\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(sc, "reference_dir", lambda: tmp_path)
    sc.source_conflicts.cache_clear()
    try:
        with pytest.raises(InvalidInputError, match="kind 'own_error' is not one of"):
            sc.source_conflicts()
    finally:
        sc.source_conflicts.cache_clear()
