"""Memory and CPU limits for a local sandbox, through a cgroup of its own.

The task's ``[environment].memory_mb`` and ``cpus`` (``workspace.memory_mb`` /
``workspace.cpus``) become a cgroup per trial: cgroup v2 (``memory.max``,
``cpu.max``) when the unified hierarchy has those controllers, else cgroup v1
(``memory.limit_in_bytes``, ``cpu.cfs_quota_us``). The cgroup is made under the
aces-bench process's own cgroup, so the container's limits still apply above it.
bwrap (so the sandbox's init) and every command entered into the sandbox join it;
files written to the RAM-backed private root are charged to it too (tmpfs pages
count against the memory of the cgroup that wrote them).

Where no writable cgroup with those controllers exists (a container without
cgroup delegation), ``TrialCgroup.create`` returns None and the provenance says the
limits were not enforced; ``require_limits=True`` (backend kwarg) makes that a refusal.
"""

from __future__ import annotations

import logging
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

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

    @property
    def label(self) -> str:
        parts = []
        if self.memory_mb:
            parts.append(f"memory {self.memory_mb} MB")
        if self.cpus:
            parts.append(f"cpus {self.cpus:g}")
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
    def create(cls, name: str, *, memory_mb: int | None, cpus: float | None) -> TrialCgroup | None:
        """A new cgroup with the limits set, or None when this host cannot enforce them."""
        if not memory_mb and not cpus:
            return None
        return _create_v2(name, memory_mb, cpus) or _create_v1(name, memory_mb, cpus)


def _create_v2(name: str, memory_mb: int | None, cpus: float | None) -> TrialCgroup | None:
    controllers_file = CGROUP_ROOT / "cgroup.controllers"
    own = _own_path(None)
    if not controllers_file.is_file() or own is None:
        return None
    parent = CGROUP_ROOT / own.lstrip("/")
    try:
        available = set((parent / "cgroup.controllers").read_text().split())
        wanted = {c for c, v in (("memory", memory_mb), ("cpu", cpus)) if v}
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
    except OSError:
        shutil.rmtree(d, ignore_errors=True)
        return None
    return TrialCgroup((d,), 2, memory_mb, cpus)


def _create_v1(name: str, memory_mb: int | None, cpus: float | None) -> TrialCgroup | None:
    made: list[Path] = []
    try:
        for controller, value in (("memory", memory_mb), ("cpu", cpus)):
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
    return TrialCgroup(tuple(made), 1, memory_mb, cpus)
