"""s174: five surface defects where one surface said or did otherwise than another; each rule has one owner now.

1. A context past a model's trained maximum: ``plan`` computes and flags it, the Excel functions computed it silently.
2. Fractional mean prompt lengths: ``plan --prompt-tokens 207.5`` took them, =TTFT_P95(...) refused them.
3. A rent of 0 per GPU-hour: the what-if workbook's reader took it, ``planner export`` refused it in other words.
4. A catalog folder without *.toml files: only =PLANNER_RELOAD refused it; the loader took it from $PLANNER_CATALOG.
5. A long value in a message: the workbook reader and ``planner.errors.shown_name`` cut it each their own way.
"""

from __future__ import annotations

from pathlib import Path

import openpyxl
import pytest
from cli_support import SCENARIO, one_line, run

from planner.catalog import load_catalog
from planner.errors import SHOWN_NAME_CHARS, EmptyCatalogFolderError, shown_name
from planner.excel import functions as xf
from planner.units import MAX_RENT_USD_PER_GPU_HOUR
from planner.workbook.reader import WorkbookError, read_inputs

ROOT = Path(__file__).resolve().parents[1]
WORKBOOK = ROOT / "workbooks" / "capacity-what-if.xlsx"


def _edited_workbook(tmp_path: Path, name: str, value: object) -> Path:
    """The shipped what-if workbook with the input cell of defined name ``name`` holding ``value``."""
    wb = openpyxl.load_workbook(WORKBOOK)
    sheet, ref = next(iter(wb.defined_names[name].destinations))
    wb[sheet][ref.replace("$", "")].value = value
    path = tmp_path / "edited.xlsx"
    wb.save(path)
    return path


class TestShownValue:
    def test_a_long_text_in_an_input_cell_is_quoted_as_shown_name_quotes_it(self, tmp_path):
        """A 400-character text in the context cell: the reader cut its repr at 57 characters and left the quote
        open ("'xxx... (400 characters)"); now it is ``shown_name``'s "'xxx...' (400 characters)", as an unknown
        name is quoted everywhere else."""
        text = "x" * 400
        with pytest.raises(WorkbookError) as err:
            read_inputs(_edited_workbook(tmp_path, "in_context", text))
        quoted = "'" + "x" * SHOWN_NAME_CHARS + "...' (400 characters)"
        assert str(err.value).endswith(f"got {quoted}"), str(err.value)

    def test_a_number_is_shown_unquoted_and_long_ones_are_cut_the_same_way(self):
        """A number is shown as Python writes it (no quotes: it was not text); a 400-digit one is cut at
        ``SHOWN_NAME_CHARS`` with its length, as text is."""
        assert shown_name(1e300) == "1e+300"
        assert shown_name("H10") == "'H10'"
        assert shown_name(10**399) == "1" + "0" * (SHOWN_NAME_CHARS - 1) + "... (400 characters)"


class TestCatalogFolderWithoutFiles:
    EXPECTED = "no *.toml catalog files in this folder; give the folder that holds your *.toml catalog files"

    def test_the_loader_refuses_it_with_a_named_error(self, tmp_path):
        """load_catalog read a folder with no *.toml file as an empty catalog; only =PLANNER_RELOAD checked."""
        with pytest.raises(EmptyCatalogFolderError) as err:
            load_catalog(tmp_path, use_env=False)
        assert str(err.value).startswith(f"{tmp_path}: {self.EXPECTED}") and err.value.folder == tmp_path

    def test_planner_catalog_naming_it_is_one_line_exit_2(self, tmp_path, monkeypatch):
        """$PLANNER_CATALOG naming a wrong (empty) folder planned from the shipped catalog without a word."""
        monkeypatch.setenv("PLANNER_CATALOG", str(tmp_path))
        said = one_line(run("plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096"), 2)
        assert said == f"planner: error: {tmp_path}: {self.EXPECTED} (with [[gpu]], [[model]] or [[precision]] tables)"

    def test_reload_says_what_the_loader_says(self, tmp_path):
        """=PLANNER_RELOAD(folder) gives the loader's message, not a copy of the check."""
        assert xf.PLANNER_RELOAD(str(tmp_path)).startswith(f"catalog not reloaded: {tmp_path}: {self.EXPECTED}")


