"""The sandbox's file system seen from the host: path mapping and safe copies.

Harbor uploads (``/tests``, ``/solution``), Dockerfile ``COPY`` and downloads all go
straight to the host directories behind the sandbox, without entering it. Every path is
resolved the way the sandbox would resolve it, so a symlink made inside the sandbox can
never send a host-side write or read outside the private root and its bind mounts; the
resolved path is then walked one directory descriptor at a time with ``O_NOFOLLOW``, so
a link swapped in by a process still running inside after the resolution is refused
instead of followed on the host. What the host writes into the root belongs to root
inside the sandbox (its mapped host id, ``owner``); downloads go through
:func:`aces_bench.backends.copyout.copy_out` (no FIFO, device or link is opened; sizes
and time capped).
"""

from __future__ import annotations

import grp
import os
import pwd
import shutil
import stat
from collections import deque
from pathlib import Path, PurePosixPath

from aces_bench.backends.bwrap import HOST_SYSTEM_DIRS, Bind
from aces_bench.backends.copyout import CopyBudget, CopyLimits, CopyReport, copy_out
from aces_bench.core.errors import BackendError


class SandboxView:
    """Maps paths inside the sandbox to host paths, the way the sandbox sees them.

    Symlinks are followed as the sandbox would follow them (an absolute link target
    means the sandbox's ``/``, not the host's), and ``..`` stops at ``/``, so a host
    path returned here is always inside the private root or a bind source. Paths on
    the host's read-only system dirs, ``/dev`` and ``/proc`` are refused.
    (Plain strings rather than pathlib here: this runs for every file transferred.)
    """

    def __init__(self, root: Path, binds: tuple[Bind, ...] = ()):
        self.root = str(root)
        ordered = sorted(binds, key=lambda b: len(b.target.parts), reverse=True)
        self._binds = [(str(b.target), str(b.source), b.read_only) for b in ordered]
        self._refused = {"/dev", "/proc"} | {d for d in HOST_SYSTEM_DIRS if not os.path.islink(d)}

    def host_path(self, path: str, *, write: bool, cwd: str = "/") -> Path:
        """The host path behind sandbox ``path``; raise BackendError if it is outside."""
        resolved = self.resolve(path if path.startswith("/") else f"{cwd}/{path}")
        host, read_only = self._base(resolved)
        if host is None:
            raise BackendError(
                f"{path} is outside the sandbox's private root (it is the host's "
                f"read-only {_top(resolved)} or a kernel file system)",
                fix="use a path under the workdir, /tmp, /root or /logs",
            )
        if write and read_only:
            raise BackendError(f"{path} is on a read-only bind mount in the sandbox")
        return Path(host)

    def resolve(self, path: str) -> str:
        """``path`` with every symlink and ``..`` resolved inside the sandbox's view."""
        parts = deque(p for p in path.split("/") if p)
        current: list[str] = []
        hops = 0
        while parts:
            name = parts.popleft()
            if name == ".":
                continue
            if name == "..":
                if current:
                    current.pop()
                continue
            candidate = "/" + "/".join([*current, name])
            host, _ = self._base(candidate)
            if host is not None and os.path.islink(host):
                hops += 1
                if hops > 40:
                    raise BackendError(f"too many levels of symbolic links in {path}")
                target = os.readlink(host)
                if target.startswith("/"):
                    current = []
                parts.extendleft(reversed([p for p in target.split("/") if p]))
                continue
            current.append(name)
        return "/" + "/".join(current)

    def split(self, path: str) -> tuple[str, list[str], bool] | None:
        """(host dir of the mount, components below it, read-only) for a resolved path; None if refused."""
        for target, source, read_only in self._binds:
            if path == target or path.startswith(target + "/"):
                return source, [p for p in path[len(target):].split("/") if p], read_only
        if _top(path) in self._refused:
            return None
        return self.root, [p for p in path.split("/") if p], False

    def _base(self, path: str) -> tuple[str | None, bool]:
        for target, source, read_only in self._binds:
            if path == target or path.startswith(target + "/"):
                return source + path[len(target):], read_only
        if _top(path) in self._refused:
            return None, True
        return self.root + path, False


def _top(path: str) -> str:
    return "/" + path.split("/")[1] if path != "/" else "/"


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


