"""`planner export` of a what-if workbook: its inputs become a one-option scenario (docs/export.md)."""

from __future__ import annotations

import shutil
from pathlib import Path

import openpyxl
import pytest
from click.testing import CliRunner
from workbook_support import WHATIF_CLI_GROUP

from planner.cli import main

#: One worker builds the shared what-if workbook (conftest.whatif_cli_workbook) once (pyproject: --dist loadgroup).
pytestmark = pytest.mark.xdist_group(WHATIF_CLI_GROUP)

DATE = "2026-06-01"

# The inputs typed into the workbook, and the scenario the docs say they stand for: the workbook's budget inputs as
# it opens (peak 40 requests/s, 400 output tokens, TPOT 50 ms, TTFT 1,500 ms: layout.BUDGET_DEFAULTS) ask the review
# its own question: every request 400 output and 4,096 - 400 = 3,696 prompt tokens, average 0.4 x 40 = 16.
EDITS = {
    "in_gpu": "H200 SXM 141GB",
    "in_model": "Llama-3.1-8B",
    "in_context": 4096,
    "in_kv_precision": "fp8",
    "in_gpus": 2,
    "in_price": 3.5,
}
EQUIVALENT_TOML = """
title = "Budget review of what-if workbook capacity-what-if.xlsx"
[workload]
peak_requests_per_s = 40
average_requests_per_s = 16
prompt_tokens_mean = 3696
prompt_tokens_high = 3696
output_tokens_mean = 400
output_tokens_high = 400
ttft_target_s = 1.5
tpot_target_s = 0.05
[[option]]
gpu = "H200 SXM 141GB"
model = "Llama-3.1-8B"
kv_precision = "fp8"
gpus_per_replica = 2
pricing = "cloud"
cloud_usd_per_gpu_hour = 3.5
engine = "vllm"
"""
#: With the budget inputs blank the workbook asks no question, and the stated defaults stand: context 4,096 -> p95
#: output 4,096 // 4 = 1,024, p95 prompt 3,072, means half of those; 10 / 4 requests/s, TTFT 2 s, TPOT 100 ms.
BLANK_BUDGET = {
    "in_peak_requests": None,
    "in_output_tokens": None,
    "in_tpot_target_ms": None,
    "in_ttft_target_ms": None,
}
DEFAULTS_TOML = (
    EQUIVALENT_TOML.replace("peak_requests_per_s = 40", "peak_requests_per_s = 10")
    .replace("average_requests_per_s = 16", "average_requests_per_s = 4")
    .replace("prompt_tokens_mean = 3696", "prompt_tokens_mean = 1536")
    .replace("prompt_tokens_high = 3696", "prompt_tokens_high = 3072")
    .replace("output_tokens_mean = 400", "output_tokens_mean = 512")
    .replace("output_tokens_high = 400", "output_tokens_high = 1024")
    .replace("ttft_target_s = 1.5", "ttft_target_s = 2")
    .replace("tpot_target_s = 0.05", "tpot_target_s = 0.1")
)


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


def typed_into(tmp_path: Path, source: Path, edits: dict) -> Path:
    """A copy of ``source`` in ``tmp_path/wb`` with ``edits`` (defined name -> value; None blanks it) typed in."""
    (tmp_path / "wb").mkdir(exist_ok=True)
    path = tmp_path / "wb" / "capacity-what-if.xlsx"
    shutil.copyfile(source, path)
    wb = openpyxl.load_workbook(path)
    for name, value in edits.items():
        sheet, coord = next(iter(wb.defined_names[name].destinations))
        wb[sheet][coord.replace("$", "")] = value
    wb.save(path)
    return path


@pytest.fixture
def edited_workbook(tmp_path, whatif_cli_workbook) -> Path:
    """A copy of ``planner workbook``'s file (built once, conftest.py) with EDITS typed into its input cells."""
    return typed_into(tmp_path, whatif_cli_workbook[0], EDITS)


def same_options_table(tmp_path, workbook, toml_text: str) -> str:
    """The options table exported from ``workbook``, asserted equal to the one from the TOML ``toml_text``."""
    toml = tmp_path / "same.toml"
    toml.write_text(toml_text)
    a, b = tmp_path / "from-workbook.csv", tmp_path / "from-toml.csv"
    ra = invoke("export", str(workbook), "-o", str(a), "--date", DATE)
    rb = invoke("export", str(toml), "-o", str(b), "--date", DATE)
    assert ra.exit_code == 0 and rb.exit_code == 0, ra.output + rb.output
    assert a.read_text() == b.read_text()
    return a.read_text()


