"""Atomic writes for every artifact aces-bench produces.

A reader never sees a half-written file: each writer goes to a temp file in the
same folder, fsyncs it and ``os.replace``-s it over the target.
"""

from __future__ import annotations

import json
import os
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


def write_json(path: Path, obj: Any, *, indent: int = 2) -> Path:
    text = json.dumps(to_jsonable(obj), indent=indent, sort_keys=False, ensure_ascii=False, default=str)
    return write_text(path, text + "\n")


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
