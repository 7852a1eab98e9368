"""The one walk over a folder aces-bench did not write (a skill, a native task, a fixture tree).

Every reader of a skill folder (the skill loader and its content hash, the emitter's
staging, ``dataset create``, ``refine``, ``trigger``, the static scan) lists files through
``walk``, so no path follows a link out of the folder. A symlink is judged by what it
points to, never by its name: a link called ``.DS_Store`` or ``__pycache__`` that points
at ``~/.ssh/id_rsa`` is refused like any other. Links are never descended (a link to a
folder inside the skill would list its files twice, and a loop forever); a link to a
file inside the folder is that file. Pipes, sockets and devices are never opened.

``walk`` reports every problem as an entry and never raises for content; ``skill_files``
is the strict form that raises a one-line ``SkillError`` for the first one.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from aces_bench.core.errors import AcesError, SkillError

# Folders whose contents are never skill content (caches, VCS). Not descended; a
# *link* of such a name is still judged by its target.
IGNORED_DIRS = frozenset({"__pycache__", ".git", ".pytest_cache"})
IGNORED_FILES = frozenset({".DS_Store"})
IGNORED_SUFFIXES = (".pyc",)

# What a walk entry is. ``file``: a regular file (``via_link`` when reached through a
# link inside the folder). The rest are problems.
FILE = "file"
OUTSIDE = "outside"  # a link whose target is outside the folder
LOOP = "loop"  # a link that loops (ELOOP)
DANGLING = "dangling"  # a link to nothing, inside the folder
LINKED_DIR = "linked_dir"  # a link to a folder inside the folder: not descended
SPECIAL = "special"  # a pipe, socket or device (never opened)
UNREADABLE = "unreadable"  # a folder that cannot be listed


@dataclass(frozen=True)
class TreeEntry:
    """One thing found in the folder: a file, or a problem with the path it is at."""

    rel: str
    """Path relative to the walked folder, with '/' separators."""
    path: Path
    """The path in the folder (not resolved: a linked file keeps its link's path)."""
    kind: str
    size: int = 0
    target: str | None = None
    """Where a link points (resolved as far as possible)."""
    via_link: bool = False

    @property
    def is_file(self) -> bool:
        return self.kind == FILE

    def describe(self) -> str:
        """One line: what is wrong with this entry (for errors and scan findings)."""
        return {
            OUTSIDE: f"symlink {self.rel} points outside the skill folder (to {self.target})",
            LOOP: f"symlink {self.rel} loops (it resolves back through itself)",
            DANGLING: f"symlink {self.rel} points at nothing (to {self.target})",
            LINKED_DIR: f"symlink {self.rel} points at a folder (to {self.target}); linked folders are not followed",
            SPECIAL: f"{self.rel} is not a regular file (a pipe, socket or device); never read",
            UNREADABLE: f"folder {self.rel} cannot be listed ({self.target})",
        }.get(self.kind, f"{self.rel}: {self.kind}")


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip(os.sep) + os.sep)


def _ignored(name: str, is_dir: bool) -> bool:
    if is_dir:
        return name in IGNORED_DIRS
    return name in IGNORED_FILES or name.endswith(IGNORED_SUFFIXES)


def _link_entry(path: str, rel: str, real_root: str) -> TreeEntry:
    """Judge a symlink by its target: inside the folder (a file, a folder, nothing), outside, or a loop."""
    try:
        target = os.path.realpath(path, strict=True)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return TreeEntry(rel, Path(path), LOOP)
        loose = os.path.realpath(path)  # the target that does not exist
        kind = DANGLING if _within(loose, real_root) else OUTSIDE
        return TreeEntry(rel, Path(path), kind, target=loose)
    except (RuntimeError, ValueError):  # pragma: no cover - older Pythons spell a loop this way
        return TreeEntry(rel, Path(path), LOOP)
    if not _within(target, real_root):
        return TreeEntry(rel, Path(path), OUTSIDE, target=target)
    try:
        st = os.stat(target, follow_symlinks=False)
    except OSError:
        return TreeEntry(rel, Path(path), DANGLING, target=target)
    if stat.S_ISDIR(st.st_mode):
        return TreeEntry(rel, Path(path), LINKED_DIR, target=target)
    if not stat.S_ISREG(st.st_mode):
        return TreeEntry(rel, Path(path), SPECIAL, target=target)
    return TreeEntry(rel, Path(path), FILE, size=st.st_size, target=target, via_link=True)


