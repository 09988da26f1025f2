"""The AllReduce sheet: the measured all-reduce table (``planner.engines.allreduce_table``: vLLM's, and published rows
of GPUs without one) as the Calc sheet's all-reduce formulas read it (``planner.workbook.formulas.allreduce_rows``).

One block of rows per measured GPU, in the table's order (the GPUs sheet's "All-reduce table block" column points a
GPU at its block, or at its nearest architecture's): inside a captured CUDA graph then outside one (eager), each at
every group size of the table (2, 4, 8, 16 GPUs); columns are message sizes, 2^7 to 2^29 bytes; cells are
microseconds, blank where not measured. Defined names: ``ar_us`` (the microseconds), ``ar_log2_bytes`` (the sizes'
log2, one row), ``ar_groups`` (the group sizes of one block, one column), ``ar_top_bytes`` and
``ar_below_top_bytes`` (the last two sizes, whose rate continues the table beyond it).
"""

from __future__ import annotations

import math

from openpyxl.utils import get_column_letter

from planner.engines.allreduce_table import MODES, PUBLISHED_FILE_NAME, TABLE_FILE_NAME, read_allreduce_table
from planner.workbook.formats import INT
from planner.workbook.layout import ALLREDUCE_SHEET
from planner.workbook.spec import Name, Sheet

FIRST_SIZE_COL = 4  # D
HEADER_ROW = 4  # the sizes' log2
FIRST_ROW = 5


def allreduce_sheet() -> tuple[Sheet, list[Name]]:
    """The sheet and its defined names, from the shipped table (microseconds rounded as shipped)."""
    table = read_allreduce_table()
    # the header rows (sizes, their log2) on every printed page; the title and its line once, on the first page across
    s = Sheet(
        ALLREDUCE_SHEET,
        freeze=f"D{FIRST_ROW}",
        catalog=True,
        tab_color="7F7F7F",
        print_title_rows=f"3:{HEADER_ROW}",
    )
    # printed over two pages wide, A:C on each: the title wraps in A:C and the introduction starts at D (its merge ends
    # at the first page's last column: writer), so no page shows a sentence cut at C's edge (trial 13 F7)
    s.heading("A1", "AllReduce: vLLM's measured all-reduce times", "C")
    s.note("D2", "Microseconds per GPU, group size (rows) and message size (columns); the sources and how Calc reads "
           "the table: below it.", "Z")  # fmt: skip
    last_col = get_column_letter(FIRST_SIZE_COL + len(table.log2_bytes) - 1)
    s.set("A3", "GPU", style="header")
    s.set("B3", "CUDA graph", style="header")
    s.set("C3", "GPUs", style="header")
    s.set(f"A{HEADER_ROW}", "log2(message bytes)", style="header")
    for j, x in enumerate(table.log2_bytes):
        col = get_column_letter(FIRST_SIZE_COL + j)
        s.set(f"{col}3", f"{2**x / 2**20:g} MiB" if x >= 20 else f"{2**x / 2**10:g} KiB" if x >= 10 else f"{2**x:g} B",
              style="header")  # fmt: skip
        s.set(f"{col}{HEADER_ROW}", x, fmt=INT)
        s.widths[col] = 8
    s.widths.update(A=16, B=8, C=6)
    r = FIRST_ROW
    for gi, gpu in enumerate(table.gpus):
        for mi, mode in enumerate(MODES):
            for ki, group in enumerate(table.group_sizes):
                s.set(f"A{r}", gpu, text=True)
                s.set(f"B{r}", "yes" if mode == "graph" else "no")
                s.set(f"C{r}", group, fmt=INT)
                for j, log_s in enumerate(table.log_seconds[gi, mi, ki]):
                    if not math.isnan(log_s):
                        col, us = get_column_letter(FIRST_SIZE_COL + j), _microseconds(table, gi, mi, ki, j)
                        s.set(f"{col}{r}", us, fmt="#,##0.0##")
                        s.widths[col] = max(s.widths[col], len(f"{us:,.1f}") + 2)  # printed whole, never ###
                r += 1
    last = r - 1
    groups_last = FIRST_ROW + len(table.group_sizes) - 1
    top = 2 ** table.log2_bytes[-1]
    below = 2 ** table.log2_bytes[-2]
    s.set(f"A{last + 2}", "Largest size (B)", style="header")
    s.set(f"B{last + 2}", top, fmt="#,##0")
    s.set(f"A{last + 3}", "The size below it (B)", style="header")
    s.set(f"B{last + 3}", below, fmt="#,##0")
    s.widths["B"] = max(s.widths["B"], len(f"{top:,}") + 2)  # the sizes printed whole, never ###
    # below the table beside the sizes (not in the rows repeated on every page, and frozen on screen, where it took
    # 9 lines across the first page), on the table's last page
    s.merges.append(f"D{last + 2}:{last_col}{last + 3}")
    s.set(
        f"D{last + 2}",
        f"catalogs/reference/{TABLE_FILE_NAME}: aiconfigurator 0.12.0's measured vLLM bf16 all-reduce (Apache-2.0, "
        f"NVIDIA), custom all-reduce below its size limit and NCCL above; catalogs/reference/{PUBLISHED_FILE_NAME}: "
        "published rows of GPUs it has not measured (MI300X: RCCL all_reduce_perf at 8 GPUs, AMD ROCm blog "
        "2025-03-02; RCCL at 2 and 4 GPUs without graphs, QuickReduce's README 2025-03-16, 32 KiB - 64 MiB, "
        "extended beyond by the rules below and read inside graphs too). Calc looks a step's all-reduce up here: "
        "log time linear in log2(bytes) and in log2(GPUs) between measured points, the smallest size's time below "
        "it, the last segment's bytes per second beyond 512 MiB; a GPU without a block borrows its nearest "
        "architecture's at bytes x that fabric's bandwidth / its own; blank: not measured (the latency + bandwidth "
        "form stands).",
        style="note",
    )
    s.heights[last + 2] = s.heights[last + 3] = 4.5 * 13.5 + 2  # the note's 9 lines over the two rows
    first_col = get_column_letter(FIRST_SIZE_COL)
    sheet = ALLREDUCE_SHEET
    names = [
        Name("ar_us", f"{sheet}!${first_col}${FIRST_ROW}:${last_col}${last}"),
        Name("ar_log2_bytes", f"{sheet}!${first_col}${HEADER_ROW}:${last_col}${HEADER_ROW}"),
        Name("ar_groups", f"{sheet}!$C${FIRST_ROW}:$C${groups_last}"),
        Name("ar_top_bytes", f"{sheet}!$B${last + 2}"),
        Name("ar_below_top_bytes", f"{sheet}!$B${last + 3}"),
    ]
    return s, names


def _microseconds(table, gpu: int, mode: int, group: int, size: int) -> float:
    """The table's microseconds as the Python model reads them (the shipped CSV's, made non-decreasing in size by
    ``planner.engines.allreduce_table``), unrounded, so LN(value / 1e6) in the sheet is the model's log to 1e-15."""
    return math.exp(table.log_seconds[gpu, mode, group, size]) * 1e6
