"""LibreOffice headless: recalculate workbooks and convert them (xlsx -> xlsx with values, pdf).

Pitfalls handled (see docs): a private profile per call, so parallel soffice processes do not hand jobs to
each other; OOXMLRecalcMode = 0 so formulas are always recalculated on load; soffice exits 0 even when it
wrote nothing, so the output file is checked.

A profile LibreOffice has once started with is kept for the rest of the process (``planner-loprofile-<pid>-*``
in the temp directory, removed at exit, or by the next run after a SIGKILL) and copied for each later call:
a copy costs milliseconds, where soffice spends ~0.3 s CPU filling an empty profile (1.8 -> 1.5 s a start,
measured on a tiny file with LibreOffice 7.4).
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from openpyxl.utils import get_column_letter

from planner.errors import PlannerError
from planner.io.files import private_temp_dir

INSTALL_HINT = (
    "LibreOffice is not installed (no soffice on PATH or in its default install folder); install it with "
    "`apt-get install libreoffice-calc-nogui` (Debian/Ubuntu), `brew install --cask libreoffice` (macOS) or from "
    "https://www.libreoffice.org (Windows), then run again"
)

_PROFILE_XCU = """<?xml version="1.0" encoding="UTF-8"?>
<oor:items xmlns:oor="http://openoffice.org/2001/registry" xmlns:xs="http://www.w3.org/2001/XMLSchema" xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance">
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="OOXMLRecalcMode" oor:op="fuse"><value>0</value></prop></item>
<item oor:path="/org.openoffice.Office.Calc/Formula/Load"><prop oor:name="ODFRecalcMode" oor:op="fuse"><value>0</value></prop></item>
</oor:items>
"""


class LibreOfficeError(PlannerError):
    """Raised when LibreOffice is missing or did not write the file it was asked for."""


#: Where the LibreOffice installers put soffice when it is not on PATH (Windows: the default install folders).
INSTALL_LOCATIONS = (
    r"C:\Program Files\LibreOffice\program\soffice.exe",
    r"C:\Program Files (x86)\LibreOffice\program\soffice.exe",
    "/Applications/LibreOffice.app/Contents/MacOS/soffice",
)


def find_soffice() -> str | None:
    """Path of the soffice binary: on PATH (soffice, libreoffice), else in a default install folder; or None."""
    for name in ("soffice", "libreoffice"):
        found = shutil.which(name)
        if found:
            return found
    return next((p for p in INSTALL_LOCATIONS if Path(p).is_file()), None)


#: The profile folder (holding ``user/``) LibreOffice first started with in this process; None until then.
_template: Path | None = None


def _new_profile(profile: Path) -> None:
    """A private profile at ``profile``: a copy of this process's template, or an empty one with our settings."""
    if _template is not None:
        try:
            shutil.copytree(_template / "user", profile / "user", symlinks=True)
            return
        except OSError:  # the template went (a forked child outlived its parent): start from empty
            shutil.rmtree(profile, ignore_errors=True)
    (profile / "user").mkdir(parents=True)
    (profile / "user" / "registrymodifications.xcu").write_text(_PROFILE_XCU, encoding="utf-8")


def _keep_as_template(profile: Path) -> None:
    """Keep a copy of ``profile`` (after a run that wrote its outputs) as this process's template."""
    global _template
    if _template is not None:
        return
    folder = Path(tempfile.mkdtemp(prefix=f"planner-loprofile-{os.getpid()}-"))
    try:
        shutil.copytree(profile / "user", folder / "user", symlinks=True)
    except OSError:
        shutil.rmtree(folder, ignore_errors=True)
        return
    _template = folder
    atexit.register(_remove_template, folder, os.getpid())


def _remove_template(folder: Path, pid: int) -> None:
    """At exit of the process that made the template (not of a child forked from it)."""
    if os.getpid() == pid:
        shutil.rmtree(folder, ignore_errors=True)


