"""``planner addin example``: the example workbook whose cells call the Excel functions, with what Python gives."""

from __future__ import annotations

import io
import textwrap
from pathlib import Path

import click

from planner.cli.terminal import echo
from planner.errors import InvalidInputError
from planner.io.files import write_file


class Shown(str):
    """Text shown as is, even when it starts with "=" (the formula of the next cell, for reading)."""


def example_cells() -> dict:
    """The example workbook as data: per sheet, rows of values/formulas, and array formulas by output range.

    Values in the "Python gave" column are what the same functions return in Python when the file is made,
    so a user can check their add-in against them.
    """
    from planner.excel import functions as xf

    single = [
        ("Ridge point of an H100 at bf16", "FLOP/B", 'RIDGE("H100","bf16")', xf.RIDGE("H100", "bf16")),
        (
            "Weights of Llama 2 70B at fp16",
            "bytes",
            'WEIGHT_BYTES("llama2-70b","fp16")',
            xf.WEIGHT_BYTES("llama2-70b", "fp16"),
        ),
        (
            "KV cache, 8,192 tokens, fp16",
            "bytes",
            'KV_BYTES("llama2-70b",8192,"fp16")',
            xf.KV_BYTES("llama2-70b", 8192.0, "fp16"),
        ),
        (
            "Max batch, 8,192 tokens (smallest group that fits)",
            "sequences",
            'MAX_BATCH("H100","llama2-70b",8192,"fp16")',
            xf.MAX_BATCH("H100", "llama2-70b", 8192.0, "fp16"),
        ),
        (
            "Smallest GPU group for 16 sequences",
            "GPUs",
            'MIN_GPUS("H100","llama2-70b",8192,16)',
            xf.MIN_GPUS("H100", "llama2-70b", 8192.0, 16.0),
        ),
        ("TPOT at batch 8", "ms", 'TPOT("H100","llama2-70b",8192,8)', xf.TPOT("H100", "llama2-70b", 8192.0, 8.0)),
        ("TTFT of a 2,048-token prompt", "ms", 'TTFT("H100","llama2-70b",2048)', xf.TTFT("H100", "llama2-70b", 2048.0)),
        (
            "Throughput at batch 8",
            "tokens/s",
            'THROUGHPUT("H100","llama2-70b",8192,8)',
            xf.THROUGHPUT("H100", "llama2-70b", 8192.0, 8.0),
        ),
        (
            "Cost at batch 8, catalog price",
            "$ per 1M output tokens",
            'COST_PER_MTOK("H100","llama2-70b",8192,8)',
            xf.COST_PER_MTOK("H100", "llama2-70b", 8192.0, 8.0),
        ),
        ("MFU at batch 8", "fraction", 'MFU("H100","llama2-70b",8192,8)', xf.MFU("H100", "llama2-70b", 8192.0, 8.0)),
        ("MBU at batch 8", "fraction", 'MBU("H100","llama2-70b",8192,8)', xf.MBU("H100", "llama2-70b", 8192.0, 8.0)),
        (
            "Decode intensity at batch 8",
            "FLOP/B",
            'DECODE_INTENSITY("H100","llama2-70b",8192,8)',
            xf.DECODE_INTENSITY("H100", "llama2-70b", 8192.0, 8.0),
        ),
        ("H100 memory", "bytes", 'PLANNER_INFO("H100","memory_bytes")', xf.PLANNER_INFO("H100", "memory_bytes")),
        ("An unknown GPU", "#N/A", 'MAX_BATCH("H10","llama2-70b",8192)', "#N/A"),
        (
            "... and why",
            "text",
            'PLANNER_WHY("MAX_BATCH","H10","llama2-70b",8192)',
            xf.PLANNER_WHY("MAX_BATCH", "H10", "llama2-70b", 8192.0),
        ),
        ("Does not fit on 1 GPU", "#NUM!", 'MAX_BATCH("H100","llama2-70b",8192,,1)', "#NUM!"),
        (
            "Replicas of 4 x H100 (fp8) for 60 requests/s of 800 / 400 tokens, p95 TTFT <= 1.5 s and TPOT <= 50 ms",
            "replicas (simulated)",
            'REPLICAS("H100","llama3.1-70b",60,800,400,1.5,0.05,,4,"fp8")',
            xf.REPLICAS("H100", "llama3.1-70b", 60.0, 800.0, 400.0, 1.5, 0.05, None, 4.0, "fp8"),
        ),
        (
            "GPUs for the same traffic and targets, on the group that needs fewest (PLANNER_WHY names it)",
            "GPUs (simulated)",
            'FLEET_GPUS("H100","llama3.1-70b",60,800,400,1.5,0.05,,"fp8")',
            xf.FLEET_GPUS("H100", "llama3.1-70b", 60.0, 800.0, 400.0, 1.5, 0.05, None, "fp8"),
        ),
        (
            "... one such replica's steady-state capacity",
            "requests/s (simulated)",
            'CAPACITY_RPS("H100","llama3.1-70b",800,400,4,"fp8")',
            xf.CAPACITY_RPS("H100", "llama3.1-70b", 800.0, 400.0, 4.0, "fp8"),
        ),
        (
            "p99 TTFT under load, held-out high end (multiply TTFT_P99 by it)",
            "x simulated",
            'LOADED_RANGE("TTFT",99,"high")',
            xf.LOADED_RANGE("TTFT", 99.0, "high"),
        ),
        (
            "TPOT at batch 8 on SGLang (engine, the last argument; blank: vLLM)",
            "ms",
            'TPOT("H100","llama2-70b",8192,8,,,,,"sglang")',
            xf.TPOT("H100", "llama2-70b", 8192.0, 8.0, None, None, None, None, "sglang"),
        ),
        # the seed cases' other two points (trial 25 F10), last so that the rows above keep their cells: A100's ridge
        # (312 TFLOP/s / 2,039 GB/s) and LLaMA 1 65B's KV per token, the MHA figure 8x Llama 2 70B's GQA one
        ("Ridge point of an A100 80GB at bf16 (seed case)", "FLOP/B", 'RIDGE("A100")', xf.RIDGE("A100")),
        (
            "KV cache of one token, LLaMA 65B (MHA), fp16 (seed case)",
            "bytes",
            'KV_BYTES("llama-65b",1,"fp16")',
            xf.KV_BYTES("llama-65b", 1.0, "fp16"),
        ),
    ]
    functions_rows = [["What", "Unit", "Formula", "Result", "Python gave"]]
    functions_values = {}
    for what, unit, formula, value in single:
        functions_rows.append([what, unit, Shown("=" + formula), f"={formula}", value])
        functions_values[f"D{len(functions_rows)}"] = value

    scen = [
        ("H100", "llama2-70b", 4096, 1),
        ("H100", "llama2-70b", 8192, 8),
        ("A100 SXM 80GB", "llama2-70b", 8192, 8),
        ("H200", "llama3.1-70b", 32768, 16),
        ("L40S", "llama3.1-8b", 8192, 32),
        ("MI300X", "qwen3-32b", 16384, 8),
    ]
    gpus = [[g] for g, *_ in scen]
    models = [[m] for _, m, *_ in scen]
    ctx = [[float(c)] for *_, c, _ in scen]
    batch = [[float(b)] for *_, b in scen]
    n = len(scen)
    last = n + 1
    # one deployment a row: the fewest GPUs that hold the batch (MIN_GPUS), and every figure on that many, the max
    # batch too (trial 13 F14: MAX_BATCH without gpus gave the smallest group for one sequence, "Max batch 3" beside
    # "Batch 8" on 4 GPUs); as `planner plan --gpu G --model M --context C --batch B --gpus N` gives them
    header = [
        "GPU",
        "Model",
        "Context (tokens)",
        "Batch",
        GPUS_HEADER,
        "Max batch on those GPUs",
        "TPOT (ms)",
        "Throughput (tok/s)",
        "$ / 1M tokens",
    ]
    scenario_rows = [header] + [[g, m, c, b, None, None, None, None, None] for g, m, c, b in scen]
    arrays = {
        f"E2:E{last}": f"MIN_GPUS(A2:A{last},B2:B{last},C2:C{last},D2:D{last})",
        f"F2:F{last}": f"MAX_BATCH(A2:A{last},B2:B{last},C2:C{last},,E2:E{last})",
        f"G2:G{last}": f"TPOT(A2:A{last},B2:B{last},C2:C{last},D2:D{last},,E2:E{last})",
        f"H2:H{last}": f"THROUGHPUT(A2:A{last},B2:B{last},C2:C{last},D2:D{last},,E2:E{last})",
        f"I2:I{last}": f"COST_PER_MTOK(A2:A{last},B2:B{last},C2:C{last},D2:D{last},,,E2:E{last})",
    }
    expected = {
        GPUS_HEADER: (mg := xf.MIN_GPUS(gpus, models, ctx, batch)),
        "Max batch on those GPUs": xf.MAX_BATCH(gpus, models, ctx, None, mg),
        "TPOT (ms)": xf.TPOT(gpus, models, ctx, batch, None, mg),
        "Throughput (tok/s)": xf.THROUGHPUT(gpus, models, ctx, batch, None, mg),
        "$ / 1M tokens": xf.COST_PER_MTOK(gpus, models, ctx, batch, None, None, mg),
    }
    check_rows = [["Python gave (when this file was made)"] + list(expected)]
    for i in range(n):
        g, m, c, b = scen[i]
        check_rows.append([f"{g} / {m} / {c:,} tokens / batch {b}"] + [expected[k][i][0] for k in expected])
    scenario_values = {
        f"{col}{2 + i}": expected[k][i][0] for col, k in zip("EFGHI", expected, strict=True) for i in range(n)
    }
    lists = {"A": xf.PLANNER_GPUS(), "B": xf.PLANNER_MODELS(), "C": xf.PLANNER_PRECISIONS()}
    return {
        # first: the sheet a file opens on when it opens on the first (LibreOffice), saying where the cells compute
        "Read me": {"rows": [[line] for line in README_SHEET.splitlines()], "arrays": {}, "values": {}},
        "Functions": {"rows": functions_rows, "arrays": {}, "values": functions_values},
        "Scenarios": {"rows": scenario_rows, "arrays": arrays, "below": check_rows, "values": scenario_values},
        "Catalog": {
            "rows": [["GPUs", "Models", "Precisions"]],
            "arrays": {
                f"A2:A{1 + len(xf.PLANNER_GPUS())}": "PLANNER_GPUS()",
                f"B2:B{1 + len(xf.PLANNER_MODELS())}": "PLANNER_MODELS()",
                f"C2:C{1 + len(xf.PLANNER_PRECISIONS())}": "PLANNER_PRECISIONS()",
            },
            "values": {f"{col}{2 + i}": row[0] for col, names in lists.items() for i, row in enumerate(names)},
        },
    }


