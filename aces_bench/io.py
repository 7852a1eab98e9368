"""Atomic writes for every artifact aces-bench produces.

A reader never sees a half-written file: each writer goes to a temp file in the
same folder, fsyncs it and ``os.replace``-s it over the target.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from pydantic import BaseModel


def _atomic(path: Path, write: Callable[[Path], None]) -> Path:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        write(tmp)
        with open(tmp, "rb+") as fh:
            os.fsync(fh.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return path


def write_bytes(path: Path, data: bytes) -> Path:
    return _atomic(path, lambda tmp: tmp.write_bytes(data))


def write_text(path: Path, text: str) -> Path:
    return write_bytes(path, text.encode("utf-8"))


def to_jsonable(obj: Any) -> Any:
    if isinstance(obj, BaseModel):
        return obj.model_dump(mode="json")
    return obj


def json_text(obj: Any, *, indent: int = 2) -> str:
    """What ``write_json`` writes (UTF-8 JSON, a newline at the end)."""
    return json.dumps(to_jsonable(obj), indent=indent, sort_keys=False, ensure_ascii=False, default=str) + "\n"


def write_json(path: Path, obj: Any, *, indent: int = 2) -> Path:
    return write_text(path, json_text(obj, indent=indent))


def load_yaml(text: str) -> Any:
    """``yaml.safe_load`` through libyaml's C loader where the PyYAML wheel has it: the same
    results (and ``yaml.YAMLError`` on bad input), about ten times faster."""
    import yaml

    return yaml.load(text, Loader=getattr(yaml, "CSafeLoader", yaml.SafeLoader))  # noqa: S506 (safe loader)


def write_frame(path: Path, frame: Any) -> Path:
    """Write a pandas DataFrame as Parquet or CSV, chosen by suffix."""
    path = Path(path)
    if path.suffix == ".parquet":
        return _atomic(path, lambda tmp: frame.to_parquet(tmp, index=False))
    if path.suffix == ".csv":
        return _atomic(path, lambda tmp: frame.to_csv(tmp, index=False))
    raise ValueError(f"unsupported table format: {path.suffix}")


def write_with(path: Path, writer: Callable[[Path], None]) -> Path:
    """Atomically write through a callable that writes to a given path (figures, ...)."""
    return _atomic(path, writer)


_STAGING = ".{name}.staging-{pid}-"


def staging_dir(final: Path) -> Path:
    """A fresh empty dir beside ``final`` to build its replacement in (see ``swap_in``).

    Staging dirs left by killed processes (their pid is gone) are removed first.
    """
    final = Path(final)
    final.parent.mkdir(parents=True, exist_ok=True)
    prefix = f".{final.name}.staging-"
    for entry in final.parent.glob(prefix + "*"):
        pid = entry.name[len(prefix):].split("-", 1)[0]
        if pid.isdigit() and not pid_alive(int(pid)):
            shutil.rmtree(entry, ignore_errors=True)
    return Path(tempfile.mkdtemp(prefix=_STAGING.format(name=final.name, pid=os.getpid()), dir=final.parent))


def swap_in(staging: Path, final: Path) -> Path:
    """Replace dir ``final`` by ``staging`` as a whole: readers see the old or the new one.

    Uses an atomic exchange (``renameat2(RENAME_EXCHANGE)``) where the kernel has it,
    else two renames; the old content is removed afterwards.
    """
    staging, final = Path(staging), Path(final)
    os.chmod(staging, 0o755)  # mkdtemp made it 0700
    if not final.exists():
        os.rename(staging, final)
        return final
    if _exchange(staging, final):
        shutil.rmtree(staging, ignore_errors=True)  # now holds the old content
        return final
    old = Path(tempfile.mkdtemp(prefix=_STAGING.format(name=final.name, pid=os.getpid()), dir=final.parent))
    os.rename(final, old / "old")
    os.rename(staging, final)
    shutil.rmtree(old, ignore_errors=True)
    return final


def _exchange(a: Path, b: Path) -> bool:
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        renameat2 = libc.renameat2
    except (OSError, AttributeError):
        return False
    at_fdcwd, rename_exchange = -100, 2
    return renameat2(at_fdcwd, os.fsencode(a), at_fdcwd, os.fsencode(b), rename_exchange) == 0


def pid_alive(pid: int) -> bool:
    """Whether process ``pid`` exists (a process of another user counts as alive)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
