"""Number formats shared by the workbook's sheets (SI units: 1 GB = 1e9 B; cells hold exact base units).

The workbook's one convention for units: a cell holds its quantity in base units (bytes, bytes/s, FLOP, FLOP/s,
seconds, counts), so a formula or a copied value is exact; a number format shows it scaled (GB, GB/s, TFLOP/s,
GFLOP, billions). Wherever a scaled unit is named, in a column's header or beside a value, what the cell holds is
named with it (``shown_unit``, ``cell_holds``): "Memory, physical (GB; cells hold bytes)" (trial 21 F9: a copied
"(GB)" cell gave 80,000,000,000). Times shown in ms are computed in ms (x 1000), and say ms alone.
"""

GB = '#,##0.00,,," GB"'
GBS = '#,##0,,," GB/s"'
TFLOPS = '#,##0.0,,,," TFLOP/s"'
USD = '"$"#,##0.00'
INT = "#,##0"
MS = '#,##0.00" ms"'
MS_BEFORE_TEXT = '#,##0.00" ms   "'  # right-aligned beside a left-aligned text column: a gap before the text
#: Each scaled unit a sheet shows -> the base unit its cells hold.
CELL_HOLDS = {
    "GB": "bytes",
    "MB": "bytes",
    "kB": "bytes",
    "GB/s": "bytes/s",
    "TFLOP/s": "FLOP/s",
    "GFLOP": "FLOP",
    "billions": "the count",
}


def shown_unit(shown: str) -> str:
    """A column header's unit where a number format scales the cells: 'GB; cells hold bytes'."""
    return f"{shown}; cells hold {CELL_HOLDS[shown]}"


def cell_holds(shown: str) -> str:
    """Beside a value whose format shows ``shown`` ("80.00 GB"), what the cell holds: 'cell: bytes' ('' if it holds
    what it shows)."""
    return f"cell: {CELL_HOLDS[shown]}" if shown in CELL_HOLDS else ""


# Number-only forms for table columns whose header names the unit ("Memory (GB; cells hold bytes)").
GB_NUM = "#,##0.00,,,"
GBS_NUM = "#,##0,,,"
TFLOPS_NUM = "#,##0.0,,,,"
BILLIONS = "#,##0.00,,,"  # a count shown in billions (parameters)
GFLOP_NUM = "#,##0.00,,,"  # FLOP shown in GFLOP (1e9), the unit named in the header
SECONDS_NUM = "0.000000"  # seconds to the microsecond, fixed point: no scientific notation on a printed page
# The ranking cost: US$ like the fleet cost beside it; its 10^300 placeholder (misses a target, or no cost) reads
# "not ranked" instead of a 301-digit number.
NOT_RANKED_USD = '[>=1E+299]"not ranked";"$"#,##0.00'
# A TRUE / FALSE cell: LibreOffice shows a boolean of a General cell as 1 / 0 where "TRUE" does not fit beside a
# filled next cell (bold input cells on Assumptions with a Unit beside them), TRUE / FALSE where it overflows into an
# empty one; this format reads TRUE / FALSE in both (nonzero TRUE, 0 FALSE), as Excel shows a boolean.
BOOL = '"TRUE";"TRUE";"FALSE"'
