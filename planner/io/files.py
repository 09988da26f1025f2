"""The one way planner writes a file: whole or not at all, never over a file it was not allowed to replace.

``write_file(path, data, force=...)`` is used by every command that writes (export, calibrate, catalog
import-hf, addin, workbook, workbook refresh):

- The content goes to a temporary file made by ``tempfile.mkstemp`` in the target's folder (an unpredictable
  name, created with O_EXCL, so a planted symlink is never followed), is flushed to disk, then committed.
- Without ``force`` the commit is ``os.link(tmp, path)``: creating the name is atomic and exclusive, so of two
  writers of one new file exactly one wins and the other gets OutputExistsError. With ``force`` it is
  ``os.replace``, one step; a symlink is written through (its target is replaced, the link stays).
- The temporary file is removed on any failure, on Ctrl-C and on SIGTERM/SIGHUP (turned into SystemExit
  while a write is under way); an OSError becomes a one-line WriteError (exit 1).
- SIGKILL cannot be caught, so temporaries carry the writer's process id: ``.NAME.<pid>.<random>.part`` in
  the target's folder, ``planner-<kind>-<pid>-<random>`` folders (``private_temp_dir``) in the temp
  directory. The next write (or temp folder) removes those of a process that no longer runs, if they are
  this user's own plain files or folders; a live writer's are never touched. (Process ids are this
  machine's: a folder shared with another machine keeps that machine's leftovers. POSIX only: on Windows,
  where a process cannot be asked whether it runs without signalling it, nothing is removed.)
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from planner.errors import InvalidInputError, OutputExistsError, WriteError

try:
    import fcntl
except ImportError:  # Windows: no flock (and no process groups): a group a killed run left is not ended
    fcntl = None

#: Writes ``data`` into an open binary file.
Writer = Callable[[BinaryIO], object]

_SIGNALS = tuple(s for s in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)) if s is not None)


def _reason(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def check_target(path: str | os.PathLike, force: bool = False, *, make_parents: bool = False) -> Path:
    """Raise unless ``path`` can be written: not a folder, its folder exists (or may be made), new or ``force``.

    A cheap check before slow work; ``write_file`` checks again, atomically, when it commits.
    """
    path = Path(path)
    try:
        if path.is_dir():
            raise InvalidInputError(f"{path}: is a folder; give a file name, e.g. {path / 'review.xlsx'}")
        if os.path.lexists(path) and not force:
            raise OutputExistsError(f"{path} already exists; pass --force to overwrite it")
        parent = path.parent
        if not parent.is_dir():
            blocking = next((p for p in (parent, *parent.parents) if p.exists() and not p.is_dir()), None)
            if blocking is not None and make_parents:  # as write_file's mkdir would find, before the slow work
                raise WriteError(f"cannot write {path}: {blocking} is not a folder")
            if blocking is not None:
                raise InvalidInputError(f"{path}: {blocking} is not a folder")
            if not make_parents:
                raise InvalidInputError(f"{path}: the folder {parent} does not exist")
    except OSError as exc:  # a name too long to stat, a folder we may not look into
        raise WriteError(f"cannot write {path}: {_reason(exc)}") from None
    return path


@contextlib.contextmanager
def _signals_raise() -> Iterator[None]:
    """While writing, SIGTERM and SIGHUP raise SystemExit (so ``finally`` removes the temporary file)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise SystemExit(128 + signum)

    before = {s: signal.signal(s, stop) for s in _SIGNALS}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def _signals_held() -> Iterator[None]:
    """SIGTERM and SIGHUP wait (blocked, then delivered) while this block runs; POSIX main thread only."""
    if not hasattr(signal, "pthread_sigmask") or threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.pthread_sigmask(signal.SIG_BLOCK, _SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)


def _new_file_mode(replacing: Path | None) -> int:
    """The mode of the file replaced, else what the umask gives a new file (mkstemp makes 0600)."""
    if replacing is not None:
        with contextlib.suppress(OSError):
            return replacing.stat().st_mode & 0o7777
    mask = os.umask(0o022)
    os.umask(mask)
    return 0o666 & ~mask