#: The Scenarios sheet's GPU count: the fewest that hold the row's batch, on which every figure of the row is.
GPUS_HEADER = "GPUs (fewest for the batch)"

README_SHEET = """planner Excel functions: example workbook
The cells of the other sheets call planner's functions. They compute only in Excel with planner's xlwings add-in:
- Windows, classic xlwings UDFs: `planner addin install`, then save this file as .xlsm and click Import Functions.
- xlwings Lite (Windows, Mac, web): `planner addin lite DIR`, paste main.py and requirements.txt into the Lite editor.
After installing, press Ctrl+Alt+F9 to recalculate everything.
Without the add-in, Excel shows #NAME? in every such cell once it recalculates.
LibreOffice cannot run these functions: it shows the values stored when the file was made in some cells and #NAME?
in others (the error examples, the Scenarios and Catalog sheets). In LibreOffice use the what-if workbook
(workbooks/capacity-what-if.xlsx, `planner workbook`), whose formulas are plain spreadsheet formulas.
Column "Python gave" (and the Scenarios sheet's table below its formulas) holds the values planner computed when the
file was made: read those where a cell shows #NAME?.
Each Scenarios row is one deployment: the fewest GPUs that hold its batch, and every figure on that many GPUs
(`planner plan --gpu GPU --model MODEL --context C --batch B --gpus N` gives the same).
Range formulas on the Scenarios sheet are array formulas over whole columns: one call per column.
Units: bytes (1 GB = 1e9 B), ms, tokens/s, US dollars; see docs/excel.md."""


