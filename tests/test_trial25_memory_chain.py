"""Trial 25 (a formula checker reading the FY2027 budget review): F2, F3, F6 and F10.

F2: the review did not show the memory chain behind "107 sequences in flight", so a checker had to run `planner plan`
to reproduce the batch. Each option now has its chain on Assumptions (xlsx and md), every figure from the memory
plan the sizing read, the reserve with its source, and the batch column says it is a cap. F3: "Context decode time
is taken at 1,277 tokens" now says what the figure feeds. F6: a median price links every quote. F10: ridge points
round half up for display (281.25 -> 281.3), the quarters' growth is said to be linear, and the functions example
holds the seeds' A100 ridge and LLaMA-65B KV per token.

Expected values are the trial's own hand checks (trial25-findings.md, "Memory": 0.9 x 85.02 GB - 35.28 - 4.29 =
36.95 GB -> 451,024 tokens in 16-token blocks -> 107 sequences of 4,200 tokens; A100 at TP8: reserve 2.75 GB, memory
holds 326, vLLM's max_num_seqs 256 on an A100), `planner plan`'s own lines, and catalogs/reference/seed_cases.toml.
"""

from __future__ import annotations

import io
import re
import tomllib
from pathlib import Path

import openpyxl
import pytest
from cli_support import run

from planner.catalog import default_catalog
from planner.export import render
from planner.export.glossary import GLOSSARY
from planner.export.tables import BATCH_LABEL
from planner.units import fixed_half_up

ROOT = Path(__file__).resolve().parents[1]
SEEDS = {c["id"]: c for c in tomllib.loads((ROOT / "catalogs/reference/seed_cases.toml").read_text())["case"]}


@pytest.fixture(scope="module")
def review(readme_means_review):
    """The README example sized at the mean lengths (conftest): the trial's review, 4 x H100 holding 107 sequences."""
    return readme_means_review


@pytest.fixture(scope="module")
def book(review) -> openpyxl.Workbook:
    return openpyxl.load_workbook(io.BytesIO(render(review, "xlsx")))


@pytest.fixture(scope="module")
def md(review) -> str:
    return render(review, "md").decode("utf-8")


def assumption_rows(book) -> dict[str, tuple]:
    """Assumptions: what -> (value, unit, source text, hyperlink)."""
    ws = book["Assumptions"]
    return {
        r[0].value: (r[1].value, r[2].value, r[3].value, r[3].hyperlink.target if r[3].hyperlink else None)
        for r in ws.iter_rows(min_row=2)
        if r[0].value
    }


def chain(book, option: str) -> dict[str, tuple]:
    """The option's memory rows, keyed by the text after its prefix ("memory the engine sees", "max batch: ...")."""
    out = {}
    for what, row in assumption_rows(book).items():
        for prefix in (f"{option}: per GPU (", f"{option}: "):
            if what.startswith(prefix):
                key = what[len(prefix) :]
                out[key.split("): ", 1)[1] if prefix.endswith("(") else key] = row
                break
    return out


def result(review, name: str):
    return next(r for r in review.results if r.option.name == name)


