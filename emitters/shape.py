"""A task dir's *shape*: everything Harbor's ``Task.is_valid_dir`` reads of it.

Harbor's check (0.03-0.1 s a dir, most of a cold emit) reads three things and nothing
else: task.toml, parsed and validated as a ``TaskConfig``; which entries exist under
the dir and of what type (``exists``, ``is_dir``, ``is_file``, walks that resolve each
entry and refuse symlinks leaving the task or forming cycles); and the text of every
``.harborignore`` (what it excludes). It never opens instruction.md, test.sh or any
other file. So two dirs with one shape get one verdict, and an emit of 20,000 tasks
that come in a handful of shapes needs a handful of Harbor checks.

The shape is a digest of:
- every entry's path relative to the dir, its file type and its permission bits;
- the bytes of every ``.harborignore``;
- task.toml parsed, with the two things every task has its own copy of replaced by
  their verdict: ``[task]`` (validated here as Harbor's ``PackageInfo``, so a bad name
  is refused by Harbor's own rule) and ``[metadata]`` (Harbor accepts any table).
  Every other key and value is in the digest as parsed, so a changed limit, OS,
  verifier mode, step or docker image is another shape.

An emitter that has just written task.toml may pass what it wrote and that text's config
shape (``known_config``): the file is still read from disk, and only when its bytes are
exactly those is the given shape used instead of parsing them again
(``RenderCache.task_toml`` derives it from its template, parsed once).

A dir the shape cannot vouch for has none (``None``) and always gets Harbor's full
check: a symlink or special file anywhere (its verdict depends on where it points), an
unreadable entry, a task.toml that is missing, not UTF-8 or not TOML, a ``[task]``
table Harbor would refuse.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
import tomllib
from pathlib import Path

from harbor.models.task.config import PackageInfo
from harbor.models.task.file_filter import TaskFileFilter
from harbor.models.task.paths import TaskPaths
from pydantic import ValidationError

_CONFIG = TaskPaths.CONFIG_FILENAME
_IGNORE = TaskFileFilter.IGNORE_FILENAME


class _NoShape(Exception):
    """The dir holds something whose verdict the shape does not capture."""


def dir_shape(task_dir: Path, known_config: tuple[bytes, str | None] | None = None) -> str | None:
    """The digest of what Harbor's check reads of ``task_dir``, or None if it cannot be
    given (then only Harbor's own check can decide).

    ``known_config`` is (task.toml bytes, their ``config_shape``) from the writer: used
    only when the file on disk holds exactly those bytes."""
    h = hashlib.sha256()
    try:
        for rel, mode, data in _entries(os.fspath(task_dir), ""):
            h.update(f"{rel}\0{mode:o}\0".encode())
            if data is not None:
                h.update(len(data).to_bytes(8, "big") + data)
        raw = (Path(task_dir) / _CONFIG).read_bytes()
        if known_config is not None and raw == known_config[0]:
            config = known_config[1]
            if config is None:
                return None
        else:
            config = _config_shape(raw)
        h.update(config.encode())
    except (_NoShape, OSError):
        return None
    return h.hexdigest()


def _entries(root: str, rel: str):
    """(relative path, st_mode, bytes of a .harborignore or None) of every entry under
    ``root/rel``, sorted, depth first; a symlink or special file raises _NoShape."""
    with os.scandir(os.path.join(root, rel) if rel else root) as it:
        found = sorted(it, key=lambda e: e.name)
    for entry in found:
        path = f"{rel}/{entry.name}" if rel else entry.name
        mode = entry.stat(follow_symlinks=False).st_mode
        if stat.S_ISDIR(mode):
            yield path, mode, None
            yield from _entries(root, path)
        elif stat.S_ISREG(mode):
            yield path, mode, (Path(entry.path).read_bytes() if entry.name == _IGNORE else None)
        else:
            raise _NoShape(path)


def config_shape(text: str) -> str | None:
    """The part of the shape task.toml ``text`` gives, or None if it cannot be given."""
    try:
        return _config_shape(text.encode())
    except _NoShape:
        return None


def task_table_accepted(table: object) -> bool:
    """Whether Harbor's ``PackageInfo`` accepts ``table`` as a task.toml ``[task]``."""
    try:
        PackageInfo.model_validate(table)
    except ValidationError:
        return False
    return True


def _config_shape(raw: bytes) -> str:
    """task.toml as parsed, with ``[task]`` and ``[metadata]`` replaced by their verdict."""
    try:
        data = tomllib.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, tomllib.TOMLDecodeError):
        raise _NoShape(_CONFIG) from None
    if "task" in data:
        if not task_table_accepted(data["task"]):
            raise _NoShape("[task]")
        data["task"] = "<a [task] table Harbor accepts>"
    if isinstance(data.get("metadata"), dict):
        data["metadata"] = "<a table>"  # TaskConfig.metadata is dict[str, Any]: any table passes
    return json.dumps(data, sort_keys=True, default=_typed)


def _typed(value: object) -> dict:
    # TOML dates and times: typed, so a datetime and a string of the same text differ.
    return {type(value).__name__: value.isoformat() if hasattr(value, "isoformat") else str(value)}