class PrivateRoot:
    """Host-side file operations on a sandbox's private root and binds.

    Relative sandbox paths are taken relative to ``workdir``. ``where`` arguments name
    the Dockerfile line a failure belongs to, for the user-facing error. ``owner``: the
    host (uid, gid) of root inside (None: the user running aces-bench); what the host
    creates is given to it, and a ``COPY --chown`` id inside is offset the same way.
    """

    def __init__(self, root: Path, binds: tuple[Bind, ...] = (), *, workdir: str = "/",
                 owner: tuple[int, int] | None = None):
        self.root = Path(root)
        self.view = SandboxView(self.root, binds)
        self.workdir = workdir
        self.owner = owner

    def host_path(self, path: str, *, write: bool, where: str | None = None) -> Path:
        try:
            return self.view.host_path(path, write=write, cwd=self.workdir)
        except BackendError as exc:
            if where is None:
                raise
            raise BackendError(exc.message, where=where, fix=exc.fix) from None

    def host_ids(self, ids: tuple[int, int] | None) -> tuple[int, int] | None:
        """Host ids of the sandbox ids ``ids`` (root inside when None)."""
        if self.owner is None:
            return ids
        uid, gid = ids or (0, 0)
        return self.owner[0] + uid, self.owner[1] + gid

    def is_dir(self, path: str) -> bool:
        return self.host_path(path, write=False).is_dir()

    def open_dir(self, path: str, *, create: bool = False, write: bool = False, where: str | None = None) -> int:
        """A descriptor of sandbox dir ``path``, walked from its mount with ``O_NOFOLLOW``.

        ``create`` makes missing dirs (owned by root inside). Raises BackendError when
        the path is outside the root and binds, or a component is not a directory (a
        link put there after the path was resolved included).
        """
        self.host_path(path, write=write, where=where)  # the refusal messages
        absolute = path if path.startswith("/") else f"{self.workdir}/{path}"
        parts = self.view.split(self.view.resolve(absolute))
        if parts is None:
            raise BackendError(f"{path} is outside the sandbox's private root", where=where)
        base, components, _ = parts
        fd = os.open(base, _DIR_FLAGS)
        try:
            for name in components:
                try:
                    nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
                except FileNotFoundError:
                    if not create:
                        raise
                    os.mkdir(name, 0o755, dir_fd=fd)
                    nxt = os.open(name, _DIR_FLAGS, dir_fd=fd)
                    ids = self.host_ids(None)
                    if ids is not None:
                        os.fchown(nxt, *ids)
                except NotADirectoryError:
                    raise BackendError(f"{path}: {name} is not a directory (or is a link made meanwhile) "
                                       "in the sandbox", where=where) from None
                except OSError as exc:
                    if exc.errno == 40:  # ELOOP: a symlink where a directory was resolved
                        raise BackendError(f"{path}: {name} was replaced by a link in the sandbox", where=where) from None
                    raise
                os.close(fd)
                fd = nxt
        except BaseException:
            os.close(fd)
            raise
        return fd

    def mkdirs(self, path: str, *, where: str | None = None) -> Path:
        """Create sandbox dir ``path`` and its parents; return its host path."""
        host = self.host_path(path, write=True, where=where)
        os.close(self.open_dir(path, create=True, write=True, where=where))
        return host

    def copy_in(
        self,
        source: Path,
        dest: str,
        *,
        where: str | None = None,
        chmod: int | None = None,
        owner: tuple[int, int] | None = None,
    ) -> None:
        """Copy a host file to sandbox path ``dest``, or a host dir's contents into it.

        Targets are opened one directory descriptor at a time, so no symlink inside the
        sandbox can redirect a write; symlinks in ``source`` are copied as symlinks.
        ``owner``: ids inside (``COPY --chown``); default root inside.
        """
        ids = self.host_ids(owner)
        if source.is_dir() and not source.is_symlink():
            top = self.open_dir(dest, create=True, write=True, where=where)
            try:
                self._copy_tree(source, top, dest, where=where, chmod=chmod, ids=ids)
            finally:
                os.close(top)
            return
        parent, name = str(PurePosixPath(dest).parent), PurePosixPath(dest).name
        self.host_path(dest, write=True, where=where)
        fd = self.open_dir(parent, create=True, write=True, where=where)
        try:
            self._copy_file(source, fd, name, dest, where=where, chmod=chmod, ids=ids)
        finally:
            os.close(fd)

    def _copy_tree(self, source: Path, dir_fd: int, dest: str, *, where, chmod, ids) -> None:
        for entry in sorted(os.scandir(source), key=lambda e: e.name):
            target = f"{dest.rstrip('/')}/{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                try:
                    os.mkdir(entry.name, 0o755, dir_fd=dir_fd)
                except FileExistsError:
                    pass
                try:
                    child = os.open(entry.name, _DIR_FLAGS, dir_fd=dir_fd)
                except OSError:
                    raise BackendError(f"cannot copy into {target}: not a directory in the sandbox", where=where) from None
                try:
                    if ids is not None:
                        os.fchown(child, *ids)
                    self._copy_tree(Path(entry.path), child, target, where=where, chmod=chmod, ids=ids)
                finally:
                    os.close(child)
            else:
                self._copy_file(Path(entry.path), dir_fd, entry.name, target, where=where, chmod=chmod, ids=ids)

    def _copy_file(self, source: Path, dir_fd: int, name: str, dest: str, *, where, chmod, ids) -> None:
        try:
            st = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None and stat.S_ISDIR(st.st_mode):
            raise BackendError(f"cannot copy {source} over the directory {dest}", where=where)
        if st is not None:
            os.unlink(name, dir_fd=dir_fd)
        if source.is_symlink():
            os.symlink(os.readlink(source), name, dir_fd=dir_fd)
            if ids is not None:
                os.chown(name, *ids, dir_fd=dir_fd, follow_symlinks=False)
            return
        mode = stat.S_IMODE(os.stat(source).st_mode) if chmod is None else chmod
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            with open(source, "rb") as src, os.fdopen(os.open(name, flags, 0o600, dir_fd=dir_fd), "wb") as dst:
                shutil.copyfileobj(src, dst)
                if ids is not None:
                    os.fchown(dst.fileno(), *ids)
                os.fchmod(dst.fileno(), mode)  # after fchown, which would clear set-id bits
        except OSError:
            # A full disk (ENOSPC) leaves no truncated copy behind, which a later
            # download of /logs would otherwise take for the file.
            try:
                os.unlink(name, dir_fd=dir_fd)
            except OSError:
                pass
            raise

    def download_file(self, source: str, target: Path, *, limits: CopyLimits | None = None,
                      report: CopyReport | None = None, budget: CopyBudget | None = None) -> list[str]:
        """Copy one sandbox file to the host as plain data (see :func:`copy_out`)."""
        self.host_path(source, write=False)
        parent, name = str(PurePosixPath(source).parent), PurePosixPath(source).name
        try:
            fd = self.open_dir(parent)
            st = os.stat(name, dir_fd=fd, follow_symlinks=False)
        except (FileNotFoundError, NotADirectoryError):
            raise BackendError(f"{source} is not a file in the sandbox", where=str(self.root)) from None
        try:
            if not stat.S_ISREG(st.st_mode):
                raise BackendError(f"{source} is not a regular file in the sandbox", where=str(self.root))
            target.parent.mkdir(parents=True, exist_ok=True)
            return copy_out(fd, target.parent, only=name, rename=target.name, limits=limits, report=report,
                            budget=budget)
        finally:
            os.close(fd)

    def download_dir(self, source: str, target: Path, *, limits: CopyLimits | None = None,
                     report: CopyReport | None = None, budget: CopyBudget | None = None, protect=None) -> list[str]:
        """Copy a sandbox dir's tree to the host dir ``target`` as plain data (see :func:`copy_out`)."""
        self.host_path(source, write=False)
        try:
            fd = self.open_dir(source)
        except (FileNotFoundError, NotADirectoryError):
            raise BackendError(f"{source} is not a directory in the sandbox", where=str(self.root)) from None
        try:
            return copy_out(fd, target, limits=limits, report=report, budget=budget, protect=protect, label=source)
        finally:
            os.close(fd)


