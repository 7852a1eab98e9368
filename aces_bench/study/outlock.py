"""One study per output folder at a time: an exclusive lock taken before any write.

Two runs on one output folder destroyed each other (the second deleted the first's
in-flight trials; with different skills the "one set of skills per folder" check lost
the race). ``study_lock(out)`` takes an exclusive ``flock`` on ``<out>/.aces-lock`` and
writes the holder's pid, host and start time into it; a second run refuses at once
with a message naming the holder. The kernel drops a ``flock`` when its process dies,
however it dies, so a lock left by a killed run is stale by construction and the next
run simply takes it over (the file's old contents are only informative).

``usable_output_dir(out)`` turns an output folder that is a file, or cannot be
created, into an error naming it and the fix, before anything else touches it;
``check_same_skills`` refuses a folder holding a study of other skills.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path

from aces_bench.core.errors import RunError
from aces_bench.records.study import KINDS

LOCK_FILE = ".aces-lock"


def usable_output_dir(out: Path, *, key: str = "output_dir") -> Path:
    """Create ``out`` (and parents) and return it resolved; RunError naming it otherwise."""
    out = Path(out).expanduser()
    for parent in (out, *out.parents):
        if parent.exists() and not parent.is_dir():
            what = "is a file" if parent == out else f"is inside {parent}, which is a file"
            raise RunError(f"the output folder {what}", where=out,
                           fix=f"set {key} (or hydra.run.dir) to a folder, or move that file away")
        if parent.exists():
            break
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise RunError(f"cannot create the output folder: {exc.strerror}", where=out,
                       fix=f"set {key} (or hydra.run.dir) to a folder you can write, or fix its permissions") from None
    if not os.access(out, os.W_OK | os.X_OK):
        raise RunError("the output folder is not writable", where=out,
                       fix=f"set {key} (or hydra.run.dir) to a folder you can write, or fix its permissions")
    return out.resolve()


def check_same_skills(out: Path, skill_paths: list[str], decoy_paths: list[str]) -> None:
    """Refuse to mix two studies of different skills in one output folder: the folder's
    provenance record names the skill and decoy paths of the study that wrote it.

    Sweep folders are named by overrides without path-valued keys (they would nest
    folders), so two members differing only in skill paths would share a folder. A
    folder with no readable provenance holds no study to mix with."""
    previous = out / KINDS["provenance"].file
    if not previous.is_file():
        return
    try:
        old = json.loads(previous.read_text())["spec"]
    except (OSError, ValueError, KeyError, TypeError):
        return
    keys = {"skill.paths": (old.get("skill", {}).get("paths"), skill_paths),
            "decoys.paths": (old.get("decoys", {}).get("paths"), decoy_paths)}
    changed = [k for k, (before, now) in keys.items() if before is not None and before != now]
    if changed:
        raise RunError(
            f"this output dir holds a study with different {', '.join(changed)}",
            where=out,
            fix="use another study.name or hydra.run.dir; in a sweep over paths set hydra.sweep.subdir=${hydra.job.num}",
        )


def holder_of(out: Path) -> dict:
    """What the lock file says about its (last) holder; {} when unreadable."""
    try:
        return json.loads((Path(out) / LOCK_FILE).read_text())
    except (OSError, ValueError):
        return {}


def _describe(holder: dict) -> str:
    if not holder:
        return "another aces-bench run"
    since = holder.get("started")
    when = f", started {time.strftime('%Y-%m-%d %H:%M:%S', time.localtime(since))}" if since else ""
    return f"aces-bench pid {holder.get('pid')} on host {holder.get('host')}{when}"


@contextlib.contextmanager
def study_lock(out: Path) -> Iterator[Path]:
    """Hold the exclusive lock on output folder ``out`` for the duration of the block.

    Raises RunError at once, naming the holder, when another live run holds it.
    """
    path = Path(out) / LOCK_FILE
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            if exc.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
            raise RunError(
                f"this output folder is in use by {_describe(holder_of(out))}",
                where=out,
                fix="wait for that run to finish (or stop it), or give this run another output_dir / study.name",
            ) from None
        # Whatever the file still says is a dead holder's (the kernel freed its flock).
        record = {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}
        os.ftruncate(fd, 0)
        os.pwrite(fd, (json.dumps(record) + "\n").encode(), 0)
        yield path
    finally:
        os.close(fd)  # closing the descriptor releases the flock
