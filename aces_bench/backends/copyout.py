"""What leaves a sandbox is plain data: no setuid bits, no devices, no links out.

A trial writes straight into the host's trial dirs through bind mounts (``/logs/...``)
and Harbor downloads what it keeps from the private root. Either way the host ends up
holding files a hostile skill made: as root inside, ``cp /usr/bin/id x; chmod 4755 x``
would leave a setuid-root binary under ``outputs/``. ``sanitize_tree`` rewrites such a
tree in place, without following any symlink:

- regular files become mode 0644, or 0755 when any execute bit was set (setuid,
  setgid, sticky and group/other write bits dropped);
- directories become 0755;
- symlinks that resolve outside the tree, device files, FIFOs and sockets are removed
  (a link out could point a later host-side reader, a grader or the report, at a host
  file); links that stay inside the tree are kept as links;
- everything is owned by the user running aces-bench;
- a folder nested deeper than ``MAX_DEPTH`` levels is removed whole (no output needs
  it, and a walk one frame per level would end in RecursionError on a skill's
  ``mkdir d && cd d`` loop, failing the trial's teardown).

The bind mounts themselves are ``nosuid,nodev`` inside (bubblewrap mounts every bind
so), so nothing planted there works inside the sandbox either.
"""

from __future__ import annotations

import logging
import os
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path

from aces_bench.core.io import remove_tree, remove_tree_at

log = logging.getLogger(__name__)

FILE_MODE = 0o644
EXEC_MODE = 0o755
DIR_MODE = 0o755
MAX_DEPTH = 64
"""Folder levels below the top that are kept; deeper ones are removed (see above)."""


@dataclass
class Sanitized:
    """What ``sanitize_tree`` changed (for the log and the tests)."""

    modes_fixed: int = 0
    removed: list[str] = field(default_factory=list)
    chowned: int = 0

    def __bool__(self) -> bool:
        return bool(self.modes_fixed or self.removed or self.chowned)


def sanitize_tree(top: Path, *, uid: int | None = None, gid: int | None = None) -> Sanitized:
    """Make everything under ``top`` (and ``top`` itself) plain data; see the module doc.

    Never follows a symlink: entries are inspected with ``lstat`` and changed through
    descriptors opened with ``O_NOFOLLOW`` relative to their parent, so a link swapped
    in meanwhile is never chased to a host file. A missing ``top`` is nothing to do.
    """
    uid = os.getuid() if uid is None else uid
    gid = os.getgid() if gid is None else gid
    done = Sanitized()
    try:
        top_fd = os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except FileNotFoundError:
        return done
    except OSError as exc:  # a symlink or not a dir: leave it to the caller's checks
        log.warning("copy-out: cannot sanitise %s: %s", top, exc.strerror)
        return done
    try:
        _fix(top_fd, os.fstat(top_fd), uid, gid, done)
        _walk(top_fd, str(top), os.path.realpath(top), uid, gid, done, depth=1)
    finally:
        os.close(top_fd)
    if done.removed or done.modes_fixed:
        more = f" (+{len(done.removed) - 5} more)" if len(done.removed) > 5 else ""
        removed = f": {', '.join(done.removed[:5])}{more}" if done.removed else ""
        (log.info if done.removed else log.debug)("copy-out: %s: %d mode(s) made plain, %d special file(s) removed%s", top,
                 done.modes_fixed, len(done.removed), removed)
    return done


@dataclass
class CopyBudget:
    """The bytes a trial may leave on the host through copy-outs (its disk limit).

    ``sizes`` holds the size of every host file copied out so far, so copying the same
    file again replaces its share instead of adding to it.
    """

    limit: int
    sizes: dict[Path, int] = field(default_factory=dict)

    @property
    def used(self) -> int:
        return sum(self.sizes.values())

    def charge(self, dst: Path, size: int) -> bool:
        """Count ``size`` bytes at ``dst``; False (nothing counted) when past the limit."""
        if self.used - self.sizes.get(dst, 0) + size > self.limit:
            return False
        self.sizes[dst] = size
        return True


