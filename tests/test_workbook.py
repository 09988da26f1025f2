"""The what-if workbook's description, writer, reader (read_inputs), refresh and CLI, without a spreadsheet engine."""

from __future__ import annotations

import dataclasses
import math
import os
import re
import shutil
import zipfile
from pathlib import Path

import openpyxl
import pytest
from cli_support import without_libreoffice
from click.testing import CliRunner
from workbook_support import first_engine, workbook_differences

from planner.accuracy.calibration import Calibration
from planner.cli import main
from planner.engines.profiles import EngineProfile, engine_profile
from planner.errors import OutputExistsError, PlannerError, WriteError
from planner.workbook import read_inputs
from planner.workbook.assumptions import PUBLISHED_ROW_FIELDS, assumptions_sheet
from planner.workbook.build import build_whatif
from planner.workbook.layout import BUDGET_FIELDS, COMPARE_FIELD, INPUT_FIELDS, INPUTS_SHEET, WORKBOOK_FILE, input_row
from planner.workbook.reader import WorkbookError, read_all_inputs
from planner.workbook.update import refresh
from planner.workbook.writer import save_atomic, to_openpyxl, write_workbook

#: One worker computes this module's module-scoped fixtures (pyproject: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("test_workbook")

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def spec():
    return build_whatif()


@pytest.fixture(scope="module")
def written(spec, tmp_path_factory) -> Path:
    """The what-if workbook as ``write_workbook`` writes it, once for the module (~0.8 s CPU a write): read it only."""
    return write_workbook(spec, tmp_path_factory.mktemp("written") / WORKBOOK_FILE)


@pytest.fixture
def book(tmp_path, written) -> Path:
    """A test's own copy of ``written`` (the same bytes), to change as it likes."""
    path = tmp_path / WORKBOOK_FILE
    shutil.copyfile(written, path)
    return path


def _formulas(spec):
    for sheet in spec.sheets:
        for ref, cell in sheet.cells.items():
            if isinstance(cell.value, str) and cell.value.startswith("="):
                yield sheet.name, ref, cell.value


class TestDescription:
    def test_formulas_use_only_functions_excel_and_libreoffice_share(self, spec):
        """No LET/LAMBDA/XLOOKUP/IFS/FILTER (they need the _xlfn prefix) and no 1E9-style literals."""
        banned = re.compile(r"\b(LET|LAMBDA|XLOOKUP|XMATCH|IFS|SWITCH|FILTER|SORT|UNIQUE|SEQUENCE|_xlfn)\b")
        exponent = re.compile(r"(?<![A-Z$])\d+(\.\d+)?E[+-]?\d+", re.I)
        for sheet, ref, f in _formulas(spec):
            text = re.sub(r'"[^"]*"', '""', f)
            assert not banned.search(text), f"{sheet}!{ref}: {f}"
            assert not exponent.search(text), f"{sheet}!{ref}: {f}"

    def test_every_name_a_formula_uses_is_defined(self, spec):
        """Names like eng_block_size or gpu_memory in formulas are defined names of the workbook."""
        defined = {n.name.lower() for n in spec.names}
        token = re.compile(r"\b((?:eng|gpu|model|prec|in|kv|peak|rng)_[A-Za-z0-9_]+|NOT_FIT|BAD_INPUT)\b(?!\()")
        for sheet, ref, f in _formulas(spec):
            for name in token.findall(re.sub(r'"[^"]*"', '""', f)):
                assert name.lower() in defined, f"{sheet}!{ref} uses undefined {name}"

    def test_every_engine_parameter_is_a_named_cell_with_the_live_value(self, spec):
        """Each EngineProfile field of the default engine has a visible Assumptions cell reading the chosen engine's
        column, whose first (the default engine's) holds its current value; each other engine offered has its own
        column (trial 22 F13: the engine is an Input)."""
        from planner.workbook.assumptions import value_formula
        from planner.workbook.build import offered_engines

        eng = engine_profile(None)
        engines = offered_engines(eng)
        sheet = spec.sheet("Assumptions")
        assert [sheet.cells[f"{chr(ord('E') + j)}3"].value for j in range(len(engines))] == [
            "vllm", "sglang", "tensorrt-llm", "lmdeploy"
        ]  # fmt: skip
        for f in dataclasses.fields(EngineProfile):
            if f.name == "description":  # text shown beside, not a parameter
                continue
            if f.name in PUBLISHED_ROW_FIELDS:  # set only on published rows' profiles, on no sheet
                with pytest.raises(KeyError):
                    spec.name(f"eng_{f.name}")
                continue
            name = spec.name(f"eng_{f.name}")
            first = name.ref.split("!")[1].split(":")[0].replace("$", "")
            row = int(first.lstrip("ABCD"))
            formula = "=INDEX(engine_names,eng_index)" if f.name == "name" else value_formula(row, engines)
            assert sheet.cells[first].value == formula, f.name
            for j, e in enumerate(engines):
                value = getattr(e, f.name)
                want = (value[0] if value else None) if isinstance(value, tuple) else value  # () is one blank cell
                got = sheet.cells.get(f"{chr(ord('E') + j)}{row}")
                assert (got.value if got else None) == want, (f.name, e.name)

    def test_results_are_formulas_not_values(self, spec):
        """Every probed result cell is a spreadsheet formula, so changing an input recalculates it."""
        for p in spec.probes:
            value = spec.sheet(p.sheet).cells[p.ref].value
            assert isinstance(value, str) and value.startswith("="), f"{p.sheet}!{p.ref}"

    def test_levers_cover_the_four_levers_against_the_baseline(self, spec):
        headers = [c.value for ref, c in spec.sheet("Levers").cells.items() if ref.endswith("3") and len(ref) == 2]
        for lever in (
            "Baseline",
            "More GPUs per replica",
            "Prompt halved",
            "Compare model",
            "KV cache fp8",
            "Weights fp8",
        ):
            assert lever in headers

    def test_gqa_sibling_of_llama_65b_is_llama_2_70b(self):
        """The seeds' comparison: LLaMA 65B (MHA) against Llama 2 70B (GQA, closest in size)."""
        from planner.catalog import default_catalog
        from planner.workbook.catalog_sheets import gqa_sibling

        cat = default_catalog()
        assert gqa_sibling(cat.model("LLaMA-65B"), list(cat.models)) == "Llama-2-70B"
        assert gqa_sibling(cat.model("Llama-2-70B"), list(cat.models)) == "Llama-2-70B"

    def test_selected_gpus_and_models_limit_the_catalog_sheets_and_add_siblings(self):
        spec = build_whatif(gpus=["H100"], models=["llama2-13b"], load=False)
        models = [c.value for r, c in spec.sheet("Models").cells.items() if r.startswith("A") and r[1:].isdigit()]
        assert "Llama-2-13B" in models and len([m for m in models if m and "-" in str(m)]) == 2
        assert spec.sheet("GPUs").cells["A2"].value == "H100 SXM 80GB"


