"""The task-dir writer: the first task holding a content writes it, later ones link to
that file; a source that is gone or full of links is written again, never lost."""

from __future__ import annotations

import errno
import hashlib
import os

from aces_bench.emitters import writer
from aces_bench.emitters.writer import BLOB_DIR, BlobStore, write_task_dir


def _write(root, name, store, files):
    files = {**files, "task.toml": f"name = '{name}'\n".encode()}
    digests = {rel: hashlib.sha256(data).hexdigest() for rel, data in files.items()}
    modes = {rel: 0o755 if rel.endswith(".sh") else 0o644 for rel in files}
    write_task_dir(root / name, files, digests, modes, store, unique="task.toml", empty_dirs=("environment/skills",))
    return root / name


FILES = {"instruction.md": b"do it\n", "tests/test.sh": b"#!/bin/sh\n", "environment/Dockerfile": b"FROM x\n"}


def test_later_tasks_link_to_the_first_tasks_files(tmp_path):
    store = BlobStore(tmp_path / BLOB_DIR)
    a, b = (_write(tmp_path, n, store, FILES) for n in ("a", "b"))
    for rel, data in FILES.items():
        assert (a / rel).read_bytes() == (b / rel).read_bytes() == data
        assert (a / rel).stat().st_ino == (b / rel).stat().st_ino
    assert (b / "tests/test.sh").stat().st_mode & 0o777 == 0o755
    assert (a / "task.toml").stat().st_ino != (b / "task.toml").stat().st_ino
    assert (b / "environment/skills").is_dir() and (a.stat().st_mode & 0o777) == 0o700
    assert not (tmp_path / BLOB_DIR).exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a", "b"]  # no temp dir left


def test_a_source_removed_under_the_emit_is_written_again(tmp_path):
    store = BlobStore(tmp_path / BLOB_DIR)
    a = _write(tmp_path, "a", store, FILES)
    (a / "tests/test.sh").unlink()
    b = _write(tmp_path, "b", store, FILES)
    c = _write(tmp_path, "c", store, FILES)
    assert (b / "tests/test.sh").read_bytes() == FILES["tests/test.sh"]
    assert (b / "tests/test.sh").stat().st_ino == (c / "tests/test.sh").stat().st_ino  # b is the new source


def test_a_source_at_the_link_limit_is_replaced(tmp_path, monkeypatch):
    store = BlobStore(tmp_path / BLOB_DIR)
    a = _write(tmp_path, "a", store, FILES)
    real = os.link

    def full(src, dst, *args, **kwargs):
        if src.startswith(str(a)):
            raise OSError(errno.EMLINK, "Too many links")
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(writer.os, "link", full)
    b = _write(tmp_path, "b", store, FILES)
    c = _write(tmp_path, "c", store, FILES)
    for rel, data in FILES.items():
        assert (b / rel).read_bytes() == data
        assert (b / rel).stat().st_ino != (a / rel).stat().st_ino
        assert (b / rel).stat().st_ino == (c / rel).stat().st_ino


def test_a_failed_write_leaves_no_dir_and_no_source(tmp_path, monkeypatch):
    store = BlobStore(tmp_path / BLOB_DIR)
    real = os.open

    def failing(path, flags, *args, **kwargs):
        if path == "task.toml":
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(path, flags, *args, **kwargs)

    monkeypatch.setattr(writer.os, "open", failing)
    try:
        _write(tmp_path, "a", store, FILES)
    except OSError as exc:
        assert exc.errno == errno.ENOSPC
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []
    b = _write(tmp_path, "b", store, FILES)  # no source points into the removed temp dir
    assert (b / "instruction.md").stat().st_nlink == 1
