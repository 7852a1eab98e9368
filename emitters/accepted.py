"""Task ids Harbor's loader accepted, shared by every emit on this machine.

A task id is the content address of every file and setting of its dir
(``harbor_task._digest``), and Harbor's verdict (``Task.is_valid_dir``) reads nothing
but those files and settings. So a dir an emit has just written from the bytes it
hashed gets the verdict any earlier dir of that id got. Sweep members run in separate
processes (a parallel launcher) and write the same tasks into their own folders: with
this record each distinct task is checked once on the machine, not once per process.

The record is one name per accepted id under ``$ACES_EMIT_CACHE`` (default
``.aces-cache/emit`` in the working directory), in a folder per Harbor version (the
verdict is that version's). Each name is a hard link to one empty file of the folder,
``.anchor``: a link costs no inode (creating a file cost ~0.1-0.5 ms of kernel time
here, a link ~15 us, and an emit records one per task), and it is atomic and needs
no lock: two processes recording one id both succeed, and a reader sees a marker or
none. When the anchor holds the filesystem's most links, a new anchor replaces it
(the old markers keep theirs). A marker is created only after Harbor accepted the
dir, so a crash loses at most a record (the next emit checks that task again). Dirs found on disk rather than written by the emit
never consult it: their bytes are not known to be the ones hashed.
"""

from __future__ import annotations

import errno
import functools
import os
import tempfile
from importlib.metadata import version
from pathlib import Path

CACHE_ENV = "ACES_EMIT_CACHE"
_ANCHOR = ".anchor"


@functools.cache
def _harbor_version() -> str:
    return version("harbor")


def record_dir() -> Path:
    """The folder of accepted-id markers for the installed Harbor (read from the
    environment on each call, so a benchmark or a test can point it elsewhere)."""
    root = Path(os.environ.get(CACHE_ENV) or Path.cwd() / ".aces-cache" / "emit")
    return root / f"accepted-harbor-{_harbor_version()}"


class AcceptedIds:
    """Ids Harbor accepted: those this process checked, then the shared record."""

    def __init__(self) -> None:
        self._seen: set[str] = set()
        self._made: set[Path] = set()  # record folders this process made sure exist

    def __contains__(self, task_id: str) -> bool:
        if task_id in self._seen:
            return True
        try:
            recorded = (record_dir() / task_id).is_file()
        except OSError:  # no working directory to hold the record: nothing is recorded
            return False
        if recorded:
            self._seen.add(task_id)
        return recorded

    def add(self, task_id: str) -> None:
        """Record that Harbor accepted a dir of ``task_id`` (call only after it did)."""
        self._seen.add(task_id)
        try:
            folder = record_dir()
            if folder not in self._made:
                folder.mkdir(parents=True, exist_ok=True)
                self._made.add(folder)
            _mark(folder, task_id)
        except OSError:
            pass  # an unwritable cache costs only a second check in another process

    def forget(self) -> None:
        """Forget what this process checked (the shared record stays)."""
        self._seen.clear()
        self._made.clear()


def _mark(folder: Path, task_id: str) -> None:
    """Create ``folder/task_id`` as a link to the folder's anchor (made when missing,
    replaced when it holds the most links the filesystem allows)."""
    anchor, marker = folder / _ANCHOR, folder / task_id
    for _ in range(3):
        try:
            os.link(anchor, marker)
            return
        except FileExistsError:
            return  # recorded already (by this process or another)
        except FileNotFoundError:
            _new_anchor(folder)
        except OSError as exc:
            if exc.errno != errno.EMLINK:
                raise
            _new_anchor(folder)
    os.close(os.open(marker, os.O_WRONLY | os.O_CREAT, 0o644))  # no link to be had: a file of its own


def _new_anchor(folder: Path) -> None:
    """Put a fresh empty anchor in place, atomically (another process may do the same)."""
    fd, tmp = tempfile.mkstemp(prefix=".anchor-", dir=folder)
    os.close(fd)
    os.chmod(tmp, 0o644)
    os.replace(tmp, folder / _ANCHOR)
