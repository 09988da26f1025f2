"""Number formats shared by the workbook's sheets (SI units: 1 GB = 1e9 B; cells hold exact base units)."""

GB = '#,##0.00,,," GB"'
GBS = '#,##0,,," GB/s"'
TFLOPS = '#,##0.0,,,," TFLOP/s"'
USD = '"$"#,##0.00'
INT = "#,##0"
MS = '#,##0.00" ms"'
MS_BEFORE_TEXT = '#,##0.00" ms   "'  # right-aligned beside a left-aligned text column: a gap before the text
# Number-only forms for table columns whose header names the unit ("Memory (GB)"): narrow, readable columns.
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