class TestAllReduceSheet:
    """The AllReduce sheet carries vLLM's measured all-reduce table as Calc's formulas read it."""

    def test_holds_the_shipped_table_as_microseconds(self, spec):
        """Every number of catalogs/reference/allreduce_aic.csv is on the sheet as the model reads it, at its GPU's
        block, mode and group: the CSV's where its row rises with size, pooled where it dips (isotonic regression);
        8 x H100 inside a CUDA graph, 1 MiB: 19.39 us (aiconfigurator 0.12.0, h100_sxm vLLM 0.24.0)."""
        import csv

        from planner.engines.allreduce_table import MODES, TABLE_FILE_NAME, read_allreduce_table
        from planner.workbook.allreduce_sheet import FIRST_ROW, FIRST_SIZE_COL

        table = read_allreduce_table()
        sheet = spec.sheet("AllReduce")
        per_block = len(MODES) * len(table.group_sizes)
        with (REPO / "catalogs" / "reference" / TABLE_FILE_NAME).open(newline="") as f:
            rows = list(csv.DictReader(f))
        all_rising = {}  # (gpu, mode, group) -> whether the CSV's row never dips with size (then kept as measured)
        for row in rows:
            us = [float(row[f"us_{int(x)}"]) for x in table.log2_bytes]
            key = (
                table.gpus.index(row["gpu"]),
                MODES.index(row["mode"]),
                table.group_sizes.index(int(row["num_gpus"])),
            )
            all_rising[key] = all(b >= a for a, b in zip(us, us[1:], strict=False))
        for row in rows:
            r = (
                FIRST_ROW
                + table.gpus.index(row["gpu"]) * per_block
                + MODES.index(row["mode"]) * len(table.group_sizes)
                + table.group_sizes.index(int(row["num_gpus"]))
            )
            assert sheet.cells[f"A{r}"].value == row["gpu"]
            for j, x in enumerate(table.log2_bytes):
                col = openpyxl.utils.get_column_letter(FIRST_SIZE_COL + j)
                csv_us = float(row[f"us_{int(x)}"])
                i = (
                    table.gpus.index(row["gpu"]),
                    MODES.index(row["mode"]),
                    table.group_sizes.index(int(row["num_gpus"])),
                )
                read_us = math.exp(table.log_seconds[(*i, j)]) * 1e6
                assert sheet.cells[f"{col}{r}"].value == pytest.approx(read_us, rel=1e-12), (row["gpu"], x)
                assert read_us == pytest.approx(csv_us, rel=1e-12) or not all_rising[i], (row["gpu"], x)
        h100 = FIRST_ROW + table.gpus.index("H100 SXM 80GB") * per_block + 2  # graph, 8 GPUs
        assert sheet.cells[f"{openpyxl.utils.get_column_letter(FIRST_SIZE_COL + 20 - 7)}{h100}"].value == pytest.approx(
            19.39, rel=0.02
        )
        assert spec.name("ar_us").ref.endswith(f"$Z${FIRST_ROW + len(table.gpus) * per_block - 1}")

    def test_graph_or_eager_at_the_models_captured_size(self):
        """Calc picks the CUDA-graph rows up to the model's largest captured batch (512, vLLM's default)."""
        from planner.model.operators import CUDA_GRAPH_MAX_BATCH
        from planner.workbook import formulas

        assert formulas.CUDA_GRAPH_MAX_BATCH == CUDA_GRAPH_MAX_BATCH == 512
        assert (
            f"IF({{d_batch}}<={CUDA_GRAPH_MAX_BATCH},0,ROWS(ar_groups))"
            in dict((k, t) for k, *_, t in formulas.decode_block("d_batch"))["ar_row"]
        )

    def test_gpus_point_at_their_block_or_the_nearest_and_the_fit_at_none(self):
        """H100 SXM reads its own block at scale 1, MI300X its own (published RCCL rows) at 1, MI355X MI300X's (the
        same mesh; allreduce_table.NEAREST_TABLE) at 448 / 537.6 (the fabrics' GB/s); with ``allreduce_table=False`` no GPU has a block (Calc's all-reduce is the
        latency + bandwidth form)."""
        from planner.engines.allreduce_table import read_allreduce_table

        table = read_allreduce_table()
        h100, mi300x = table.gpus.index("H100 SXM 80GB") + 1, table.gpus.index("MI300X") + 1
        for engine, blocks in (
            (engine_profile("vllm"), [h100, mi300x, mi300x]),
            (engine_profile("vllm").with_(allreduce_table=False), [0, 0, 0]),
        ):
            gpus = build_whatif(gpus=["H100", "MI300X", "MI355X"], models=["llama2-13b"], engine=engine,
                                load=False).sheet("GPUs")  # fmt: skip
            headers = {c.value: ref[0] for ref, c in gpus.cells.items() if ref[1:] == "1"}
            block = headers["All-reduce table block (AllReduce sheet; 0: the form)"]
            scale = headers["All-reduce message scale (that fabric / this one)"]
            assert [first_engine(gpus.cells[f"{block}{r}"].value) for r in (2, 3, 4)] == blocks
            if blocks[0]:
                assert gpus.cells[f"{scale}2"].value == 1.0
                assert gpus.cells[f"{scale}3"].value == 1.0
                assert gpus.cells[f"{scale}4"].value == pytest.approx(448 / 537.6)


class TestWrittenFile:
    def test_opens_on_inputs_with_frozen_headers(self, book):
        wb = openpyxl.load_workbook(book)
        assert wb.active.title == INPUTS_SHEET
        assert wb["Calc"].freeze_panes == "C4" and wb["GPUs"].freeze_panes == "B2"

    def test_results_range_ends_have_their_own_headings(self, book):
        """The range rows put low under Value and high under Unit: their heading row says Low and High."""
        ws = openpyxl.load_workbook(book)["Results"]
        row = next(r for r in ws.iter_rows() if r[0].value == "Range of the time predictions")
        assert (row[1].value, row[2].value) == ("Low", "High")
        below = ws.cell(row[0].row + 1, 1).value
        assert below.endswith(": low / high")

    def test_the_engine_factors_are_labelled_as_factors_not_shares_of_peak(self, written):
        """bandwidth_efficiency and the FLOP efficiencies multiply the rates the kernel curves were measured at
        (planner.engines.profiles: "not a fraction of peak"); the Assumptions sheet says so, and nothing calls them
        an achieved share of peak."""
        ws = openpyxl.load_workbook(written)["Assumptions"]
        rows = {r[0].value: (r[2].value, str(r[3].value)) for r in ws.iter_rows() if r[0].value}
        for field in ("bandwidth_efficiency", "decode_flop_efficiency", "prefill_flop_efficiency"):
            unit, text = rows[field]
            assert unit == "factor" and "1: as measured" in text and "kernel_curves is FALSE" in text
        assert not any("achieved share of peak" in text for _, text in rows.values())

    def test_catalog_sheets_are_excel_tables_with_sources(self, book):
        wb = openpyxl.load_workbook(book)
        for sheet, table in (("GPUs", "tbl_gpus"), ("Models", "tbl_models"), ("Precisions", "tbl_precisions")):
            assert table in wb[sheet].tables
            headers = [c.value for c in wb[sheet][1]]
            assert "Source" in headers

    def test_inputs_have_dropdowns_from_the_catalog(self, book):
        ws = openpyxl.load_workbook(book)[INPUTS_SHEET]
        lists = {str(dv.sqref): dv.formula1 for dv in ws.data_validations.dataValidation if dv.type == "list"}
        assert lists[f"B{input_row('gpu')}"] == "gpu_names"
        assert lists[f"B{input_row('model')}"] == "model_names"
        assert lists[f"B{input_row('kv_precision')}"] == "kv_precision_names"

    @pytest.mark.parametrize("engine", ["vllm", "ideal"])
    def test_kv_precision_dropdown_and_help_offer_only_formats_the_engine_caches(self, engine):
        """The KV-precision list holds the catalog's KV-cache formats the workbook's engine caches
        (``EngineProfile.accepts_kv``; vLLM: fp16, bf16, fp32, fp8, as its docs list them; the ideal engine: any): Calc's
        "Bytes per KV value" refuses the others with #NUM!, so int8 and int4 in the list (and "int4 quarters it" in the
        help) offered choices that break every result. The help names no format the list lacks."""
        from planner.catalog import default_catalog

        spec = build_whatif(engine=engine, load=False)
        (ref,) = [n.ref for n in spec.names if n.name == "kv_precision_names"]
        sheet, cells = ref.split("!")
        first, last = (int(c.rsplit("$", 1)[1]) for c in cells.split(":"))
        column = cells.split("$")[1]
        listed = [first_engine(spec.sheet(sheet).cells[f"{column}{r}"].value) for r in range(first, last + 1)]
        listed = [name for name in listed if name]  # the rows past the engine's last: blank
        eng, cat = engine_profile(engine), default_catalog()
        assert listed == [p.name for p in cat.precisions if p.kv_cache and eng.accepts_kv(p.name)]
        if engine == "vllm":
            assert sorted(listed) == sorted(eng.kv_precisions) and "int4" not in listed
        help_text = spec.sheet(INPUTS_SHEET).cells[f"D{input_row('kv_precision')}"].value
        named = {p.name for p in cat.precisions if re.search(rf"\b{re.escape(p.name)}\b", help_text)}
        assert named <= set(listed), help_text

    def test_refuses_to_overwrite_without_force_and_leaves_no_temporary_file(self, book, spec):
        before = book.read_bytes()
        with pytest.raises(OutputExistsError, match="--force"):
            write_workbook(spec, book)
        assert book.read_bytes() == before
        assert [p.name for p in book.parent.iterdir()] == [book.name]

    def test_a_failed_save_keeps_the_old_file_and_leaves_no_temporary_file(self, book, spec, monkeypatch):
        before = book.read_bytes()
        wb = to_openpyxl(spec)

        def broken(fh):  # save_atomic hands openpyxl the open temporary file (planner.io.files.write_file)
            fh.write(b"half")
            raise OSError(28, "No space left on device")

        monkeypatch.setattr(wb, "save", broken)
        with pytest.raises(WriteError, match="No space left"):
            save_atomic(wb, book, force=True)
        assert book.read_bytes() == before
        assert [p.name for p in book.parent.iterdir()] == [book.name]

    def test_a_new_file_gets_ordinary_permissions(self, written):
        """The temporary file's private mode (0600) is not kept: the umask decides, as for any new file."""

        umask = os.umask(0)
        os.umask(umask)
        assert written.stat().st_mode & 0o777 == 0o666 & ~umask


