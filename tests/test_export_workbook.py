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

# The inputs typed into the workbook, and the scenario the docs say they stand for:
# context 4,096 -> p95 output 4,096 // 4 = 1,024, p95 prompt 3,072, means half of those (1,536 and 512);
# traffic and targets are the stated workbook defaults (10 / 4 requests/s, TTFT 2 s, TPOT 100 ms).
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
peak_requests_per_s = 10
average_requests_per_s = 4
prompt_tokens_mean = 1536
prompt_tokens_high = 3072
output_tokens_mean = 512
output_tokens_high = 1024
ttft_target_s = 2
tpot_target_s = 0.1
[[option]]
gpu = "H200 SXM 141GB"
model = "Llama-3.1-8B"
kv_precision = "fp8"
gpus_per_replica = 2
pricing = "cloud"
cloud_usd_per_gpu_hour = 3.5
engine = "vllm"
"""


def invoke(*args: str):
    return CliRunner().invoke(main, list(args))


@pytest.fixture
def edited_workbook(tmp_path, whatif_cli_workbook) -> Path:
    """A copy of ``planner workbook``'s file (built once, conftest.py) with EDITS typed into its input cells."""
    (tmp_path / "wb").mkdir()
    path = tmp_path / "wb" / "capacity-what-if.xlsx"
    shutil.copyfile(whatif_cli_workbook[0], path)
    wb = openpyxl.load_workbook(path)
    for name, value in EDITS.items():
        sheet, coord = next(iter(wb.defined_names[name].destinations))
        wb[sheet][coord.replace("$", "")] = value
    wb.save(path)
    return path


class TestWorkbookInput:
    def test_round_trip_gives_the_same_review_as_the_equivalent_toml(self, tmp_path, edited_workbook):
        """The options table from the edited workbook equals the one from the TOML the mapping describes."""
        toml = tmp_path / "same.toml"
        toml.write_text(EQUIVALENT_TOML)
        a, b = tmp_path / "from-workbook.csv", tmp_path / "from-toml.csv"
        ra = invoke("export", str(edited_workbook), "-o", str(a), "--date", DATE)
        rb = invoke("export", str(toml), "-o", str(b), "--date", DATE)
        assert ra.exit_code == 0 and rb.exit_code == 0, ra.output + rb.output
        assert a.read_text() == b.read_text()
        assert "H200 SXM 141GB, Llama-3.1-8B, KV fp8, cloud" in a.read_text()
        assert ",2," in a.read_text().splitlines()[1]  # 2 GPUs per replica, as typed

    def test_the_assumptions_say_the_workload_is_a_workbook_default(self, tmp_path, edited_workbook):
        """A reader of the review sees that traffic and targets were not in the workbook."""
        out = tmp_path / "r.md"
        assert invoke("export", str(edited_workbook), "-o", str(out), "--date", DATE).exit_code == 0
        assert "| Peak traffic today | 10 | requests/s | workbook default" in out.read_text()

    def test_a_spreadsheet_planner_did_not_make_is_refused(self, tmp_path):
        """Any other .xlsx: one line naming the file and what to do, no traceback, no output file."""
        p = tmp_path / "budget.xlsx"
        openpyxl.Workbook().save(p)
        result = invoke("export", str(p), "-o", str(tmp_path / "r.md"))
        assert result.exit_code in (1, 2) and "Traceback" not in result.output
        assert result.output.startswith(f"planner: error: {p}") and "planner workbook" in result.output
        assert len(result.output.strip().splitlines()) == 1
        assert not (tmp_path / "r.md").exists()
