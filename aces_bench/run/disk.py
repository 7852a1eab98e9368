"""The study's disk cap: ``study.max_output_gb``, checked before every trial starts.

Every trial leaves its copied-out logs, workspace and artifacts on the host (each
trial's copies are capped, ``backend.kwargs.copy_max_total_mb``), so a study's folder
grows with its trials: two attempts of one case once left 1 GB. The cap is for the
whole study (a sweep's or a designed study's root for its members, as the cost cap's
ledger is): what the folder holds is measured when a job starts (its disk use, blocks
not sizes) and each finished trial's folder is added; a trial starts only while the
total is below the cap. Past it the study stops as at the cost cap: nothing running
is cut short, the finished trials are tabled and reported, ``disk-stop.json`` says
why, and the report and the one-line error say so; re-running after raising the cap
(or freeing space) resumes.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import ConfigDict, Field

from aces_bench.config.spec import RunSpec
from aces_bench.core.errors import RunError
from aces_bench.core.io import write_json
from aces_bench.core.versioning import VersionedRecord, load_model

log = logging.getLogger(__name__)

STOP_FILE = "disk-stop.json"
GB = 2**30


def disk_use(path: Path) -> int:
    """Bytes of disk the files under ``path`` take (allocated blocks; links never followed)."""
    total = 0
    stack = [str(path)]
    while stack:
        try:
            entries = list(os.scandir(stack.pop()))
        except OSError:
            continue
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            total += st.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                stack.append(entry.path)
    return total


class DiskStop(VersionedRecord):
    """Why a study stopped at its disk cap: ``disk-stop.json`` in its output folder."""

    model_config = ConfigDict(frozen=True)
    SCHEMA_ARTIFACT = "disk stop"
    SCHEMA_REGENERATE = "re-run the study (with a higher study.max_output_gb) or delete the file"

    cap_gb: float
    used_gb: float
    finished: int
    total: int
    folder: str
    at: float = Field(default_factory=time.time)

    def line(self) -> str:
        used = f"{self.used_gb:.2f} GB" if self.used_gb >= 1 else f"{self.used_gb * 1024:.1f} MB"
        return (f"stopped by study.max_output_gb={self.cap_gb:g}: {self.folder} holds {used}, "
                f"{self.finished} of {self.total} trial(s) ran")


def write_stop(out: Path, stop: DiskStop) -> Path:
    return write_json(Path(out) / STOP_FILE, stop)


def read_stop(out: Path) -> DiskStop | None:
    """The disk stop recorded in an output folder (or any member folder below it), else None."""
    out = Path(out)
    for path in [out / STOP_FILE, *sorted(out.glob(f"*/{STOP_FILE}"))]:
        if path.is_file():
            return load_model(DiskStop, path.read_text(), where=path, fix=DiskStop.SCHEMA_REGENERATE)
    return None


def clear_stop(out: Path) -> None:
    (Path(out) / STOP_FILE).unlink(missing_ok=True)


class DiskCapReached(RunError):
    """The study stopped at its disk cap; the trials that finished are kept and tabled."""

    def __init__(self, stop: DiskStop, job_dir: Path):
        self.stop = stop
        self.job_dir = job_dir
        super().__init__(stop.line() + "; the trials that ran are kept, tabled and reported", where=job_dir,
                         fix="raise study.max_output_gb (or free space in that folder) and re-run the same command "
                             "to resume")


@dataclass
class DiskGuard:
    """Lets a trial start only while the study's folder holds less than the cap (module doc)."""

    cap_gb: float | None
    root: Path
    job_dir: Path
    used: int = 0
    finished: int = 0
    tripped: bool = False
    job_task: asyncio.Task | None = None
    _measured: bool = field(default=False, repr=False)

    async def on_start(self, event) -> None:
        if self.cap_gb is None:
            return
        if not self._measured:
            self.used = await asyncio.to_thread(disk_use, self.root)
            self._measured = True
        if self.tripped or self.used >= self.cap_gb * GB:
            self._trip()
            raise asyncio.CancelledError()

    async def on_end(self, event) -> None:
        self.finished += 1
        if self.cap_gb is not None and self._measured:
            self.used += await asyncio.to_thread(disk_use, self.job_dir / event.trial_name)

    def _trip(self) -> None:
        if not self.tripped:
            self.tripped = True
            log.warning("disk cap: %s holds %.2f GB of study.max_output_gb=%g; stopping the study",
                        self.root, self.used / GB, self.cap_gb)
            if self.job_task is not None:
                self.job_task.cancel()

    def stop_record(self, total: int) -> DiskStop:
        return DiskStop(cap_gb=self.cap_gb or 0.0, used_gb=self.used / GB, finished=self.finished, total=total,
                        folder=str(self.root))


def disk_guard(spec: RunSpec, job_dir: Path) -> DiskGuard:
    """The guard of one job: the whole study's folder (a sweep's or design's root) against the cap."""
    return DiskGuard(spec.study.max_output_gb, Path(spec.budget_dir or spec.output_dir).resolve(), job_dir)
