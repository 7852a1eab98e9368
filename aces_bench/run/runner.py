"""Run an emitted study through Harbor's job API, resumably.

The job name is a hash of the whole Harbor job config, so re-running the same sweep
finds the same job dir and Harbor resumes it (finished trials are kept), while any
change to the config starts a new job instead of tripping Harbor's changed-config
check.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import os
import sys
from collections.abc import Callable
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import ClassVar

from harbor.job import Job
from harbor.models.job.config import DatasetConfig, JobConfig
from harbor.models.job.result import JobResult
from harbor.models.trial.config import AgentConfig, EnvironmentConfig
from harbor.models.trial.paths import TrialPaths
from harbor.models.trial.result import TrialResult
from pydantic import ValidationError

from aces_bench.agents.clis import installed as installed_cli
from aces_bench.agents.endpoints import harness_base_url
from aces_bench.config.spec import RunSpec
from aces_bench.core.errors import AcesError, BackendError, OutputError, RunError, output_error
from aces_bench.core.io import remove_tree
from aces_bench.emitters import EmitResult
from aces_bench.run.cost import CostCapReached, CostEstimate, CostGuard, Ledger, budget_dir, check_cap, estimate
from aces_bench.run.disk import DiskCapReached, disk_guard
from aces_bench.run.offline import OFFLINE_ENV, set_offline_defaults  # noqa: F401 (re-exported)
from aces_bench.run.progress import TrialProgress

log = logging.getLogger("aces_bench.run")

# Harbor's exception type for a trial cut short by cancellation (an interrupted job).
CANCELLED = "CancelledError"

def agent_config(spec: RunSpec) -> AgentConfig:
    h, m = spec.harness, spec.model
    kwargs = dict(h.kwargs)
    if h.cli is not None:
        kwargs.setdefault("bundled_skills", h.bundled_skills)
        if spec.backend.is_local:
            # Harbor's installed agents skip their network install only for this version.
            kwargs.setdefault("version", installed_cli(h.cli)[1].version)
    name, import_path = h.agent, h.import_path
    return AgentConfig(
        name=name,
        import_path=import_path,
        model_name=m.name,
        base_url=harness_base_url(h.cli, h.agent, m.name, m.base_url),
        model_api_key_name=m.api_key_env,
        kwargs=kwargs,
        env=dict(h.env),
    )


def environment_config(spec: RunSpec) -> EnvironmentConfig:
    b = spec.backend
    kwargs = dict(b.kwargs)
    if spec.harness.cli is not None and b.is_local:
        # Other backends' environments take no extra mounts: there the agent installs itself.
        folder, manifest = installed_cli(spec.harness.cli)
        mount = {"source": str(folder), "target": str(manifest.mount), "path": str(manifest.bin_dir)}
        kwargs["tool_mounts"] = [*kwargs.get("tool_mounts", []), mount]
        if spec.model.base_url and b.is_local:
            # Under no-network Harbor allowlists the model's host; the port comes from here.
            kwargs["egress_urls"] = [*kwargs.get("egress_urls", []), spec.model.base_url]
    return EnvironmentConfig(type=b.type, import_path=b.import_path, kwargs=kwargs, delete=b.delete)


def job_config(spec: RunSpec, emitted: EmitResult, jobs_dir: Path) -> JobConfig:
    """The study's Harbor job: every attempt of every emitted task. Built once per study;
    a round's job is this one narrowed (``excluding``, ``attempts.attempt_job_config``)."""
    config = JobConfig(
        jobs_dir=Path(jobs_dir).resolve(),
        n_attempts=spec.study.n_attempts,
        n_concurrent_trials=spec.study.n_concurrent,
        quiet=True,
        agents=[agent_config(spec)],
        environment=environment_config(spec),
        datasets=[DatasetConfig(path=emitted.tasks_dir)],
    )
    return _named(config, f"{spec.study.name}-{spec.harness.name}", emitted)


def excluding(base: JobConfig, emitted: EmitResult, exclude: frozenset[str]) -> JobConfig:
    """``base`` without the tasks ``exclude`` names (reused baseline trials), under its own name."""
    if not exclude:
        return base
    dataset = DatasetConfig(path=emitted.tasks_dir,
                            task_names=sorted(t.task_id for t in emitted.tasks if t.task_id not in exclude))
    return _named(base.model_copy(update={"datasets": [dataset]}), base.job_name.rsplit("-", 1)[0], emitted)


