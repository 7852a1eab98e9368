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
import subprocess
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
from aces_bench.cases.credentials import check_study_credentials, resolve_credentials
from aces_bench.config.spec import RunSpec
from aces_bench.core.errors import AcesError, BackendError, ConfigError, OutputError, RunError, output_error
from aces_bench.core.io import remove_tree
from aces_bench.emitters import EmitResult
from aces_bench.emitters.plan import StudyPlan
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


def job_config(spec: RunSpec, emitted: EmitResult, jobs_dir: Path, exclude: frozenset[str] = frozenset()) -> JobConfig:
    """The study's Harbor job; ``exclude``: task ids it does not run (reused baseline trials)."""
    dataset = DatasetConfig(path=emitted.tasks_dir)
    if exclude:
        dataset = DatasetConfig(path=emitted.tasks_dir,
                                task_names=sorted(t.task_id for t in emitted.tasks if t.task_id not in exclude))
    config = JobConfig(
        jobs_dir=Path(jobs_dir).resolve(),
        n_attempts=spec.study.n_attempts,
        n_concurrent_trials=spec.study.n_concurrent,
        quiet=True,
        agents=[agent_config(spec)],
        environment=environment_config(spec),
        datasets=[dataset],
    )
    payload = _canonical(config.model_dump(mode="python", exclude={"job_name"}))
    payload["task_ids"] = sorted(t.task_id for t in emitted.tasks)
    digest = hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()
    return config.model_copy(update={"job_name": f"{spec.study.name}-{spec.harness.name}-{digest[:10]}"})


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


def preflight_credentials(spec: RunSpec, emitted: EmitResult) -> None:
    """Every credential a case needs must be set on the host before any trial runs.

    Values are only checked here; Harbor reads them from the host environment when
    each trial starts. Operator credentials (model and judge keys) can never be named
    by a skill.
    """
    for case in {id(p.case): p.case for p in emitted.plan.tasks}.values():
        resolve_credentials(case, os.environ, operator_names=operator_variables(spec),
                            allowed=spec.skill.allow_credentials)


def operator_variables(spec: RunSpec) -> list[str]:
    """The variables the operator configured for the model and the judge."""
    return [n for n in (spec.model.api_key_env, spec.judge.api_key_env) if n]


def check_credential_names(spec: RunSpec, plan: StudyPlan) -> None:
    """Refuse, before anything is emitted, a case naming an operator credential (by rule)."""
    check_study_credentials({id(p.case): p.case for p in plan.tasks}.values(),
                            allowed=spec.skill.allow_credentials, operator_names=operator_variables(spec))


def preflight(spec: RunSpec, emitted: EmitResult) -> None:
    """What can be refused before a trial starts and emission did not check already.

    (``emit_study`` refuses environments the local backend cannot build.)
    """
    preflight_backend_extra(spec)
    preflight_plugin_backend(spec)
    preflight_local_agent(spec)
    preflight_credentials(spec, emitted)
    preflight_model_key(spec)
    preflight_environment(spec)
    if spec.backend.type == "docker":
        preflight_docker()
    if spec.backend.type == "podman":
        from aces_bench.backends import podman

        podman.preflight()
    preflight_agent(spec)
    preflight_agent_install(spec)


# What each cloud backend's preflight wants, when Harbor's own message names no fix.
_BACKEND_FIXES = {
    "modal": "run `modal token new`, or export MODAL_TOKEN_ID and MODAL_TOKEN_SECRET",
    "daytona": "export DAYTONA_API_KEY (and DAYTONA_API_URL for a self-hosted Daytona)",
    "e2b": "export E2B_API_KEY",
    "runloop": "export RUNLOOP_API_KEY",
    "gke": "install gcloud and run `gcloud container clusters get-credentials <CLUSTER> --region <REGION>` "
           "(or set KUBECONFIG)",
}