def convert(files: list[Path] | Path, fmt: str, outdir: Path, timeout_s: float = 300) -> list[Path]:
    """Convert files with ``soffice --headless --convert-to fmt`` (recalculating formulas); returns the outputs.

    ``fmt`` is e.g. "xlsx" (values recalculated, formulas kept), "pdf" or "csv".
    """
    files = _paths(files)
    outputs = [Path(outdir) / f"{f.stem}.{fmt.split(':')[0]}" for f in files]
    _run(files, fmt, Path(outdir), outputs, timeout_s)
    return outputs


#: soffice's CSV export of every sheet with its computed values (help.libreoffice.org/latest/ug/text/shared/guide/
#: csv_params.html, read 2026-12-01; checked on LibreOffice 7.4): 44 comma, 34 double quote, 76 UTF-8, 1, no
#: column formats, 0 language; token 7 true: every text cell quoted (so "4096" the text and 4096 the number differ);
#: 8 true: numbers as numbers; 9 false: not "as shown" (15 significant digits, not the cell's format); 10 false:
#: values, not formulas; 11 false: spaces kept; 12 -1: each sheet to its own file, ``<stem>-<sheet>.csv``.
CSV_EVERY_SHEET = "csv:Text - txt - csv (StarCalc):44,34,76,1,,0,true,true,false,false,false,-1"


def convert_to_csv_sheets(
    files: list[Path] | Path, sheets: list[str], outdir: Path, timeout_s: float = 300
) -> list[dict[str, Path]]:
    """Each file recalculated and every sheet written as CSV (``CSV_EVERY_SHEET``) in one soffice call: per file,
    the CSV of each of ``sheets`` by name. Read them with ``read_csv_sheet``.

    Cheaper than ``convert(..., "xlsx")`` plus openpyxl when only values are wanted: on the what-if workbook
    (LibreOffice 7.4) soffice spends ~1.2 s CPU a book loading and recalculating, ~1.0 s more writing xlsx and
    ~0.15 s writing CSV, and openpyxl takes ~0.9 s to read the xlsx back.
    """
    files = _paths(files)
    outputs = [{s: Path(outdir) / f"{f.stem}-{s}.csv" for s in sheets} for f in files]
    _run(files, CSV_EVERY_SHEET, Path(outdir), [p for out in outputs for p in out.values()], timeout_s)
    return outputs


#: One CSV field as CSV_EVERY_SHEET writes it: quoted text (a quote doubled inside) or an unquoted value.
_CSV_FIELD = re.compile(r'"((?:[^"]|"")*)"|([^,"\r\n]*)')


def read_csv_sheet(path: Path) -> dict[str, str | float | int | bool]:
    """The cells of one sheet written by ``convert_to_csv_sheets``, by reference ("B7"), blanks left out.

    Typed as openpyxl reads a LibreOffice xlsx with ``data_only=True``: quoted fields are text ("" blank; an error
    is its text, "#NUM!", LibreOffice's own "Err:502" as its xlsx names it, ``_XLSX_ERROR``), unquoted ones blank,
    TRUE/FALSE, a number or a percentage ("12.5%" -> 0.125). Limits: a text cell that reads "Err:502" is taken for
    the error; a typed-in TRUE reads True where openpyxl reads 1 (equal in Python). The csv module cannot tell a
    quoted field from an unquoted one before Python 3.12 (``QUOTE_STRINGS``), hence the one-line pattern.
    """
    text = Path(path).read_text(encoding="utf-8")
    cells: dict[str, str | float | int | bool] = {}
    row, col, i = 1, 1, 0
    while i <= len(text):
        m = _CSV_FIELD.match(text, i)
        try:
            value = _csv_value(*m.groups())
        except ValueError as e:
            raise LibreOfficeError(f"{Path(path).name}: {e}") from None
        if value is not None:
            cells[f"{get_column_letter(col)}{row}"] = value
        i = m.end()
        if text.startswith(",", i):
            col, i = col + 1, i + 1
        elif text.startswith("\r\n", i) or text.startswith("\n", i):
            row, col, i = row + 1, 1, i + (2 if text[i] == "\r" else 1)
        elif i == len(text):
            break
        else:
            raise LibreOfficeError(f"{Path(path).name}: not CSV as LibreOffice writes it at character {i}")
    return cells


