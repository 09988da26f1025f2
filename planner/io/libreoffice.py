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
import io
import os
import re
import shutil
import signal
import subprocess
import tempfile
import zipfile
from pathlib import Path

from planner.errors import PlannerError
from planner.io.files import private_temp_dir, start_group

#: Suffixes of office files that are not .xlsx but that LibreOffice (or Excel) saves a workbook as: an .ods is what
#: Calc's Save proposes ("Use ODF Format!") for a workbook it opened, so it is the first thing a Calc user hands over.
OTHER_OFFICE_SUFFIXES = (".ods", ".fods", ".ots", ".xls", ".xlsb", ".xlsm", ".xltx", ".xltm", ".xlam")

#: How to turn a workbook saved in another format back into the .xlsx planner reads (trial 26 F19).
SAVE_AS_XLSX_HINT = (
    'save it as .xlsx: in LibreOffice Calc, File > Save As > file type "Excel 2007-365 (.xlsx)" and, asked, '
    '"Use Excel 2007-365!" (keep the format); in Excel, File > Save As > "Excel Workbook (*.xlsx)"'
)


def save_as_xlsx_hint(suffix: str) -> str:
    """The words a refused office file adds (``SAVE_AS_XLSX_HINT``) where ``suffix`` is one LibreOffice or Excel saves
    a workbook as (``OTHER_OFFICE_SUFFIXES``: an .ods from Calc's default Save); "" for any other suffix."""
    return f"; {SAVE_AS_XLSX_HINT}" if suffix.lower() in OTHER_OFFICE_SUFFIXES else ""


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


def convert(
    files: list[Path] | Path, fmt: str, outdir: Path, timeout_s: float = 300, outputs: list[Path] | None = None
) -> list[Path]:
    """Convert files with ``soffice --headless --convert-to fmt`` (recalculating formulas); returns the outputs.

    ``fmt`` is e.g. "xlsx" (values recalculated, formulas kept), "pdf" or "csv". ``outputs``: the files soffice
    must write (default: ``<stem>.<extension>`` in ``outdir`` for each input; a CSV filter that writes each sheet
    to its own file names them ``<stem>-<sheet>.csv``); any missing is a LibreOfficeError.
    """
    files = _paths(files)
    if outputs is None:
        outputs = [Path(outdir) / f"{f.stem}.{fmt.split(':')[0]}" for f in files]
    _run(files, fmt, Path(outdir), outputs, timeout_s)
    return outputs


#: A print-titles name (rows and columns repeated on each printed page) in ``xl/workbook.xml`` as openpyxl writes it.
_PRINT_TITLES = re.compile(rb'<definedName name="_xlnm\.Print_Titles"[^>]*>[^<]*</definedName>')


def without_print_titles(xlsx: bytes) -> bytes:
    """``xlsx`` without its print titles (``_xlnm.Print_Titles``), for a copy LibreOffice only recalculates.

    Print titles change no value, and LibreOffice spends most of its time on them: the what-if workbook (ten sheets
    with print titles such as ``Calc!$1:$3,Calc!$A:$B``) takes ~1.3 s CPU a book to load and recalculate with them
    and ~0.45 s without (LibreOffice 7.4, three books per call, 1.4 s of start-up left out).
    """
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(xlsx)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info.filename)
            if info.filename == "xl/workbook.xml":
                data = _PRINT_TITLES.sub(b"", data)
            dst.writestr(info, data)
    return out.getvalue()


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
        # soffice.bin converting on, seen under load on 2026-12-01); a SIGKILL of planner does not reach it: the
        # next run's cleanup of this folder ends it. Run in tmp: a soffice killed while starting leaves NSS's
        # pkcs11.txt in its working folder
        proc = start_group(cmd, tmp, env)
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
