"""Names from users and catalogs land as text in the review (xlsx, md) and the what-if workbook (issue 13).

An xlsx cell is a formula only when its XML has an ``<f>`` element (ECMA-376 Part 1, 18.3.1.40); a chart
series name is a reference only as ``<c:strRef><c:f>`` (21.2.2.215). A Markdown line starting with ``#`` is a
heading and ``<img`` raw HTML (CommonMark 0.31, 4.2 and 6.6).
"""

from __future__ import annotations

import re
import zipfile
from pathlib import Path

import openpyxl
import pytest
import tomli_w
from cli_support import without_libreoffice
from click.testing import CliRunner

from planner.catalog import default_catalog
from planner.cli import main

#: One worker computes this module's module-scoped fixtures (pyproject: --dist loadgroup).
pytestmark = pytest.mark.xdist_group("test_injection")

EVIL = '=HYPERLINK("http://evil.invalid/x","click")'
EVIL_GPU = '=HYPERLINK("http://evil.invalid/gpu","GPU")'
MULTILINE = "Opt\n# Approved <img src=x onerror=alert(1)> [go](javascript:alert(1)) | x"


@pytest.fixture(scope="module")
def hostile(tmp_path_factory) -> tuple[Path, Path]:
    """A catalog folder with a GPU named like a formula (source with HTML), and a scenario naming it."""
    root = tmp_path_factory.mktemp("inj")
    gpu = default_catalog().gpu("H100").model_dump(mode="json", exclude_none=True)
    gpu.update(name=EVIL_GPU, aliases=["evilgpu"], source="=1+1 <script>x</script>\nsecond line")
    (root / "cat").mkdir()
    (root / "cat" / "evil.toml").write_text(tomli_w.dumps({"gpu": [gpu]}), encoding="utf-8")
    scenario = {
        "title": EVIL,
        "workload": {
            "peak_requests_per_s": 4,
            "average_requests_per_s": 2,
            "prompt_tokens_mean": 800,
            "prompt_tokens_high": 2000,
            "output_tokens_mean": 300,
            "output_tokens_high": 800,
            "ttft_target_s": 2.0,
            "tpot_target_s": 0.08,
        },
        "option": [
            {"name": MULTILINE, "gpu": "H100", "model": "llama2-7b"},
            {"name": EVIL, "gpu": "evilgpu", "model": "llama2-7b"},
        ],
    }
    (root / "s.toml").write_text(tomli_w.dumps(scenario), encoding="utf-8")
    return root / "cat", root / "s.toml"


def formulas_and_series(path: Path) -> tuple[list[str], list[str]]:
    """Every cell formula and every chart series/title reference in an xlsx package."""
    formulas, refs = [], []
    with zipfile.ZipFile(path) as z:
        for name in z.namelist():
            xml = z.read(name).decode("utf-8", "replace")
            if name.startswith("xl/worksheets/"):
                formulas += re.findall(r"<f[^>]*>([^<]*)</f>", xml)
            if name.startswith("xl/charts/"):
                refs += re.findall(r"<(?:c:)?f>([^<]*)</(?:c:)?f>", xml)
    return formulas, refs


def run(*args: str):
    r = CliRunner().invoke(main, list(args))
    assert r.exit_code == 0, r.output
    return r


def test_review_xlsx_holds_the_names_as_text(hostile, tmp_path):
    cat, scenario = hostile
    out = tmp_path / "r.xlsx"
    run("export", str(scenario), "-o", str(out), "--catalog", str(cat), "-q")
    formulas, refs = formulas_and_series(out)
    assert formulas, "the review has formulas of its own"
    assert not [f for f in formulas + refs if "HYPERLINK" in f or "evil" in f]
    wb = openpyxl.load_workbook(out)
    texts = {c.value for ws in wb.worksheets for row in ws.iter_rows() for c in row if c.data_type == "s"}
    assert EVIL in texts  # the title, shown exactly as written
    assert any(isinstance(t, str) and t.startswith(EVIL_GPU) for t in texts)  # the GPU name, in tables


def test_review_md_holds_the_names_as_text(hostile, tmp_path):
    cat, scenario = hostile
    out = tmp_path / "r.md"
    run("export", str(scenario), "-o", str(out), "--catalog", str(cat), "-q")
    md = out.read_text(encoding="utf-8")
    assert not [line for line in md.splitlines() if line.startswith("# Approved")]
    # no raw tag: every "<" that opens one is backslash-escaped (CommonMark 2.4: renders as "<", plain text)
    assert not re.search(r"(?<!\\)<(img|script)", md)
    assert "](javascript:" not in md
    assert r"\# Approved \<img" in md  # the option name, escaped on one line


def test_whatif_workbook_catalog_sheets_hold_names_as_text(hostile, tmp_path, monkeypatch):
    """The written book (with its stored values) and its refresh (without soffice on PATH: the refresh's formulas and
    chart series are checked, not its values; ~5 s CPU of recalculation saved) hold the names as text."""
    cat, _ = hostile
    run("workbook", "-o", str(tmp_path), "--catalog", str(cat), "--gpus", "evilgpu,H100", "--models", "llama2-7b")
    book = tmp_path / "capacity-what-if.xlsx"
    formulas, refs = formulas_and_series(book)
    assert formulas and not [f for f in formulas + refs if "HYPERLINK" in f or "evil" in f]
    wb = openpyxl.load_workbook(book)
    names = [c.value for c in wb["GPUs"]["A"][1:]]
    assert "'" + EVIL_GPU in names  # the conventional apostrophe: text, never a formula
    sources = [c.value for row in wb["GPUs"].iter_rows() for c in row if isinstance(c.value, str)]
    assert "'=1+1 <script>x</script>\nsecond line" in sources

    refreshed = tmp_path / "refreshed.xlsx"
    without_libreoffice(monkeypatch)
    run("workbook", "refresh", str(book), "-o", str(refreshed), "--catalog", str(cat), "--gpus", "evilgpu,H100")
    formulas, refs = formulas_and_series(refreshed)
    assert not [f for f in formulas + refs if "HYPERLINK" in f or "evil" in f]
