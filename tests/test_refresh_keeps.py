"""Issue 26 item 4: `workbook refresh` keeps what it cannot rewrite, or refuses in one line.

Each case is a real xlsx: the checked-in what-if workbook with the feature added as Excel writes it (the part
names, namespaces and extension URIs of [MS-XLSX] and ECMA-376), or written through openpyxl. Refresh either
keeps the feature (rich text, links to other workbooks) or refuses, exit 1, file untouched, naming it and
--force; with --force it goes ahead.
"""

from __future__ import annotations

import re
import zipfile

import openpyxl
import pytest
from cli_support import one_line, run
from openpyxl.cell.rich_text import CellRichText, TextBlock
from openpyxl.cell.text import InlineFont
from openpyxl.worksheet.formula import ArrayFormula
from test_hostile import WORKBOOK, copy_with

X14 = b'xmlns:x14="http://schemas.microsoft.com/office/spreadsheetml/2009/9/main"'
XM = b'xmlns:xm="http://schemas.microsoft.com/office/excel/2006/main"'
#: The Assumptions sheet's part (a sheet refresh keeps): openpyxl writes the n-th sheet as sheetN.xml.
SHEET = f"xl/worksheets/sheet{openpyxl.load_workbook(WORKBOOK, read_only=True).sheetnames.index('Assumptions') + 1}.xml"


def with_ext(ext: bytes):
    """An editor that adds a worksheet <extLst> holding ``ext`` to the Assumptions sheet."""

    def edit(name, data):
        if name == SHEET:
            if b"<extLst>" in data:  # a second feature of the same sheet (test_force_goes_ahead_whatever_it_holds)
                return data.replace(b"</extLst></worksheet>", ext + b"</extLst></worksheet>")
            return data.replace(b"</worksheet>", b"<extLst>" + ext + b"</extLst></worksheet>")
        return data

    return edit


def with_parts(parts: dict[str, bytes], types: bytes = b"", rels: bytes = b"", workbook: tuple = ()):
    """An editor that adds package parts, content-type overrides, workbook relationships and workbook.xml edits."""

    def edit(name, data):
        if name == "[Content_Types].xml":
            return data.replace(b"</Types>", types + b"</Types>")
        if name == "xl/_rels/workbook.xml.rels" and rels:
            return data.replace(b"</Relationships>", rels + b"</Relationships>")
        if name == "xl/workbook.xml" and workbook:
            return data.replace(*workbook)
        if name == "docProps/app.xml":  # the last part: add the new ones after it
            return data
        return data

    def copy(src, dest):
        copy_with(src, dest, edit)
        with zipfile.ZipFile(dest, "a", zipfile.ZIP_DEFLATED) as z:
            for part, body in parts.items():
                z.writestr(part, body)
        return dest

    return copy


def refused(wb, said: str) -> None:
    """Refresh refuses in one line naming the feature and --force, and leaves the file as it was. (That --force
    then runs is checked once, on a workbook holding every feature: test_force_goes_ahead_whatever_it_holds.)"""
    before = wb.read_bytes()
    line = one_line(run("workbook", "refresh", str(wb)), 1)
    assert said in line and "--force" in line, line
    assert wb.read_bytes() == before


THREADED = (
    b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n'
    b'<ThreadedComments xmlns="http://schemas.microsoft.com/office/spreadsheetml/2018/threadedcomments" '
    b'xmlns:x="http://schemas.openxmlformats.org/spreadsheetml/2006/main">'
    b'<threadedComment ref="B4" dT="2026-11-30T09:00:00.00" personId="{6A2E1E3B-0000-4000-8000-000000000001}" '
    b'id="{6A2E1E3B-0000-4000-8000-00000000000A}"><text>Why H100 and not H200?</text></threadedComment>'
    b'<threadedComment ref="B4" dT="2026-11-30T10:00:00.00" personId="{6A2E1E3B-0000-4000-8000-000000000001}" '
    b'id="{6A2E1E3B-0000-4000-8000-00000000000B}" parentId="{6A2E1E3B-0000-4000-8000-00000000000A}">'
    b"<text>Price: see the Options sheet.</text></threadedComment></ThreadedComments>"
)


def add_threaded_comments(src, dest):
    add = with_parts(
        {"xl/threadedComments/threadedComment1.xml": THREADED},
        types=b'<Override PartName="/xl/threadedComments/threadedComment1.xml" '
        b'ContentType="application/vnd.ms-excel.threadedcomments+xml"/>',
    )
    return add(src, dest), "2 threaded comments"


