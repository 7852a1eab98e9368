"""Collect a Harbor job dir into trial records, one per expected trial.

Every expected (task, attempt) gets a record: finished trials from their
``result.json``; interrupted ones (a trial dir without a result) and never-started
ones as ``not_run``/``infra_error`` with the cause. Nothing is dropped. ``classify``
decides whether a failed trial is its arm's failure or infrastructure's (the table
below); ``archive_infra_failures`` sets the latter aside so Harbor's resume reruns them.
"""

from __future__ import annotations

import json
import shutil
from collections import defaultdict
from datetime import datetime
from pathlib import Path

from harbor.models.trial.config import TrialConfig
from harbor.models.trial.error_policy import ERROR_POLICIES, FailureCause
from harbor.models.trial.paths import TrialPaths
from harbor.models.trial.result import TrialResult
from pydantic import BaseModel, ConfigDict, ValidationError

from aces_bench.core.io import write_json
from aces_bench.core.modes import Status
from aces_bench.emitters.plan import TaskPlan

# Which failures are the trial's arm's and which are infrastructure's (intention to
# treat, aces_bench/core/modes.py). Only what is *shown* to be infrastructure is:
# a failure before the agent started executing (nothing of the agent or a skill had run
# yet: the environment did not start or build, the agent could not be set up), a model
# provider's error (rate limit, overload, server error, connection: what Harbor's own
# error policy, harbor.models.trial.error_policy, retries as a model provider failure),
# or a run cancelled by its operator. Everything after the agent started that is not a
# provider error is the arm's: a sandbox that died, a disk filled, tests that could not be
# copied in or results out, whatever the backend calls it, may be what the skill's script
# did, and a hostile skill must not be able to make its own failures look like
# infrastructure. A provider error comes while the agent runs, so on the with-skill side
# the gate still reads one left after the retries as not passed (``provider_failure``).
TIMEOUTS = frozenset({"AgentTimeoutError", "VerifierTimeoutError"})
VERIFIER_FAILURES = frozenset({"RewardFileNotFoundError", "RewardFileEmptyError", "VerifierOutputParseError"})
PROVIDER_ERRORS = frozenset(
    # Harbor's own error policy: the model provider failures it retries (its installed agents'
    # Api*Error and litellm's, for host-side agents such as terminus-2) ...
    {name for name, policy in ERROR_POLICIES.items()
     if policy.cause is FailureCause.MODEL_PROVIDER_FAILED and policy.retry}
    # ... and litellm's 502, which that table leaves to its catch-all.
    | {"BadGatewayError"})
# A run cancelled by its operator. An environment that did not start is infrastructure only
# before the agent ran: the verifier's separate environment starts after it, from the
# workspace the agent (and its skill) left, which a skill can make slow to copy.
ALWAYS_INFRA = frozenset({"CancelledError"})
PROVIDER_FAILURE = "a model provider's error"
"""In the cause of an ``infra_error`` trial that failed on a model provider's error: it
came after the agent started, when a skill in the sandbox could have run (``provider_failure``)."""
INFRA_RETRIES_SUFFIX = ".infra-retries"
"""``jobs/<job>.infra-retries/``: trials set aside for a rerun, with ``retries.json``
(outside the job dir: Harbor removes any dir there without a result when it resumes)."""


