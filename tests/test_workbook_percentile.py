"""Trial 28 F8: the what-if workbook takes a p99 SLO and a long tail, as ``planner plan --rate`` does.

``planner workbook`` (and ``build_whatif(inputs=...)``) take plan's ``--percentile``, ``--prompt-tokens-high``,
``--output-tokens-high`` and ``--length-percentile`` (with the mean ``--prompt-tokens`` / ``--output-tokens``), checked
by plan's own checks (``planner.serving.length_options``); the Inputs sheet holds them as labelled cells, the targets'
notes name the percentile, and the Load sheet draws the requests as plan draws them and sizes at that percentile, so
its replicas needed are plan's fleet for the same inputs.

The long-tail case: Llama-3.1-8B on 1 x H100 at 8,192 tokens, 60 requests/s of 1,000 / 200 tokens (p95 3,000 / 600),
p99 TTFT 1 s and TPOT 40 ms: plan sizes 3 replicas, where p95 at the mean lengths needs 2.
"""

from __future__ import annotations

import json

import openpyxl
import pytest
from cli_support import one_line, run, without_libreoffice
from workbook_support import recalculate_inputs, require_libreoffice

from planner.catalog import default_catalog
from planner.engines.profiles import engine_profile
from planner.report import plan, replica_of
from planner.serving.fleet import fewest_gpus
from planner.serving.length_options import sized_lengths
from planner.workbook.build import opening_inputs, select_entries
from planner.workbook.layout import BUDGET_FIELDS, INPUTS_SHEET, LOAD_SHEET, input_row
from planner.workbook.load_figures import load_figures, load_key
from planner.workbook.update import generate

#: The long-tail case, as Inputs (the workbook's keys).
TAIL = dict(
    gpu="H100 SXM 80GB", model="Llama-3.1-8B", context=8192, gpus=1, peak_requests_per_s=60, prompt_tokens=1000,
    output_tokens=200, prompt_tokens_high=3000, output_tokens_high=600, latency_percentile=99, length_percentile=95,
    ttft_target_ms=1000, tpot_target_ms=40, burstiness=1,
)  # fmt: skip
#: The same case as planner plan's options.
PLAN_ARGS = (
    "plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "8192", "--gpus", "1", "--rate", "60",
    "--prompt-tokens", "1000", "--output-tokens", "200", "--prompt-tokens-high", "3000", "--output-tokens-high", "600",
    "--percentile", "99", "--length-percentile", "95", "--ttft-target", "1", "--tpot-target", "40ms",
)  # fmt: skip


def plans_replicas(percentile: float, lengths_too: bool) -> int:
    """plan's fleet through the calls ``planner plan --rate`` makes (``planner.cli.plan``): its replica on the given
    group (``replica_of``), the requests it draws (``sized_lengths``), sized by ``fewest_gpus``."""
    cat = default_catalog()
    p = plan(TAIL["gpu"], TAIL["model"], TAIL["context"], gpus=1, catalog=cat)
    lengths = sized_lengths(1000, 200, 3000, 600, 95.0, percentile, p.model.max_context) if lengths_too else None
    choice = fewest_gpus(
        {1: replica_of(p, cat)}, 1000, 200, 60.0, percentile=percentile, ttft_target_s=1.0, tpot_target_s=0.04,
        burstiness=1.0, lengths=lengths,
    )  # fmt: skip
    return choice.sizing.replicas


NEEDED_P99 = "Replicas needed: p99 within targets (Levers' fleet)"


def _rows(ws) -> dict:
    return {ws[f"A{r}"].value: r for r in range(1, ws.max_row + 1) if ws[f"A{r}"].value}


@pytest.fixture(scope="module")
def written(tmp_path_factory):
    """The long-tail workbook, generated through the Python API (no LibreOffice: the Load sheet's figures are
    numbers planner writes, and the Inputs are the typed values)."""
    mp = pytest.MonkeyPatch()
    without_libreoffice(mp)
    try:
        (w,) = generate(tmp_path_factory.mktemp("p99"), None, ["H100"], ["llama3.1-8b"], inputs=TAIL)
    finally:
        mp.undo()
    return openpyxl.load_workbook(w.path)


