"""Write rendered task files to disk, sharing identical content through hard links.

A study stages the same skill folders, fixtures, verifier and Dockerfile into
hundreds of task dirs, and the two arms of a case share their instruction and case
file. The first task of an emit that holds a content writes it as a file of its own
dir; every later task holding that content (same bytes, same mode) gets a hard link
to that file. On this VM's ext4 a link costs ~15 us of kernel time against 0.1-0.5 ms
for creating a file (a new inode), and the first copy is written straight into its
task's small temp dir: no separate blob (an inode of its own, created under a temp
name and renamed in a folder of one entry per distinct content) as before.

Task files are never modified in place (task dirs are content-addressed and replaced
whole), and every backend copies them into its sandbox or image rather than mounting
them, so sharing inodes is safe, as it was with blobs. A link that fails because its
source is gone (a task dir removed or edited under the emit), holds the most links the
filesystem allows (EMLINK) or the filesystem has no hard links: the file is written
instead, and (but in the last case) becomes the source for the next ones.
"""

from __future__ import annotations

import errno
import itertools
import os
import shutil
from pathlib import Path

# Where emits before this writer kept one file per distinct content; only pruned now.
BLOB_DIR = ".aces-blobs"
_SOURCE_GONE = (errno.ENOENT, errno.EMLINK)
_tmp_names = itertools.count()


class BlobStore:
    """The file each distinct (content, mode) was first written to in this emit, which
    ``place`` links into every later task holding it."""

    def __init__(self, root: Path):
        self.root = Path(root)  # the old blob folder of this tasks dir (prune only)
        self._sources: dict[tuple[str, int], str] = {}
        self._links_work = True

    def place(self, dest: str, data: bytes, digest: str, mode: int, dir_fd: int) -> str | None:
        """Create ``dest`` (relative to ``dir_fd``) holding ``data`` with ``mode``: a hard
        link to the content's source if there is one, else a new file. Returns the
        key to record ``dest`` under as the source once its dir is in place, or None."""
        key = (digest, mode)
        source = self._sources.get(key) if self._links_work else None
        if source is not None:
            try:
                os.link(source, dest, dst_dir_fd=dir_fd)
                return None
            except OSError as exc:
                if exc.errno == errno.EEXIST:
                    raise
                if exc.errno not in _SOURCE_GONE:
                    self._links_work = False  # e.g. a filesystem without hard links
        fd = os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=dir_fd)
        try:
            os.fchmod(fd, mode)  # explicit: not subject to the umask
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        return _hex_key(key) if self._links_work else None

    def add_sources(self, task_dir: str, placed: dict[str, str]) -> None:
        """Record files of the finished ``task_dir`` (rel path -> key from ``place``)."""
        for rel, key in placed.items():
            digest, _, mode = key.partition(".")
            self._sources[(digest, int(mode))] = f"{task_dir}/{rel}"

    def prune(self) -> int:
        """Remove blobs an older emit left that no task links to any more; returns how many."""
        removed = 0
        if not self.root.is_dir():
            return 0
        for entry in os.scandir(self.root):
            if entry.is_file(follow_symlinks=False) and (entry.name.startswith(".tmp-") or entry.stat().st_nlink == 1):
                os.unlink(entry.path)
                removed += 1
        return removed


def _hex_key(key: tuple[str, int]) -> str:
    return f"{key[0]}.{key[1]}"


def write_task_dir(final: Path, files: dict[str, bytes], digests: dict[str, str], modes: dict[str, int],
                   store: BlobStore, *, unique: str, empty_dirs: tuple[str, ...] = ()) -> None:
    """Write ``files`` as the task dir ``final``, atomically (temp dir, then rename).

    ``unique`` names the one file no other task shares (task.toml): it is written
    directly, last. A leftover dir without it is never taken for a finished task.
    Every call works relative to the temp dir's descriptor (no path walked again).
    """
    tmp = _temp_dir(os.fspath(final.parent), final.name)
    placed: dict[str, str] = {}
    try:
        fd = os.open(tmp, os.O_RDONLY | os.O_DIRECTORY)
        try:
            # Every dir once, parents first: mkdir is the costliest call here.
            dirs = {d for rel in files for d in _ancestors(rel.rpartition("/")[0])} | {
                d for sub in empty_dirs for d in _ancestors(sub)}
            for d in sorted(dirs):
                os.mkdir(d, dir_fd=fd)
            for rel in sorted(files):
                if rel != unique:
                    key = store.place(rel, files[rel], digests[rel], modes[rel], fd)
                    if key is not None:
                        placed[rel] = key
            out = os.open(unique, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600, dir_fd=fd)
            try:
                os.fchmod(out, 0o644)
                view = memoryview(files[unique])
                while view:
                    view = view[os.write(out, view):]
            finally:
                os.close(out)
        finally:
            os.close(fd)
        try:
            os.rename(tmp, final)
        except OSError as exc:
            if exc.errno not in (errno.EEXIST, errno.ENOTEMPTY):
                raise
            shutil.rmtree(final)  # a leftover without the unique file: never a finished task
            os.rename(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    store.add_sources(os.fspath(final), placed)


def _temp_dir(root: str, name: str) -> str:
    """A new dir ``root/.name.<pid>-<n>`` (mode 0700, as mkdtemp made it; a name an
    earlier, crashed process left is skipped)."""
    for _ in range(10_000):
        tmp = f"{root}/.{name}.{os.getpid()}-{next(_tmp_names)}"
        try:
            os.mkdir(tmp, 0o700)
            return tmp
        except FileExistsError:
            continue
        except FileNotFoundError:
            os.makedirs(root, exist_ok=True)
    raise FileExistsError(errno.EEXIST, "no free temp name", f"{root}/.{name}.*")


def _ancestors(rel: str) -> list[str]:
    if not rel:
        return []
    parts = rel.split("/")
    return ["/".join(parts[: i + 1]) for i in range(len(parts))]