def check_max_trials(spec: RunSpec, trials: int) -> None:
    """A fixed study that would run more than ``study.max_trials`` trials is refused before it starts."""
    cap = spec.study.max_trials
    if cap is not None and trials > cap:
        raise RunError(f"the study would run {trials} trial(s), above study.max_trials={cap}",
                       where="study.max_trials",
                       fix="raise study.max_trials, run fewer cases or attempts, or set study.sequential=true "
                           "(a sequential study stops starting rounds at the cap)")


def _named(config: JobConfig, prefix: str, emitted: EmitResult) -> JobConfig:
    """``config`` named ``<prefix>-<digest>``: the digest of everything it runs, so a re-run resumes the same job."""
    payload = _canonical(config.model_dump(mode="python", exclude={"job_name"}))
    payload["task_ids"] = sorted(t.task_id for t in emitted.tasks)
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()
    return config.model_copy(update={"job_name": f"{prefix}-{digest[:10]}"})


def _canonical(obj):
    """Plain data with sets sorted: Harbor keeps some options as sets, whose order
    changes between processes, and the job name must not."""
    if isinstance(obj, dict):
        return {str(k): _canonical(v) for k, v in obj.items()}
    if isinstance(obj, set | frozenset):
        return sorted((_canonical(v) for v in obj), key=repr)
    if isinstance(obj, list | tuple):
        return [_canonical(v) for v in obj]
    return obj


def count_finished(job_dir: Path) -> tuple[int, int]:
    """(finished, failed) trials already in ``job_dir``: a resumed run starts from them."""
    if not job_dir.is_dir():
        return 0, 0
    done = failed = 0
    for p in job_dir.iterdir():
        result = TrialPaths(p).result_path
        if not result.is_file():
            continue
        done += 1
        try:
            failed += TrialResult.model_validate_json(result.read_text()).exception_info is not None
        except (OSError, ValueError):
            failed += 1  # unreadable: collection reports it as an infrastructure failure
    return done, failed


def discard_cancelled(job_dir: Path) -> list[str]:
    """Remove the trial dirs of trials that were cancelled (the run was interrupted);
    return their names.

    Harbor writes a ``result.json`` with a ``CancelledError`` for trials running when
    the job is interrupted, and its resume keeps any trial that has a result, so
    without this they would never run again. ``harbor job resume`` drops them the
    same way before resuming.
    """
    dropped: list[str] = []
    if not job_dir.is_dir():
        return dropped
    for trial_dir in sorted(p for p in job_dir.iterdir() if p.is_dir()):
        result_path = TrialPaths(trial_dir).result_path
        try:
            result = TrialResult.model_validate_json(result_path.read_text())
        except (OSError, ValidationError, ValueError):
            continue  # no or unreadable result: Harbor itself redoes or reports it
        info = result.exception_info
        if info is not None and info.exception_type == CANCELLED:
            remove_tree(trial_dir)
            dropped.append(trial_dir.name)
    return dropped


def discard_half_written(job_dir: Path) -> bool:
    """Remove a job-level ``result.json`` that a killed run left empty or unparsable.

    It holds only the job's stats, which Harbor recomputes on resume; left in place,
    Harbor's resume fails to parse it and the study could never be resumed.
    """
    path = job_dir / "result.json"
    if not path.is_file():
        return False
    try:
        JobResult.model_validate_json(path.read_text())
    except (OSError, ValidationError, ValueError):
        path.unlink()
        return True
    return False


async def run_job(spec: RunSpec, emitted: EmitResult, jobs_dir: Path, exclude: frozenset[str] = frozenset(), *,
                  stops_early: Callable[[TrialResult], str | None] | None = None) -> Path:
    """Create (or resume) the Harbor job for this study; return its job dir (``exclude``:
    task ids it leaves out, reused baseline trials). The caller ran the one preflight
    (``study.preflight``) before anything was emitted."""
    set_offline_defaults()
    config = excluding(job_config(spec, emitted, jobs_dir), emitted, exclude)
    total = (len(emitted.tasks) - len(exclude)) * spec.study.n_attempts
    return await run_config(spec, config, total=total, stops_early=stops_early)


