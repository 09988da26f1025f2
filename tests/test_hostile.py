"""Hostile input, issue 9 item 11 and issue 13: each case the issue reports, as a user would meet it.

Each case checks the one-line message (what was wrong, where) and the exit code: 2 for bad input, 1 for a
failure (planner/errors.py). The inputs are the issue's own examples.
"""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path

import cli_support
import pytest
import tomli_w
from cli_support import one_line, run, without_libreoffice

from planner.catalog import default_catalog

ROOT = Path(__file__).resolve().parents[1]
WORKBOOK = ROOT / "workbooks" / "capacity-what-if.xlsx"

#: cli_support's one-option scenario with a title, a growth and a named option: the lines the cases below replace.
SCENARIO = 'title = "T"\n' + cli_support.SCENARIO.replace(
    "tpot_target_s = 0.05\n", "tpot_target_s = 0.05\ngrowth_over_horizon = 0.5\n"
).replace("[[option]]\n", '[[option]]\nname = "H100, rented"\n')


def user_gpu(folder: Path, **changes) -> Path:
    """A catalog folder with one GPU, 'Evil', a copy of the shipped H100 with ``changes`` (None: left out)."""
    entry = default_catalog().gpu("H100").model_dump(mode="json", exclude_none=True)
    entry.update(name="Evil", aliases=[], **changes)
    entry = {k: v for k, v in entry.items() if v is not None}
    folder.mkdir(exist_ok=True)
    (folder / "evil.toml").write_text(tomli_w.dumps({"gpu": [entry]}), encoding="utf-8")
    return folder


def with_price(entry_changes: dict, value) -> dict:
    """The H100 entry's hourly price set to ``value``, whichever price layout the catalog uses."""
    entry = default_catalog().gpu("H100").model_dump(mode="json", exclude_none=True)
    if "prices" in entry:
        prices = [dict(p) for p in entry["prices"]]
        prices[0]["usd_per_gpu_hour"] = value
        return {**entry_changes, "prices": prices}
    return {**entry_changes, "price": {**entry["price"], "cloud_usd_per_gpu_hour": value}}


class TestCatalogNumbers:
    """Issue 9 item 11: a catalog number is finite and of the right type, or one line naming file, entry, field."""

    @pytest.mark.parametrize(
        ("field", "value", "said"),
        [
            ("hbm_bandwidth_bytes_per_s", float("inf"), "finite number; got inf"),
            ("memory_bytes", True, "valid integer; got true"),
            ("tdp_w", float("nan"), "finite number; got nan"),
            ("memory_bytes", "80 GB", "valid integer; got '80 GB'"),
        ],
    )
    def test_refused_with_file_entry_and_field(self, tmp_path, field, value, said):
        folder = user_gpu(tmp_path / "cat", **{field: value})
        line = one_line(
            run("plan", "--catalog", str(folder), "--gpu", "Evil", "--model", "llama2-70b", "--context", "8192"), 2
        )
        assert f"evil.toml: gpu 'Evil': field '{field}'" in line and said in line

    def test_price_inf(self, tmp_path):
        folder = user_gpu(tmp_path / "cat", **with_price({}, float("inf")))
        line = one_line(
            run("plan", "--catalog", str(folder), "--gpu", "Evil", "--model", "llama2-70b", "--context", "8192"), 2
        )
        assert "gpu 'Evil'" in line and "finite number" in line

    def test_memory_near_2_63_does_not_blame_a_batch_nobody_gave(self, tmp_path):
        """0.1.0 said "batch must be ... got 7652085516" though no batch was given."""
        folder = user_gpu(
            tmp_path / "cat",
            memory_bytes=2**63 - 1,
            engine_visible_memory_bytes=None,
            engine_visible_memory_source=None,
        )
        line = one_line(
            run("plan", "--catalog", str(folder), "--gpu", "Evil", "--model", "llama2-70b", "--context", "8192"), 2
        )
        assert "batch must be" not in line
        # trial 18 F1: refused where it is read, by the schema's plausibility bound (64 TiB, schema.GPU_BOUNDS)
        assert "memory_bytes = 9223372036854775807 is bytes, at most 70368744177664 (64 TiB)" in line

    def test_deeply_nested_toml(self, tmp_path):
        """tomllib recurses per nesting level: 1,000 levels were a RecursionError traceback."""
        (tmp_path / "deep.toml").write_text("[[gpu]]\nname = " + "[" * 1000 + "]" * 1000 + "\n")
        line = one_line(
            run("plan", "--catalog", str(tmp_path), "--gpu", "H100", "--model", "llama2-70b", "--context", "8192"), 2
        )
        assert "deep.toml: not valid TOML" in line and "nested too deeply" in line


