"""Memory, CPU, process-count and disk limits for a local sandbox: a cgroup and a tmpfs of its own.

The task's ``[environment].memory_mb`` and ``cpus`` (``workspace.memory_mb`` /
``workspace.cpus``) and the backend's process limit (``pids_limit``, on by default, so
a fork bomb is bounded) become a cgroup per trial: cgroup v2 (``memory.max``,
``cpu.max``, ``pids.max``) when the unified hierarchy has those controllers, else
cgroup v1 (``memory.limit_in_bytes``, ``cpu.cfs_quota_us``, ``pids.max``). The cgroup is made under the
aces-bench process's own cgroup, so the container's limits still apply above it.
bwrap (so the sandbox's init) and every command entered into the sandbox join it;
files written to the RAM-backed private root are charged to it too (tmpfs pages
count against the memory of the cgroup that wrote them).

Where no writable cgroup with those controllers exists (a container without
cgroup delegation), ``TrialCgroup.create`` returns None and the provenance says the
limits were not enforced; ``require_limits=True`` (backend kwarg) makes that a refusal.

Disk: the task's ``[environment].storage_mb`` (``workspace.storage_mb``) becomes the
size of a tmpfs mounted at the trial's private root (:class:`TrialDisk`), so a write
past it fails inside with ENOSPC. A root on RAM-backed storage (``/dev/shm``) with no
``storage_mb`` is capped at ``memory_mb`` instead, so it cannot hold more of the host's
memory than the trial was given. With a cap the trial's ``/logs`` dirs are not bound
to the host but kept inside the same tmpfs and copied out (``local.py``), so the cap
covers everything the trial writes.
Mounting needs CAP_SYS_ADMIN; without it the disk limit is reported not enforced.

A run killed with SIGKILL leaves its cgroups and tmpfs mounts behind; both are named
after the owning pid, and :func:`sweep_stale` (run when a trial starts) removes those
whose owner is gone.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import logging
import os
import re
import shutil
from dataclasses import dataclass
from pathlib import Path

from aces_bench.core import io

log = logging.getLogger(__name__)

CGROUP_ROOT = Path("/sys/fs/cgroup")
CPU_PERIOD_US = 100_000


def _own_path(controller: str | None) -> str | None:
    """This process's cgroup path for ``controller`` (None: the v2 unified entry)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, names, path = line.split(":", 2)
        if controller is None and names == "":
            return path
        if controller is not None and controller in names.split(","):
            return path
    return None


@dataclass
class TrialCgroup:
    """The cgroup dirs holding one sandbox; ``add`` moves a pid in, ``remove`` cleans up."""

    dirs: tuple[Path, ...]
    version: int
    memory_mb: int | None
    cpus: float | None
    pids: int | None = None

    @property
    def label(self) -> str:
        parts = []
        if self.memory_mb:
            parts.append(f"memory {self.memory_mb} MB")
        if self.cpus:
            parts.append(f"cpus {self.cpus:g}")
        if self.pids:
            parts.append(f"processes {self.pids}")
        return f"cgroup v{self.version}: " + ", ".join(parts)

    def add(self, pid: int) -> None:
        for d in self.dirs:
            (d / "cgroup.procs").write_text(f"{pid}\n")

    def join(self) -> None:
        """Move the calling process in (a ``preexec_fn``: runs in the child before exec)."""
        self.add(os.getpid())

    def remove(self) -> None:
        for d in self.dirs:
            procs = d / "cgroup.procs"
            try:
                leftover = [p for p in procs.read_text().split() if p]
            except OSError:
                leftover = []
            parent_procs = d.parent / "cgroup.procs"
            for pid in leftover:  # killed processes can linger a moment; move any live one up
                try:
                    parent_procs.write_text(f"{pid}\n")
                except OSError:
                    pass
            try:
                d.rmdir()
            except OSError:
                log.debug("local sandbox: could not remove cgroup %s", d)

    @classmethod
    def create(cls, name: str, *, memory_mb: int | None, cpus: float | None,
               pids: int | None = None) -> TrialCgroup | None:
        """A new cgroup with the limits set, or None when this host cannot enforce them.

        All asked limits or none: a host that has some of the controllers but not all
        gets None here (the caller may ask again for fewer).
        """
        if not memory_mb and not cpus and not pids:
            return None
        return _create_v2(name, memory_mb, cpus, pids) or _create_v1(name, memory_mb, cpus, pids)