class TestF2MemoryChain:
    def test_the_h100_option_shows_the_trials_hand_chain_to_107(self, review, book):
        """0.9 x 85.02 GB - 35.28 - 4.29 = 36.95 GB of KV per GPU; 327,680 B a token (81,920 B per GPU at TP4);
        451,024 tokens in 16-token blocks; 107 sequences of 4,200 tokens; vLLM's max_num_seqs 1,024 on an H100."""
        r = result(review, "H100, rented")
        assert r.candidate.gpus_per_replica == 4
        c = chain(book, "H100, rented")
        assert c["memory the engine sees"][:2] == (pytest.approx(85.02, abs=0.005), "GB")
        assert c["x memory utilization"][:2] == (0.9, "share")
        assert c["- weights (whole model 141.11 GB)"][:2] == (pytest.approx(35.28, abs=0.005), "GB")
        assert c["- activation and runtime reserve (the one fitted figure)"][:2] == (
            pytest.approx(4.29, abs=5e-3),
            "GB",
        )
        assert c["= KV cache budget"][:2] == (pytest.approx(36.95, abs=0.005), "GB")
        assert c["KV cache per token, whole model (bf16)"][:2] == (327_680, "B")
        assert c["KV cache per token"][:2] == (81_920, "B")
        assert c["KV cache tokens per replica (whole 16-token blocks)"][:2] == (451_024, "tokens")
        assert c["KV block (a sequence takes whole blocks)"][:2] == (16, "tokens")
        assert c["sequences of 4,200 tokens memory holds per replica"][:2] == (107, "sequences")
        assert c["engine's max_num_seqs on H100 SXM 80GB"][:2] == (1024, "sequences")
        assert c["max batch: sequences in flight per replica, at most"][:2] == (107, "sequences")

    def test_the_a100_option_is_capped_by_max_num_seqs(self, book):
        """A100 at TP8: reserve 2.75 GB (vLLM's small-GPU defaults: 2,048 tokens, 256 sequences), memory holds 326,
        the engine runs 256 (the trial's "256/326")."""
        c = chain(book, "A100 80GB, rented")
        assert c["- activation and runtime reserve (the one fitted figure)"][0] == pytest.approx(2.75, abs=5e-3)
        assert c["sequences of 4,200 tokens memory holds per replica"][0] == 326
        assert c["engine's max_num_seqs on A100 SXM 80GB"][0] == 256
        assert c["max batch: sequences in flight per replica, at most"][0] == 256

    def test_every_meeting_options_max_batch_is_its_options_column(self, review, book):
        """The chain ends at the figure Options shows (the simulation's max_num_seqs, ``Candidate.slots``)."""
        ws = book["Options"]
        header = [c.value for c in ws[1]]
        shown = {
            row[header.index("Option")]: row[header.index(BATCH_LABEL)]
            for row in ws.iter_rows(min_row=2, values_only=True)
        }
        meeting = [r for r in review.results if r.meets]
        assert len(meeting) >= 4
        for r in meeting:
            assert (
                chain(book, r.option.name)["max batch: sequences in flight per replica, at most"][0]
                == shown[r.option.name]
                == r.candidate.slots
            ), r.option.name

    def test_the_chain_is_planner_plans_chain(self, review):
        """Each figure of the FP8 option (4 x H100, fp8 weights: the trial's 156) equals the line `planner plan`
        prints for the same deployment: the review reads the same core functions."""
        r = result(review, "H100, rented, FP8 weights")
        c = r.memory
        out = run("plan", "--gpu", "H100", "--model", "llama3.1-70b", "--context", "4200", "--gpus", "4", "-w", "fp8")
        assert out.exit_code == 0, out.output
        lines = {m[0].strip(): m[1].strip() for m in re.findall(r"^(.{2,34}?) {2,}(.+)$", out.stdout, re.M)}
        assert lines["memory the engine sees"].startswith(f"{c.visible_bytes_per_gpu / 1e9:,.2f} GB")
        assert lines["- weights"].startswith(f"{c.weight_bytes_per_gpu / 1e9:,.2f} GB")
        assert lines["- activations and runtime"].startswith(f"{c.reserve_bytes_per_gpu / 1e9:,.2f} GB (")
        assert lines["= KV cache budget"].startswith(f"{c.kv_budget_bytes_per_gpu / 1e9:,.2f} GB")
        assert lines["KV cache tokens (group)"] == f"{c.kv_cache_tokens:,}"
        assert lines["Max batch"].startswith(f"{c.max_batch} sequences of 4,200 tokens")
        assert (c.memory_max_batch, c.max_batch) == (156, 156)

    def test_the_reserve_names_its_fit_and_the_memory_seen_its_measurement(self, book):
        c = chain(book, "H100, rented")
        reserve = c["- activation and runtime reserve (the one fitted figure)"][2]
        assert reserve.startswith("fitted, engine profile 'vllm'")
        assert "0.077 B x 8,192 batched tokens" in reserve and "15.56 B x 1,024 sequences" in reserve
        assert "docs/accuracy.md, 'Memory: what vLLM will hold'" in reserve
        assert c["memory the engine sees"][3]  # the catalog's measured total, linked

    def test_the_markdown_holds_the_same_chain(self, md):
        assert (
            "| H100, rented: per GPU (4 per replica): = KV cache budget | 36.95 | GB | memory seen x utilization - "
            "weights - reserve" in md
        )
        assert "| H100, rented: KV cache tokens per replica (whole 16-token blocks) | 451,024 | tokens |" in md
        assert "| A100 80GB, rented: KV cache tokens per replica (whole 16-token blocks) | 1,372,176 | tokens |" in md

    def test_the_batch_column_is_labelled_a_cap(self, book):
        """The trial: the shorter-context lever showed 166 in the column but "run up to 126 sequences at once"."""
        header = [c.value for c in book["Options"][1]]
        assert "Sequences in flight per replica, at most (max batch)" in header
        assert "not a count of the sequences that run" in dict(GLOSSARY)[BATCH_LABEL]