def write_example(path: Path, force: bool) -> None:
    from openpyxl import Workbook
    from openpyxl.worksheet.formula import ArrayFormula

    sheets = example_cells()
    wb = Workbook()
    wb.remove(wb.active)
    for title, spec in sheets.items():
        ws = wb.create_sheet(title)
        for row in spec["rows"]:
            ws.append(row)
            for value, c in zip(row, ws[ws.max_row], strict=False):  # openpyxl stores a str subclass as str
                if isinstance(value, Shown):
                    c.value, c.data_type = str(value), "s"
        for ref, formula in spec["arrays"].items():
            first, last = ref.split(":")
            ws[first] = ArrayFormula(ref, f"={formula}")
            for row in ws[ref][1:]:  # the rest of an array's range holds its values, as Excel saves it
                ws[row[0].coordinate] = spec["values"][row[0].coordinate]
        if spec.get("below"):
            ws.append([])
            for row in spec["below"]:
                ws.append(row)
        _lay_out(ws, spec["values"])
    buf = io.BytesIO()
    wb.save(buf)
    write_file(path, with_python_values(buf.getvalue(), wb.sheetnames, sheets), force=force, make_parents=True)


#: Number format of a result by its unit (Functions column B; Scenarios by header): bytes and counts whole with
#: separators, times and rates with fixed decimals, money in dollars and cents, no scientific notation.
UNIT_FORMATS = {
    "FLOP/B": "#,##0.0",
    "bytes": "#,##0",
    "sequences": "#,##0",
    "GPUs": "#,##0",
    "ms": "#,##0.00",
    "tokens/s": "#,##0.0",
    "$ per 1M output tokens": '"$"#,##0.00',
    "fraction": "0.0000",
    "x simulated": "0.00",
    "replicas (simulated)": "#,##0",
    "requests/s (simulated)": "#,##0.00",
    "Context (tokens)": "#,##0",
    "Batch": "#,##0",
    "Max batch on those GPUs": "#,##0",
    GPUS_HEADER: "#,##0",
    "TPOT (ms)": "#,##0.00",
    "Throughput (tok/s)": "#,##0.0",
    "$ / 1M tokens": '"$"#,##0.00',
}
#: The narrowest column (characters: a number such as $1,234.56 or 137,953,296,384) and the widest, beyond which a
#: text wraps.
MIN_WIDTH = 16
WRAP_AT = 60
#: Height of one line of wrapped text, points: the default font's (Calibri 11, LibreOffice's Carlito) standard row.
LINE_HEIGHT_PT = 15.0