class TestInputs:
    def test_the_percentile_and_high_lengths_are_labelled_input_cells(self, written):
        ws = written[INPUTS_SHEET]
        labels = {f.key: f.label for f in BUDGET_FIELDS}
        for key, value in (
            ("latency_percentile", 99),
            ("prompt_tokens_high", 3000),
            ("output_tokens_high", 600),
            ("length_percentile", 95),
        ):
            r = input_row(key)
            assert ws[f"A{r}"].value.startswith(labels[key]), key
            assert ws[f"B{r}"].value == value, key
            assert written.defined_names[f"in_{key}"].attr_text == f"{INPUTS_SHEET}!$B${r}"
        assert "Latency percentile" in labels["latency_percentile"]
        assert labels["prompt_tokens_high"] == "High prompt tokens"  # one line in column A, so the Inputs print at 6 pt

    def test_the_targets_notes_name_the_inputs_percentile(self, written):
        """A formula over the percentile cell: "The slowest p99 TPOT users accept" (p95 when blank)."""
        ws = written[INPUTS_SHEET]
        for key, words in (("tpot_target_ms", '"The slowest p"&'), ("ttft_target_ms", '"The slowest p"&')):
            note = ws[f"D{input_row(key)}"].value
            assert note.startswith("=" + words) and "in_latency_percentile" in note, note
            assert "planner export" not in note  # the s208 pointer to export for p99 is gone

    def test_blank_by_default(self):
        """With no new input the opening Inputs are today's: the four cells blank, the figures' key unchanged."""
        cat = default_catalog()
        opening = opening_inputs(cat, *select_entries(cat, None, None), "vllm", None)
        assert all(opening.get(k) is None for k in ("latency_percentile", "prompt_tokens_high"))
        eng = engine_profile(None)
        key = load_key(opening, cat, eng, None)
        assert key == load_key({**opening, "latency_percentile": None, "length_percentile": None}, cat, eng, None)
        assert key != load_key({**opening, "latency_percentile": 99}, cat, eng, None)


class TestLoadIsPlans:
    def test_replicas_needed_is_plans_fleet_for_a_p99_long_tail(self, written):
        """The Load sheet's baseline "Replicas needed" is plan's fleet: ``planner plan`` itself (--json) and the calls
        it makes give 3, where p95 at the mean lengths gives 2 (so the percentile and the tail are used)."""
        ws = written[LOAD_SHEET]
        rows = _rows(ws)
        needed = ws[f"C{rows[NEEDED_P99]}"].value
        result = run(*PLAN_ARGS, "--json")
        assert result.exit_code == 0, result.output
        plans = json.loads(result.stdout)["under_load"]["replicas"]
        assert needed == plans == plans_replicas(99.0, True) == 3
        assert plans_replicas(95.0, False) == 2

    def test_the_sheet_says_which_lengths_were_simulated(self, written):
        ws = written[LOAD_SHEET]
        rows = _rows(ws)
        assert "Drawn mean prompt / output" in rows
        p, o = (int(x.replace(",", "")) for x in ws[f"C{rows['Drawn p95 prompt / output']}"].value.split(" / "))
        assert 2_800 < p < 3_200 and 560 < o < 640  # the stated p95 highs, within sampling
        note = ws["A2"].value
        assert "Percentile: p99" in note and "truncated at the slot" in note and "planner plan --rate" in note
        assert "prompt_tokens_high)" not in note  # the s208 pointer to export is replaced
        titles = [ws[f"A{r}"].value or "" for r in range(1, ws.max_row + 1)]
        assert any(t.startswith("TTFT p99 (ms)") for t in titles)
        assert not any(t.startswith("TTFT p95 (ms)") for t in titles)
        # the Computed-from block: the four inputs as used, Matches "yes" against the Inputs now
        assert [ws[f"G{r}"].value for r in range(7, 11)] == [99, 3000, 600, 95]

    def test_the_default_figures_are_at_the_means_and_p95(self):
        """No new input: every request at the means, sized at p95, the baseline's fleet plan's at p95."""
        cat = default_catalog()
        inputs = opening_inputs(cat, *select_entries(cat, None, None), "vllm", {k: TAIL[k] for k in TAIL if k not in (
            "prompt_tokens_high", "output_tokens_high", "latency_percentile", "length_percentile")})  # fmt: skip
        f = load_figures(inputs, cat, engine_profile(None), None)
        base = next(v for v in f.levers if v.key == "base")
        assert f.percentile == 95 and base.lengths is None
        assert base.needed_replicas == plans_replicas(95.0, False) == 2


