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
- everything is owned by the user running aces-bench.

The bind mounts themselves are ``nosuid,nodev`` inside (bubblewrap mounts every bind
so), so nothing planted there works inside the sandbox either.
"""

from __future__ import annotations

import logging
import os
import shutil
import stat
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

FILE_MODE = 0o644
EXEC_MODE = 0o755
DIR_MODE = 0o755


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
        _walk(top_fd, str(top), os.path.realpath(top), uid, gid, done)
    finally:
        os.close(top_fd)
    if done.removed or done.modes_fixed:
        more = f" (+{len(done.removed) - 5} more)" if len(done.removed) > 5 else ""
        removed = f": {', '.join(done.removed[:5])}{more}" if done.removed else ""
        log.info("copy-out: %s: %d mode(s) made plain, %d special file(s) removed%s", top,
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


def copy_out(source: Path, target: Path, *, replace: bool = True, budget: CopyBudget | None = None) -> list[str]:
    """Copy the sandbox tree ``source`` to the host dir ``target`` as plain data.

    Only directories, regular files and symlinks (as links, never followed) are
    copied; FIFOs, sockets and device files are skipped, so a hostile trial cannot
    stall or break the copy. ``replace=False`` keeps a host file that already exists
    (what Harbor downloaded or wrote itself). A file that would take the trial's
    copied-out bytes past ``budget`` is not copied. The copy is then sanitised
    (:func:`sanitize_tree`). Returns the host paths of the files left out for the budget.
    """
    over: list[str] = []
    target.mkdir(parents=True, exist_ok=True)
    real_source = os.path.realpath(source)
    for top, dirs, files in os.walk(source, followlinks=False):
        if not _stays_inside(top, real_source):  # a dir swapped for a link out meanwhile
            dirs[:] = []
            continue
        rel = Path(top).relative_to(source)
        dest_dir = target / rel
        for name in (*dirs, *files):
            src, dst = Path(top) / name, dest_dir / name
            try:
                st = src.lstat()
            except FileNotFoundError:
                continue
            if stat.S_ISDIR(st.st_mode):
                if not dst.is_dir() or dst.is_symlink():
                    _replace_with(dst, lambda d: d.mkdir())
            elif os.path.lexists(dst) and not replace:
                continue
            elif stat.S_ISREG(st.st_mode):
                if budget is not None and not budget.charge(dst, st.st_size):
                    over.append(str(dst))
                    continue
                _replace_with(dst, lambda d, s=src: shutil.copyfile(s, d, follow_symlinks=False))
            elif stat.S_ISLNK(st.st_mode):
                _replace_with(dst, lambda d, s=src: os.symlink(os.readlink(s), d))
        dirs[:] = [d for d in dirs if (dest_dir / d).is_dir() and not (dest_dir / d).is_symlink()]
    sanitize_tree(target)
    return over


def _replace_with(dst: Path, make) -> None:
    """Remove what is at ``dst`` (never following a link), then ``make(dst)``."""
    if dst.is_symlink() or (os.path.lexists(dst) and not dst.is_dir()):
        dst.unlink()
    elif dst.is_dir():
        shutil.rmtree(dst)
    make(dst)


def _walk(dir_fd: int, path: str, real_top: str, uid: int, gid: int, done: Sanitized) -> None:
    for name in os.listdir(dir_fd):
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            continue
        where = f"{path}/{name}"
        if stat.S_ISDIR(st.st_mode):
            try:
                fd = os.open(name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW, dir_fd=dir_fd)
            except OSError:
                _remove(dir_fd, name, where, done)  # swapped for a link meanwhile
                continue
            try:
                _fix(fd, os.fstat(fd), uid, gid, done)
                _walk(fd, where, real_top, uid, gid, done)
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
