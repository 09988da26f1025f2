"""Printed measures every xlsx planner writes is laid out by: the page, the cells' text size, the smallest text a
printed sheet may show and how wide a column of N characters prints in Excel and in LibreOffice.

May import nothing of planner.
"""

from __future__ import annotations

import math

#: The cells' text size (openpyxl's default font, Calibri 11).
BASE_FONT_PT = 11.0
#: The smallest printed text: 11-pt cells at 73% (``MIN_PRINT_SCALE``) or more.
MIN_PRINT_PT = 8.0
#: The smallest scale a sheet prints at, whole per cent: 73%.
MIN_PRINT_SCALE_PCT = math.ceil(100 * MIN_PRINT_PT / BASE_FONT_PT)
#: Excel's printed width of a column, points per character of its width (Calibri 11's 7-px digit; 96 px an inch).
EXCEL_PT_PER_CHAR = 5.25
#: LibreOffice's, where it substitutes DejaVu Sans for Calibri: measured on the review's "Options compared" printed at
#: 100% (30 + 4 x 18 = 102 characters took 713 pt) and on the what-if workbook's Precisions sheet fit to width (143
#: characters took 1,000 pt): 7.0 pt each.
LO_PT_PER_CHAR = 7.0
#: A4, inches (width, height).
A4_IN = (8.27, 11.69)
