"""Writing output files: never over an existing file without force, never half-written."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from planner.errors import InvalidInputError, OutputExistsError


def check_target(path: Path, force: bool) -> None:
    """Raise unless ``path`` can be written: its folder exists, and it is new or ``force`` is set."""
    path = Path(path)
    if path.is_dir():
        raise InvalidInputError(f"{path}: is a folder; give a file name, e.g. {path / 'review.xlsx'}")
    if not path.parent.is_dir():
        raise InvalidInputError(f"{path}: the folder {path.parent} does not exist")
    if path.exists() and not force:
        raise OutputExistsError(f"{path} already exists; pass --force to overwrite it")


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_atomic(path: Path, data: bytes, *, force: bool = False) -> Path:
    """Write ``data`` to a temporary file beside ``path``, then rename it over ``path`` in one step."""
    path = Path(path)
    check_target(path, force)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".part", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o666 & ~_umask())
        if not force and path.exists():  # appeared while rendering
            raise OutputExistsError(f"{path} already exists; pass --force to overwrite it")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return path