class TestOneBoundForPricesAndCounts:
    """The what-if workbook's reader, a scenario, ``plan --price`` and the public functions state a rent's and a GPU
    count's bound in the same words (``planner.units.rent_usd_per_gpu_hour`` and ``whole_count``)."""

    RENT = f"must be above 0 and at most {MAX_RENT_USD_PER_GPU_HOUR:,.0f} US$ per GPU-hour; got 0"

    def test_a_rent_of_0_in_the_workbook_is_refused_as_export_refuses_it(self, tmp_path):
        """The reader took a price cell of 0 (a fleet costing nothing); `planner export` of that workbook then blamed
        "option #1.cloud_usd_per_gpu_hour: Input should be greater than 0", a field the user never typed."""
        said = one_line(
            run("export", str(_edited_workbook(tmp_path, "in_price", 0)), "-o", "-", "--format", "md", "-q"), 2
        )  # the exit code of the scenario's same mistake (test_a_scenario_says_the_same_words)
        assert said.endswith(f"(Price per GPU-hour) {self.RENT}"), said

    def test_a_scenario_says_the_same_words(self, tmp_path):
        """cloud_usd_per_gpu_hour = 0 in a scenario: the same clause as the workbook's price cell."""
        path = tmp_path / "s.toml"
        path.write_text(SCENARIO + 'pricing = "cloud"\ncloud_usd_per_gpu_hour = 0\n', encoding="utf-8")
        said = one_line(run("export", str(path), "-o", "-", "--format", "md", "-q"), 2)
        assert f"option #1.cloud_usd_per_gpu_hour: {self.RENT}" in said, said

    def test_plan_price_0_is_refused_too(self):
        """`plan --price 0` printed "$0.0000 per million output tokens": the same bound as the review's."""
        r = run("plan", "--gpu", "H100", "--model", "llama2-70b", "--context", "4096", "--price", "0")
        assert r.exit_code == 2 and "give a rent above 0 and at most 10,000 US$ per GPU-hour" in r.output, r.output
        assert xf.COST_PER_MTOK("H100", "llama2-70b", 4096, 1, 0) == "#NUM!"

    def test_a_gpu_count_out_of_range_is_worded_alike(self, tmp_path):
        """gpus_per_replica = 0 said "Input should be greater than or equal to 1" where the workbook's GPU cell said
        "must be a whole number of GPUs from 1 to 4,096": the same clause now (each with its own maximum: the review
        tries groups up to 64, the what-if workbook computes up to 4,096)."""
        path = tmp_path / "s.toml"
        path.write_text(SCENARIO + "gpus_per_replica = 0\n", encoding="utf-8")
        said = one_line(run("export", str(path), "-o", "-", "--format", "md", "-q"), 2)
        assert "option #1.gpus_per_replica: must be a whole number of GPUs from 1 to 64; got 0" in said, said
        with pytest.raises(WorkbookError) as err:
            read_inputs(_edited_workbook(tmp_path, "in_gpus", 0))
        assert str(err.value).endswith("must be a whole number of GPUs from 1 to 4,096; got 0"), str(err.value)

    def test_a_workbook_replica_above_the_reviews_largest_names_the_cell(self, tmp_path):
        """128 GPUs in the what-if workbook's GPU cell (the workbook computes up to 4,096) exported: the review's
        bound (``MAX_GPUS_PER_REPLICA``, 64) was blamed on "option #1.gpus_per_replica", a field the workbook's user
        never typed; now the cell and its label, the bound and why, exit 2 as the scenario's same mistake."""
        said = one_line(
            run("export", str(_edited_workbook(tmp_path, "in_gpus", 128)), "-o", "-", "--format", "md", "-q"), 2
        )
        assert said.endswith(
            "edited.xlsx: Inputs!B9 (GPU count (tensor parallel)) must be a whole number of GPUs from 1 to 64; "
            "got 128; a budget review sizes replicas of at most 64 GPUs"
        ), said
        assert "gpus_per_replica" not in said