def add_x14_data_validation(src, dest):
    ext = (
        b'<ext uri="{CCE6A557-97BC-4b89-ADB6-D9C93CAAB3DF}" '
        + X14
        + b'><x14:dataValidations count="1" '
        + XM
        + b'><x14:dataValidation type="list" allowBlank="1" showInputMessage="1" showErrorMessage="1">'
        b"<x14:formula1><xm:f>Models!$A$2:$A$9</xm:f></x14:formula1><xm:sqref>H2</xm:sqref>"
        b"</x14:dataValidation></x14:dataValidations></ext>"
    )
    return copy_with(src, dest, with_ext(ext)), "1 x14 data validation"


def add_x14_data_bar(src, dest):
    ext = (
        b'<ext uri="{78C0D931-6437-407d-A8EE-F0AAD7539E65}" ' + X14 + b"><x14:conditionalFormattings>"
        b"<x14:conditionalFormatting " + XM + b'><x14:cfRule type="dataBar" '
        b'id="{00000000-000E-0000-0000-000001000000}"><x14:dataBar minLength="0" maxLength="100" gradient="0">'
        b'<x14:cfvo type="autoMin"/><x14:cfvo type="autoMax"/><x14:negativeFillColor rgb="FFFF0000"/>'
        b"</x14:dataBar></x14:cfRule><xm:sqref>C2:C9</xm:sqref></x14:conditionalFormatting>"
        b"</x14:conditionalFormattings></ext>"
    )
    return copy_with(src, dest, with_ext(ext)), "1 x14 conditional format (data bar"


def add_custom_xml_part(src, dest):
    add = with_parts(
        {
            "customXml/item1.xml": b'<?xml version="1.0"?><budget xmlns="urn:example:budget">FY27-42</budget>',
            "customXml/itemProps1.xml": b'<?xml version="1.0"?><ds:datastoreItem ds:itemID='
            b'"{5B7C3E2A-0000-4000-8000-000000000001}" '
            b'xmlns:ds="http://schemas.openxmlformats.org/officeDocument/2006/customXml"/>',
            "customXml/_rels/item1.xml.rels": b'<?xml version="1.0"?><Relationships xmlns="http://schemas.'
            b'openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.'
            b'openxmlformats.org/officeDocument/2006/relationships/customXmlProps" Target="itemProps1.xml"/>'
            b"</Relationships>",
        },
        types=b'<Override PartName="/customXml/itemProps1.xml" '
        b'ContentType="application/vnd.openxmlformats-officedocument.customXmlProperties+xml"/>',
        rels=b'<Relationship Id="rId900" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/customXml" Target="../customXml/item1.xml"/>',
    )
    return add(src, dest), "1 custom XML part"


def add_dynamic_array_spill(src, dest):
    """=SEQUENCE(3) as Excel 365 saves a spilling formula: cm="1" pointing at the XLDAPR metadata."""
    saved = dest.with_name(dest.stem + "-spill-a.xlsx")
    wb = openpyxl.load_workbook(src)
    wb["Assumptions"]["H2"] = ArrayFormula("H2:H4", "=SEQUENCE(3)")
    wb.save(saved)
    metadata = (
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<metadata xmlns="http://schemas.openxmlformats'
        b'.org/spreadsheetml/2006/main" xmlns:xda="http://schemas.microsoft.com/office/spreadsheetml/2017/'
        b'dynamicarray"><metadataTypes count="1"><metadataType name="XLDAPR" minSupportedVersion="120000" '
        b'copy="1" pasteAll="1" pasteValues="1" merge="1" splitFirst="1" rowColShift="1" clearFormats="1" '
        b'clearComments="1" assign="1" coerce="1" cellMeta="1"/></metadataTypes><futureMetadata name="XLDAPR" '
        b'count="1"><bk><extLst><ext uri="{bdbb8cdc-fa1e-496e-a857-3c3f30c029c3}"><xda:dynamicArrayProperties '
        b'fDynamic="1" fCollapsed="0"/></ext></extLst></bk></futureMetadata><cellMetadata count="1"><bk>'
        b'<rc t="1" v="0"/></bk></cellMetadata></metadata>'
    )

    def spill(name, data):
        if name == SHEET:
            data, n = re.subn(rb'<c r="H2"', b'<c r="H2" cm="1"', data)
            assert n == 1
        return data

    add = with_parts(
        {"xl/metadata.xml": metadata},
        types=b'<Override PartName="/xl/metadata.xml" '
        b'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheetMetadata+xml"/>',
        rels=b'<Relationship Id="rId901" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/sheetMetadata" Target="metadata.xml"/>',
    )
    spilled = copy_with(saved, dest.with_name(dest.stem + "-spill-b.xlsx"), spill)
    return add(spilled, dest), "1 dynamic-array formula"