class TestScenarioNumbers:
    """Issue 9 item 11 and issue 13: scenario numbers finite, typed and within physical bounds."""

    @pytest.mark.parametrize(
        ("line_from", "line_to", "said"),
        [
            (
                "tpot_target_s = 0.05",
                "tpot_target_s = true",
                'workload.tpot_target_s: expected seconds, e.g. 0.05 or "50 ms"; not true or false',
            ),
            (
                "prompt_tokens_mean = 800",
                "prompt_tokens_mean = true",
                "workload.prompt_tokens_mean: expected a number of tokens",
            ),
            ("peak_requests_per_s = 40", "peak_requests_per_s = inf", "peak_requests_per_s: must be a number above 0"),
            ("peak_requests_per_s = 40", "peak_requests_per_s = 1e308", "must be above 0 and at most 1,000,000"),
            (
                "growth_over_horizon = 0.5",
                "growth_over_horizon = 1e308",
                "growth_over_horizon: must be at least 0 and at most 1,000",
            ),
            ('model = "Llama-3.1-70B"', 'model = "Llama-3.1-70B"\nmax_gpus_per_replica = true', "not true or false"),
            ('title = "T"', "title = " + "[" * 1000 + "]" * 1000, "nested too deeply"),
        ],
    )
    def test_refused_in_one_line(self, tmp_path, line_from, line_to, said):
        sc = tmp_path / "s.toml"
        sc.write_text(SCENARIO.replace(line_from, line_to))
        line = one_line(run("export", str(sc), "-o", str(tmp_path / "r.md")), 2)
        assert said in line
        assert not (tmp_path / "r.md").exists()

    def test_nul_byte_is_not_echoed_back(self, tmp_path):
        """A NUL (or an escape sequence) from the file is shown escaped, never written raw to the terminal."""
        sc = tmp_path / "s.toml"
        sc.write_text(SCENARIO.replace('gpu = "H100"', 'gpu = "H1\\u0000\\u001b[31m"'))
        line = one_line(run("export", str(sc), "-o", str(tmp_path / "r.md")), 2)
        assert "\x00" not in line and "\x1b" not in line
        assert "\\x00" in line


class TestCalibrate:
    """Issue 13: calibrate on hostile measurement files: one line, exit 2, no file written."""

    HEADER = "gpu,model,batch,input_len,output_len,tpot_ms\n"

    @pytest.mark.parametrize(
        ("content", "said"),
        [
            (HEADER + "H100,llama2-7b,0,1000,200,12\n", "line 2: batch '0' is below 1"),
            (
                HEADER + "H100,llama2-7b,8,1000,200,1e400\n",
                "line 2: tpot_ms is '1e400', not a positive number of milliseconds",
            ),
            (
                HEADER + "H100,llama2-7b\n",
                "line 2: no batch",
            ),  # a short row: which field it names depends on the reader
            ("gpu,model,batch,context,tpot_ms\nH100,llama2-7b,1e400,1000,20\n", "none of the 1 rows can be used"),
            ((HEADER + "H100,llama2-7b,8,1000,200,12\n").encode("utf-16"), "not UTF-8 text"),
            (bytes(range(256)) * 4, "not UTF-8 text"),
        ],
    )
    def test_refused(self, tmp_path, content, said):
        f = tmp_path / "runs.csv"
        f.write_bytes(content if isinstance(content, bytes) else content.encode())
        line = one_line(run("calibrate", str(f), "-o", str(tmp_path / "cal.toml")), 2)
        assert said in line
        assert sorted(p.name for p in tmp_path.iterdir()) == ["runs.csv"]

    def test_validate_memory_row_without_max_model_len(self, tmp_path):
        f = tmp_path / "m.csv"
        f.write_text(
            "record_id,gpu,model,gpu_memory_utilization,max_model_len,available_kv_cache_memory_gib\n"
            "x,H100,llama2-70b,0.9,,10\n"
        )
        r = run("validate", "--memory", str(f))  # 0.1.0: a ValueError traceback
        assert r.exception is None or isinstance(r.exception, SystemExit), repr(r.exception)
        assert "Traceback" not in r.output and r.exit_code in (0, 1, 2)

    @pytest.mark.parametrize("batch", ["1e400", "-1", "2.5"])
    def test_validate_names_the_row_with_a_batch_that_is_not_a_whole_number(self, tmp_path, batch):
        """A bad batch cell is that row's reason (the other rows still run); 1e400 was an OverflowError read as
        'a row cannot be read (cannot convert float infinity to integer)' for the whole file."""
        f = tmp_path / "runs.csv"
        f.write_text(self.HEADER + f"H100,llama2-7b,{batch},1000,200,12\nH100,llama2-7b,8,1000,200,12\n")
        r = run("validate", "--decode", str(f))
        assert f"row1: batch '{batch}' is not a whole number" in r.output
        assert "row2:" not in r.output.split("Not predicted:")[1]