class TestReadInputs:
    def test_reads_the_shipped_inputs_with_blanks_as_none(self, book):
        """The opening scenario: Llama 2 70B at its trained 4,096 tokens on 4 x H100 (compared with LLaMA-65B)."""
        assert read_inputs(book) == {
            "gpu": "H100 SXM 80GB",
            "model": "Llama-2-70B",
            "context": 4096,
            "kv_precision": None,
            "weight_precision": None,
            "gpus": 4,
            "memory_utilization": None,
            "price_per_gpu_hour": None,
            "batch": 1,
            "engine": "vllm",
        }

    def test_reads_edited_inputs_as_their_types(self, book):
        wb = openpyxl.load_workbook(book)
        ws = wb[INPUTS_SHEET]
        for key, value in (
            ("gpus", 8.0),
            ("kv_precision", "fp8"),
            ("memory_utilization", 0.85),
            ("price_per_gpu_hour", 2),
            ("batch", None),
        ):
            ws[f"B{input_row(key)}"] = value
        wb.save(book)
        got = read_inputs(book)
        assert got["gpus"] == 8 and isinstance(got["gpus"], int)
        assert got["kv_precision"] == "fp8" and got["memory_utilization"] == 0.85
        assert got["price_per_gpu_hour"] == 2.0 and got["batch"] is None

    @pytest.mark.parametrize(
        "key,value,message",
        [
            ("context", "long", "must be a number"),
            ("context", 0, "whole number"),
            ("gpus", 2.5, "whole number"),
            ("memory_utilization", 1.5, "at most 1"),
            ("gpu", None, "is empty"),
            ("price_per_gpu_hour", -1, "above 0 and at most 10,000"),  # s174: planner.units.RENT_ACCEPTED
        ],
    )
    def test_a_bad_input_is_one_line_naming_the_cell(self, book, key, value, message):
        wb = openpyxl.load_workbook(book)
        wb[INPUTS_SHEET][f"B{input_row(key)}"] = value
        wb.save(book)
        with pytest.raises(WorkbookError, match=message) as err:
            read_inputs(book)
        assert f"Inputs!B{input_row(key)}" in str(err.value) and "\n" not in str(err.value)

    @pytest.mark.parametrize(
        "key,value,refused",
        [
            ("tpot_target_ms", 0.05, True),  # 50 ms typed in seconds
            ("tpot_target_ms", 0.999, True),
            ("tpot_target_ms", 1, False),  # the floor itself: 1,000 tokens/s a user, fast but a millisecond figure
            ("ttft_target_ms", 1.5, True),  # 1,500 ms typed in seconds
            ("ttft_target_ms", 9.99, True),
            ("ttft_target_ms", 10, False),
        ],
    )
    def test_a_target_below_its_floor_is_refused_as_seconds_typed_as_milliseconds(self, book, key, value, refused):
        """The targets' cells take milliseconds, planner's other surfaces seconds: a TPOT under 1 ms or a TTFT under
        10 ms (layout.SECONDS_SLIP) is the slip, refused with the number to write (trial 2, F8)."""
        wb = openpyxl.load_workbook(book)
        wb[INPUTS_SHEET][f"B{input_row(key)}"] = value
        wb.save(book)
        if not refused:
            assert read_all_inputs(book)[key] == value
            return
        with pytest.raises(WorkbookError) as err:
            read_all_inputs(book)
        assert str(err.value).endswith(
            f"Inputs!B{input_row(key)} ({next(f.label for f in BUDGET_FIELDS if f.key == key)}) {value:g} ms looks "
            f"like seconds typed as milliseconds; write {value * 1000:g} for {value:g} s (this cell takes milliseconds)"
        )

    def test_refuses_a_workbook_it_did_not_make(self, tmp_path):
        path = tmp_path / "other.xlsx"
        openpyxl.Workbook().save(path)
        with pytest.raises(WorkbookError, match="not a what-if workbook made by `planner workbook`"):
            read_inputs(path)

    @pytest.mark.parametrize(
        "name,content,message",
        [
            ("book.xlsm", b"PK", "not accepted"),
            ("book.csv", b"a,b", "not an .xlsx"),
            ("book.xlsx", b"hello", "not a zip"),
        ],
    )
    def test_refuses_files_that_are_not_plain_xlsx(self, tmp_path, name, content, message):
        path = tmp_path / name
        path.write_bytes(content)
        with pytest.raises(WorkbookError, match=message):
            read_inputs(path)

    def test_refuses_an_xlsx_with_macros(self, book):
        with zipfile.ZipFile(book, "a") as z:
            z.writestr("xl/vbaProject.bin", b"\x00")
        with pytest.raises(WorkbookError, match="macros"):
            read_inputs(book)

    def test_refuses_oversized_files(self, book, monkeypatch):
        monkeypatch.setattr("planner.workbook.reader.MAX_FILE_BYTES", 1000)
        with pytest.raises(WorkbookError, match="larger than"):
            read_inputs(book)

    def test_errors_are_planner_errors(self):
        assert issubclass(WorkbookError, PlannerError)

    def test_contract_keys(self, book):
        assert set(read_inputs(book)) == {f.key for f in INPUT_FIELDS} | {"engine"}


class TestRefreshWithoutRecalculation:
    def test_refuses_a_file_it_did_not_make(self, tmp_path):
        path = tmp_path / "other.xlsx"
        openpyxl.Workbook().save(path)
        with pytest.raises(WorkbookError, match="not a what-if workbook"):
            refresh(path)

    def test_keeps_an_edited_assumption(self, book, monkeypatch):
        """An edited Assumptions cell is still there after refresh. Without soffice on PATH, as the class says: the
        stored values fill formula cells only (test_stored_values refreshes with them), and skipping LibreOffice's
        recalculation of the whole book saves ~5 s CPU."""
        without_libreoffice(monkeypatch)
        wb = openpyxl.load_workbook(book)
        ref = wb.defined_names["eng_bandwidth_efficiency"].attr_text.split("!")[1].replace("$", "")
        wb["Assumptions"][ref] = 0.5
        wb.save(book)
        refresh(book)
        assert openpyxl.load_workbook(book)["Assumptions"][ref].value == 0.5


class TestPrintedPages:
    def test_every_sheet_prints_titled_and_numbered(self, written):
        """Every sheet's printed pages carry its name, the planner that wrote it, the date printed and "page n of N"
        (``titled_pages``, as the budget review's: trial 19 F8); the Inputs print on one page."""
        from planner import __version__

        wb = openpyxl.load_workbook(written)
        for ws in wb.worksheets:
            assert ws.oddHeader.left.text == f"&B{ws.title}&B", ws.title
            assert ws.oddFooter.left.text == f"planner {__version__}, what-if workbook, printed &D, file &F"
            assert ws.oddFooter.right.text == "page &P of &N"
        assert wb[INPUTS_SHEET].page_setup.fitToHeight == 1