async def run_config(spec: RunSpec, config: JobConfig, *, total: int,
                     stops_early: Callable[[TrialResult], str | None] | None = None) -> Path:
    """Run (or resume) one Harbor job under the study's cost guard and failure watch.

    Raises ``CostCapReached`` when the cost cap stopped it, ``DiskCapReached`` when the
    disk cap did (``run.disk``), and ``UniformFailure`` when its
    first trials all failed for one cause that ``stops_early`` accepts, in both arms
    (it returns the arm of a failure that may stop the study, else None; the failure
    classification lives above this layer; without it the watch is off). The trials
    that finished are kept either way.
    """
    job_dir = config.jobs_dir / config.job_name
    if discard_half_written(job_dir):
        log.info("resuming: the job's result.json was left half-written by a killed run; Harbor rewrites it")
    dropped = discard_cancelled(job_dir)
    if dropped:
        log.info("resuming: %d trial(s) cancelled by an interrupted run will run again", len(dropped))
    try:
        job = await Job.create(config)
    except FileExistsError as exc:
        raise RunError(
            f"Harbor refused to resume the job: {exc}",
            where=job_dir,
            fix="delete that job dir to start over, or restore the config it was started with",
        ) from None
    except ValueError as exc:
        raise RunError(f"Harbor rejected the job config: {exc}", where="harness/backend",
                       fix="check harness, model and backend settings") from None
    done, failed = count_finished(job_dir)
    guard = cost_guard(spec, total - done, job=config.job_name)
    disk = disk_guard(spec, job_dir)
    watch = FailureWatch(total - done, eligible=stops_early)
    progress = TrialProgress(total, already_done=done, already_failed=failed)
    # The guards first: a trial they hold at its start is not counted as running.
    job.on_trial_started(disk.on_start)
    job.on_trial_started(guard.on_start)
    job.on_trial_started(progress.on_start)
    job.on_trial_ended(guard.on_end)
    job.on_trial_ended(disk.on_end)
    job.on_trial_ended(progress.on_end)
    job.on_trial_ended(watch.on_end)
    with progress, quiet_harbor_progress():
        guard.job_task = watch.job_task = disk.job_task = task = asyncio.ensure_future(job.run())
        try:
            await task
        except ExceptionGroup as group:
            raise environment_refusal(group, spec) or write_failure(group, where=spec.output_dir) or group from None
        except asyncio.CancelledError:
            if guard.tripped is not None:
                stop = guard.stop_record(total)
                raise CostCapReached(stop, job_dir) from None
            if disk.tripped:
                raise DiskCapReached(disk.stop_record(total), job_dir) from None
            if watch.stopped is not None:
                raise watch.error(job_dir) from None
            raise
    return job_dir


def cost_line(spec: RunSpec, est: CostEstimate, ledger: Ledger, spent: float) -> str:
    """The study's size and estimated cost, and what its ledger already holds (one line)."""
    line = est.summary(spec.model.name)
    if spent:
        line += f"; already spent ${spent:,.4f} (ledger {ledger.path})"
    return line


def cost_guard(spec: RunSpec, trials: int, *, job: str = "") -> CostGuard:
    """Print the study's size and estimated cost; refuse it when what the study already
    spent (its ledger) plus this estimate is above ``study.max_cost_usd``."""
    est = estimate(spec, trials)
    ledger = Ledger(budget_dir(spec))
    spent = ledger.spent()
    print(cost_line(spec, est, ledger, spent), file=sys.stderr)
    check_cap(spec, est, spent)
    out = Path(spec.output_dir).resolve()
    member = "." if out == ledger.root else os.path.relpath(out, ledger.root)
    return CostGuard(spec.study.max_cost_usd, est.per_trial, ledger=ledger, member=member, job=job,
                     model=spec.model.name, total=trials)


class UniformFailure(RunError):
    """The first trials of a study all failed for one cause: the study stopped early."""


@dataclass
class FailureWatch:
    """Stops a job whose first trials all fail for one and the same cause, in both arms.

    When every trial to finish so far failed with the same exception and message
    (numbers and paths aside), at least ``EARLY`` of them and in both arms, the rest
    would almost surely fail the same way (a backend that cannot start, a CLI that
    cannot run, a model endpoint that refuses): the job is cancelled and the cause
    named. Any success, a failure ``eligible`` does not accept (a timeout), or two
    different causes turn the watch off.
    """

    total: int
    eligible: Callable[[TrialResult], str | None] | None = None  # the arm of a failure that may stop it
    sides: set[str] = field(default_factory=set)
    EARLY: ClassVar[int] = 3
    causes: list[str] = field(default_factory=list)
    off: bool = False
    stopped: str | None = None
    job_task: asyncio.Task | None = None

    async def on_end(self, event) -> None:
        if self.off or self.stopped is not None or self.eligible is None:
            return
        info = event.result.exception_info
        if info is None or info.exception_type == CANCELLED:
            self.off = info is None
            return
        side = self.eligible(event.result)
        if side is None:
            self.off = True  # a failure of the arm itself (a timeout): the trials are data
            return
        cause = f"{info.exception_type}: {_first_line(info.exception_message)}"
        if self.causes and _shape(cause) != _shape(self.causes[0]):
            self.off = True
            return
        self.causes.append(cause)
        self.sides.add(side)
        if len(self.causes) >= min(self.total, self.EARLY) and self.total > 1 and len(self.sides) > 1:
            self.stopped = self.causes[0]
            log.warning("the first %d trial(s) all failed with %s: stopping the study", len(self.causes), self.stopped)
            if self.job_task is not None:
                self.job_task.cancel()

    def error(self, job_dir: Path) -> UniformFailure:
        return UniformFailure(
            f"stopped early: the first {len(self.causes)} trial(s) all failed with {self.stopped}",
            where=job_dir,
            fix="fix that cause and re-run the same command; the failed trials run again",
        )