def write_file(
    path: str | os.PathLike, data: bytes | str | Writer, *, force: bool = False, make_parents: bool = False
) -> Path:
    """Write ``data`` (bytes, text as UTF-8, or a function that writes into a binary file) to ``path``.

    Exclusive creation unless ``force``; atomic either way; a symlink at ``path`` is written through when
    ``force`` is set. Returns ``path``. Raises OutputExistsError, InvalidInputError (a folder, no folder) or
    WriteError (the system refused: read-only folder, no space, name too long).
    """
    path = Path(path)
    check_target(path, force, make_parents=make_parents)
    target = Path(os.path.realpath(path)) if force and path.is_symlink() else path
    try:
        if make_parents:
            target.parent.mkdir(parents=True, exist_ok=True)
        replacing = target if force and target.exists() else None
        mode = _new_file_mode(replacing)
    except OSError as exc:
        raise WriteError(f"cannot write {path}: {_reason(exc)}") from None
    remove_stale_parts(target)
    tmp = None
    with _signals_raise():
        try:
            with _signals_held():  # a SIGTERM between creating the file and naming it would leak it
                fd, tmp = tempfile.mkstemp(prefix=_part_prefix(target.name), suffix=".part", dir=target.parent)
            with os.fdopen(fd, "wb") as fh:
                if callable(data):
                    data(fh)
                else:
                    fh.write(data.encode("utf-8") if isinstance(data, str) else data)
                fh.flush()
                os.fsync(fh.fileno())
            os.chmod(tmp, mode)
            if force:
                os.replace(tmp, target)
            else:
                _link_exclusive(tmp, target)
        except FileExistsError:
            raise OutputExistsError(f"{path} already exists; pass --force to overwrite it") from None
        except OSError as exc:
            raise WriteError(f"cannot write {path}: {_reason(exc)}") from None
        finally:
            if tmp is not None:
                with _signals_held(), contextlib.suppress(OSError):
                    os.unlink(tmp)
    return path


def _part_prefix(name: str) -> str:
    """``.NAME.<pid>.``: mkstemp adds a random part and ``.part``; the pid tells a later run whose it was."""
    return f".{name[:80]}.{os.getpid()}."


def _pid_alive(pid: int) -> bool:
    """True when a process ``pid`` runs on this machine (or may: no permission to signal it, or no way to ask)."""
    if pid <= 0 or pid == os.getpid() or os.name != "posix":  # Windows: os.kill(pid, 0) would send CTRL_C_EVENT
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError, ValueError, OverflowError):
        return True
    return True


def _owned_by_me(entry: os.DirEntry) -> bool:
    """The entry (not followed if a link) is this user's own, where the system has owners."""
    if not hasattr(os, "getuid"):
        return True
    try:
        return entry.stat(follow_symlinks=False).st_uid == os.getuid()
    except OSError:
        return False


def remove_stale_parts(target: str | os.PathLike) -> list[str]:
    """Remove ``.NAME.<pid>.<random>.part`` files next to ``target`` left by writers that no longer run.

    A writer killed with SIGKILL leaves its temporary file; this is the next write's cleanup. Only plain files
    of this user whose process id names no running process go. Returns the names removed.
    """
    target = Path(target)
    pattern = re.compile(re.escape(f".{target.name[:80]}.") + r"(?P<pid>\d+)\.[A-Za-z0-9_]+\.part")
    return _remove_stale(target.parent, pattern, folders=False)


def _remove_stale(parent: Path, pattern: re.Pattern, folders: bool) -> list[str]:
    """Remove the entries of ``parent`` whose name matches ``pattern`` and whose ``pid`` group names no running
    process: this user's own plain files (``folders`` False) or folders (True), never links. Returns their names."""
    removed = []
    try:
        entries = list(os.scandir(parent))
    except OSError:
        return removed
    for entry in entries:
        m = pattern.fullmatch(entry.name)
        if m is None or _pid_alive(int(m.group("pid"))):
            continue
        if not (entry.is_dir if folders else entry.is_file)(follow_symlinks=False) or not _owned_by_me(entry):
            continue
        if folders:
            _kill_left_group(Path(entry.path))
            shutil.rmtree(entry.path, ignore_errors=True)
        else:
            try:
                os.unlink(entry.path)
            except OSError:
                continue
        removed.append(entry.name)
    return removed


#: In a private temporary folder: the id of a process group its owner started there (``start_group``), which a
#: SIGKILL of the owner does not reach (e.g. LibreOffice, in its own session so that a timeout can end it whole).
GROUP_FILE_NAME = "process-group"