class TestCommand:
    def test_writes_the_workbook_and_refuses_to_overwrite_without_force(self, tmp_path, monkeypatch):
        """One GPU and one model (a small workbook: LibreOffice stores its values in a few seconds). The --force
        run has no soffice on PATH: overwriting is the same write either way, and skipping the stored values
        saves ~3.5 s CPU (5.2 -> 1.7 s for that run, LibreOffice 7.4)."""
        runner = CliRunner()
        args = ["workbook", "-o", str(tmp_path), "--gpus", "H100", "--models", "llama2-70b"]
        first = runner.invoke(main, args)
        assert first.exit_code == 0 and "capacity-what-if.xlsx" in first.output
        written = (tmp_path / WORKBOOK_FILE).stat().st_mtime_ns
        again = runner.invoke(main, args)
        assert again.exit_code == 1 and "exists; pass --force" in again.output
        assert (tmp_path / WORKBOOK_FILE).stat().st_mtime_ns == written
        without_libreoffice(monkeypatch)
        forced = runner.invoke(main, [*args, "--force"])
        assert forced.exit_code == 0 and "capacity-what-if.xlsx" in forced.output, forced.output
        assert (tmp_path / WORKBOOK_FILE).stat().st_mtime_ns != written  # overwritten

    def test_an_unknown_gpu_is_one_line_with_exit_2(self, tmp_path):
        result = CliRunner().invoke(main, ["workbook", "-o", str(tmp_path), "--gpus", "H100,H10O"])
        assert result.exit_code == 2 and "unknown GPU 'H10O'" in result.output and "Traceback" not in result.output
        assert not list(tmp_path.iterdir())

    def test_refresh_refuses_a_foreign_file_with_exit_2(self, tmp_path):
        """A file planner did not make is bad input, as a file that is not a scenario is for export (docs/export.md,
        "Errors": exit 2); a refusal to overwrite what the user has in a workbook is 1 (``RefreshRefusedError``)."""
        path = tmp_path / "other.xlsx"
        openpyxl.Workbook().save(path)
        result = CliRunner().invoke(main, ["workbook", "refresh", str(path)])
        assert result.exit_code == 2 and "not a what-if workbook" in result.output

    @pytest.mark.parametrize("command", [["workbook", "refresh"], ["export", "-o"]])
    def test_an_ods_is_refused_with_how_to_save_it_as_xlsx(self, tmp_path, command):
        """Trial 26 F19: Calc's Save proposes .ods ("Use ODF Format!"), so an .ods is the first thing a LibreOffice
        user hands over; both commands that read the workbook say how to save it as .xlsx in Calc, exit 2."""
        path = tmp_path / "edited.ods"
        path.write_bytes(b"PK\x03\x04")  # the refusal reads the name only
        out = tmp_path / "out.md"
        args = [*command, str(path)] if command[0] == "workbook" else ["export", str(path), "-o", str(out)]
        result = CliRunner().invoke(main, args)
        assert result.exit_code == 2 and "Traceback" not in result.output
        assert "Excel 2007-365 (.xlsx)" in result.output and "File > Save As" in result.output
        assert not out.exists()

    def test_a_csv_gets_no_office_hint(self, tmp_path):
        """The Save-As hint is for office files only: a .csv is not a workbook LibreOffice saved."""
        path = tmp_path / "book.csv"
        path.write_bytes(b"a,b")
        with pytest.raises(WorkbookError, match="not an .xlsx") as e:
            read_inputs(path)
        assert "Save As" not in str(e.value)

    @pytest.mark.parametrize(
        "key,typed,name",
        [
            ("gpu", "h100 sxm-80gb", "H100 SXM 80GB"),  # a spelling the catalog takes, not an alias it lists
            ("gpu", "H100_SXM_80G", "H100 SXM 80GB"),
            ("gpu", " H100 SXM 80GB", "H100 SXM 80GB"),  # MATCH keeps the space
            ("gpu", 4090, "RTX 4090"),  # a number: MATCH finds no text
            ("model", "llama_2_70b", "Llama-2-70B"),
            ("compare_model", "llama_2_13b", "Llama-2-13B"),
            (
                "kv_precision",
                " fp8",
                "fp8",
            ),  # MATCH keeps the space (an alias, float8, is looked up: Calc's PRECISION_OF)
        ],
    )
    def test_refresh_refuses_a_name_the_formulas_do_not_look_up(self, book, tmp_path, key, typed, name):
        """The sheet's formulas find a GPU, model or precision by MATCH over the names and alias tables on its
        catalog sheets (any case, but spaces, hyphens and underscores count: docs/workbooks.md, "Defaults and
        errors"), while planner's catalog takes other spellings too (an alias, "H100", passes:
        tests/test_workbook_aliases.py). Refreshed,
        such a copy's Load sheet was simulated for the entry the alias names and read "current" while every formula
        showed #N/A: refresh refuses in one line naming the cell and the name to type (exit 2, bad input, as an input
        of the wrong kind), and writes nothing."""
        wb = openpyxl.load_workbook(book)
        wb[INPUTS_SHEET][f"B{input_row(key)}"] = typed
        wb.save(book)
        before = book.read_bytes()
        out = tmp_path / "refreshed.xlsx"
        result = CliRunner().invoke(main, ["workbook", "refresh", str(book), "-o", str(out)])
        assert result.exit_code == 2, result.output
        assert result.output.count("\n") == 1 and "Traceback" not in result.output
        label = next(f.label for f in (*INPUT_FIELDS, COMPARE_FIELD) if f.key == key)
        assert (
            f"{INPUTS_SHEET}!B{input_row(key)} ({label}) {typed!r} is not a name the workbook's formulas look up; "
            f"type {name!r}" in result.output
        )
        assert not out.exists() and book.read_bytes() == before

    def test_refresh_of_inputs_it_cannot_simulate_fails_and_writes_nothing(self, book, tmp_path):
        """An Inputs or Assumptions cell the Load sheet cannot be simulated from: refresh exits 2 with one line naming
        the cell and writes nothing. It printed "refreshed" and exited 0 with a Load sheet reading "not computed",
        every fleet an estimate on the old rate factors (trial 19 F1: 25% fewer GPUs)."""
        wb = openpyxl.load_workbook(book)
        sheet, ref = next(iter(wb.defined_names["eng_use_engine_visible_memory"].destinations))
        wb[sheet][ref.replace("$", "")] = "yes"
        wb.save(book)
        before = book.read_bytes()
        out = tmp_path / "refreshed.xlsx"
        result = CliRunner().invoke(main, ["workbook", "refresh", str(book), "-o", str(out)])
        assert result.exit_code == 2, result.output
        assert result.output.count("\n") == 1 and "Traceback" not in result.output
        assert "(use_engine_visible_memory) must be TRUE or FALSE; got 'yes'" in result.output
        assert "refreshed" not in result.output
        assert not out.exists() and book.read_bytes() == before

    def test_refresh_without_peak_traffic_says_the_load_sheet_simulated_nothing(self, book, tmp_path):
        """A blank peak traffic is a question left unasked, not an error: refreshed (exit 0), and the line under it says
        the Load sheet simulated nothing and why."""
        wb = openpyxl.load_workbook(book)
        wb[INPUTS_SHEET][f"B{input_row('peak_requests_per_s')}"] = None
        wb.save(book)
        result = CliRunner().invoke(main, ["workbook", "refresh", str(book), "-o", str(tmp_path / "r.xlsx")])
        assert result.exit_code == 0, result.output
        assert "Load sheet not simulated: no peak traffic on Inputs (a number above 0)" in result.output

    def test_refresh_takes_a_listed_name_in_any_case(self, book):
        """MATCH ignores case (Excel and LibreOffice alike), so a listed name in another case is what the formulas
        look up: no refusal."""
        from planner.catalog import default_catalog
        from planner.workbook.build import select_entries
        from planner.workbook.update import check_names

        wb = openpyxl.load_workbook(book)
        wb[INPUTS_SHEET][f"B{input_row('gpu')}"] = "h100 sxm 80gb"
        wb[INPUTS_SHEET][f"B{input_row('kv_precision')}"] = "FP8"
        cat = default_catalog()
        gpus, models = select_entries(cat, None, None)
        check_names(wb, book, cat, [g.name for g in gpus], [m.name for m in models])

    def test_refresh_refuses_a_gpu_its_selection_leaves_off_the_gpus_sheet(self, book, tmp_path):
        """refresh --gpus writes only those GPUs: an Inputs GPU not among them is no longer looked up either."""
        out = tmp_path / "refreshed.xlsx"
        result = CliRunner().invoke(main, ["workbook", "refresh", str(book), "-o", str(out), "--gpus", "A100-80GB"])
        assert result.exit_code == 2, result.output
        assert "Inputs!B4 (GPU) 'H100 SXM 80GB' is not on the GPUs sheet this refresh writes" in result.output
        assert not out.exists()

    def test_every_command_has_help_with_an_example(self):
        for args in (["workbook", "--help"], ["workbook", "refresh", "--help"]):
            result = CliRunner().invoke(main, args)
            assert result.exit_code == 0 and "Example:" in result.output