def preflight_environment(spec: RunSpec) -> None:
    """The backend's own credential check (Harbor's ``preflight``, which its CLI runs and
    its job API does not), as one error before any trial instead of one failure per trial."""
    from harbor.environments.factory import EnvironmentFactory
    from harbor.models.environment_type import EnvironmentType

    b = spec.backend
    if b.type not in BACKEND_SDKS:
        # docker and podman are checked by aces-bench itself (preflight_docker, backends.podman):
        # Harbor's podman check asks for `podman compose`, which the podman-compose setup here
        # (make podman) does not provide although its trials run.
        return
    try:
        EnvironmentFactory.run_preflight(type=EnvironmentType(b.type) if b.type else None, import_path=b.import_path)
    except SystemExit as exc:
        message = " ".join(str(exc.code if exc.code is not None else exc).split())
        raise BackendError(f"cannot start: {message}", where=f"backend={b.name}",
                           fix=_BACKEND_FIXES.get(b.type or "", "set up the backend's credentials, or use backend=local")
                           ) from None
    except ImportError as exc:
        raise BackendError(str(exc).splitlines()[0], where=f"backend={b.name}",
                           fix="install the backend's extra (see the message), or use backend=local") from None


def preflight_agent(spec: RunSpec) -> None:
    """The agent's own checks (its options, its model credentials) before any trial."""
    if not spec.harness.requires_model and spec.harness.import_path and spec.harness.cli is None:
        return  # the reference agent: nothing to check, and no Harbor agent class to load by name
    from harbor.agents.factory import AgentFactory

    try:
        AgentFactory.run_preflight(agent_config(spec))
    except SystemExit as exc:
        raise ConfigError(f"cannot start: {exc.code}", where=f"harness={spec.harness.name}",
                          fix="see the message") from None
    except ValueError as exc:  # MissingModelCredentialError is one
        raise ConfigError(f"cannot start: {' '.join(str(exc).split())}", where=f"harness={spec.harness.name}",
                          fix="set what the message names (model.api_key_env, harness.kwargs)") from None


# Backends that run their containers on this machine: an agent installing itself there
# fetches its CLI through this machine's network.
_LOCAL_CONTAINER_BACKENDS = ("docker", "podman")


def preflight_agent_install(spec: RunSpec, *, timeout: float = 5.0) -> None:
    """A CLI harness on a container backend installs itself inside each container from the
    network (Harbor's installer); where that network is not reachable it would spend minutes
    per trial failing, so it is refused here, before any trial."""
    from aces_bench.agents.clis import CLIS

    cli = CLIS.get(spec.harness.cli or "")
    if cli is None or spec.backend.is_local or spec.backend.type not in _LOCAL_CONTAINER_BACKENDS:
        return
    for host in cli.install_hosts:
        problem = unreachable(host, timeout=timeout)
        if problem:
            raise BackendError(
                f"harness={spec.harness.name} on backend={spec.backend.name} installs {cli.package} inside each "
                f"container from the network (Harbor's installer), but {host} is not reachable from here ({problem})",
                where=f"backend={spec.backend.name}",
                fix=f"use backend=local (the CLI from `aces-bench agents install {cli.name}` is mounted, nothing "
                "is installed), or give this machine network access to the install hosts",
            )


def unreachable(host: str, port: int = 443, *, timeout: float = 5.0) -> str | None:
    """Why ``host:port`` cannot be reached (a short reason), or None when a TCP connection opens."""
    import socket

    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except socket.gaierror:
        return "its name does not resolve"
    except TimeoutError:
        return f"no answer within {timeout:g} s"
    except OSError as exc:
        return exc.strerror or str(exc)


# backend type -> (the SDK module Harbor needs, the aces-bench extra bringing it: pyproject.toml).
BACKEND_SDKS = {
    "modal": ("modal", "modal"),
    "daytona": ("daytona", "daytona"),
    "e2b": ("e2b", "e2b"),
    "runloop": ("runloop_api_client", "runloop"),
    "gke": ("kubernetes", "gke"),
}