def wrapped_lines(text: str, width_chars: float) -> int:
    """Lines a wrapped ``text`` takes in a column ``width_chars`` wide (a column width counts the default font's
    digit widths, one of them the cell's padding): wrapped at spaces as a spreadsheet wraps, a word longer than a
    line split (``textwrap.wrap`` over ``width_chars`` - 1 characters)."""
    return max(1, len(textwrap.wrap(text, max(1, int(width_chars) - 1))))


def _fit_wrapped_rows(ws, values: dict) -> None:
    """Each row with wrapped text as tall as its most wrapped cell (``wrapped_lines`` x ``LINE_HEIGHT_PT``): a row
    keeps the default height otherwise, and LibreOffice prints an unfitted wrapped cell over the rows below it. A
    formula cell's shown text is its stored value (``values``, by coordinate: what Python gave)."""
    from openpyxl.styles import Alignment

    for row in ws.iter_rows():
        lines = 1
        for c in row:
            if not (c.alignment is not None and c.alignment.wrap_text):
                continue
            shown = values.get(c.coordinate) if c.data_type == "f" else c.value
            if isinstance(shown, str):
                width = ws.column_dimensions[c.column_letter].width or MIN_WIDTH
                lines = max(lines, wrapped_lines(shown, width))
        if lines > 1:
            ws.row_dimensions[row[0].row].height = lines * LINE_HEIGHT_PT
            for c in row:  # the row's other cells beside its wrapped text's first line, not below its last
                a = c.alignment
                c.alignment = Alignment(horizontal=a.horizontal, wrap_text=a.wrap_text, vertical="top")


