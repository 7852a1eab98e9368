"""Collect a Harbor job dir into trial records, one per expected trial.

Every expected (task, attempt) gets a record: finished trials from their
``result.json``; interrupted ones (a trial dir without a result) and never-started
ones as ``not_run``/``infra_error`` with the cause. Nothing is dropped.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from pathlib import Path

from harbor.models.trial.config import TrialConfig
from harbor.models.trial.result import TrialResult
from pydantic import BaseModel, ConfigDict, ValidationError

from aces_bench.emitters.plan import TaskPlan

# Failure causes by Harbor exception type. Infrastructure failures are never counted
# as the agent's fault; the report shows each class separately.
_STATUS_BY_EXCEPTION = {
    "AgentTimeoutError": "timeout",
    "AgentSetupTimeoutError": "infra_error",
    "VerifierTimeoutError": "timeout",
    "EnvironmentStartTimeoutError": "infra_error",
    "SandboxBuildFailedError": "infra_error",
    "BackendError": "infra_error",
    "HealthcheckError": "infra_error",
    "AddTestsDirError": "infra_error",
    "DownloadVerifierDirError": "infra_error",
    "RewardFileNotFoundError": "verifier_error",
    "RewardFileEmptyError": "verifier_error",
    "VerifierOutputParseError": "verifier_error",
    "CancelledError": "infra_error",
}


class TrialRecord(BaseModel):
    """What one expected trial produced (or why it produced nothing)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    task_id: str
    attempt: int
    plan: TaskPlan
    status: str
    failure_cause: str | None = None
    trial_name: str | None = None
    trial_dir: Path | None = None
    result: TrialResult | None = None

    @property
    def reward(self) -> float | None:
        vr = self.result.verifier_result if self.result else None
        if vr is None or not vr.rewards:
            return None
        value = vr.rewards.get("reward")
        return float(value) if value is not None else None

    @property
    def trajectory_path(self) -> Path | None:
        return self.trial_dir / "agent" / "trajectory.json" if self.trial_dir else None

    @property
    def artifacts_dir(self) -> Path | None:
        if self.trial_dir is None:
            return None
        # The verifier copies the final workspace to /logs/artifacts/workspace. Mounted
        # environments put it at artifacts/workspace; Harbor's download of a
        # non-mounted /logs/artifacts keeps the container path under artifacts/.
        for ws in (
            self.trial_dir / "artifacts" / "workspace",
            self.trial_dir / "artifacts" / "logs" / "artifacts" / "workspace",
        ):
            if ws.is_dir():
                return ws
        return None


def classify(result: TrialResult) -> tuple[str, str | None]:
    info = result.exception_info
    if info is None:
        # An empty reward dict is the in-sandbox verifier's "no verifier check" (no reward,
        # not a failure); no verifier result at all is a verifier that did not report.
        if result.verifier_result is None or result.verifier_result.rewards is None:
            return "verifier_error", "verifier produced no reward"
        return "ok", None
    status = _STATUS_BY_EXCEPTION.get(info.exception_type, "agent_error")
    message = " ".join(info.exception_message.split())[:300]
    return status, f"{info.exception_type}: {message}"


def _started(result: TrialResult) -> datetime:
    return result.started_at or datetime.min


def read_trials(job_dir: Path) -> tuple[list[tuple[Path, TrialResult]], list[tuple[Path, str]]]:
    """Finished trials, and trial dirs that hold no readable result (with the reason)."""
    done, broken = [], []
    if not job_dir.is_dir():
        return done, broken
    for trial_dir in sorted(p for p in job_dir.iterdir() if p.is_dir()):
        result_path = trial_dir / "result.json"
        if not result_path.is_file():
            if (trial_dir / "config.json").is_file():
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
        config = TrialConfig.model_validate_json((trial_dir / "config.json").read_text())
    except (OSError, ValidationError, ValueError):
        return None
    return Path(str(config.task.path)).name if config.task.path else None


def collect_job(job_dir: Path, plans: dict[str, TaskPlan], n_attempts: int) -> list[TrialRecord]:
    """One record per (task, attempt) of the study, in a stable order."""
    by_task: dict[str, list[tuple[Path, TrialResult]]] = defaultdict(list)
    done, broken = read_trials(job_dir)
    for trial_dir, result in done:
        task_id = Path(str(result.config.task.path)).name if result.config.task.path else result.task_name
        by_task[task_id.removeprefix("aces/")].append((trial_dir, result))
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
        for attempt, (trial_dir, result) in enumerate(trials[:n_attempts], start=1):
            status, cause = classify(result)
            records.append(
                TrialRecord(task_id=task_id, attempt=attempt, plan=plan, status=status, failure_cause=cause,
                            trial_name=result.trial_name, trial_dir=trial_dir, result=result)
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