class TestCheckedInWorkbooks:
    def test_match_what_the_command_generates_from_the_current_catalog(self, tmp_path, spec):
        """Compared by sheets, cells (values and formulas) and defined names, not bytes
        (``workbook_support.workbook_differences``). Regenerate with `planner workbook --force` after a catalog or
        engine change."""
        shipped = REPO / "workbooks" / WORKBOOK_FILE
        assert shipped.exists(), "run `planner workbook --force` and commit workbooks/"
        differ = workbook_differences(shipped, write_workbook(spec, tmp_path / WORKBOOK_FILE))
        assert not differ, "; ".join(differ) + "; run `planner workbook --force`"


HOSTILE_TOML = """
[[gpu]]
name = "=HYPERLINK(\\"http://evil.example\\",\\"click\\")"
vendor = "other"
architecture = "@Test"
memory_bytes = 103079215104
hbm_bandwidth_bytes_per_s = 4.0e12
peak_flop_per_s = { fp16 = 1000e12, bf16 = 1000e12 }
tdp_w = 700
source = "=1+1"
notes = "-2+3"
"""


def _hostile_catalog(tmp_path):
    from planner.catalog import default_catalog

    folder = tmp_path / "catalog"
    folder.mkdir()
    (folder / "hostile.toml").write_text(HOSTILE_TOML, encoding="utf-8")
    return default_catalog(folder), folder


def _column(ws, header: str):
    return next(col for col in ws.iter_cols(min_row=1, max_row=ws.max_row) if col[0].value == header)


#: Printed width of a column at 100%, points per character of its width: Excel's (Calibri 11's 7-px digit at 96 px an
#: inch) and LibreOffice's where it substitutes DejaVu Sans for Calibri (measured: the Precisions sheet's 143
#: characters printed 1,000 pt wide).
EXCEL_PT_PER_CHAR, LO_PT_PER_CHAR = 5.25, 7.0


def _printable_pt(ws) -> float:
    """A4 landscape's width less the sheet's left and right margins, in points."""
    return (11.69 - ws.page_margins.left - ws.page_margins.right) * 72


def _pages_across(ws) -> list[list[float]]:
    """The widths (characters) of the columns printed on each page across: the shown columns, split after each
    column break (a sheet fit to width has none), the title columns (print_title_cols) on every page."""
    titles: set[int] = set()
    if ws.print_title_cols:
        first, last = (openpyxl.utils.column_index_from_string(c.strip("$")) for c in ws.print_title_cols.split(":"))
        titles = set(range(first, last + 1))
    breaks = set() if ws.sheet_properties.pageSetUpPr.fitToPage else {b.id for b in ws.col_breaks.brk}
    head, pages = [], [[]]
    for j in range(1, ws.max_column + 1):
        dim = ws.column_dimensions[openpyxl.utils.get_column_letter(j)]
        if not dim.hidden:
            (head if j in titles else pages[-1]).append(dim.width or 8.43)
        if j in breaks and pages[-1]:
            pages.append([])
    return [head + p for p in pages if p]


class TestPrintedSize:
    """Every sheet prints its 11-pt cells at 8 pt or more: fit to one page wide where that keeps 8 pt, else at a
    fixed 73% over several pages wide, its first columns repeated (planner.workbook.printing). Fit to one page wide,
    the GPUs and Models tables printed at about 3 pt."""

    def test_every_sheet_prints_at_8_pt_or_more_and_no_page_is_split_again(self, book):
        for ws in openpyxl.load_workbook(book).worksheets:
            pages = _pages_across(ws)
            if ws.sheet_properties.pageSetUpPr.fitToPage:
                assert ws.page_setup.fitToWidth == 1 and len(pages) == 1, ws.title
                scale = min(1.0, _printable_pt(ws) / (sum(pages[0]) * EXCEL_PT_PER_CHAR))
                # LibreOffice without Calibri prints the same sheet at 5.25 / 7 of that: 6 pt or more
                assert 11 * scale >= 8.0, f"{ws.title}: {11 * scale:.1f} pt"
            else:
                scale = ws.page_setup.scale / 100
                assert 11 * scale >= 8.0, f"{ws.title}: {11 * scale:.1f} pt"
                assert ws.print_title_cols and len(pages) > 1, ws.title
                for p in pages:  # each page's columns fit its width even by LibreOffice's wider measure
                    assert sum(p) * LO_PT_PER_CHAR * scale <= _printable_pt(ws), (ws.title, p)

    def test_the_catalog_tables_print_over_several_pages_with_their_names_and_headers_on_each(self, book):
        wb = openpyxl.load_workbook(book)
        split = {ws.title for ws in wb.worksheets if not ws.sheet_properties.pageSetUpPr.fitToPage}
        # the rest (Inputs, Results, Levers, Load, Charts, Sweeps, Precisions, ...) stay one page wide
        assert split == {"GPUs", "Models", "Calc", "Ranges", "AllReduce"}
        for title in ("GPUs", "Models"):
            ws = wb[title]
            shown = sum(w for p in _pages_across(ws) for w in p[1:]) + _pages_across(ws)[0][0]
            # fit to one page wide (0.75-in margins, as before) it would print 11-pt text at 3 pt
            assert 11 * (11.69 - 1.5) * 72 / (shown * EXCEL_PT_PER_CHAR) < 3.5, title
            assert ws.page_setup.scale == 73, title  # 8 pt
            assert ws.print_title_cols == "$A:$A" and ws.print_title_rows == "$1:$1", title
            widths = [sum(p) for p in _pages_across(ws)]
            assert len(widths) >= 4, title
            assert min(widths) >= 0.7 * max(widths), (title, widths)  # the pages about as wide as each other
        assert wb["Calc"].print_title_cols == "$A:$B"  # Quantity and Stored in beside every column of scenarios

    def test_a_sheet_too_wide_for_8_pt_is_split_into_even_groups_with_column_a_on_each(self):
        from planner.workbook.printing import legible_print

        def sheet(columns: int):
            ws = openpyxl.Workbook().active
            ws.page_setup.orientation = "landscape"
            ws.sheet_properties.pageSetUpPr.fitToPage = True
            ws.page_setup.fitToWidth, ws.page_setup.fitToHeight = 1, 0
            ws.column_dimensions["A"].width = 18
            for j in range(2, columns + 2):
                ws.column_dimensions[openpyxl.utils.get_column_letter(j)].width = 12
                ws.cell(1, j, "x")
            legible_print(ws)
            return ws

        # 18 + 14 x 12 = 186 characters: 734 pt / (186 x 5.25) = 75% in Excel, 8.3 pt: one page wide
        ws = sheet(14)
        assert ws.sheet_properties.pageSetUpPr.fitToPage and not ws.col_breaks.brk and not ws.print_title_cols
        # 198 characters: 7.8 pt; at 73% with 0.5-in margins a page holds 770 x 0.97 / (7 x 0.73) = 146 characters,
        # A and 10 columns; 15 columns take two pages, split 8 + 7 rather than 10 + 5
        ws = sheet(15)
        assert not ws.sheet_properties.pageSetUpPr.fitToPage and ws.page_setup.scale == 73
        assert [b.id for b in ws.col_breaks.brk] == [9] and ws.print_title_cols == "$A:$A"
        assert ws.page_margins.left == ws.page_margins.right == 0.5
        # 40 columns: four pages of 10
        assert [b.id for b in sheet(40).col_breaks.brk] == [11, 21, 31]

    def test_rows_just_over_a_page_share_the_last_two_pages_evenly_not_a_few_rows_alone(self):
        """planner.workbook.printing.no_near_empty_page: at 73% with 0.5-in margins an A4 landscape page holds
        (8.27 - 1) x 72 / 0.73 = 717 pt of rows: a 30-pt title row and 46 rows of 15 pt (720 pt). 50 rows leave 4
        alone on a second page (60 pt, 9% of the 687 pt under the repeated title); the 50 rows then split 25 + 25 (the
        page ends after row 26). 60 rows leave 14 (210 pt, 31%): split 30 + 30. 65 leave 19 (285 pt, 41%): kept."""
        from openpyxl.worksheet.pagebreak import Break

        from planner.workbook.printing import no_near_empty_page, pages_down

        def sheet(rows: int, fit: bool = False):
            ws = openpyxl.Workbook().active
            ws.page_setup.orientation = "landscape"
            ws.sheet_properties.pageSetUpPr.fitToPage = fit
            ws.page_setup.scale = 73
            for m in ("top", "bottom", "left", "right"):
                setattr(ws.page_margins, m, 0.5)
            ws.column_dimensions["A"].width = 150  # 150 x 7 pt x 73% = 767 pt: one page wide either way
            ws["A1"] = "header"
            ws.row_dimensions[1].height = 30
            ws.print_title_rows = "1:1"
            for r in range(2, rows + 2):
                ws.cell(r, 1, r)
            no_near_empty_page(ws)
            return ws

        assert pages_down(sheet(50)) == [[1], [27]]  # blocks at the break: rows 1-26 and 27-51
        assert [b.id for b in sheet(50).row_breaks.brk] == [26]
        assert [b.id for b in sheet(60).row_breaks.brk] == [31]
        assert not sheet(65).row_breaks.brk and pages_down(sheet(65)) == [[1, 47]]
        assert not sheet(40).row_breaks.brk  # one page
        assert not sheet(50, fit=True).row_breaks.brk  # fit to width: LibreOffice's scale not known well enough
        # a block after a page break of the sheet's own is judged alone: rows 2-10, then 11-61 (4 alone: split)
        ws = openpyxl.Workbook().active
        ws.page_setup.orientation, ws.page_setup.scale = "landscape", 73
        ws.sheet_properties.pageSetUpPr.fitToPage = False
        for m in ("top", "bottom"):
            setattr(ws.page_margins, m, 0.5)
        for r in range(1, 62):
            ws.cell(r, 1, r)
        ws.row_breaks.append(Break(id=10))
        no_near_empty_page(ws)
        assert sorted(b.id for b in ws.row_breaks.brk) == [10, 35]  # 48 + 3 rows of 15 pt: 26 + 25 (717 pt = 47 rows)

    def test_the_gpus_table_prints_two_even_pages_down_not_its_last_rows_alone(self, book):
        """s211's 35 GPUs: the header row (110 pt), 35 rows (636 pt) and the note (15 + 69.5 pt) are 830 pt, over the
        717 pt of a page at 73%; the printer's break after row 34 left two GPU rows and the note alone under the header
        on a page of each group of columns (four of the 77 pages). Now each page down holds about half."""
        from planner.workbook.printing import MIN_LAST_PAGE, pages_down, printable_height_pt, row_height_pt

        ws = openpyxl.load_workbook(book)["GPUs"]
        ([first], [second]) = pages_down(ws)  # one page each side of the break
        assert first == 1 and [b.id for b in ws.row_breaks.brk] == [second - 1]
        room = printable_height_pt(ws) / 0.73 - row_height_pt(ws, 1)
        below = sum(row_height_pt(ws, r) for r in range(second, 39))
        assert MIN_LAST_PAGE * room <= below <= room