def _lay_out(ws, values: dict) -> None:
    """Formats, widths and print setup of one example sheet: a result's number format from its unit (Functions'
    Unit column) or its column's header (Scenarios), bold headers, each column as wide as its longest text (wrapped
    beyond ``WRAP_AT`` characters; a one-column sheet as wide as its longest line), each row with wrapped text tall
    enough for it (``_fit_wrapped_rows``; ``values``: formula cells' shown values), landscape one page wide with the
    header row on every page."""
    from openpyxl.styles import Alignment, Font
    from openpyxl.utils import get_column_letter

    headers = {}
    for row in ws.iter_rows():
        first = row[0].value
        if first in ("What", "GPU", "GPUs") or str(first).startswith("Python gave ("):
            headers = {c.column: c.value for c in row}
            for c in row:
                c.font = Font(bold=True)
            continue
        unit = row[1].value if ws.title == "Functions" and len(row) > 1 else None
        for c in row:
            fmt = UNIT_FORMATS.get(unit) if unit else UNIT_FORMATS.get(headers.get(c.column))
            if unit and c.column_letter not in "DE":  # Functions: only the result and what Python gave
                continue
            if unit == "text":  # a sentence (PLANNER_WHY) wraps in the narrow Result column
                c.alignment = Alignment(wrap_text=True, vertical="top")
            if fmt and (isinstance(c.value, (int, float)) or c.data_type == "f" or c.value is None):
                c.number_format = fmt
    alone = ws.max_column == 1
    for i in range(1, ws.max_column + 1):
        col = get_column_letter(i)
        # the column's shown texts (a formula's text is not shown, its value is)
        texts = [c for (c,) in ws.iter_rows(min_col=i, max_col=i) if isinstance(c.value, str) and c.data_type != "f"]
        longest = max((len(c.value) for c in texts), default=0) + 2
        ws.column_dimensions[col].width = longest if alone else max(MIN_WIDTH, min(longest, WRAP_AT))
        if not alone:
            for c in texts:
                if len(c.value) > WRAP_AT:
                    c.alignment = Alignment(wrap_text=True, vertical="top")
    _fit_wrapped_rows(ws, values)
    ws.page_setup.orientation = "landscape"
    ws.page_setup.fitToWidth, ws.page_setup.fitToHeight = 1, 0
    ws.sheet_properties.pageSetUpPr.fitToPage = True
    if not alone:
        ws.print_title_rows = "1:1"
        ws.freeze_panes = "A2"


def with_python_values(data: bytes, titles: list[str], sheets: dict) -> bytes:
    """The saved workbook with each formula's stored value: what the same function returned in Python (the
    functions are the add-in's, which no spreadsheet without it can compute), so previews and pandas show them."""
    from planner.io.xlsx_values import with_stored_values

    values = {(title, ref): v for title, spec in sheets.items() for ref, v in spec["values"].items()}
    return with_stored_values(data, titles, values)


#: Where ``planner addin example`` writes when given no path.
EXAMPLE_PATH = Path("workbooks/functions-example.xlsx")


@click.command("example")
@click.argument("path", type=click.Path(dir_okay=False, path_type=Path), required=False)
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="The .xlsx to write, as -o is on export and calibrate (or give it as PATH).",
)
@click.option("--force", is_flag=True, help="Overwrite PATH if it exists.")
def example_command(path: Path | None, output: Path | None, force: bool) -> None:
    """Write the example workbook whose cells use the functions (for people who have the add-in).

    \b
    PATH (or -o PATH): the .xlsx to write [default: workbooks/functions-example.xlsx].

    Example:

        planner addin example workbooks/functions-example.xlsx --force
    """
    if path is not None and output is not None and path != output:
        raise click.UsageError(f"two paths: {path} and -o {output}; give one")
    path = path or output or EXAMPLE_PATH
    if path.suffix.lower() != ".xlsx":
        raise InvalidInputError(f"{path}: the example workbook is an .xlsx file; give a path ending in .xlsx")
    write_example(path, force)
    echo(f"wrote {path}")