class TestRefusedAsPlan:
    @pytest.mark.parametrize(
        "options",
        [
            ("--percentile", "97"),
            ("--prompt-tokens", "1000", "--output-tokens", "200", "--prompt-tokens-high", "900"),
            ("--prompt-tokens", "1000", "--output-tokens", "200", "--prompt-tokens-high", "3000", "--percentile", "50"),
            ("--prompt-tokens", "1000", "--output-tokens", "200", "--length-percentile", "95"),
            tuple(
                "--prompt-tokens 300 --output-tokens 300 --prompt-tokens-high 6000 --output-tokens-high 1200".split()
            ),  # 6,000 / 300 = 20 = 1 / (1 - 0.95): no distribution fits (1,500 was refused before s211's mixture)
        ],  # fmt: skip
        ids=["percentile-97", "high-below-mean", "high-at-p50", "length-percentile-alone", "no-lognormal-fit"],
    )
    def test_plans_message_exit_2_no_file(self, options, tmp_path):
        out = tmp_path / "books"
        wb = run("workbook", "-o", str(out), "--gpus", "H100", "--models", "llama3.1-8b", *options)
        pl = run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096", "--rate", "40", *options)
        assert wb.exit_code == pl.exit_code == 2, (wb.output, pl.output)
        if "--percentile" in options and "97" in options:  # click's usage error: the same sentence
            assert "'97': the simulation reports p50, p90, p95 and p99; give 50, 90, 95 or 99" in wb.output
            assert "'97': the simulation reports p50, p90, p95 and p99; give 50, 90, 95 or 99" in pl.output
        else:
            assert one_line(wb, 2) == one_line(pl, 2)
        assert not out.exists() or not any(out.iterdir())


class TestRefreshReadsTheCells:
    @pytest.mark.parametrize(
        ("key", "value", "words"),
        [
            ("latency_percentile", 97, "the simulation reports p50, p90, p95 and p99"),
            ("prompt_tokens_high", 500, "High prompt tokens 500 is below the Inputs' Prompt"),
        ],
    )
    def test_a_refused_cell_refreshes_nothing(self, written, key, value, words, tmp_path, monkeypatch):
        """A copy whose Inputs cell holds what plan refuses: refresh names the cell in plan's words, exit 2, and
        leaves the file as it was."""
        without_libreoffice(monkeypatch)
        path = tmp_path / "copy.xlsx"
        written[INPUTS_SHEET][f"B{input_row(key)}"] = value
        written.save(path)
        written[INPUTS_SHEET][f"B{input_row(key)}"] = TAIL[key]  # the module's book as it was
        before = path.read_bytes()
        result = run("workbook", "refresh", str(path))
        assert words in one_line(result, 2)
        assert path.read_bytes() == before


class TestRecalculated:
    def test_libreoffice_names_the_percentile_and_refuses_97_as_refresh_does(self, tmp_path):
        """In LibreOffice: the targets' notes read "The slowest p99 ..." for 99 (p95 blank), and 97 or 0.95 typed in
        the percentile cell fills the Error line with the reader's own words (as refresh and export refuse it)."""
        require_libreoffice()
        from planner.workbook.build import build_whatif
        from planner.workbook.layout import why_error_row
        from planner.workbook.reader import _convert

        spec = build_whatif(None, ["H100"], ["llama3.1-8b"], load=False)
        books = recalculate_inputs(
            spec,
            {"p99": {"latency_percentile": 99}, "blank": {}, "p97": {"latency_percentile": 97},
             "frac": {"latency_percentile": 0.95}},
            tmp_path,
        )  # fmt: skip
        tpot, ttft = (f"D{input_row(k)}" for k in ("tpot_target_ms", "ttft_target_ms"))
        assert books["p99"][INPUTS_SHEET][tpot].value.startswith("The slowest p99 TPOT users accept")
        assert books["p99"][INPUTS_SHEET][ttft].value.startswith("The slowest p99 first token")
        assert books["blank"][INPUTS_SHEET][tpot].value.startswith("The slowest p95 TPOT users accept")
        field = next(f for f in BUDGET_FIELDS if f.key == "latency_percentile")
        for key, value in (("p97", 97), ("frac", 0.95)):
            with pytest.raises(Exception) as refused:
                _convert(field, value, f"{INPUTS_SHEET}!B{input_row('latency_percentile')}")
            assert str(refused.value) in books[key][INPUTS_SHEET][f"D{why_error_row()}"].value


def test_planner_export_of_the_workbook_takes_the_percentile_and_high_lengths():
    """The review of the file sizes the same traffic: latency_percentile, the high lengths at high_percentile (the
    length percentile, blank: the latency one); none of them without the Inputs (as before)."""
    from planner.export.workbook_scenario import workbook_scenario_data

    w = workbook_scenario_data(TAIL, "wb")["workload"]
    assert (w["latency_percentile"], w["high_percentile"]) == (99.0, 95.0)
    assert (w["prompt_tokens_high"], w["output_tokens_high"], w["prompt_tokens_mean"]) == (3000, 600, 1000)
    w = workbook_scenario_data({**TAIL, "length_percentile": None}, "wb")["workload"]
    assert w["high_percentile"] == 99.0
    plain = {k: v for k, v in TAIL.items() if k not in ("latency_percentile", "length_percentile",
                                                        "prompt_tokens_high", "output_tokens_high")}  # fmt: skip
    w = workbook_scenario_data(plain, "wb")["workload"]
    assert "latency_percentile" not in w and "high_percentile" not in w and w["prompt_tokens_high"] == 1000