def add_rows_to_a_catalog_sheet(src, dest):
    """A GPU typed below the GPUs table: refresh rewrites the sheet from the catalog and would drop it."""
    wb = openpyxl.load_workbook(src)
    ws = wb["GPUs"]
    row = next(r for r in range(2, ws.max_row + 2) if ws.cell(r, 1).value is None)
    ws.cell(row, 1, "Acme X1 96GB")
    ws.cell(row, 2, "Acme")
    ws.cell(row, 4, 96)
    wb.save(dest)
    return dest, f"GPUs row {row} ('Acme X1 96GB') is not in the catalog"


#: Each feature refresh cannot carry over: a function (source xlsx, destination) -> (destination, what the
#: refusal says). Openpyxl's edits come first, so that its saves keep the parts the others add.
REFUSED = (
    add_rows_to_a_catalog_sheet,
    add_dynamic_array_spill,
    add_threaded_comments,
    add_x14_data_validation,
    add_x14_data_bar,
    add_custom_xml_part,
)


class TestRefused:
    def test_threaded_comments_and_replies(self, tmp_path):
        refused(*add_threaded_comments(WORKBOOK, tmp_path / "b.xlsx"))

    def test_refused_with_o_says_the_original_keeps_them(self, tmp_path):
        """With -o the refusal no longer suggests -o (which it also refuses): the source keeps its comments."""
        wb, _ = add_threaded_comments(WORKBOOK, tmp_path / "b.xlsx")
        line = one_line(run("workbook", "refresh", str(wb), "-o", str(tmp_path / "new.xlsx")), 1)
        assert "2 threaded comments" in line and f"--force to refresh anyway without them ({wb} keeps them)" in line
        assert not (tmp_path / "new.xlsx").exists()

    def test_x14_data_validation(self, tmp_path):
        refused(*add_x14_data_validation(WORKBOOK, tmp_path / "b.xlsx"))

    def test_x14_data_bar(self, tmp_path):
        refused(*add_x14_data_bar(WORKBOOK, tmp_path / "b.xlsx"))

    def test_custom_xml_part(self, tmp_path):
        refused(*add_custom_xml_part(WORKBOOK, tmp_path / "b.xlsx"))

    def test_dynamic_array_spill(self, tmp_path):
        refused(*add_dynamic_array_spill(WORKBOOK, tmp_path / "b.xlsx"))

    def test_rows_added_to_a_catalog_sheet(self, tmp_path):
        refused(*add_rows_to_a_catalog_sheet(WORKBOOK, tmp_path / "b.xlsx"))

    def test_force_goes_ahead_whatever_it_holds(self, tmp_path):
        """One workbook with every refused feature above: refused in one line, and --force refreshes it (one
        refresh for all six, each a full refresh with its LibreOffice recalculation)."""
        wb = WORKBOOK
        for i, add in enumerate(REFUSED):
            wb, said = add(wb, tmp_path / f"{i}.xlsx")
        from planner.workbook.update import package_features

        held = package_features(wb) - package_features(WORKBOOK)
        assert held == {
            "threaded comment": 2,
            "x14 data validation": 1,
            "x14 conditional format (data bar, icon set)": 1,
            "custom XML part": 1,
            "dynamic-array formula": 1,
        }
        refused(wb, "is not in the catalog")  # the first check refresh makes (the added GPUs row)
        r = run("workbook", "refresh", str(wb), "--force")
        assert r.exit_code == 0, r.output


def add_rich_text(src, dest):
    """A note with bold and red runs on the Assumptions sheet (openpyxl writes the runs)."""
    wb = openpyxl.load_workbook(src, rich_text=True)
    note = CellRichText(["Budget ", TextBlock(InlineFont(b=True, color="FFFF0000"), "approved"), " on 30 Nov"])
    wb["Assumptions"]["H2"] = note
    wb.save(dest)
    return dest