def walk(root: Path, *, skip: Callable[[str, bool], bool] = _ignored) -> Iterator[TreeEntry]:
    """Every file and every problem under ``root``, in a stable (sorted) order.

    ``skip(name, is_dir)`` drops caches by name (``__pycache__``, ``*.pyc``, ``.DS_Store``);
    a symlink is judged by its target before its name is looked at. ``root`` itself
    may be a link (the operator named it); nothing under it is followed.
    """
    real_root = os.path.realpath(root)
    stack = [("", os.fspath(root))]
    while stack:
        rel_dir, dirpath = stack.pop()
        try:
            with os.scandir(dirpath) as it:
                entries = sorted(it, key=lambda e: e.name)
        except OSError as exc:
            yield TreeEntry(rel_dir or ".", Path(dirpath), UNREADABLE, target=exc.strerror)
            continue
        subdirs = []
        for e in entries:
            rel = f"{rel_dir}/{e.name}" if rel_dir else e.name
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue  # removed while we listed it
            if stat.S_ISLNK(st.st_mode):
                entry = _link_entry(e.path, rel, real_root)
                # A link inside the folder to an ignored name is as ignorable as the name.
                if entry.kind in (FILE, LINKED_DIR, DANGLING) and skip(e.name, entry.kind == LINKED_DIR):
                    continue
                yield entry
            elif stat.S_ISDIR(st.st_mode):
                if not skip(e.name, True):
                    subdirs.append((rel, e.path))
            elif stat.S_ISREG(st.st_mode):
                if not skip(e.name, False):
                    yield TreeEntry(rel, Path(e.path), FILE, size=st.st_size)
            else:
                yield TreeEntry(rel, Path(e.path), SPECIAL)
        stack.extend(reversed(subdirs))
    # (depth-first, sorted: a folder's files, then each subfolder in name order)


# Problems a strict reader refuses; a dangling link or a link to a folder inside the
# skill stages nothing and is passed over.
REFUSED = frozenset({OUTSIDE, LOOP, SPECIAL, UNREADABLE})


def skill_files(root: Path, *, error: type[AcesError] = SkillError) -> list[Path]:
    """The regular files under ``root`` (links inside it included), sorted by relative path.

    Raises ``error`` (one line: the folder, the path and the fix) for a link pointing
    out of the folder, a link loop, a pipe/socket/device, or a folder it cannot list.
    """
    files = []
    for entry in walk(root):
        if entry.kind in REFUSED:
            raise error(entry.describe(), where=root, fix=_FIX[entry.kind])
        if entry.is_file:
            files.append(entry)
    return [e.path for e in sorted(files, key=lambda e: e.rel.split("/"))]


_FIX = {
    OUTSIDE: "replace the symlink with a copy of the file inside the skill folder",
    LOOP: "remove the symlink or point it at a file",
    SPECIAL: "remove it: only regular files belong in a skill folder",
    UNREADABLE: "make the folder readable by the user running aces-bench, or remove it",
}


def copy_tree(src: Path, dest: Path, *, exclude_top: frozenset[str] = frozenset(), error: type[AcesError] = SkillError,
              exclude: Callable[[str], object] | None = None) -> None:
    """Copy the files ``skill_files`` lists (as plain files, never links) into ``dest``.

    ``exclude_top``: top-level names left out (``evals``: the answer keys never leave
    the host). ``exclude``: a test of each relative path; a truthy answer leaves the file
    out (``skills.evaluation_asset``, the one staging rule).
    """
    src = Path(src)
    for path in skill_files(src, error=error):
        rel = path.relative_to(src)
        if rel.parts[0] in exclude_top or (exclude is not None and exclude(rel.as_posix())):
            continue
        out = Path(dest) / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        data = read_regular(path)
        out.write_bytes(data)
        if os.stat(path).st_mode & 0o111:
            out.chmod(0o755)


def read_regular(path: Path, *, limit: int | None = None) -> bytes:
    """The bytes of a regular file, opened without following a final link and without
    blocking (a file swapped for a pipe since it was listed fails, never hangs).

    A link already judged to stay inside the folder is read through its resolved target.
    """
    path = Path(path)
    real = os.path.realpath(path) if path.is_symlink() else os.fspath(path)
    fd = os.open(real, os.O_RDONLY | os.O_NONBLOCK | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise OSError(errno.EINVAL, "not a regular file", os.fspath(path))
        chunks = []
        left = st.st_size if limit is None else min(st.st_size, limit)
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