def _csv_value(quoted: str | None, raw: str) -> str | float | int | bool | None:
    """One field of ``read_csv_sheet``: see there. A whole number is an int, as openpyxl reads LibreOffice's
    ``<v>4096</v>`` (the CSV writes 15 significant digits: 1.3125E+16 for 13125000000000000)."""
    if quoted is not None:
        text = quoted.replace('""', '"') or None
        if text is not None and _LO_ERROR.fullmatch(text):
            if text not in _XLSX_ERROR:
                raise ValueError(f"LibreOffice error {text} has no Excel name in _XLSX_ERROR yet")
            return _XLSX_ERROR[text]
        return text
    if raw in ("", "TRUE", "FALSE"):
        return None if raw == "" else raw == "TRUE"
    try:
        number = float(raw[:-1]) / 100 if raw.endswith("%") else float(raw)
    except ValueError:
        raise ValueError(f"{raw!r} is neither text, a number nor blank") from None
    return int(number) if number.is_integer() else number


#: The CSV shows an error that has no Excel name as LibreOffice's code ("Err:502"; help.libreoffice.org/latest/en-US/
#: text/scalc/05/02140000.html); its xlsx export writes Excel's error instead (sc/source/filter/excel/xltools.cxx,
#: XclTools::GetXclErrorCode: invalid argument, a missing pair, a circular reference -> #VALUE!, others -> #N/A).
#: Each code here was checked against LibreOffice 7.4's xlsx of the same cell (SQRT(-1), SUM(1;2), A1 = A1 + 1, an
#: IRR that does not converge); another raises in read_csv_sheet rather than be read as the wrong error.
_XLSX_ERROR = {"Err:502": "#VALUE!", "Err:508": "#VALUE!", "Err:522": "#VALUE!", "Err:523": "#N/A"}
_LO_ERROR = re.compile(r"Err:\d{3}")


def _paths(files: list[Path] | Path) -> list[Path]:
    return [Path(files)] if isinstance(files, (str, Path)) else [Path(f) for f in files]


def _run(files: list[Path], fmt: str, outdir: Path, outputs: list[Path], timeout_s: float) -> None:
    """``soffice --headless --convert-to fmt --outdir outdir files`` with a private profile; fails in one line
    unless every one of ``outputs`` was written."""
    exe = find_soffice()
    if exe is None:
        raise LibreOfficeError(INSTALL_HINT)
    outdir.mkdir(parents=True, exist_ok=True)
    with private_temp_dir("lo") as tmp:  # removed on every exit; after a SIGKILL, by the next run
        profile = tmp / "profile"
        _new_profile(profile)
        env = {**os.environ, "HOME": str(tmp), "TMPDIR": str(tmp)}  # its own temporaries land here too
        cmd = [
            exe,
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            "--norestore",
            "--convert-to",
            fmt,
            "--outdir",
            str(outdir.resolve()),
            *(str(f.resolve()) for f in files),
        ]
        # its own session: on a timeout the whole group goes (soffice is a launcher; killing it alone left
        # soffice.bin converting on, seen under load on 2026-12-01); run in tmp: a soffice killed while starting
        # leaves NSS's pkcs11.txt in its working folder
        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, start_new_session=True, cwd=tmp
        )
        try:
            stdout, stderr = proc.communicate(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            if hasattr(os, "killpg"):
                os.killpg(proc.pid, signal.SIGKILL)
            else:  # Windows: no process groups here; soffice.exe is the program itself
                proc.kill()
            proc.communicate()
            raise LibreOfficeError(f"LibreOffice did not finish converting within {timeout_s:.0f} s") from None
        if proc.returncode == 0 and all(o.exists() for o in outputs):
            _keep_as_template(profile)
    missing = [o for o in outputs if not o.exists()]
    if missing:
        detail = (stderr or stdout).strip().splitlines()
        raise LibreOfficeError(f"LibreOffice wrote no {missing[0].name}" + (f": {detail[-1]}" if detail else ""))


def recalculate(path: Path, outdir: Path) -> Path:
    """A copy of the workbook with every formula computed by LibreOffice (read it with openpyxl data_only=True)."""
    return convert(path, "xlsx", outdir)[0]