def start_group(cmd: list[str], folder: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    """``cmd`` started in a new session working in ``folder``, its output in text pipes, its id in ``folder``'s
    ``GROUP_FILE_NAME``, which the process inherits open and locked (``flock``; the lock stays while it or a child
    that kept the file open runs, whatever becomes of the owner: LibreOffice 7.4's oosplash and soffice.bin keep
    it). The child writes its own id before it runs ``cmd``: written by this process after the start, a SIGKILL in
    between left a LibreOffice that no cleanup could name. Where flock is missing (Windows) the file is not locked
    and this process writes the id."""
    with open(folder / GROUP_FILE_NAME, "wb") as group:
        fd, locked = group.fileno(), fcntl is not None
        if locked:
            fcntl.flock(group, fcntl.LOCK_EX)

        def write_own_id() -> None:  # in the child, before exec
            os.write(fd, str(os.getpid()).encode("ascii"))

        proc = subprocess.Popen(
            cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=folder,
            start_new_session=True, pass_fds=(fd,) if locked else (), preexec_fn=write_own_id if locked else None,
        )  # fmt: skip
        if not locked:
            group.write(str(proc.pid).encode("ascii"))
    return proc


def _kill_left_group(folder: Path) -> None:
    """SIGKILL the process group named in ``folder``'s ``GROUP_FILE_NAME`` while one of its processes holds the
    file's lock (``start_group``; so a process id reused since is never hit), then wait up to 5 s for the lock to
    go (every holder ended) so that none writes into the folder while it is removed."""
    if fcntl is None or not hasattr(os, "killpg"):
        return
    try:
        with open(folder / GROUP_FILE_NAME, "rb") as group:
            if _unlocked(group):
                return
            os.killpg(int(group.read()), signal.SIGKILL)
            deadline = time.monotonic() + 5.0
            while not _unlocked(group) and time.monotonic() < deadline:
                time.sleep(0.05)
    except (OSError, ValueError):  # no file, no id in it (killed before it was written), or the group gone
        return


def _unlocked(file: BinaryIO) -> bool:
    """True when no other open file holds ``file``'s flock (it is taken here then, until ``file`` is closed)."""
    try:
        fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


#: ``planner-<kind>-<pid>-<random>``: a private temporary folder (see ``private_temp_dir``).
_TEMP_DIR = re.compile(r"planner-([a-z]+)-(?P<pid>\d+)-[A-Za-z0-9_]+")


def remove_stale_temp_dirs(parent: str | os.PathLike | None = None) -> list[str]:
    """Remove ``planner-<kind>-<pid>-<random>`` folders in the temp directory whose process no longer runs.

    Only this user's own folders (not links) go. Returns the names removed.
    """
    return _remove_stale(Path(parent or tempfile.gettempdir()), _TEMP_DIR, folders=True)


@contextlib.contextmanager
def private_temp_dir(kind: str) -> Iterator[Path]:
    """A new folder only this user can enter (``mkdtemp``: 0700, unpredictable name), removed on every exit.

    Named ``planner-<kind>-<pid>-<random>`` in the temp directory, so when a SIGKILL skips the removal the
    next ``private_temp_dir`` removes it. SIGTERM and SIGHUP raise SystemExit meanwhile (the folder goes).
    """
    if not re.fullmatch(r"[a-z]+", kind):
        raise ValueError(f"kind must be lowercase letters, not {kind!r}")
    remove_stale_temp_dirs()
    with _signals_raise():
        with _signals_held():
            path = tempfile.mkdtemp(prefix=f"planner-{kind}-{os.getpid()}-")
        try:
            yield Path(path)
        finally:
            with _signals_held():
                shutil.rmtree(path, ignore_errors=True)


def _link_exclusive(tmp: str, target: Path) -> None:
    """Give the finished temporary file the name ``target`` only if no file has it (FileExistsError else)."""
    try:
        os.link(tmp, target)
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EXDEV, errno.EMLINK):
            raise
        # a file system without hard links: reserve the name exclusively, then move the content over it
        os.close(os.open(target, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        os.replace(tmp, target)


def write_stdout(data: bytes | str) -> None:
    """``-o -``: the content on standard output."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    out = getattr(sys.stdout, "buffer", None)
    if out is None:  # a text stream (tests' CliRunner gives a binary buffer; some wrappers do not)
        sys.stdout.write(raw.decode("utf-8"))
    else:
        out.write(raw)
    sys.stdout.flush()


def write_atomic(path: str | os.PathLike, data: bytes, *, force: bool = False) -> Path:
    """Former name of ``write_file`` (export's writers call it)."""
    return write_file(path, data, force=force)


__all__ = [
    "check_target",
    "private_temp_dir",
    "remove_stale_parts",
    "remove_stale_temp_dirs",
    "write_atomic",
    "write_file",
    "write_stdout",
]
