"""The one way the host reads a file a trial wrote (trajectory, answer, logs, workspace files).

A trial's files are written by code the operator does not trust: one may be a FIFO
(opening it would block forever), a socket, a device, a symlink to a host file, or
half a gigabyte of stdout. ``read_trial_file`` never blocks and never explodes:

- it ``lstat``-s first and reads only regular files (pipes, sockets, devices and links
  are skipped with the reason), then opens with ``O_NONBLOCK|O_NOFOLLOW`` and checks
  the opened file again (a swap between the two is refused, not followed);
- it reads at most ``limit`` bytes (``MAX_TRIAL_FILE_BYTES``, 16 MiB, by default) and
  says so when it stopped there (``truncated``);
- it stops after ``seconds`` of reading (a slow network or FUSE file), saying so.

Callers record ``TrialRead.note`` on the trial, so a report says what was not read.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from dataclasses import dataclass
from pathlib import Path

MAX_TRIAL_FILE_BYTES = 16 * 1024 * 1024
READ_SECONDS = 10.0
_CHUNK = 1 << 20


@dataclass(frozen=True)
class TrialRead:
    """What was read of one file, and why not all of it (``problem``/``truncated``)."""

    path: Path
    data: bytes = b""
    size: int = 0
    """Bytes on disk when opened (0 when nothing was opened)."""
    truncated: bool = False
    problem: str | None = None
    """Why nothing was read: missing, not a regular file, unreadable, timed out."""

    @property
    def ok(self) -> bool:
        return self.problem is None

    def text(self) -> str:
        """The bytes read as UTF-8 (invalid bytes replaced)."""
        return self.data.decode("utf-8", errors="replace")

    @property
    def note(self) -> str | None:
        """One line for the trial's record when the file was skipped or cut, else None."""
        if self.problem is not None and self.problem != "missing":
            return f"{self.path.name}: {self.problem}"
        if self.truncated:
            return (f"{self.path.name}: {self.size:,} bytes, only the first {len(self.data):,} read "
                    f"(host-side read cap)")
        return None


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISLNK(mode):
        return "a symlink"
    if stat.S_ISDIR(mode):
        return "a folder"
    return "not a regular file"


def read_trial_file(path: Path, *, limit: int = MAX_TRIAL_FILE_BYTES, seconds: float = READ_SECONDS) -> TrialRead:
    """Read at most ``limit`` bytes of a regular file a trial wrote, never blocking.

    Never raises for the file's content or kind: every refusal is a ``TrialRead`` with
    its ``problem`` set (``"missing"`` when there is no file).
    """
    path = Path(path)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return TrialRead(path, problem="missing")
    except OSError as exc:
        return TrialRead(path, problem=f"unreadable ({exc.strerror})")
    if not stat.S_ISREG(st.st_mode):
        return TrialRead(path, problem=f"{_kind(st.st_mode)}, not read")
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        why = "a symlink, not read" if exc.errno == errno.ELOOP else f"unreadable ({exc.strerror})"
        return TrialRead(path, problem=why)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):  # swapped for something else since the lstat
            return TrialRead(path, problem=f"{_kind(st.st_mode)}, not read")
        deadline = time.monotonic() + seconds
        chunks: list[bytes] = []
        got = 0
        while got < limit:
            if time.monotonic() > deadline:
                return TrialRead(path, b"".join(chunks), st.st_size, True,
                                 problem=f"reading took longer than {seconds:g} s; stopped")
            try:
                chunk = os.read(fd, min(_CHUNK, limit - got))
            except BlockingIOError:
                time.sleep(0.01)
                continue
            except OSError as exc:
                return TrialRead(path, problem=f"unreadable ({exc.strerror})")
            if not chunk:
                break
            chunks.append(chunk)
            got += len(chunk)
        data = b"".join(chunks)
        more = got >= limit and (st.st_size > got or _has_more(fd))
        return TrialRead(path, data, max(st.st_size, got), more)
    finally:
        os.close(fd)


def _has_more(fd: int) -> bool:
    try:
        return bool(os.read(fd, 1))
    except OSError:
        return False


def read_trial_text(path: Path, *, limit: int = MAX_TRIAL_FILE_BYTES) -> TrialRead:
    """``read_trial_file``; ``.text()`` gives the UTF-8 text (kept as a name for readers of text)."""
    return read_trial_file(path, limit=limit)


def is_regular(path: Path) -> bool:
    """Whether ``path`` is a regular file itself (not a link to one, not a pipe)."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False