def _create_v2(name: str, memory_mb: int | None, cpus: float | None, pids: int | None = None) -> TrialCgroup | None:
    controllers_file = CGROUP_ROOT / "cgroup.controllers"
    own = _own_path(None)
    if not controllers_file.is_file() or own is None:
        return None
    parent = CGROUP_ROOT / own.lstrip("/")
    try:
        available = set((parent / "cgroup.controllers").read_text().split())
        wanted = {c for c, v in (("memory", memory_mb), ("cpu", cpus), ("pids", pids)) if v}
        if not wanted <= available:
            return None
        enabled = set((parent / "cgroup.subtree_control").read_text().split())
        if not wanted <= enabled:
            # A process-holding cgroup cannot enable controllers for its children (v2's
            # no-internal-process rule); a delegated, empty parent can.
            (parent / "cgroup.subtree_control").write_text(" ".join(f"+{c}" for c in wanted - enabled))
        d = parent / name
        d.mkdir()
    except OSError:
        return None
    try:
        if memory_mb:
            (d / "memory.max").write_text(f"{memory_mb * 1024 * 1024}\n")
            if (d / "memory.swap.max").exists():
                (d / "memory.swap.max").write_text("0\n")
        if cpus:
            (d / "cpu.max").write_text(f"{int(cpus * CPU_PERIOD_US)} {CPU_PERIOD_US}\n")
        if pids:
            (d / "pids.max").write_text(f"{int(pids)}\n")
    except OSError:
        shutil.rmtree(d, ignore_errors=True)
        return None
    return TrialCgroup((d,), 2, memory_mb, cpus, pids)


def _create_v1(name: str, memory_mb: int | None, cpus: float | None, pids: int | None = None) -> TrialCgroup | None:
    made: list[Path] = []
    try:
        for controller, value in (("memory", memory_mb), ("cpu", cpus), ("pids", pids)):
            if not value:
                continue
            own = _own_path(controller)
            base = CGROUP_ROOT / controller
            if own is None or not base.is_dir():
                raise OSError(f"no cgroup v1 {controller} controller")
            parent = base / own.lstrip("/")
            if not parent.is_dir():
                parent = base  # the hierarchy is mounted at this cgroup itself (cgroup namespace)
            d = parent / name
            d.mkdir()
            made.append(d)
            if controller == "memory":
                (d / "memory.limit_in_bytes").write_text(f"{memory_mb * 1024 * 1024}\n")
                memsw = d / "memory.memsw.limit_in_bytes"
                if memsw.exists():
                    try:
                        memsw.write_text(f"{memory_mb * 1024 * 1024}\n")
                    except OSError:
                        pass
            elif controller == "pids":
                (d / "pids.max").write_text(f"{int(pids)}\n")
            else:
                (d / "cpu.cfs_period_us").write_text(f"{CPU_PERIOD_US}\n")
                (d / "cpu.cfs_quota_us").write_text(f"{int(cpus * CPU_PERIOD_US)}\n")
    except OSError as exc:
        log.debug("local sandbox: cgroup v1 limits unavailable: %s", exc)
        for d in made:
            try:
                d.rmdir()
            except OSError:
                pass
        return None
    return TrialCgroup(tuple(made), 1, memory_mb, cpus, pids)


# -- disk: a size-limited tmpfs at the private root ------------------------------------
MS_NOSUID, MS_NODEV, MNT_DETACH = 0x2, 0x4, 0x2
# The tmpfs "device" name, which the sandbox sees in its mountinfo: no pid in it. A
# sweep tells a killed run's mounts by the mount point's name, which carries the
# owner's pid (local.py's ROOT_PREFIX); older runs put the pid in the source.
MOUNT_SOURCE = "aces-sandbox"
_OWNED = re.compile(r"^aces-sandbox-(\d+)(?:-|$)")


@functools.cache
def _libc():
    return ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)


@dataclass
class TrialDisk:
    """A tmpfs of ``size_mb`` mounted at ``path`` (the private root); ``unmount`` at stop."""

    path: Path
    size_mb: int
    capped: bool = True  # False: mounted only so the sandbox sees no host path (local.py)

    @property
    def label(self) -> str:
        return f"disk {self.size_mb} MB (tmpfs at the private root)"

    @classmethod
    def mount(cls, path: Path, size_mb: int, *, capped: bool = True) -> TrialDisk | None:
        """Mount the tmpfs over the (empty) dir ``path``; None when this process may not mount."""
        source = MOUNT_SOURCE.encode()
        options = f"size={int(size_mb)}m,mode=0755".encode()
        rc = _libc().mount(source, str(path).encode(), b"tmpfs", MS_NOSUID | MS_NODEV, options)
        if rc != 0:
            log.debug("local sandbox: cannot mount a tmpfs at %s: %s", path, os.strerror(ctypes.get_errno()))
            return None
        return cls(Path(path), int(size_mb), capped)

    def unmount(self) -> None:
        _unmount(self.path)