# -- workbook refresh ------------------------------------------------------------------------------------


def copy_with(src: Path, dest: Path, edit) -> Path:
    """A copy of the xlsx package with ``edit(name, bytes) -> bytes`` applied to each part (and extra parts)."""
    with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dest, "w", zipfile.ZIP_DEFLATED) as zout:
        for info in zin.infolist():
            data = edit(info.filename, zin.read(info.filename))
            if data is not None:
                zout.writestr(info, data)
    return dest


def with_sparkline(src: Path, dest: Path) -> Path:
    """A copy of the xlsx with one sparkline (``SPARKLINE_EXT``) on its first sheet."""

    def add(name, data):
        if name == "xl/worksheets/sheet1.xml":
            return data.replace(b"</worksheet>", SPARKLINE_EXT + b"</worksheet>")
        return data

    return copy_with(src, dest, add)


SPARKLINE_EXT = (
    b'<extLst><ext uri="{05C60535-1F16-4fd2-B633-F4F36F0B64E0}" '
    b'xmlns:x14="http://schemas.microsoft.com/office/spreadsheetml/2009/9/main"><x14:sparklineGroups '
    b'xmlns:xm="http://schemas.microsoft.com/office/excel/2006/main"><x14:sparklineGroup><x14:sparklines>'
    b"<x14:sparkline><xm:f>Inputs!B1:B3</xm:f><xm:sqref>H1</xm:sqref></x14:sparkline>"
    b"</x14:sparklines></x14:sparklineGroup></x14:sparklineGroups></ext></extLst>"
)


