"""Trial 19's findings on the Excel functions (F5, F6, F13) and the add-in command (F9), called as Excel calls them
(floats, None, text), as tests/test_excel_functions.py does."""

from __future__ import annotations

from planner.excel import functions as xf
from planner.excel.support import BATCH_ONE_NOTE


class TestF5TheBatchACostIsAtIsSaid:
    """F5: COST_PER_MTOK with batch left empty is batch 1, $59 where plan and the workbook say $1.20, and its reason
    said only "ok"."""

    def test_an_empty_batch_is_said_to_be_one_sequence(self):
        assert xf.COST_PER_MTOK("H100", "llama2-70b", 4096.0) == xf.COST_PER_MTOK("H100", "llama2-70b", 4096.0, 1.0)
        for name in ("COST_PER_MTOK", "THROUGHPUT", "TPOT"):
            assert BATCH_ONE_NOTE in xf.PLANNER_WHY(name, "H100", "llama2-70b", 4096.0), name

    def test_a_given_batch_says_nothing_of_it(self):
        assert "batch 1" not in xf.PLANNER_WHY("COST_PER_MTOK", "H100", "llama2-70b", 4096.0, 117.0, None, None, 4.0)


class TestF6ThePrecisionsAreNamed:
    """F6: "fp8" in MAX_BATCH's fourth argument is the KV cache's; PLANNER_WHY said only "ok"."""

    def test_max_batch_names_which_precision_fp8_was(self):
        assert xf.MAX_BATCH("H100", "llama3.1-70b", 8192.0, "fp8") == 2
        assert xf.MAX_BATCH("H100", "llama3.1-70b", 8192.0, None, None, "fp8") == 26
        kv = xf.PLANNER_WHY("MAX_BATCH", "H100", "llama3.1-70b", 8192.0, "fp8")
        assert kv.endswith("; KV cache fp8 (given), weights bf16 (as published)")
        weights = xf.PLANNER_WHY("MAX_BATCH", "H100", "llama3.1-70b", 8192.0, None, 4.0, "fp8")
        assert weights == "ok; KV cache bf16 (the activation dtype), weights fp8 (given)"

    def test_no_precision_given_no_note(self):
        assert "KV cache" not in xf.PLANNER_WHY("MAX_BATCH", "H100", "llama3.1-70b", 8192.0, None, 4.0)


class TestF9AddinInstallSaysWhatAppliesHere:
    """F9: on Linux `planner addin install` printed the Windows Excel steps and nothing about this machine."""

    def test_linux_is_told_the_functions_need_excel(self, tmp_path, monkeypatch):
        from click.testing import CliRunner

        from planner.cli import main
        from planner.cli.addin import platform_note

        monkeypatch.setattr("sys.platform", "linux")
        result = CliRunner().invoke(main, ["addin", "install", "--dry-run", "--config", str(tmp_path / "x.conf")])
        assert result.exit_code == 0, result.output
        assert "This machine runs Linux, where none of these steps apply" in result.output
        assert "LibreOffice runs no xlwings functions" in result.output and "planner workbook" in result.output
        assert platform_note("win32") is None and "macOS" in platform_note("darwin")


class TestF13AShortfallNoMemoryCouldCover:
    """F13: "short by 5,902.6 GB" on up to 64 x H100 (5,497.6 GB in all) read as a miscalculation: it counts KV heads
    replicated past the model's, which no GPU added relieves."""

    def test_past_the_groups_whole_memory_it_says_how_many_the_group_holds(self):
        from planner import api

        why = xf.PLANNER_WHY("TPOT", "h100", "Llama 2 70B", 8000.0, 500.0)
        held = int(api.max_batch("H100", "llama2-70b", 8000, gpus=64))
        assert why.endswith(
            f"do not fit on up to 64 x H100 SXM 80GB: the group holds at most {held} sequences of 8,000 tokens; "
            "more replicas serve more"
        )
        assert "short by" not in why

    def test_a_shortfall_within_the_groups_memory_is_still_said(self):
        why = xf.PLANNER_WHY("TPOT", "h100", "Llama 2 70B", 8192.0, 10.0, None, 2.0)
        assert "do not fit on 2 x H100 SXM 80GB: short by 17.3 GB; the smallest group that works is 4 x" in why