class TestFractionalMeanLengthsUnderLoad:
    """=TTFT_P95(...) and its siblings take mean lengths as ``planner plan --rate --prompt-tokens`` does: a fraction is
    kept (``planner.units.parse_token_count(whole=False)``) and each request sends it rounded to whole tokens."""

    ARGS = ("H100", "llama3.1-8b", 1)

    def test_a_fractional_mean_prompt_gives_the_percentile_plan_prints(self):
        """207.5 (a dataset's mean) was #NUM! "must be a whole number of tokens" in a cell where `plan` took it."""
        import json

        r = run(
            "plan", "--gpu", "H100", "--model", "llama3.1-8b", "--context", "4096", "--rate", "1",
            "--prompt-tokens", "207.5", "--output-tokens", "128.5", "--percentile", "95", "--json",
        )  # fmt: skip
        assert r.exit_code == 0, r.output
        loaded = json.loads(r.stdout)["under_load"]
        assert loaded["replicas"] == 1  # 1 request/s is within one replica's capacity: the cell's question
        assert xf.TTFT_P95(*self.ARGS, 207.5, 128.5) == pytest.approx(loaded["ttft_s"]["p95"] * 1e3, rel=1e-9)
        assert xf.TPOT_P99(*self.ARGS, "207.5", 128.5) == pytest.approx(loaded["tpot_s"]["p99"] * 1e3, rel=1e-9)

    def test_a_mean_written_with_a_multiplier_is_read_as_plan_reads_it(self):
        """ "1.3k" (1,331.2 tokens) is a mean as `plan --prompt-tokens 1.3k` reads it, not a refused fraction."""
        assert xf.TTFT_P50(*self.ARGS, "1.3k", 128) == xf.TTFT_P50(*self.ARGS, 1331, 128)

    def test_below_one_token_is_refused_saying_what_is_accepted(self):
        """A mean under 1 token is #NUM!, with the range and that a fraction is kept."""
        assert xf.TTFT_P95(*self.ARGS, 0.5, 128) == "#NUM!"
        why = xf.PLANNER_WHY("TTFT_P95", *self.ARGS, 0.5, 128)
        assert why == (
            "prompt_tokens must be a number of tokens from 1 to 16,777,216 (a mean: a fraction such as 207.5 is kept); "
            "got 0.5"
        ), why


class TestContextPastTheTrainedMaximum:
    """Llama 2 70B was trained to 4,096 tokens (``max_position_embeddings`` 4096 in
    https://huggingface.co/meta-llama/Llama-2-70b-hf/blob/main/config.json, the source catalogs/models.toml cites).
    ``planner plan`` computes a longer context and flags it; the Excel functions give the same number and
    =PLANNER_WHY the same flag (``planner.api.trained_context_warning``, the one rule)."""

    FLAG = "context 8,192 exceeds Llama-2-70B's trained maximum of 4,096 tokens; memory and time are extrapolated"

    def test_plan_and_a_cell_give_the_same_number_and_the_same_flag(self):
        """MAX_BATCH at 8,192 tokens was 3 with PLANNER_WHY "ok": no word that the context is past the maximum."""
        import json

        r = run("plan", "--gpu", "H100", "--model", "llama2-70b", "--context", "8192", "-k", "fp16", "--json")
        assert r.exit_code == 0, r.output
        planned = json.loads(r.stdout)
        assert self.FLAG in planned["warnings"]
        assert xf.MAX_BATCH("H100", "llama2-70b", 8192, "fp16") == planned["max_batch"] == 3  # README's transcript
        said = xf.PLANNER_WHY("MAX_BATCH", "H100", "llama2-70b", 8192, "fp16")
        # group chosen; then the precisions used (trial 19 F6)
        assert said.startswith("ok: on 2 x H100") and f"; warning: {self.FLAG}; KV cache fp16 (given)" in said, said

    def test_within_the_maximum_a_cell_is_plain_ok_and_a_range_flags_each_cell(self):
        """A range of contexts: each cell's own reason; 4,096 (the maximum itself) is not flagged (on a given group
        of 2: a chosen one would be named, test_excel_functions.TestChosenGroup)."""
        why = xf.PLANNER_WHY("TPOT", "H100", "llama2-70b", [[4096], [8192], [0]], 1, None, 2)
        assert why[0] == ["ok"] and why[1] == [f"ok; warning: {self.FLAG}"]
        assert why[2][0].startswith("context must be a whole number of tokens from 1")

    def test_under_load_the_sequence_is_prompt_plus_output(self):
        """TTFT_P50's sequence is the mean prompt plus the mean output: 8,000 + 192 = 8,192 tokens (on a given group
        of 2, so the reason is the flag alone)."""
        said = xf.PLANNER_WHY("TTFT_P50", "H100", "llama2-70b", 0.01, 8000, 192, 2)
        # then the percentile over the arrival draws (``support.load_spread_notes``, tests/test_excel_load_spread.py)
        assert said.startswith(f"ok; warning: {self.FLAG}; sampling spread: p50 TTFT "), said

    def test_the_review_says_it_in_the_same_words(self, tmp_path):
        """`planner export` said "a 4,200-token sequence exceeds its trained maximum", its own copy of the rule."""
        path = tmp_path / "s.toml"
        path.write_text(SCENARIO.replace('model = "Llama-3.1-70B"', 'model = "Llama-2-70B"'), encoding="utf-8")
        r = run("export", str(path), "-o", "-", "--format", "md", "-q")
        assert r.exit_code == 0, r.output
        flag = "context 4,200 exceeds Llama-2-70B's trained maximum of 4,096 tokens; memory and time are extrapolated"
        assert f"- H100, Llama-2-70B, cloud: {flag}" in r.stdout