def add_link_to_another_workbook(src, dest):
    link = (
        b'<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<externalLink xmlns="http://schemas.'
        b'openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/'
        b'officeDocument/2006/relationships"><externalBook r:id="rId1"><sheetNames><sheetName val="Quotes"/>'
        b'</sheetNames><sheetDataSet><sheetData sheetId="0"><row r="1"><cell r="A1"><v>2.49</v></cell></row>'
        b"</sheetData></sheetDataSet></externalBook></externalLink>"
    )
    link_rels = (
        b'<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/'
        b'relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/externalLinkPath" Target="quotes.xlsx" TargetMode="External"/></Relationships>'
    )
    add = with_parts(
        {"xl/externalLinks/externalLink1.xml": link, "xl/externalLinks/_rels/externalLink1.xml.rels": link_rels},
        types=b'<Override PartName="/xl/externalLinks/externalLink1.xml" '
        b'ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.externalLink+xml"/>',
        rels=b'<Relationship Id="rId902" Type="http://schemas.openxmlformats.org/officeDocument/2006/'
        b'relationships/externalLink" Target="externalLinks/externalLink1.xml"/>',
        workbook=(
            b"</sheets>",
            b'</sheets><externalReferences><externalReference r:id="rId902"/></externalReferences>',
        ),
    )
    return add(src, dest)


def add_fallback_font_runs(src, dest):
    """A GPUs-sheet source note split into runs by font, as LibreOffice Calc saves planner's own text where a
    character needs a fallback font (a what-if saved in Calc held 8 such runs, all on the catalog sheets)."""
    wb = openpyxl.load_workbook(src, rich_text=True)
    ws = wb["GPUs"]
    cell = next(
        c for row in ws.iter_rows(min_row=2, max_row=3) for c in row if isinstance(c.value, str) and " " in c.value
    )
    head, tail = cell.value.split(" ", 1)
    cell.value = CellRichText(
        [TextBlock(InlineFont(rFont="Calibri", sz=11), head + " "), TextBlock(InlineFont(rFont="DejaVu Sans"), tail)]
    )
    wb.save(dest)
    return dest, cell.coordinate


@pytest.fixture(scope="module")
def kept(tmp_path_factory):
    """The what-if workbook with a rich-text note, a link to another workbook and a catalog-sheet note in runs (as
    LibreOffice saves it), refreshed once (no --force)."""
    tmp = tmp_path_factory.mktemp("kept")
    path, _ = add_fallback_font_runs(WORKBOOK, tmp / "0.xlsx")
    path = add_link_to_another_workbook(add_rich_text(path, tmp / "a.xlsx"), tmp / "b.xlsx")
    with zipfile.ZipFile(path) as z:  # both are there before the refresh
        assert "xl/externalLinks/externalLink1.xml" in z.namelist()
    assert isinstance(openpyxl.load_workbook(path, rich_text=True)["Assumptions"]["H2"].value, CellRichText)
    r = run("workbook", "refresh", str(path))
    assert r.exit_code == 0, r.output
    return path


@pytest.mark.xdist_group("test_refresh_keeps_kept")  # one worker refreshes ``kept`` for both
class TestKept:
    def test_rich_text(self, kept):
        """A note with bold and red runs on the Assumptions sheet comes back with the same runs."""
        back = openpyxl.load_workbook(kept, rich_text=True)["Assumptions"]["H2"].value
        assert isinstance(back, CellRichText) and str(back) == "Budget approved on 30 Nov"
        bold = [b for b in back if isinstance(b, TextBlock)]
        assert bold and bold[0].text == "approved" and bold[0].font.b

    def test_runs_on_a_catalog_sheet_are_rewritten_not_refused(self, kept):
        """Runs in a catalog sheet's cells are planner's own text, written again from the catalog: no refusal (a
        what-if saved in LibreOffice Calc was refused for "8 rich-text runs"; found by s58), plain text after."""
        ws = openpyxl.load_workbook(kept, rich_text=True)["GPUs"]
        assert not any(isinstance(c.value, CellRichText) for row in ws.iter_rows() for c in row)

    def test_link_to_another_workbook(self, kept):
        with zipfile.ZipFile(kept) as z:
            names = z.namelist()
            kept_links = [n for n in names if n.startswith("xl/externalLinks/externalLink")]
            assert kept_links, names
            assert b"quotes.xlsx" in b"".join(z.read(n) for n in names if n.startswith("xl/externalLinks/_rels/"))