class TestRefresh:
    @pytest.fixture(autouse=True)
    def _no_stored_values(self, monkeypatch):
        """The refreshes here are about the file (mode, link, calcPr, what is refused), not the stored values, which
        fill formula cells only (test_stored_values refreshes with them): no LibreOffice run (~5 s CPU each)."""
        without_libreoffice(monkeypatch)

    def test_without_calcpr_and_through_a_symlink(self, tmp_path):
        """A workbook whose <calcPr/> was removed (0.1.0 raised AttributeError), refreshed through a symlink: the
        link stays a link, its target is refreshed and recalculates on open. (One refresh for both cases.)"""
        real = copy_with(
            WORKBOOK,
            tmp_path / "real.xlsx",
            lambda n, d: re.sub(rb"<calcPr[^>]*/>", b"", d) if n == "xl/workbook.xml" else d,
        )
        assert b"calcPr" not in zipfile.ZipFile(real).read("xl/workbook.xml")
        before = real.read_bytes()
        link = tmp_path / "link.xlsx"
        link.symlink_to(real)
        r = run("workbook", "refresh", str(link))
        assert r.exit_code == 0, r.output
        assert link.is_symlink() and real.read_bytes() != before
        assert b"fullCalcOnLoad" in zipfile.ZipFile(real).read("xl/workbook.xml")

    def test_sparklines_are_not_dropped_silently(self, tmp_path):
        """openpyxl drops sparklines; refresh refuses (exit 1, file unchanged) unless --force (the read-only test
        below refreshes a copy holding this sparkline with --force)."""
        wb = with_sparkline(WORKBOOK, tmp_path / "b.xlsx")
        before = wb.read_bytes()
        line = one_line(run("workbook", "refresh", str(wb)), 1)
        assert "1 sparkline" in line and "--force" in line
        assert wb.read_bytes() == before

    def test_pictures_are_not_dropped_silently(self, tmp_path):
        def add(name, data):
            if name == "xl/drawings/drawing1.xml":  # a picture anchored beside the charts, in the part's prefix
                pre = re.search(rb"</(\w+:)?wsDr>", data).group(1) or b""
                pic = b"<%sabsoluteAnchor><%spic><%snvPicPr/></%spic></%sabsoluteAnchor>" % ((pre,) * 5)
                return data.replace(b"</%swsDr>" % pre, pic + b"</%swsDr>" % pre)
            return data

        if "xl/drawings/drawing1.xml" not in zipfile.ZipFile(WORKBOOK).namelist():
            pytest.skip("the generated workbook has no drawing part to add a picture to")
        wb = copy_with(WORKBOOK, tmp_path / "b.xlsx", add)
        line = one_line(run("workbook", "refresh", str(wb)), 1)
        assert "1 picture" in line

    def test_read_only_file_stays_read_only(self, tmp_path):
        """A read-only file is refused unless --force; with --force it is refreshed (here holding a sparkline, which
        --force drops) and stays read-only."""
        wb = with_sparkline(WORKBOOK, tmp_path / "b.xlsx")
        os.chmod(wb, 0o444)
        line = one_line(run("workbook", "refresh", str(wb)), 1)
        assert "read-only" in line and "--force" in line
        r = run("workbook", "refresh", str(wb), "--force")
        assert r.exit_code == 0, r.output
        assert wb.stat().st_mode & 0o777 == 0o444
        assert b"sparkline" not in zipfile.ZipFile(wb).read("xl/worksheets/sheet1.xml")

    @pytest.mark.parametrize(
        "dtd",
        [
            b'<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/passwd">]>',  # XXE
            b'<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]>',  # laughs
        ],
    )
    def test_entities_refused_in_one_line(self, tmp_path, dtd):
        def add(name, data):
            if name != "xl/workbook.xml":
                return data
            head = data.index(b"?>") + 2 if data.startswith(b"<?xml") else 0
            return data[:head] + dtd + data[head:]

        wb = copy_with(WORKBOOK, tmp_path / "b.xlsx", add)
        assert "declares a DTD or entities" in one_line(run("workbook", "refresh", str(wb)), 2)


def test_planner_reload_adds_a_folder(tmp_path, monkeypatch):
    """=PLANNER_RELOAD("B") adds B to the configured folders (its help says so); 0.1.0 replaced them."""
    import planner.excel.functions as xf
    import planner.excel.support as xs

    a, b = tmp_path / "a", tmp_path / "b"
    user_gpu(a)
    _rename_gpu(a, "GPU-A")
    user_gpu(b)
    _rename_gpu(b, "GPU-B")
    conf = tmp_path / "xlwings.conf"
    conf.write_text(f'"PLANNER_CATALOG","{a}"\n', encoding="utf-8")
    monkeypatch.setattr(xs, "xlwings_config_path", lambda: str(conf))
    monkeypatch.setattr(xs, "_session_folders", None)
    monkeypatch.setattr(xs, "_added_folders", ())
    assert xf.PLANNER_RELOAD(str(b)).startswith("catalog reloaded")
    assert isinstance(xf.MAX_BATCH("GPU-A", "llama2-70b", 8192.0), int)
    assert isinstance(xf.MAX_BATCH("GPU-B", "llama2-70b", 8192.0), int)
    xf.PLANNER_RELOAD()  # back to the configured folder only
    assert xf.MAX_BATCH("GPU-B", "llama2-70b", 8192.0) == "#N/A"
    assert isinstance(xf.MAX_BATCH("GPU-A", "llama2-70b", 8192.0), int)


def _rename_gpu(folder: Path, name: str) -> None:
    f = folder / "evil.toml"
    f.write_text(f.read_text(encoding="utf-8").replace('name = "Evil"', f'name = "{name}"'), encoding="utf-8")
