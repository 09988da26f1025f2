"""Text from users and catalogs, made safe for the files planner writes: xlsx cells and Markdown.

A name such as ``=HYPERLINK("http://evil","click")`` or ``Option\\n# Approved`` must land as the text it is:

- ``xlsx_text(value)``: a string that never starts a formula (a leading ``= + - @`` gets the conventional
  apostrophe, as OWASP advises for spreadsheets), without the control characters XML cannot hold, at most
  the 32,767 characters a cell holds. Safe anywhere a string goes into a workbook: cells, chart titles,
  series names.
- ``write_text(cell, value)``: writes the text itself into an openpyxl cell as a string cell (data type
  ``s``, Excel's "quote prefix" set when it starts like a formula), so Excel shows the name unchanged and
  never evaluates it, even after the user edits the cell.
- ``cell_text(value)``: the text an xlsx holds for ``value`` anywhere, a formula's cached value included:
  without the characters XML 1.0 cannot hold, cut to what a cell holds.
- ``header_text(value, max_chars)``: text for a printed page header or footer (``&`` doubled, at most
  ``max_chars``; Excel refuses a header or footer over 255 characters).
- ``md_text(value)``: one line of Markdown that renders as the literal text: no heading, list, table cell
  break, emphasis, code, link, image, raw HTML or ``javascript:`` URL.
- ``csv_text(value)``: a CSV text cell that starts no formula whichever separator the spreadsheet splits on
  (``,`` ``;`` tab ``|``): ``x;=1+1;`` -> ``x;'=1+1;``.
- ``message_text(value)`` / ``terminal_text(value)``: text for the terminal with control characters (ESC,
  BEL, NUL, CR, ...) and bidirectional overrides shown as escapes; ``terminal_text`` keeps line breaks.
"""

from __future__ import annotations

import re

#: Characters that make a spreadsheet read a value as a formula (= + - @), plus tab and carriage return,
#: which some importers skip before looking for them.
FORMULA_TRIGGERS = ("=", "+", "-", "@", "\t", "\r")
#: What an xlsx cell holds at most (Excel's limit).
MAX_CELL_CHARS = 32767
#: Characters a printed page header or footer holds, codes included (Microsoft, "Excel specifications and
#: limits": "Number of characters in a header or footer: 255").
MAX_HEADER_CHARS = 255
#: Separators a spreadsheet may split a CSV line on (regional settings: ';' in German and French Excel).
CSV_SEPARATORS = (",", ";", "\t", "|")