class TestWorkbookInput:
    def test_round_trip_gives_the_same_review_as_the_equivalent_toml(self, tmp_path, edited_workbook):
        """The options table from the edited workbook equals the one from the TOML the mapping describes."""
        table = same_options_table(tmp_path, edited_workbook, EQUIVALENT_TOML)
        assert "H200 SXM 141GB, Llama-3.1-8B, KV fp8, cloud" in table
        assert ",2," in table.splitlines()[1]  # 2 GPUs per replica, as typed

    def test_the_review_asks_the_workbooks_own_question(self, tmp_path, edited_workbook):
        """The workbook's Levers size a fleet for its Inputs' peak traffic, output tokens and targets; the review read
        10 requests/s, TPOT 100 ms and TTFT 2 s instead (s155: the workbook as it opens said 104 GPUs at 40
        requests/s, its review 16 at 10), and its Assumptions say where each figure came from."""
        out = tmp_path / "r.md"
        assert invoke("export", str(edited_workbook), "-o", str(out), "--date", DATE).exit_code == 0
        text = out.read_text()
        assert "| Peak traffic today | 40 | requests/s | workbook: its Inputs' peak traffic" in text
        assert "| Prompt length, p95 | 3,696 | tokens | workbook:" in text
        assert "| TPOT target | 50 | ms | workbook:" in text

    def test_blank_budget_inputs_take_the_stated_defaults(self, tmp_path, whatif_cli_workbook):
        """A workbook whose budget inputs are blank gives the review the defaults docs/export.md states."""
        path = typed_into(tmp_path, whatif_cli_workbook[0], {**EDITS, **BLANK_BUDGET})
        same_options_table(tmp_path, path, DEFAULTS_TOML)

    def test_a_context_that_leaves_no_prompt_is_refused(self, tmp_path, whatif_cli_workbook):
        path = typed_into(tmp_path, whatif_cli_workbook[0], {**EDITS, "in_context": 400})
        result = invoke("export", str(path), "-o", str(tmp_path / "r.md"))
        assert result.exit_code == 2, result.output
        assert "a context of 400 tokens leaves no prompt beside the 400 output tokens on Inputs" in result.output
        assert not (tmp_path / "r.md").exists()

    def test_a_spreadsheet_planner_did_not_make_is_refused(self, tmp_path):
        """Any other .xlsx: one line naming the file and what to do, no traceback, no output file."""
        p = tmp_path / "budget.xlsx"
        openpyxl.Workbook().save(p)
        result = invoke("export", str(p), "-o", str(tmp_path / "r.md"))
        assert result.exit_code in (1, 2) and "Traceback" not in result.output
        assert result.output.startswith(f"planner: error: {p}") and "planner workbook" in result.output
        assert len(result.output.strip().splitlines()) == 1
        assert not (tmp_path / "r.md").exists()

    @pytest.mark.parametrize(
        ("name", "typed", "listed"),
        [("in_gpu", "h100 sxm-80gb", "H100 SXM 80GB"), ("in_model", "llama_3.1_8b", "Llama-3.1-8B")],
    )
    def test_a_name_the_workbooks_formulas_do_not_look_up_is_refused(
        self, tmp_path, whatif_cli_workbook, name, typed, listed
    ):
        """The sheet looks names up with MATCH over its GPUs and Models sheets and their alias tables (any case,
        but spaces, hyphens and underscores count: docs/workbooks.md); a spelling the catalog takes that neither lists
        shows #N/A in every cell (an alias, "H100", is read as its GPU: tests/test_workbook_aliases.py). `export` wrote a full review of such a file (trial s195:
        'H100' -> a $234,972 review of a workbook with no numbers); it now refuses as `workbook refresh` does."""
        path = typed_into(tmp_path, whatif_cli_workbook[0], {**EDITS, name: typed})
        result = invoke("export", str(path), "-o", str(tmp_path / "r.md"))
        assert result.exit_code == 2, result.output
        assert f"{typed!r} is not a name the workbook's formulas look up; type {listed!r}" in result.output
        assert len(result.output.strip().splitlines()) == 1 and not (tmp_path / "r.md").exists()

    def test_a_catalog_gpu_missing_from_the_workbooks_gpus_sheet_is_refused(self, tmp_path, whatif_cli_workbook):
        """A workbook made or refreshed with --gpus lists only those: another catalog GPU typed on Inputs is #N/A."""
        path = typed_into(tmp_path, whatif_cli_workbook[0], EDITS)
        wb = openpyxl.load_workbook(path)
        sheet = wb["GPUs"]
        row = next(c.row for c in sheet["A"] if c.value == EDITS["in_gpu"])
        sheet.delete_rows(row)
        wb.save(path)
        result = invoke("export", str(path), "-o", str(tmp_path / "r.md"))
        assert result.exit_code == 2, result.output
        assert "'H200 SXM 141GB' is not on the workbook's GPUs sheet, so its formulas show #N/A" in result.output
        assert not (tmp_path / "r.md").exists()