# Every copy of what a trial wrote is bounded (README: "Host-side copies").
MAX_FILE_BYTES = 16 * 2**20  # per file: the rest is cut and the cut recorded
MAX_ENTRIES = 20_000  # files, dirs and links per copy
COPY_TIME_SEC = 60.0  # per copy
MAX_NOTES = 50  # entries kept per kind in the record (the counts are whole)


@dataclass
class CopyReport:
    """What copies out of one sandbox left out or cut, for the trial's record.

    ``truncated``: (host path, size in the sandbox, bytes kept); ``skipped``: (sandbox-
    side path, why: a FIFO, a socket, a device, changed under the copy); ``stopped``:
    why a copy ended early (time or entry cap), each naming the source dir.
    """

    truncated: list[tuple[str, int, int]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)
    stopped: list[str] = field(default_factory=list)
    n_truncated: int = 0
    n_skipped: int = 0

    def cut(self, dst: Path, size: int, kept: int) -> None:
        self.n_truncated += 1
        if len(self.truncated) < MAX_NOTES:
            self.truncated.append((str(dst), size, kept))

    def skip(self, src: str, why: str) -> None:
        self.n_skipped += 1
        if len(self.skipped) < MAX_NOTES:
            self.skipped.append((src, why))

    def __bool__(self) -> bool:
        return bool(self.n_truncated or self.n_skipped or self.stopped)

    def as_record(self) -> dict:
        """The JSON form written into ``local-sandbox.json`` (``copy_out``)."""
        return {
            "max_file_bytes": MAX_FILE_BYTES,
            "n_truncated": self.n_truncated,
            "truncated": [{"path": p, "size": n, "kept": k} for p, n, k in self.truncated],
            "n_skipped": self.n_skipped,
            "skipped": [{"path": p, "why": w} for p, w in self.skipped],
            "stopped": list(self.stopped),
        }


@dataclass
class CopyLimits:
    """The caps one copy works under (module constants by default)."""

    max_file_bytes: int = MAX_FILE_BYTES
    max_entries: int = MAX_ENTRIES
    time_sec: float = COPY_TIME_SEC


_KIND = {stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket", stat.S_IFCHR: "a character device",
         stat.S_IFBLK: "a block device"}
_OPEN_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
# O_NONBLOCK: a FIFO swapped in after the lstat is opened without waiting for a writer
# (and then refused by the fstat check); O_NOFOLLOW: a link swapped in is not followed.
_OPEN_FILE = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


def copy_out(source: Path | int, target: Path, *, replace: bool = True, budget: CopyBudget | None = None,
             limits: CopyLimits | None = None, report: CopyReport | None = None,
             protect=None, only: str | None = None, rename: str | None = None,
             label: str | None = None) -> list[str]:
    """Copy the sandbox tree ``source`` to the host dir ``target`` as plain data.

    Nothing in ``source`` is trusted: each entry is ``lstat``-ed and opened relative to
    its parent's descriptor with ``O_NOFOLLOW|O_NONBLOCK`` (a regular file only, checked
    again with ``fstat``), so a FIFO, socket or device never blocks or feeds the copy
    and a symlink is never followed; such entries are skipped and recorded in
    ``report``. Symlinks are copied as links (the final :func:`sanitize_tree` removes
    those that point out). Each file is cut at ``limits.max_file_bytes`` and the copy
    stops after ``limits.max_entries`` entries or ``limits.time_sec`` seconds; both are
    recorded. ``replace=False`` keeps every host file that already exists; ``protect``
    (a predicate on host paths) keeps the ones it names (what Harbor or a host-side
    agent wrote itself). A file that would take the trial's copied-out bytes past
    ``budget`` is not copied. Returns the host paths left out for the budget.

    ``source`` may be an open directory descriptor (the caller's, left open); ``only``
    copies just that entry of it, as ``rename`` when given; ``label`` names the source
    in the report.
    """
    limits = limits or CopyLimits()
    report = report if report is not None else CopyReport()
    over: list[str] = []
    target.mkdir(parents=True, exist_ok=True)
    label = label or str(source)
    if isinstance(source, int):
        top, owned = source, False
    else:
        try:
            top, owned = os.open(source, _OPEN_DIR), True
        except OSError as exc:
            report.skip(label, f"not a directory ({exc.strerror})")
            return over
    walk = _Walk(limits, report, budget, over, replace, protect, label)
    try:
        walk.copy_dir(top, label, target, 0, only=only, rename=rename)
    except _Stop:
        pass
    finally:
        if owned:
            os.close(top)
    if only is None:
        sanitize_tree(target)
    else:
        _sanitize_file(target / (rename or only))
    return over