class TestWhatAReaderSees:
    """Issue 14's what-if workbook points that show in the file itself, without a spreadsheet engine."""

    def test_money_shows_dollars_and_cents(self, spec):
        """Cost cells read "$14.20", not "$14.199": every currency format is "$"#,##0.00, but a price per GPU-hour's,
        which shows its further digits ("$3.595", the median of two quotes, not "$3.60": trial 19 F4)."""
        from planner.units import USD_PER_GPU_HOUR_FORMAT

        money = {(s.name, ref, c.fmt) for s in spec.sheets for ref, c in s.cells.items() if c.fmt and "$" in c.fmt}
        prices = {(name, ref) for name, ref, fmt in money if fmt == USD_PER_GPU_HOUR_FORMAT}
        assert prices and {name for name, _ in prices} == {"GPUs"}
        money = {m for m in money if m[:2] not in prices}
        # the ranking cost's "not ranked" section for its 10^300 placeholder, then the same dollars and cents
        assert money and {fmt.split(";")[-1] for *_, fmt in money} == {'"$"#,##0.00'}
        cost = [p for p in spec.probes if p.quantity.startswith("cost_per_mtok") and p.sheet != "Calc"]
        assert cost and all(spec.sheet(p.sheet).cells[p.ref].fmt == '"$"#,##0.00' for p in cost)

    def test_assumptions_show_one_format_per_unit_and_no_scientific_notation(self, book):
        """Bytes as 1,964,947,538 (not 1964947537.92), seconds as 0.004500 (not 4.500E-03), fractions 0.90."""
        ws = openpyxl.load_workbook(book)["Assumptions"]
        rows = {r[0].value: r[1] for r in ws.iter_rows(min_row=4, max_col=2) if r[0].value}
        assert rows["non_torch_bytes_tensor_parallel"].number_format == "#,##0"
        assert rows["non_torch_bytes"].number_format == "#,##0"
        assert rows["step_overhead_s"].number_format == "0.000000"
        assert rows["memory_utilization"].number_format == "0.00##"
        assert rows["max_num_seqs_large_gpu"].number_format == "#,##0"
        for label, cell in rows.items():
            if isinstance(cell.value, (int, float)) and not isinstance(cell.value, bool):
                assert cell.number_format != "General" and "E+" not in cell.number_format, label

    @pytest.mark.parametrize("engine", ["vllm", "tensorrt-llm", "sglang", "lmdeploy"])
    def test_assumptions_keep_long_text_out_of_the_narrow_value_column(self, engine):
        """A source text (vLLM's kv_precisions_source is 127 characters) printed in column B (16 wide) was cut at
        the Unit column; a text longer than B sits in the wrapped Meaning column, B saying "(see right)". B reads the
        chosen engine's column (trial 22 F13), so no engine's text there is longer than B."""
        from planner.workbook.assumptions import value_formula
        from planner.workbook.build import offered_engines

        engines = offered_engines(engine_profile(engine))
        sheet, names = assumptions_sheet(engines, Calibration())
        width = sheet.widths["B"]
        params = {f.name for f in dataclasses.fields(EngineProfile)}
        rows = [ref[1:] for ref, c in sheet.cells.items() if ref.startswith("A") and c.value in params]
        for row in rows:  # the Calibration line below spills into empty C and D, unclipped
            value = sheet.cells[f"B{row}"].value if f"B{row}" in sheet.cells else None
            if value == value_formula(int(row), engines):  # each engine's value, as B shows it
                for j in range(len(engines)):
                    shown = sheet.cells.get(f"{chr(ord('E') + j)}{row}")
                    assert not isinstance(shown and shown.value, str) or len(shown.value) <= width, (row, shown)
            elif not str(value).startswith("="):
                assert not isinstance(value, str) or len(value) <= width, (row, value)
        row = next(ref[1:] for ref, c in sheet.cells.items() if c.value == "kv_precisions_source")
        source = engine_profile(engine).kv_precisions_source
        assert sheet.cells[f"E{row}"].value == source and sheet.cells[f"B{row}"].value == "(see right)"
        assert sheet.cells[f"D{row}"].value == value_formula(int(row), engines)
        assert sheet.cells[f"D{row}"].style == "note"
        assert next(n for n in names if n.name == "eng_kv_precisions_source").ref.endswith(f"$D${row}")

    def test_every_engine_parameter_on_assumptions_says_what_it_means(self, spec):
        """kernel_curves, decode_kv_reads_per_query_head and allreduce_table showed a name and TRUE with no unit and
        no meaning; every parameter row has its meaning, and every unit fits the Unit column."""
        sheet = spec.sheet("Assumptions")
        shown = [f.name for f in dataclasses.fields(EngineProfile) if f.name not in PUBLISHED_ROW_FIELDS]
        rows = {c.value: ref[1:] for ref, c in sheet.cells.items() if ref.startswith("A") and c.value in shown}
        assert set(rows) == set(shown)
        for name, row in rows.items():
            assert sheet.cells.get(f"D{row}") and sheet.cells[f"D{row}"].value, name
        units = [c.value for ref, c in sheet.cells.items() if ref.startswith("C") and isinstance(c.value, str)]
        assert max(len(u) for u in units) + 2 <= sheet.widths["C"]  # "TRUE/FALSE" in italics touched the meaning

    def test_a_label_longer_than_its_column_wraps_in_a_taller_row(self, spec, written):
        """Calc's "Share of the fabric a group has (mesh: g - 1 links of its own; switched: 1)" (75 characters) was cut
        at the numbers beside it in its 44-wide column, as were labels on Inputs, Levers and Ranges: such a label
        wraps, and its row is tall enough for its lines."""
        wb = openpyxl.load_workbook(written)
        long = [
            (sheet.name, ref, len(cell.value))
            for sheet in spec.sheets
            for ref, cell in sheet.cells.items()
            if cell.style == "label"
            and isinstance(cell.value, str)
            and not cell.value.startswith("=")
            and len(cell.value) > sheet.widths.get("".join(ch for ch in ref if ch.isalpha()), 9)
        ]
        assert {"Calc", "Inputs", "Ranges"} <= {name for name, *_ in long}
        for name, ref, _ in long:
            ws = wb[name]
            assert ws[ref].alignment.wrap_text, (name, ref)
            assert (ws.row_dimensions[ws[ref].row].height or 0) >= 2 * 13.5, (name, ref)

    def test_chart_axes_follow_the_data(self, book):
        """Batch charts plot the batches that fit (Sweeps column B, #N/A beyond max batch), so the axis ends
        with the data; max batch against context is on a log scale so the MHA line is not flattened to zero."""
        charts = {c.title.tx.rich.p[0].r[0].t: c for c in openpyxl.load_workbook(book)["Charts"]._charts}
        for title in ("TPOT vs batch", "Throughput vs batch"):
            x_ref = charts[title].series[0].xVal.numRef.f
            assert x_ref.replace("'", "").startswith("Sweeps!$B$"), x_ref
            assert charts[title].x_axis.scaling.max is None  # scaled to the data by the spreadsheet
        context = charts["Max batch vs context: model and compare model"]
        assert context.tagname == "lineChart" and context.y_axis.scaling.logBase == 10
        assert len(context.series) == 2

    def test_formula_sheets_are_protected_without_password_and_inputs_stay_editable(self, book):
        wb = openpyxl.load_workbook(book)
        for ws in wb.worksheets:
            assert ws.protection.sheet and not ws.protection.password, ws.title
            assert ws.protection.formatColumns is False  # columns can still be widened and folded open
        inputs = wb[INPUTS_SHEET]
        for f in INPUT_FIELDS:
            assert inputs[f"B{input_row(f.key)}"].protection.locked is False, f.key
        assert wb["Results"]["B5"].value.startswith("=") and wb["Results"]["B5"].protection.locked
        tuning = wb.defined_names["eng_bandwidth_efficiency"].attr_text.split("!")[1].replace("$", "")
        assert wb["Assumptions"][tuning].protection.locked is False

    def test_every_sheet_prints_in_landscape_with_long_catalog_text_folded(self, book):
        wb = openpyxl.load_workbook(book)
        for ws in wb.worksheets:
            assert ws.page_setup.orientation == "landscape", ws.title
            # as many pages tall as it takes, but the Inputs: one page (trial 19 F8)
            assert ws.page_setup.fitToHeight == (1 if ws.title == INPUTS_SHEET else 0), ws.title
        for title in ("GPUs", "Models", "Precisions"):
            ws = wb[title]
            source = _column(ws, "Source")[0].column_letter
            assert ws.column_dimensions[source].hidden and ws.column_dimensions[source].outlineLevel == 1
        models = wb["Models"]
        assert not models.column_dimensions[_column(models, "KV heads (MLA: 1)")[0].column_letter].hidden

    def test_every_model_fact_has_a_header_in_words(self, spec):
        """Each catalog fact the Models sheet prints has a FACT_HEADERS entry: fp8_ds_mla_bytes_per_token_per_layer
        printed its field name as its header. The lookup-only ones (LOOKUP_FACTS) are facts, and folded."""
        from planner.engines.architecture import CATALOG_FACT_FIELDS
        from planner.workbook.catalog_sheets import FACT_HEADERS, LOOKUP_FACTS

        assert set(FACT_HEADERS) == set(CATALOG_FACT_FIELDS)
        assert LOOKUP_FACTS <= set(CATALOG_FACT_FIELDS)
        sheet = spec.sheet("Models")
        headers = {c.value: ref.rstrip("1") for ref, c in sheet.cells.items() if ref[-1] == "1" and ref[:-1].isalpha()}
        for field in CATALOG_FACT_FIELDS:
            assert "_" not in FACT_HEADERS[field] or "(" in FACT_HEADERS[field], field  # words, not a field name
            assert FACT_HEADERS[field] in headers, field
            assert (headers[FACT_HEADERS[field]] in sheet.folded) == (field in LOOKUP_FACTS), field
        assert "fp8_ds_mla_bytes_per_token_per_layer" in LOOKUP_FACTS

    def test_no_visible_ranking_helper_row(self, spec):
        """The ranking of the levers' cost per million tokens (errors last) lives on Calc, not as a grey row on
        Levers."""
        levers = spec.sheet("Levers")
        texts = [str(c.value) for c in levers.cells.values() if c.value is not None]
        assert not any("helper" in t or "IFERROR" in t for t in texts)
        calc = spec.sheet("Calc")
        assert any("IFERROR" in str(c.value) for c in calc.cells.values())

    def test_explain_shows_the_seeds_worked_numbers(self, book):
        """The seeds' figures, computed by planner: H100 SXM ridge 989.4e12 / 3.35e12 = 295.3 FLOP/B (datasheet);
        Llama 2 70B KV 2 x 80 x 8 x 128 x 2 = 327,680 B per token; LLaMA 65B 2 x 80 x 64 x 128 x 2 = 2,621,440 B."""
        text = " ".join(str(c.value) for row in openpyxl.load_workbook(book)["Explain"].iter_rows() for c in row)
        assert "nan" not in text
        assert "= 295.3." in text and "= 327,680 B" in text and "2,621,440 B" in text

    def test_explain_labels_sit_at_the_top_of_their_rows(self, book):
        ws = openpyxl.load_workbook(book)["Explain"]
        labels = [ws[f"A{r}"] for r in range(4, ws.max_row + 1) if ws[f"A{r}"].value]
        assert labels and all(c.alignment.vertical == "top" for c in labels)

    def test_opens_with_the_compare_model_of_the_other_attention_kind(self, spec):
        """Llama 2 70B (GQA, 8 KV heads) against LLaMA-65B (MHA, 64): the seed's 8x KV-per-token comparison."""
        inputs = spec.sheet(INPUTS_SHEET)
        assert inputs.cells[f"B{input_row('compare_model')}"].value == "LLaMA-65B"
        assert inputs.cells[f"B{input_row('context')}"].value == 4096  # Llama 2 70B's trained maximum

    def test_sweeps_print_units_not_scientific_notation(self, spec):
        """Sweeps' decode columns: FLOP in GFLOP (1.074E+10 reads 10.74), bytes in GB by SI, seconds in fixed
        point (1.190E-02 reads 0.011900), each unit named in the header; the cells keep base units."""
        ws = spec.sheet("Sweeps")
        fmts = {ref: c.fmt for ref, c in ws.cells.items() if c.fmt and re.fullmatch(r"[A-Z]+4", ref)}
        assert fmts and not any("E+" in f for f in fmts.values()), fmts
        header = {c.value: ref[:-1] for ref, c in ws.cells.items() if ref.endswith("3") and ref[-2].isalpha()}
        assert fmts[header["FLOPs (GFLOP; cells hold FLOP)"] + "4"] == "#,##0.00,,,"
        assert fmts[header["Bytes moved (GB; cells hold bytes)"] + "4"] == "#,##0.00,,,"
        assert fmts[header["TPOT (decode step) (s)"] + "4"] == "0.000000"
        assert ws.cells[header["Roofline memory time, not a TPOT term (ms)"] + "4"].value.endswith("*1000")

    def test_a_scaled_unit_names_what_the_cell_holds(self, spec):
        """Trial 21 F9: "(GB)" headers over cells holding bytes (a copied cell gave 80,000,000,000). Cells hold base
        units everywhere; a header naming a scaled unit (GB, GB/s, TFLOP/s, GFLOP, billions) names the cell's unit
        too, and beside a value whose format shows one ("80.00 GB") the Unit column does."""
        from planner.workbook.formats import CELL_HOLDS

        scaled = re.compile(r"\((?:[^()]*[;,] )?(" + "|".join(map(re.escape, CELL_HOLDS)) + r")(\)|[;,])")
        checked = 0
        for sheet in spec.sheets:
            for ref, cell in sheet.cells.items():
                if cell.style != "header" or not isinstance(cell.value, str) or not (m := scaled.search(cell.value)):
                    continue
                assert f"{m.group(1)}; cells hold {CELL_HOLDS[m.group(1)]}" in cell.value, (sheet.name, ref)
                checked += 1
        assert checked >= 15
        gpus = spec.sheet("GPUs")
        assert gpus.cells["D1"].value == "Memory, physical (GB; cells hold bytes)"
        for name, unit_col in (("Results", "C"), ("Levers", "B")):
            sheet = spec.sheet(name)
            for ref, cell in sheet.cells.items():
                if cell.fmt and cell.fmt.endswith(' GB"') and ref[0] == ("B" if name == "Results" else "C"):
                    assert sheet.cells[f"{unit_col}{ref[1:]}"].value == "cell: bytes", (name, ref)
                    checked += 1
        assert checked >= 20

    def test_sweeps_print_one_page_wide_at_a_legible_size(self, spec):
        """One page wide like every sheet (test_every_sheet_prints_one_page_wide...): the decode workings are folded
        (outline, "+" shows them), so at most 16 printed columns of width 12 share the landscape page, and the
        columns the charts read (TPOT, throughput, intensity, achieved TFLOP/s) stay printed."""
        ws = spec.sheet("Sweeps")
        used = {"".join(ch for ch in ref if ch.isalpha()) for ref in ws.cells}
        printed = used - set(ws.folded)
        assert len(printed) <= 16, sorted(printed)
        header = {c.value: ref[:-1] for ref, c in ws.cells.items() if ref.endswith("3") and ref[-2].isalpha()}
        for h in ("TPOT (ms)", "Throughput (tokens/s)", "Arithmetic intensity (FLOP/B)", "Achieved TFLOP/s per GPU"):
            assert header[h] in printed, h

    def test_calc_latency_answer_wraps_and_ranking_cost_reads_not_ranked(self, book):
        """ "no: TPOT 61.1 ms > 5.0 ms, TTFT 1,234 ms > 20 ms" wraps in its 17-wide Calc column on a 3-line row;
        the ranking cost shows dollars like the fleet cost beside it, and "not ranked" for its 10^300 mark."""
        ws = openpyxl.load_workbook(book)["Calc"]
        meets = next(r for r in ws.iter_rows(min_col=1, max_col=3) if r[0].value == "Meets the latency targets")[2]
        assert meets.alignment.wrap_text and ws.row_dimensions[meets.row].height >= 3 * 13.5
        rank = next(r for r in ws.iter_rows(min_col=1, max_col=3) if str(r[0].value).startswith("Monthly cost for"))
        assert rank[2].number_format == '[>=1E+299]"not ranked";"$"#,##0.00'