def make_skeleton(root: Path) -> None:
    """The dirs every image has and Harbor or agents write to."""
    for rel, mode in (("tmp", 0o1777), ("var/tmp", 0o1777), ("root", 0o700), ("home", 0o755)):
        path = root / rel
        path.mkdir(parents=True, exist_ok=True)
        os.chmod(path, mode)
    os.chmod(root, 0o755)


def owner_ids(spec: str, where: str) -> tuple[int, int]:
    """``user[:group]`` of ``COPY --chown`` as numeric ids, from the host's databases."""
    user, _, group = spec.partition(":")
    try:
        uid = int(user) if user.isdigit() else pwd.getpwnam(user).pw_uid
        if group:
            gid = int(group) if group.isdigit() else grp.getgrnam(group).gr_gid
        else:
            gid = uid if user.isdigit() else pwd.getpwuid(uid).pw_gid
    except KeyError:
        raise BackendError(
            f"--chown={spec}: unknown user or group on this host",
            where=where,
            fix="use numeric ids or drop --chown",
        ) from None
    return uid, gid


PYTHON_ALIASES = ("python", "python3")


def python_alias_binds(private_root: Path) -> tuple[Bind, ...]:
    """Make ``python`` resolve as it does in ``python:3.12-slim`` (``/usr/local/bin/python``).

    The host's ``/usr`` is read-only in the sandbox and Debian ships only ``python3``,
    so a skill whose Usage says ``python scripts/x.py`` would exit 127. The host's
    ``/usr/local/bin`` is shown through a private copy made of symlinks to each of
    its entries plus ``python``/``python3`` pointing at the host's Python 3. Nothing
    is added when the host already has both names there or no Python 3 at all.
    """
    host_bin = Path("/usr/local/bin")
    target = next((p for p in ("/usr/bin/python3", "/bin/python3") if os.access(p, os.X_OK)), None)
    missing = [n for n in PYTHON_ALIASES if not (host_bin / n).exists()]
    if target is None or not missing or not host_bin.is_dir():
        return ()
    shim = private_root / "usr" / "local" / "bin"  # hidden under the read-only /usr inside
    shim.mkdir(parents=True, exist_ok=True)
    for entry in os.scandir(host_bin):
        os.symlink(entry.path, shim / entry.name)
    for name in missing:
        os.symlink(target, shim / name)
    return (Bind(shim, PurePosixPath(str(host_bin)), read_only=True),)