# XML 1.0 forbids these; openpyxl raises IllegalCharacterError on them.
_XML_ILLEGAL = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_LINE_BREAKS = re.compile(r"\r\n|[\n\r\v\f\x85\u2028\u2029]")
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")
# C0 and C1 controls (ESC starts CSI/OSC sequences, 0x9b is a one-byte CSI), line/paragraph separators and the
# bidirectional embeddings, overrides and isolates that reorder what a terminal shows ("Trojan Source").
_TERMINAL_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")
_TERMINAL_CONTROL_BUT_NEWLINE = re.compile(
    r"[\x00-\x09\x0b-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)
# A formula trigger at the start of any piece a CSV reader may split the text into, after blanks or quotes
# (a reader splitting on ";" reads ";\"=" as a quoted field that starts with "=").
# (Line breaks count as separators too: a reader that ignores quotes starts a row there.)
_CSV_PIECE_START = re.compile(r"(^|[,;\t|\n])((?:[^\S\t\n\r]|\")*)(?=[=+\-@\r])")
# Markdown punctuation that opens inline syntax anywhere in a line (CommonMark lets any ASCII punctuation
# be escaped). A link or image needs "[", so "(" and "!" need no escape.
_MD_SPECIAL = re.compile(r"([\\`*_\[\]#|~])")
# What opens a block only at the start of a line: a list item (- + * 1. 1)); a quote (>) is escaped wherever the
# text starts, a table cell's too.
_MD_LINE_START = re.compile(r"^([-+]|\d+(?=[.)]))")
# Raw HTML (CommonMark 6.6) and an autolink (6.5) open with "<" and a letter, "/", "!" or "?"; an entity or a
# character reference (2.5) is "&", a name or "#" and digits, and ";". Only those get a backslash (CommonMark 2.4:
# "\<" and "\&" render as "<" and "&"): "> 100B", "2 -> 4 GPUs", "x < 5 ms", "R&D" stay as written, where HTML
# entities read "&gt;" in a ticket or an e-mail that does not render Markdown (trial 26 F15).
_MD_HTML_OPEN = re.compile(r"<(?=[A-Za-z/!?])")
_MD_ENTITY_OPEN = re.compile(r"&(?=#?[A-Za-z0-9]+;)")
# A live URL scheme ("javascript:alert(1)"): its colon becomes a character reference. "scenario file: H100" is no
# scheme (a blank follows the colon) and keeps its colon (trial 26 F15: "scenario file&#58; H100 bought").
_URL_SCHEME = re.compile(r"\b((?:javascript|vbscript|data|file)\s*):(?=\S)", re.IGNORECASE)


def _text(value: object) -> str:
    return "" if value is None else str(value)


def cell_text(value: object) -> str:
    """The text with the characters XML 1.0 cannot hold removed, cut to the 32,767 characters a cell holds.

    What every string that goes into an xlsx part passes through, a formula's cached value included.
    """
    return _XML_ILLEGAL.sub("", _text(value))[:MAX_CELL_CHARS]


_cell_text = cell_text


def header_text(value: object, max_chars: int = MAX_HEADER_CHARS) -> str:
    """Text for a printed page header or footer: no XML-illegal characters, ``&`` doubled (it starts a code
    there), at most ``max_chars`` characters (cut with an ellipsis, never between the two ``&`` of a pair)."""
    text = _XML_ILLEGAL.sub("", _text(value)).replace("&", "&&")
    if len(text) <= max_chars:
        return text
    if max_chars <= 0:
        return ""
    cut = text[: max_chars - 1]
    if (len(cut) - len(cut.rstrip("&"))) % 2:  # half of a doubled '&'
        cut = cut[:-1]
    return cut + "\u2026"


def starts_formula(text: str) -> bool:
    """True when a spreadsheet could read ``text`` as a formula: it starts with = + - @ (after blanks)."""
    return text.lstrip(" ").startswith(FORMULA_TRIGGERS)


def xlsx_text(value: object) -> str:
    """User or catalog text made safe for a workbook: never a formula, no XML-illegal characters.

    A text that starts like a formula gets a leading apostrophe: ``=SUM(A1)`` -> ``'=SUM(A1)``.
    """
    text = _cell_text(value)
    if starts_formula(text):
        text = ("'" + text)[:MAX_CELL_CHARS]
    return text


def write_text(cell, value: object):
    """Write ``value`` into an openpyxl cell as a string cell; it shows unchanged and is never evaluated.

    The cell gets data type ``s`` (openpyxl would make ``=...`` a formula) and, when the text starts like a
    formula, Excel's quote prefix, so it stays text when the user edits it. Returns the cell.
    """
    text = _cell_text(value)
    cell.value = text
    cell.data_type = "s"
    if starts_formula(text):
        cell.quotePrefix = True
    return cell


def md_text(value: object, *, line_start: bool = True) -> str:
    """User or catalog text as one line of Markdown that renders as itself.

    Line breaks become spaces, control characters go, and every Markdown punctuation mark that could open syntax
    gets a backslash (so no heading, list, quote, emphasis, code, link, image, table-cell break, raw HTML or
    entity): a ``<`` that could open a tag and an ``&`` that could open an entity only, so ``->`` and ``> 100B``
    read as written, with no HTML entities in the plain text (trial 26 F15). A ``javascript:``-style scheme loses
    its live colon (``&#58;``). A leading list marker (``-``, ``+``, ``1.``) is escaped too unless
    ``line_start=False`` (table cells, text after "# ").
    """
    text = _CONTROL.sub("", _LINE_BREAKS.sub(" ", _text(value))).strip()  # 4 leading blanks: a code block
    text = _MD_SPECIAL.sub(r"\\\1", text)
    if line_start:
        text = _MD_LINE_START.sub(lambda m: m.group(1) + "\\" if m.group(1)[0].isdigit() else "\\" + m.group(1), text)
    if text.startswith(">"):  # a block quote
        text = "\\" + text
    text = _MD_ENTITY_OPEN.sub(r"\\&", _MD_HTML_OPEN.sub(r"\\<", text))
    return _URL_SCHEME.sub(lambda m: m.group(1) + "&#58;", text)


def csv_text(value: object) -> str:
    """A CSV text cell that starts no formula, whichever separator a spreadsheet splits the line on.

    Every piece that a split on ``,`` ``;`` tab or ``|`` would start with ``= + - @`` (after blanks) gets a
    leading apostrophe, which spreadsheets show as text (OWASP "CSV injection"): ``=1+1`` -> ``'=1+1``,
    ``x;=1+1;`` -> ``x;'=1+1;``. Control characters other than tab and line breaks are removed.
    """
    text = _XML_ILLEGAL.sub("", _CONTROL.sub("", _text(value)))
    return _CSV_PIECE_START.sub(lambda m: m.group(1) + "'" + m.group(2), text)


def terminal_text(value: object) -> str:
    """Text (lines of it) for the terminal: like ``message_text`` but line breaks are kept."""
    return _TERMINAL_CONTROL_BUT_NEWLINE.sub(_escape, _text(value))


def _escape(m: re.Match) -> str:
    return m.group().encode("unicode_escape").decode("ascii")


def message_text(value: object) -> str:
    """Text for a one-line message on a terminal: line breaks and control characters shown as escapes.

    ``"a\x00b\nc"`` -> ``a\\x00b\\nc``: a NUL, an escape sequence or a newline from the user's input is
    never echoed raw.
    """
    return _TERMINAL_CONTROL.sub(_escape, _text(value))


__all__ = [
    "CSV_SEPARATORS",
    "FORMULA_TRIGGERS",
    "MAX_CELL_CHARS",
    "MAX_HEADER_CHARS",
    "cell_text",
    "csv_text",
    "header_text",
    "md_text",
    "message_text",
    "starts_formula",
    "terminal_text",
    "write_text",
    "xlsx_text",
]
