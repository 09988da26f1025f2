"""planner.io.safetext: names from users and catalogs land in xlsx and Markdown as text.

Expected values follow the formats' own rules: an xlsx cell is a formula only when it has an ``<f>`` element
(ECMA-376 Part 1, 18.3.1.40 ``f``); a string cell is ``t="s"`` or ``t="inlineStr"`` (18.18.11 ST_CellType);
Markdown escapes are CommonMark 0.31 section 2.4 (backslash escapes) and 2.5 (entity references).
"""

from __future__ import annotations

import io
import re
import zipfile

import openpyxl
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from planner.io.safetext import md_text, starts_formula, write_text, xlsx_text

HOSTILE = [
    '=HYPERLINK("http://example.invalid/x","click")',
    "+1+cmd|' /C calc'!A0",
    "-2+3",
    "@SUM(A1:A2)",
    "  =1+1",
    "\t=1",
    "Llama\x00 70B\x1b",
    "a\nb",
]


def _saved(write) -> tuple[openpyxl.Workbook, str]:
    """Write one cell with ``write``, save, and return the reloaded workbook and the sheet's raw XML."""
    wb = openpyxl.Workbook()
    write(wb.active["A1"])
    buf = io.BytesIO()
    wb.save(buf)
    xml = zipfile.ZipFile(io.BytesIO(buf.getvalue())).read("xl/worksheets/sheet1.xml").decode()
    return openpyxl.load_workbook(io.BytesIO(buf.getvalue())), xml


class TestXlsxText:
    def test_formula_text_gets_an_apostrophe(self):
        """A text that starts like a formula is prefixed with the apostrophe (OWASP's advice)."""
        assert xlsx_text('=HYPERLINK("http://x","c")') == '\'=HYPERLINK("http://x","c")'
        assert xlsx_text("@cmd") == "'@cmd"
        assert xlsx_text("H100 SXM") == "H100 SXM"

    @pytest.mark.parametrize("name", HOSTILE)
    def test_assigned_value_is_never_a_formula(self, name):
        """Even assigned as a plain cell value, xlsx_text's result is stored as a string, not a formula."""

        def write(cell):
            cell.value = xlsx_text(name)

        wb, xml = _saved(write)
        assert "<f>" not in xml and "<f " not in xml
        assert wb.active["A1"].data_type == "s"

    def test_strips_what_xml_cannot_hold(self):
        """NUL and ESC are not XML 1.0 characters; openpyxl would raise IllegalCharacterError on them."""
        assert xlsx_text("Llama\x00 70B\x1b") == "Llama 70B"

    def test_cut_to_a_cell(self):
        """An xlsx cell holds at most 32,767 characters (Excel specifications and limits)."""
        assert len(xlsx_text("x" * 40000)) == 32767


class TestWriteText:
    @pytest.mark.parametrize("name", HOSTILE)
    def test_lands_as_the_text_itself(self, name):
        """write_text stores the name unchanged (no apostrophe) as a string cell, with Excel's quote prefix."""
        wb, xml = _saved(lambda cell: write_text(cell, name))
        cell = wb.active["A1"]
        assert "<f>" not in xml and "<f " not in xml
        assert cell.data_type == "s"
        assert cell.value == re.sub(r"[\x00-\x08\x0b\x0c\x0e-\x1f]", "", name)
        assert cell.quotePrefix == starts_formula(cell.value)

    def test_none_is_empty_text(self):
        wb, _ = _saved(lambda cell: write_text(cell, None))
        assert wb.active["A1"].value is None  # openpyxl writes an empty string cell as no value


class TestMdText:
    @pytest.mark.parametrize(
        ("name", "want"),
        [
            ("Option\n# Approved", r"Option \# Approved"),  # no heading on a new line
            ("<img src=x onerror=alert(1)>", r"\<img src=x onerror=alert(1)>"),  # no raw HTML (CommonMark 6.6)
            ("</b><!-- x --><?php", r"\</b>\<!-- x -->\<?php"),  # no closing tag, comment or instruction
            ("<https://e.invalid>", r"\<https://e.invalid>"),  # no autolink (CommonMark 6.5)
            ("&lt;b&gt; &#60;", r"\&lt;b\&gt; &\#60;"),  # no entity or character reference (2.5; "#" escaped)
            # trial 26 F15: plain characters where Markdown needs no escape, no "&gt;" / "&#58;" in a ticket
            ("no figures of >100B-parameter models", "no figures of >100B-parameter models"),
            ("tensor-parallel group 2 -> 4 GPUs; x < 5 ms", "tensor-parallel group 2 -> 4 GPUs; x < 5 ms"),
            ("scenario file: H100 bought", "scenario file: H100 bought"),  # no scheme: a blank after the colon
            ("> quoted", r"\> quoted"),  # no block quote
            ("![x](http://e.invalid/i.png)", r"!\[x\](http://e.invalid/i.png)"),  # no image
            ("[click](javascript:alert(1))", r"\[click\](javascript&#58;alert(1))"),  # no link, no live scheme
            ("a|b", r"a\|b"),  # no table-cell break
            ("- item", r"\- item"),  # no list
            ("12. item", r"12\. item"),  # no ordered list
            ("    code", "code"),  # no indented code block
            ("**b** `c` _d_ ~~e~~", r"\*\*b\*\* \`c\` \_d\_ \~\~e\~\~"),
            ("A&B R&D", "A&B R&D"),  # no entity: none ends in ";"
            ("Llama-3.1-70B (fp8)", "Llama-3.1-70B (fp8)"),  # ordinary names stay readable
        ],
    )
    def test_known_cases(self, name, want):
        assert md_text(name) == want

    @settings(max_examples=200, deadline=None)
    @given(st.text())
    def test_one_inert_line(self, text):
        """Any text: one line, no raw tag, autolink, entity or block quote, no unescaped pipe, backtick, bracket or
        emphasis mark, no live URL scheme (a scheme's colon followed by a non-blank)."""
        out = md_text(text)
        assert not re.search(r"[\n\r\x00]", out) and not out.startswith(">")
        unescaped = re.sub(r"\\.", "", out)  # drop every backslash escape; what is left must be inert
        assert not re.search(r"[|`\[\]*_#~]", unescaped)
        assert not re.search(r"<[A-Za-z/!?]", unescaped)  # CommonMark 6.5, 6.6: what opens a tag or autolink
        assert not re.search(r"(?<!\\)&#?[A-Za-z0-9]+;", out.replace("&#58;", ""))  # 2.5, but the scheme's colon
        assert not re.search(r"(?i)(javascript|vbscript|data|file)\s*:\S", out)


@settings(max_examples=100, deadline=None)
@given(st.text(max_size=50))
def test_xlsx_text_never_starts_a_formula(text):
    assert not starts_formula(xlsx_text(text)) and not xlsx_text(text).startswith("=")