class TrialRecord(BaseModel):
    """What one expected trial produced (or why it produced nothing)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    task_id: str
    attempt: int
    plan: TaskPlan
    status: Status
    failure_cause: str | None = None
    trial_name: str | None = None
    trial_dir: Path | None = None
    result: TrialResult | None = None
    infra_retries: int = 0
    """Trials of this task set aside and rerun for infrastructure failures."""

    @property
    def reward(self) -> float | None:
        vr = self.result.verifier_result if self.result else None
        if vr is None or not vr.rewards:
            return None
        value = vr.rewards.get("reward")
        return float(value) if value is not None else None

    @property
    def trajectory_path(self) -> Path | None:
        return TrialPaths(self.trial_dir).agent_dir / "trajectory.json" if self.trial_dir else None

    @property
    def artifacts_dir(self) -> Path | None:
        if self.trial_dir is None:
            return None
        # The verifier copies the final workspace to /logs/artifacts/workspace. Mounted
        # environments put it at artifacts/workspace; Harbor's download of a
        # non-mounted /logs/artifacts keeps the container path under artifacts/.
        for ws in (
            TrialPaths(self.trial_dir).artifacts_dir / "workspace",
            TrialPaths(self.trial_dir).artifacts_dir / "logs" / "artifacts" / "workspace",
        ):
            if ws.is_dir():
                return ws
        return None


def _agent_started(result: TrialResult) -> bool:
    timing = result.agent_execution
    return timing is not None and timing.started_at is not None


def classify(result: TrialResult) -> tuple[str, str | None]:
    """(status, cause) of a finished Harbor trial; see the table above for the rule."""
    info = result.exception_info
    if info is None:
        # An empty reward dict is the in-sandbox verifier's "no verifier check" (no reward,
        # not a failure); no verifier result at all is a verifier that did not report.
        if result.verifier_result is None or result.verifier_result.rewards is None:
            return "verifier_error", "verifier produced no reward"
        return "ok", None
    kind = info.exception_type
    message = " ".join(info.exception_message.split())[:300]
    if kind in TIMEOUTS:
        return "timeout", f"{kind}: {message}"
    if kind in ALWAYS_INFRA:
        return "infra_error", f"{kind}: {message}"
    if not _agent_started(result):
        return "infra_error", f"{kind} before the agent started: {message}"
    if kind in PROVIDER_ERRORS:
        return "infra_error", f"{kind} ({PROVIDER_FAILURE}): {message}"
    if kind in VERIFIER_FAILURES:
        return "verifier_error", f"{kind}: {message}"
    return "agent_error", f"{kind} after the agent started (a failure of its arm): {message}"


def provider_failure(status: str, cause: str | None) -> bool:
    """An ``infra_error`` trial left by a model provider's error (``classify``). It happened
    while the agent ran, so with the target skill in the sandbox it is not shown to be
    infrastructure alone: an in-sandbox agent's connection to its endpoint goes through the
    sandbox, whose name resolution and loopback a skill running as root there can change.
    The gate reads such a with-skill side as not passed (``aces_bench.stats.gate``)."""
    return status == "infra_error" and PROVIDER_FAILURE in str(cause or "")


def _started(result: TrialResult) -> datetime:
    return result.started_at or datetime.min


def read_trials(job_dir: Path) -> tuple[list[tuple[Path, TrialResult]], list[tuple[Path, str]]]:
    """Finished trials, and trial dirs that hold no readable result (with the reason)."""
    done, broken = [], []
    if not job_dir.is_dir():
        return done, broken
    for trial_dir in sorted(p for p in job_dir.iterdir() if p.is_dir()):
        result_path = TrialPaths(trial_dir).result_path
        if not result_path.is_file():
            if TrialPaths(trial_dir).config_path.is_file():
                broken.append((trial_dir, "trial was interrupted: no result.json"))
            continue
        try:
            done.append((trial_dir, TrialResult.model_validate_json(result_path.read_text())))
        except (ValidationError, ValueError) as exc:
            broken.append((trial_dir, f"unreadable result.json: {str(exc).splitlines()[0]}"))
    return done, broken


def _configured_task_id(trial_dir: Path) -> str | None:
    """The task id a trial dir was created for, from its ``config.json``."""
    try:
        config = TrialConfig.model_validate_json(TrialPaths(trial_dir).config_path.read_text())
    except (OSError, ValidationError, ValueError):
        return None
    return Path(str(config.task.path)).name if config.task.path else None


def retries_dir(job_dir: Path) -> Path:
    return job_dir.parent / f"{job_dir.name}{INFRA_RETRIES_SUFFIX}"


def read_retries(job_dir: Path) -> dict[str, list[dict]]:
    """Task id -> the trials set aside for an infrastructure rerun (name, cause), in order."""
    path = retries_dir(job_dir) / "retries.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): list(v) for k, v in data.items()} if isinstance(data, dict) else {}


def archive_infra_failures(job_dir: Path, budget: dict[str, int]) -> list[str]:
    """Set aside the trials of ``job_dir`` that failed for infrastructure, so that Harbor's
    resume runs them again; at most ``budget[task]`` per task over the study (counted in
    ``retries.json``). Returns the trial names set aside."""
    done, _ = read_trials(job_dir)
    retries = read_retries(job_dir)
    moved: list[str] = []
    for trial_dir, result in done:
        status, cause = classify(result)
        if status != "infra_error" or result.exception_info is None \
                or result.exception_info.exception_type == "CancelledError":
            continue  # a cancelled trial is the runner's to redo (runner.discard_cancelled)
        task = _task_of(result)
        used = retries.setdefault(task, [])
        if len(used) >= budget.get(task, 0):
            continue
        dest = retries_dir(job_dir) / f"{trial_dir.name}"
        dest.parent.mkdir(parents=True, exist_ok=True)
        if dest.exists():
            shutil.rmtree(dest)
        shutil.move(str(trial_dir), dest)
        used.append({"trial": trial_dir.name, "cause": cause})
        moved.append(trial_dir.name)
    if moved:
        write_json(retries_dir(job_dir) / "retries.json", retries)
    return moved


def _task_of(result: TrialResult) -> str:
    task_id = Path(str(result.config.task.path)).name if result.config.task.path else result.task_name
    return task_id.removeprefix("aces/")


def collect_job(job_dir: Path, plans: dict[str, TaskPlan], n_attempts: int) -> list[TrialRecord]:
    """One record per (task, attempt) of the study, in a stable order."""
    by_task: dict[str, list[tuple[Path, TrialResult]]] = defaultdict(list)
    done, broken = read_trials(job_dir)
    for trial_dir, result in done:
        by_task[_task_of(result)].append((trial_dir, result))
    retried = read_retries(job_dir)
    # Each unfinished trial dir is reported once, for the task its config names.
    broken_by_task: dict[str, list[tuple[Path, str]]] = defaultdict(list)
    unattributed: list[tuple[Path, str]] = []
    for trial_dir, reason in broken:
        task_id = _configured_task_id(trial_dir)
        if task_id is None:
            unattributed.append((trial_dir, reason))
        else:
            broken_by_task[task_id].append((trial_dir, reason))

    records: list[TrialRecord] = []
    for task_id in sorted(plans):
        plan = plans[task_id]
        trials = sorted(by_task.get(task_id, []), key=lambda tr: (_started(tr[1]), tr[1].trial_name))
        n_retried = len(retried.get(task_id, []))
        for attempt, (trial_dir, result) in enumerate(trials[:n_attempts], start=1):
            status, cause = classify(result)
            if status == "infra_error" and n_retried:
                cause = f"{cause} (still failing after {n_retried} infrastructure rerun(s) of this task)"
            records.append(
                TrialRecord(task_id=task_id, attempt=attempt, plan=plan, status=status, failure_cause=cause,
                            trial_name=result.trial_name, trial_dir=trial_dir, result=result,
                            infra_retries=n_retried)
            )
        leftovers = broken_by_task.get(task_id, [])
        # An unreadable config leaves only the trial dir's name, a prefix of the task's.
        leftovers += [b for b in unattributed if task_id.startswith(b[0].name.rsplit("__", 1)[0])]
        for attempt in range(len(trials) + 1, n_attempts + 1):
            if leftovers:
                trial_dir, reason = leftovers.pop(0)
                if (trial_dir, reason) in unattributed:
                    unattributed.remove((trial_dir, reason))
                records.append(TrialRecord(task_id=task_id, attempt=attempt, plan=plan, status="infra_error",
                                           failure_cause=reason, trial_name=trial_dir.name, trial_dir=trial_dir))
            else:
                records.append(TrialRecord(task_id=task_id, attempt=attempt, plan=plan, status="not_run",
                                           failure_cause="no trial was started for this task attempt"))
    return records