def _sanitize_file(path: Path) -> None:
    """One copied file made plain data, as :func:`sanitize_tree` does for a tree."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return
    try:
        st = os.fstat(fd)
        if stat.S_ISREG(st.st_mode):
            _fix(fd, st, os.getuid(), os.getgid(), Sanitized())
    finally:
        os.close(fd)


MAX_DEPTH = 64  # nested dirs; deeper ones are skipped and recorded (a fd is held per level)


class _Walk:
    """One copy's state: caps, what was cut or skipped, the budget (see :func:`copy_out`)."""

    def __init__(self, limits, report, budget, over, replace, protect, source):
        self.limits, self.report, self.budget, self.over = limits, report, budget, over
        self.replace, self.protect, self.source = replace, protect, source
        self.deadline = time.monotonic() + limits.time_sec
        self.entries = 0

    def _count(self) -> None:
        self.entries += 1
        if self.entries > self.limits.max_entries:
            self.report.stopped.append(f"{self.source}: stopped at the entry cap ({self.limits.max_entries} "
                                       "files and dirs); the rest not copied")
            raise _Stop
        if time.monotonic() > self.deadline:
            self.report.stopped.append(f"{self.source}: stopped at the time cap ({self.limits.time_sec:g} s); "
                                       "the rest not copied")
            raise _Stop

    def copy_dir(self, dir_fd: int, where: str, dest_dir: Path, depth: int, *, only: str | None = None,
                 rename: str | None = None) -> None:
        try:
            names = [only] if only is not None else sorted(os.listdir(dir_fd))
        except OSError:
            return
        for name in names:
            self._count()
            src, dst = f"{where}/{name}", dest_dir / (rename or name)
            try:
                st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
            except OSError:
                continue
            kind = stat.S_IFMT(st.st_mode)
            if kind == stat.S_IFDIR:
                if depth >= MAX_DEPTH:
                    self.report.skip(src, f"nested deeper than {MAX_DEPTH} dirs")
                    continue
                try:
                    child = os.open(name, _OPEN_DIR, dir_fd=dir_fd)
                except OSError:
                    self.report.skip(src, "changed under the copy")
                    continue
                try:
                    if not dst.is_dir() or dst.is_symlink():
                        _replace_with(dst, lambda d: d.mkdir())
                    self.copy_dir(child, src, dst, depth + 1)
                finally:
                    os.close(child)
                continue
            if os.path.lexists(dst) and (not self.replace or (self.protect is not None and self.protect(dst))):
                continue
            if kind == stat.S_IFREG:
                _copy_file(dir_fd, name, src, dst, self.limits, self.report, self.budget, self.over, self.deadline)
            elif kind == stat.S_IFLNK:
                try:
                    link = os.readlink(name, dir_fd=dir_fd)
                except OSError:
                    continue
                _replace_with(dst, lambda d, t=link: os.symlink(t, d))
            else:
                self.report.skip(src, _KIND.get(kind, "not a regular file"))


class _Stop(Exception):
    """A copy reached its entry or time cap."""