class TestF3ScreeningContext:
    def test_summary_and_assumptions_say_what_the_context_in_flight_feeds(self, book):
        """The README example's 1,225 tokens in flight (docs/export.md "Two contexts": its outputs truncated at the
        4,200-token slot since s208; 1,277 untruncated)."""
        summary = {
            c.value: book["Summary"].cell(row=c.row, column=c.column + 1).value
            for col in book["Summary"].iter_cols()
            for c in col
            if isinstance(c.value, str)
        }
        assert summary["Context memory holds / group screening's TPOT is taken at"] == (
            "4,200 / 1,225 tokens (the simulated TPOT at peak: each request at its own context)"
        )
        rows = assumption_rows(book)
        what = next(w for w in rows if w.startswith("Context the group screening's TPOT curve is taken at"))
        assert rows[what][0] == 1225 and "runs each simulated request at its own context" in what
        assert not any("decode time is taken at" in w for w in rows)


class TestF6MedianPriceLinks:
    def test_a_median_row_carries_every_quotes_page(self, book, md):
        """H100 on-demand: the median of Lambda, RunPod (as quoted by Spheron), Hyperstack and CoreWeave; each
        quote's address from catalogs/gpus.toml, in the source cell (xlsx) and as links (md)."""
        from planner.export.assumptions import first_url

        quotes = [p for p in default_catalog().gpu("H100").prices if p.kind == "on-demand"]
        assert len(quotes) == 4
        rows = assumption_rows(book)
        what = next(w for w in rows if w.startswith("H100, rented: on-demand price per GPU-hour (median of 4"))
        value, _, text, link = rows[what]
        assert value == pytest.approx(3.595)
        assert link == first_url(quotes[0].source)
        md_row = next(line for line in md.splitlines() if line.startswith("| H100, rented: on-demand price"))
        for q in quotes:
            url = first_url(q.source)
            assert url and url in text, q.provider
            assert f"](<{url}>)" in md_row, q.provider


class TestF10Roundings:
    @pytest.mark.parametrize(
        ("x", "shown"),
        [(281.25, "281.3"), (295.2726, "295.3"), (153.016, "153.0"), (0.15, "0.2"), (1234.55, "1,234.6")],
    )
    def test_half_up_for_display(self, x, shown):
        """281.25 = 2.25e15 / 8e12 (B200's ridge) reads 281.3 as a hand check rounds it; Python's "{:.1f}" gives
        281.2 (half-even on an exact tie)."""
        assert fixed_half_up(x) == shown

    def test_plan_prints_b200s_ridge_half_up(self):
        out = run("plan", "--gpu", "B200", "--model", "llama3.1-70b", "--context", "4200")
        assert out.exit_code == 0, out.output
        assert "Ridge point                        281.3 FLOP/B" in out.stdout

    def test_each_quarters_fleet_says_the_growth_is_linear(self, book):
        value = assumption_rows(book)["Each quarter's fleet"][0]
        assert "growing linearly" in value and "not compounding" in value

    def test_the_functions_example_holds_the_seeds_a100_ridge_and_llama65b_kv(self):
        """seed_cases.toml: ridge-a100-80gb-sxm 153.0 FLOP/B, kv-per-token-llama1-65b-fp16 2,621,440 B."""
        from planner.cli.addin_example import example_cells

        rows = {r[2]: r[4] for r in example_cells()["Functions"]["rows"][1:]}
        assert round(rows['=RIDGE("A100")'], 1) == SEEDS["ridge-a100-80gb-sxm"]["expected"]
        assert rows['=KV_BYTES("llama-65b",1,"fp16")'] == SEEDS["kv-per-token-llama1-65b-fp16"]["expected"]