class TestEachResultNamesItsModelFunction:
    """Issue 11: each probed cell is checked against the planner.api function of the same name (the parity tests
    in test_workbook_libreoffice.py call it), not against a second copy of the formula."""

    def test_every_probe_names_a_function_of_planner_api_and_a_field_of_its_result(self, spec):
        import typing

        from planner import api

        for p in spec.probes:
            function, _, field = p.quantity.partition("@")[0].partition(".")
            assert callable(getattr(api, function, None)), p
            if field:
                returned = typing.get_type_hints(getattr(api, function))["return"]
                fields = {f.name for f in dataclasses.fields(returned)}
                assert field in fields or isinstance(getattr(returned, field, None), property), p

    def test_calc_shows_the_function_each_row_is_checked_against(self, spec):
        calc = spec.sheet("Calc")
        header = next(ref for ref, c in calc.cells.items() if c.value == "Checked against (planner.api)")
        col = header.rstrip("0123456789")
        for p in spec.probes:
            if p.sheet == "Calc":
                assert calc.cells[f"{col}{p.ref.lstrip('ABCDEFGH')}"].value == p.quantity, p


class TestCatalogTextStaysText:
    """A catalog name or source that starts with '=' lands in the workbook as text, never as a formula."""

    def test_generated_workbook(self, tmp_path):
        cat, _ = _hostile_catalog(tmp_path)
        name = '=HYPERLINK("http://evil.example","click")'
        path = write_workbook(build_whatif(cat), tmp_path / "book.xlsx")
        ws = openpyxl.load_workbook(path)["GPUs"]
        row = next(c.row for c in _column(ws, "GPU") if c.value == "'" + name)  # the conventional apostrophe
        for header, want in (("GPU", name), ("Source", "=1+1"), ("Notes", "-2+3"), ("Architecture", "@Test")):
            cell = ws[f"{_column(ws, header)[0].column_letter}{row}"]
            assert cell.value == "'" + want and cell.data_type == "s", header

    def test_refresh_command(self, tmp_path, book, monkeypatch):
        """Without soffice on PATH: the names land in constant cells, which the stored values (formula cells only;
        a hostile catalog's book with them: test_sinks) do not touch; ~5 s CPU of recalculation saved."""
        without_libreoffice(monkeypatch)
        _, folder = _hostile_catalog(tmp_path)
        result = CliRunner().invoke(main, ["workbook", "refresh", str(book), "--catalog", str(folder)])
        assert result.exit_code == 0, result.output
        ws = openpyxl.load_workbook(book)["GPUs"]
        cells = [c for c in _column(ws, "Source") if c.value == "'=1+1"]
        assert len(cells) == 1 and cells[0].data_type == "s"