def _copy_file(dir_fd: int, name: str, src: str, dst: Path, limits: CopyLimits,
               report: CopyReport, budget: CopyBudget | None, over: list[str], deadline: float) -> None:
    try:
        fd = os.open(name, _OPEN_FILE, dir_fd=dir_fd)
    except OSError:
        report.skip(src, "changed under the copy")
        return
    with open(fd, "rb", buffering=0) as f:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            report.skip(src, _KIND.get(stat.S_IFMT(st.st_mode), "not a regular file"))
            return
        size = st.st_size
        keep = min(size, limits.max_file_bytes)
        if budget is not None and not budget.charge(dst, keep):
            over.append(str(dst))
            return
        _replace_with(dst, lambda d: None)
        copied = 0
        out_fd = os.open(dst, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, FILE_MODE)
        with open(out_fd, "wb") as out:
            while copied < limits.max_file_bytes:
                if time.monotonic() > deadline:
                    break
                chunk = f.read(min(1 << 20, limits.max_file_bytes - copied))
                if not chunk:
                    break
                out.write(chunk)
                copied += len(chunk)
        if copied < size:
            report.cut(dst, size, copied)
        if budget is not None:
            budget.sizes[dst] = copied


def _replace_with(dst: Path, make) -> None:
    """Remove what is at ``dst`` (never following a link), then ``make(dst)``."""
    if dst.is_symlink() or (os.path.lexists(dst) and not dst.is_dir()):
        dst.unlink()
    elif dst.is_dir():
        remove_tree(dst)  # what a trial left there may be nested past the recursion limit
    make(dst)


def _walk(dir_fd: int, path: str, real_top: str, uid: int, gid: int, done: Sanitized, *, depth: int) -> None:
    for name in os.listdir(dir_fd):
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        where = f"{path}/{name}"
        if stat.S_ISDIR(st.st_mode) and depth > MAX_DEPTH:
            remove_tree_at(dir_fd, name, ignore_errors=True)
            done.removed.append(f"{where} (nested deeper than {MAX_DEPTH} levels)")
        elif stat.S_ISDIR(st.st_mode):
            try:
                fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
            except OSError:
                _remove(dir_fd, name, where, done)  # swapped for a link meanwhile
                continue
            try:
                _fix(fd, os.fstat(fd), uid, gid, done)
                _walk(fd, where, real_top, uid, gid, done, depth=depth + 1)
            finally:
                os.close(fd)
        elif stat.S_ISREG(st.st_mode):
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
            except OSError:
                _remove(dir_fd, name, where, done)
                continue
            try:
                _fix(fd, os.fstat(fd), uid, gid, done)
            finally:
                os.close(fd)
        elif stat.S_ISLNK(st.st_mode) and _stays_inside(where, real_top):
            if st.st_uid != uid or st.st_gid != gid:
                os.chown(name, uid, gid, dir_fd=dir_fd, follow_symlinks=False)
                done.chowned += 1
        else:  # a link out of the tree, device, FIFO, socket
            _remove(dir_fd, name, where, done)


def _stays_inside(link: str, real_top: str) -> bool:
    """Whether ``link`` resolves (through every link on the way) to a path in the tree.

    Only link targets are read to compute this, never a file's content.
    """
    real = os.path.realpath(link)
    return real == real_top or real.startswith(real_top + os.sep)


def _fix(fd: int, st: os.stat_result, uid: int, gid: int, done: Sanitized) -> None:
    if stat.S_ISDIR(st.st_mode):
        want = DIR_MODE
    else:
        want = EXEC_MODE if st.st_mode & 0o111 else FILE_MODE
    if (st.st_uid, st.st_gid) != (uid, gid):
        os.fchown(fd, uid, gid)  # chown clears setuid/setgid itself; the chmod below makes sure
        done.chowned += 1
    if stat.S_IMODE(st.st_mode) != want:
        os.fchmod(fd, want)
        done.modes_fixed += 1


def _remove(dir_fd: int, name: str, where: str, done: Sanitized) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except IsADirectoryError:
        return
    except FileNotFoundError:
        return
    done.removed.append(where)
