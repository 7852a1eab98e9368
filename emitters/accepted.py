"""Task ids Harbor's loader accepted, shared by every emit on this machine.

A task id is the content address of every file and setting of its dir
(``harbor_task._digest``), and Harbor's verdict (``Task.is_valid_dir``) reads nothing
but those files and settings. So a dir an emit has just written from the bytes it
hashed gets the verdict any earlier dir of that id got. Sweep members run in separate
processes (a parallel launcher) and write the same tasks into their own folders: with
this record each distinct task is checked once on the machine, not once per process.

The record is one empty file per accepted id under ``$ACES_EMIT_CACHE`` (default
``.aces-cache/emit`` in the working directory), in a folder per Harbor version (the
verdict is that version's). Creating an empty file is atomic and needs no lock: two
processes recording one id both succeed, and a reader sees a marker or none. A marker
is created only after Harbor accepted the dir, so a crash loses at most a record (the
next emit checks that task again). Dirs found on disk rather than written by the emit
never consult it: their bytes are not known to be the ones hashed.
"""

from __future__ import annotations

import functools
import os
from importlib.metadata import version
from pathlib import Path

CACHE_ENV = "ACES_EMIT_CACHE"


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
            folder.mkdir(parents=True, exist_ok=True)
            os.close(os.open(folder / task_id, os.O_WRONLY | os.O_CREAT, 0o644))
        except OSError:
            pass  # an unwritable cache costs only a second check in another process

    def forget(self) -> None:
        """Forget what this process checked (the shared record stays)."""
        self._seen.clear()
