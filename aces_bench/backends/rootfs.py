"""The sandbox's file system seen from the host: path mapping and safe copies.

Harbor uploads (``/tests``, ``/solution``), Dockerfile ``COPY`` and downloads all go
straight to the host directories behind the sandbox, without entering it. Every path is
resolved the way the sandbox would resolve it, so a symlink made inside the sandbox can
never send a host-side write or read outside the private root and its bind mounts.
"""

from __future__ import annotations

import grp
import os
import pwd
import shutil
from collections import deque
from pathlib import Path, PurePosixPath

from aces_bench.backends.bwrap import HOST_SYSTEM_DIRS, Bind
from aces_bench.errors import BackendError


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

    def _base(self, path: str) -> tuple[str | None, bool]:
        for target, source, read_only in self._binds:
            if path == target or path.startswith(target + "/"):
                return source + path[len(target):], read_only
        if _top(path) in self._refused:
            return None, True
        return self.root + path, False


def _top(path: str) -> str:
    return "/" + path.split("/")[1] if path != "/" else "/"


class PrivateRoot:
    """Host-side file operations on a sandbox's private root and binds.

    Relative sandbox paths are taken relative to ``workdir``. ``where`` arguments name
    the Dockerfile line a failure belongs to, for the user-facing error.
    """

    def __init__(self, root: Path, binds: tuple[Bind, ...] = (), *, workdir: str = "/"):
        self.root = Path(root)
        self.view = SandboxView(self.root, binds)
        self.workdir = workdir

    def host_path(self, path: str, *, write: bool, where: str | None = None) -> Path:
        try:
            return self.view.host_path(path, write=write, cwd=self.workdir)
        except BackendError as exc:
            if where is None:
                raise
            raise BackendError(exc.message, where=where, fix=exc.fix) from None

    def is_dir(self, path: str) -> bool:
        return self.host_path(path, write=False).is_dir()

    def mkdirs(self, path: str, *, where: str | None = None) -> Path:
        """Create sandbox dir ``path`` and its parents; return its host path."""
        host = self.host_path(path, write=True, where=where)
        host.mkdir(parents=True, exist_ok=True)
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

        Targets are resolved one entry at a time, so no symlink inside the sandbox can
        redirect a write; symlinks in ``source`` are copied as symlinks.
        """
        if source.is_dir() and not source.is_symlink():
            self.mkdirs(dest, where=where)
            for dirpath, dirnames, filenames in os.walk(source):
                rel = Path(dirpath).relative_to(source).as_posix()
                for name in sorted(dirnames + filenames):
                    entry = Path(dirpath) / name
                    target = str(PurePosixPath(dest) / rel / name)
                    if entry.is_dir() and not entry.is_symlink():
                        _finish(self.mkdirs(target, where=where), None, owner)
                    else:
                        self._copy_file(entry, target, where=where, chmod=chmod, owner=owner)
            return
        self.mkdirs(str(PurePosixPath(dest).parent), where=where)
        self._copy_file(source, dest, where=where, chmod=chmod, owner=owner)

    def _copy_file(self, source: Path, dest: str, *, where, chmod, owner) -> None:
        host = self.host_path(dest, write=True, where=where)
        if host.is_dir() and not host.is_symlink():
            raise BackendError(f"cannot copy {source} over the directory {dest}", where=where)
        if source.is_symlink():
            host.unlink(missing_ok=True)
            os.symlink(os.readlink(source), host)
            return
        # O_NOFOLLOW: the last component was checked above; a link made since is refused.
        flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW
        try:
            with open(source, "rb") as src, os.fdopen(os.open(host, flags, 0o644), "wb") as dst:
                shutil.copyfileobj(src, dst)
        except OSError:
            # A full disk (ENOSPC) leaves no truncated copy behind, which a later
            # download of /logs would otherwise take for the file.
            host.unlink(missing_ok=True)
            raise
        shutil.copymode(source, host)
        _finish(host, chmod, owner)

    def download_file(self, source: str, target: Path) -> None:
        host = self.host_path(source, write=False)
        if not host.is_file():
            raise BackendError(f"{source} is not a file in the sandbox", where=str(self.root))
        target.parent.mkdir(parents=True, exist_ok=True)
        # Content only, as plain data: no setuid/setgid bits, owner the invoking user.
        shutil.copyfile(host, target, follow_symlinks=False)
        os.chmod(target, 0o755 if os.stat(host).st_mode & 0o111 else 0o644)

    def download_dir(self, source: str, target: Path) -> None:
        host = self.host_path(source, write=False)
        if not host.is_dir():
            raise BackendError(f"{source} is not a directory in the sandbox", where=str(self.root))
        # symlinks=True copies links as links, so nothing outside the sandbox is read;
        # the caller then makes the copy plain data (copyout.sanitize_tree).
        shutil.copytree(host, target, symlinks=True, dirs_exist_ok=True)


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


def _finish(host: Path, chmod: int | None, owner: tuple[int, int] | None) -> None:
    if chmod is not None:
        os.chmod(host, chmod)
    if owner is not None:
        os.chown(host, *owner, follow_symlinks=False)
