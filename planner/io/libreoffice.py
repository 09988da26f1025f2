"""LibreOffice headless: recalculate workbooks and convert them (xlsx -> xlsx with values, pdf).

Pitfalls handled (see docs): a private profile per call, so parallel soffice processes do not hand jobs to
each other; OOXMLRecalcMode = 0 so formulas are always recalculated on load; soffice exits 0 even when it
wrote nothing, so the output file is checked.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

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


def convert(files: list[Path] | Path, fmt: str, outdir: Path, timeout_s: float = 300) -> list[Path]:
    """Convert files with ``soffice --headless --convert-to fmt`` (recalculating formulas); returns the outputs.

    ``fmt`` is e.g. "xlsx" (values recalculated, formulas kept), "pdf" or "csv".
    """
    exe = find_soffice()
    if exe is None:
        raise LibreOfficeError(INSTALL_HINT)
    files = [Path(files)] if isinstance(files, (str, Path)) else [Path(f) for f in files]
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    with private_temp_dir("lo") as tmp:  # removed on every exit; after a SIGKILL, by the next run
        profile = tmp / "profile"
        (profile / "user").mkdir(parents=True)
        (profile / "user" / "registrymodifications.xcu").write_text(_PROFILE_XCU, encoding="utf-8")
        env = {**os.environ, "HOME": str(tmp), "TMPDIR": str(tmp)}  # its own temporaries land here too
        cmd = [
            exe,
            f"-env:UserInstallation={profile.as_uri()}",
            "--headless",
            "--norestore",
            "--convert-to",
            fmt,
            "--outdir",
            str(outdir),
            *map(str, files),
        ]
        try:
            run = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout_s, env=env)
        except subprocess.TimeoutExpired:
            raise LibreOfficeError(f"LibreOffice did not finish converting within {timeout_s:.0f} s") from None
    ext = fmt.split(":")[0]
    outputs = [outdir / f"{f.stem}.{ext}" for f in files]
    missing = [o for o in outputs if not o.exists()]
    if missing:
        detail = (run.stderr or run.stdout).strip().splitlines()
        raise LibreOfficeError(f"LibreOffice wrote no {missing[0].name}" + (f": {detail[-1]}" if detail else ""))
    return outputs


def recalculate(path: Path, outdir: Path) -> Path:
    """A copy of the workbook with every formula computed by LibreOffice (read it with openpyxl data_only=True)."""
    return convert(path, "xlsx", outdir)[0]