def _first_line(text: str | None) -> str:
    lines = [ln.strip() for ln in (text or "").splitlines() if ln.strip()]
    return (lines[0] if lines else "")[:300]


def _shape(cause: str) -> str:
    """A failure message with its numbers, hex ids and paths blanked, to compare causes."""
    import re

    cause = re.sub(r"(/[\w.@+-]+)+", "<path>", cause)
    return re.sub(r"\b[0-9a-f]{6,}\b|\d+", "#", cause)


@contextmanager
def quiet_harbor_progress():
    """Harbor draws its own progress bar on the terminal even when quiet; aces-bench
    shows one (``progress.TrialProgress``), so Harbor's is disabled for the job."""
    import harbor.job as harbor_job
    from rich.progress import Progress

    original = harbor_job.Progress

    def silent(*args, **kwargs):
        return Progress(*args, **{**kwargs, "disable": True})

    harbor_job.Progress = silent
    try:
        yield
    finally:
        harbor_job.Progress = original


def write_failure(group: BaseExceptionGroup, *, where: str | Path | None = None) -> AcesError | None:
    """The one-line OutputError for a job whose trials could not write their files, else None.

    A disk that fills (or a folder that turns read-only) while trials run fails each
    trial's own writes inside Harbor's task group, which then raises an ExceptionGroup;
    Harbor often raises again while handling the OSError, so the whole chain of causes
    and contexts is searched. A full disk, a quota or a read-only file system counts
    wherever it struck; a permission error only on a file under ``where`` (the output
    folder), so that a sandbox or cgroup operation refused (EPERM) is never reported as
    an unwritable output folder. The first write failure found names its file, else ``where``.
    """
    import errno

    inside = Path(where).resolve() if where is not None else None
    pending: list[BaseException] = [group]
    seen: set[int] = set()
    while pending:
        exc = pending.pop(0)
        if id(exc) in seen:
            continue
        seen.add(id(exc))
        if isinstance(exc, BaseExceptionGroup):
            pending.extend(exc.exceptions)
        elif isinstance(exc, OutputError):
            return exc
        elif isinstance(exc, OSError) and exc.errno in (errno.EACCES, errno.EPERM):
            name = exc.filename
            if (inside is not None and isinstance(name, str | Path)
                    and Path(name).resolve().is_relative_to(inside)):
                return output_error(exc, where=name)
        elif (error := output_error(exc, where=getattr(exc, "filename", None) or where)) is not None:
            return error
        pending.extend(e for e in (exc.__cause__, exc.__context__) if e is not None)
    return None


def environment_refusal(group: BaseExceptionGroup, spec: RunSpec) -> BackendError | None:
    """The BackendError for a job whose trials the Harbor environment refused to create, else None.

    Harbor environments check their capabilities (network policy, GPUs, ...) when a
    trial builds them and raise ValueError; the job then ends with an ExceptionGroup
    of those. Any other failure is a bug and keeps its traceback.
    """
    _, rest = group.split(ValueError)
    if rest is not None:
        return None
    leaves: list[str] = []
    pending: list[BaseException] = [group]
    while pending:
        exc = pending.pop()
        if isinstance(exc, BaseExceptionGroup):
            pending.extend(exc.exceptions)
        elif str(exc) not in leaves:
            leaves.append(str(exc))
    if not all("not supported" in m or "does not support" in m for m in leaves):
        return None
    network = any("network_mode" in m for m in leaves)
    fix = (f"set workspace.network=public, or use a backend that enforces '{spec.workspace.network}' "
           "(backend=local, modal, e2b, daytona; docker only with its egress-control support)"
           if network else "choose a backend that supports what the task asks for, or change the workspace settings")
    return BackendError(f"the {spec.backend.name} environment refused the task: {leaves[0]}",
                        where=f"backend={spec.backend.name}", fix=fix)