def _unmount(path: Path | str) -> None:
    # Detached: a process still holding a file in it cannot keep the mount point busy.
    if _libc().umount2(str(path).encode(), MNT_DETACH) != 0:
        log.debug("local sandbox: could not unmount %s: %s", path, os.strerror(ctypes.get_errno()))


def ram_backed(path: Path | str) -> bool:
    """Whether ``path`` is on a RAM-backed file system (tmpfs, as /dev/shm is)."""
    best, fstype = "", ""
    target = os.path.realpath(path)
    for mountpoint, kind in _mounts():
        if (target == mountpoint or target.startswith(mountpoint.rstrip("/") + "/")) and len(mountpoint) >= len(best):
            best, fstype = mountpoint, kind
    return fstype in ("tmpfs", "ramfs")


def _mounts(with_source: bool = False):
    """(mount point, fs type[, source]) of this process's mounts, from /proc/self/mountinfo."""
    try:
        lines = Path("/proc/self/mountinfo").read_text().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        left, _, right = line.partition(" - ")
        fields, tail = left.split(), right.split()
        if len(fields) < 5 or len(tail) < 2:
            continue
        mountpoint = re.sub(r"\\([0-7]{3})", lambda m: chr(int(m.group(1), 8)), fields[4])
        out.append((mountpoint, tail[0], tail[1]) if with_source else (mountpoint, tail[0]))
    return out


# -- per-user kernel counts --------------------------------------------------------
# Counts the kernel keeps per user and charges up the user-namespace chain to each
# namespace's owner (ucounts): what a trial may hold is the host's per-user maximum,
# charged to the owner of its namespace (bwrap.namespace_owner, a uid of its own).
# Keys need keyctl/add_key, which the seccomp filter refuses; message queues, pending
# signals and locked memory are rlimits counted per (namespace, uid), and a trial's
# namespace is its own; pipe buffers go to the sandbox's mapped uid, never to host root.
KERNEL_COUNTS = (
    ("inotify instances", "/proc/sys/fs/inotify/max_user_instances"),
    ("inotify watches", "/proc/sys/fs/inotify/max_user_watches"),
    ("fanotify groups", "/proc/sys/user/max_fanotify_groups"),
    ("fanotify marks", "/proc/sys/user/max_fanotify_marks"),
    ("user namespaces", "/proc/sys/user/max_user_namespaces"),
)


def kernel_counts(owner: int) -> str:
    """How the per-user kernel counts of a sandbox whose namespace ``owner`` owns are capped."""
    parts = []
    for name, path in KERNEL_COUNTS:
        try:
            parts.append(f"{name} {int(Path(path).read_text())}")
        except (OSError, ValueError):
            continue
    return (f"its own: charged to host uid {owner} (this sandbox's namespace owner), at most "
            + ", ".join(parts) + "; keyrings refused (seccomp)")


# -- what a killed run left behind -------------------------------------------------
@functools.cache
def sweep_stale() -> tuple[int, int]:
    """Unmount tmpfs roots and remove empty cgroups left by runs that are gone.

    Both carry their owner's pid (``aces-sandbox-<pid>``); a live owner's are kept.
    Once per process. Returns (mounts, cgroups) removed.
    """
    mounts = 0
    for mountpoint, fstype, source in _mounts(with_source=True):
        m = _OWNED.match(os.path.basename(mountpoint)) if source == MOUNT_SOURCE else _OWNED.match(source)
        if fstype == "tmpfs" and m and not io.pid_alive(int(m.group(1))):
            _unmount(mountpoint)
            mounts += 1
    cgroups = 0
    for parent in _cgroup_parents():
        try:
            entries = list(os.scandir(parent))
        except OSError:
            continue
        for entry in entries:
            m = _OWNED.match(entry.name)
            if m is None or not entry.is_dir(follow_symlinks=False) or io.pid_alive(int(m.group(1))):
                continue
            try:
                os.rmdir(entry.path)  # only an empty cgroup can be removed: a live one stays
                cgroups += 1
            except OSError:
                log.debug("local sandbox: stale cgroup %s is not empty; left alone", entry.path)
    if mounts or cgroups:
        log.info("local sandbox: removed %d tmpfs mount(s) and %d cgroup(s) left by killed runs", mounts, cgroups)
    return mounts, cgroups


def _cgroup_parents() -> list[Path]:
    """The cgroup dirs this process makes trial cgroups in (v2 and each v1 controller)."""
    parents = []
    own = _own_path(None)
    if (CGROUP_ROOT / "cgroup.controllers").is_file() and own is not None:
        parents.append(CGROUP_ROOT / own.lstrip("/"))
    for controller in ("memory", "cpu", "pids"):
        own, base = _own_path(controller), CGROUP_ROOT / controller
        if own is not None and base.is_dir():
            parent = base / own.lstrip("/")
            parents.append(parent if parent.is_dir() else base)
    return parents