def preflight_backend_extra(spec: RunSpec) -> None:
    """A cloud backend whose SDK is not installed is refused with the extra to install,
    before any trial (Harbor would fail each trial and end in an ExceptionGroup)."""
    import importlib.util

    entry = BACKEND_SDKS.get(spec.backend.type or "")
    if entry is None:
        return
    module, extra = entry
    if importlib.util.find_spec(module) is None:
        raise BackendError(
            f"backend={spec.backend.name} needs the {module} package, which is not installed",
            where="backend",
            fix=f"pip install 'aces-bench[{extra}]' (or choose backend=local or backend=docker)",
        )


def preflight_plugin_backend(spec: RunSpec) -> None:
    """A plugin backend's own check (``BackendProfile.preflight``), before any trial."""
    from aces_bench.backends import BACKENDS
    from aces_bench.core.registry import load_path

    if spec.backend.name not in BACKENDS:
        return
    check = BACKENDS.get(spec.backend.name).preflight
    if check:
        load_path(check)(spec)


def preflight_local_agent(spec: RunSpec) -> None:
    """An agent that installs itself inside the environment is refused on the local
    backend (host userland read-only) unless its CLI is provisioned, before any trial."""
    if (spec.backend.is_local and spec.harness.agent and spec.harness.cli is None
            and installs_itself(spec.harness.agent)):
        raise ConfigError(
            f"harness {spec.harness.name!r} installs itself inside the environment (packages, network), "
            "which the local sandbox (host userland read-only) cannot do",
            where="harness",
            fix="use harness=claude-code, codex or opencode (provisioned by `aces-bench agents install`), "
            "backend=docker or a cloud backend",
        )


def installs_itself(agent: str) -> bool:
    """Whether a Harbor agent is an installed agent (it sets itself up inside the environment)."""
    from harbor.agents.factory import AgentFactory
    from harbor.agents.installed.base import BaseInstalledAgent
    from harbor.models.agent.name import AgentName

    try:
        return issubclass(AgentFactory.get_agent_class(AgentName(agent)), BaseInstalledAgent)
    except (ValueError, ImportError):
        return False


def preflight_model_key(spec: RunSpec) -> None:
    """The agent's model key must be set on the host (the agent calls the model from there)."""
    name = spec.model.api_key_env
    if spec.harness.requires_model and name and not os.environ.get(name):
        raise ConfigError(
            f"model.api_key_env names {name}, which is not set in the environment",
            where="model",
            fix=f"export {name}=<key>; for a keyless local server (model.base_url) any dummy value works",
        )


def preflight_docker() -> None:
    """backend=docker needs a reachable Docker engine; without one every trial would fail."""
    try:
        probe = subprocess.run(["docker", "info", "--format", "{{.ServerVersion}}"], capture_output=True,
                               text=True, timeout=20)
        problem = None if probe.returncode == 0 else (probe.stderr.strip().splitlines() or ["no answer"])[-1]
    except FileNotFoundError:
        problem = "the docker command is not installed"
    except subprocess.TimeoutExpired:
        problem = "docker info did not answer within 20 s"
    if problem:
        raise BackendError(
            f"backend=docker but no Docker engine is reachable: {problem}",
            where="backend",
            fix="start the Docker daemon (or set DOCKER_HOST), or run with backend=local or a cloud backend",
        )


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
                  stops_early: Callable[[TrialResult], str | None] | None = None, checked: bool = False) -> Path:
    """Create (or resume) the Harbor job for this study; return its job dir (``exclude``:
    task ids it leaves out, reused baseline trials).

    ``checked``: the study's one preflight step ran already (``study.preflight``); a
    caller that runs a job directly gets the runner's ``preflight`` here."""
    set_offline_defaults()
    if not checked:
        preflight(spec, emitted)
    config = job_config(spec, emitted, jobs_dir, exclude)
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