class TestNoHashMarks:
    def test_every_whole_number_on_the_catalog_sheets_fits_its_column(self, book):
        """A number wider than its column prints ### in Excel and LibreOffice (Llama-3.1-70B's 1,050,673,152
        params kept 16-bit did, in a width-11 column). Every whole number (format #,##0) on the GPUs and Models
        sheets, with its separators, fits the column width in characters."""
        from openpyxl.utils import get_column_letter

        wb = openpyxl.load_workbook(book)
        checked = 0
        for name in ("GPUs", "Models"):
            ws = wb[name]
            for row in ws.iter_rows(min_row=2):
                for c in row:
                    if isinstance(c.value, (int, float)) and c.number_format == "#,##0":
                        width = ws.column_dimensions[get_column_letter(c.column)].width
                        shown = f"{c.value:,.0f}"
                        assert len(shown) <= width, (name, c.coordinate, shown, width)
                        checked += 1
        assert checked > 500

    def test_every_shown_catalog_name_fits_its_column(self, spec):
        """A text column that is not folded was as wide as its header allowed: "RTX PRO 6000 Blackwell Server
        Edition" was cut at 18 characters by the Vendor beside it, "DeepSeek-R1-Distill-Llama-70B" at 16 in GQA
        sibling. Every shown catalog text up to ``MAX_TEXT_WIDTH`` characters fits its column, or wraps whole in a
        taller row where its column is capped narrower (the GPUs sheet's names at 24 characters, so that column A,
        repeated on each printed page across, does not take a seventh page: ``Column.max_width``)."""
        from planner.workbook.catalog_sheets import MAX_TEXT_WIDTH

        checked = 0
        for name in ("GPUs", "Models", "Precisions"):
            sheet = spec.sheet(name)
            notes = {m.split(":")[0] for m in sheet.merges}
            for ref, cell in sheet.cells.items():
                col = "".join(ch for ch in ref if ch.isalpha())
                if ref in notes or col in sheet.folded or not cell.text or not isinstance(cell.value, str):
                    continue
                wraps = cell.style == "text"
                assert len(cell.value) <= sheet.widths[col] or wraps or len(cell.value) > MAX_TEXT_WIDTH, (name, ref)
                checked += 1
        assert checked > 300


def test_gpus_sheet_reads_each_gpus_numbers_once(monkeypatch):
    """The GPUs sheet asks ``gpu_numbers`` once per GPU for the sheet's engine (and once more for the interconnect a
    GPU without a stated one gets), not once per column and GPU (the last round's note: 21 calls a GPU, 693 for the
    shipped 33 GPUs); the cells are the same, e.g. H100's all-reduce message scale."""
    from planner.accuracy.calibration import resolve_calibration
    from planner.catalog import default_catalog
    from planner.catalog.resolve import gpu_numbers
    from planner.workbook import catalog_sheets

    calls = []

    def counted(g, *args, **kwargs):
        calls.append(g.name)
        return gpu_numbers(g, *args, **kwargs)

    monkeypatch.setattr(catalog_sheets, "gpu_numbers", counted)
    cat, eng, cal = default_catalog(), engine_profile("vllm"), resolve_calibration(None)
    gpus = [cat.gpu(name) for name in ("H100", "A100", "MI300X")]
    sheet, names = catalog_sheets.gpus_sheet(cat, gpus, eng, cal)
    assert sorted(calls) == sorted([g.name for g in gpus] * 2)
    column = re.sub(r"[$\d]", "", next(n.ref for n in names if n.name == "gpu_ar_scale").split("!")[1].split(":")[0])
    assert sheet.cells[f"{column}2"].value == gpu_numbers(gpus[0], eng, cal)["allreduce_table_bytes_scale"]
