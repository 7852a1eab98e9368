"""Grade collected trials on the host, after each trial, from read-only inputs.

Executor/grader separation: graders read the trajectory, the retained workspace copy
and the case spec; they never run inside the agent's sandbox and never hold the
judge's credential there.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from aces_bench.collect import TrialRecord
from aces_bench.config.spec import RunSpec
from aces_bench.graders.atif import load_trajectory
from aces_bench.graders.base import GradingInput, MetricResult
from aces_bench.graders.deterministic import grade_deterministic
from aces_bench.graders.judged import grade_judged
from aces_bench.graders.redact import redact
from aces_bench.io import write_text
from aces_bench.judges.factory import build_judge
from aces_bench.provenance import judge_label
from aces_bench.table import TrialRow

GRADES_SCHEMA_VERSION = "1"


class GradedTrial(BaseModel):
    model_config = ConfigDict(frozen=True)

    schema_version: str = GRADES_SCHEMA_VERSION
    task_id: str
    attempt: int
    skill: str
    case_id: str
    case_kind: str | None
    negative_control: bool
    condition: str
    workspace_mode: str
    decoy_set: str
    n_visible_skills: int
    status: str
    failure_cause: str | None
    trial_name: str | None
    trial_dir: str | None
    reward: float | None
    has_trajectory: bool
    trajectory_error: str | None = None
    metrics: dict[str, MetricResult] = Field(default_factory=dict)
    composite: float | None = None
    first_attempt_pass: bool | None = None
    self_correction: dict | None = None
    n_steps: int | None = None
    n_tool_calls: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    wall_sec: float | None = None
    final_answer: str | None = None

    def to_row(self, spec: RunSpec) -> TrialRow:
        def score(name: str) -> float | None:
            m = self.metrics.get(name)
            return m.score if m else None

        return TrialRow(
            run_id=spec.output_dir.name,
            skill=self.skill,
            case_id=self.case_id,
            case_kind=self.case_kind,
            negative_control=self.negative_control,
            harness=spec.harness.name,
            model=spec.model.display,
            workspace_mode=self.workspace_mode,  # type: ignore[arg-type]
            decoy_set=self.decoy_set,
            n_visible_skills=self.n_visible_skills,
            condition=self.condition,  # type: ignore[arg-type]
            attempt=self.attempt,
            task_id=self.task_id,
            trial_name=self.trial_name,
            status=self.status,  # type: ignore[arg-type]
            failure_cause=self.failure_cause,
            reward=self.reward,
            metric_security=score("security"),
            metric_skill_execution=score("skill_execution"),
            metric_skill_efficiency=score("skill_efficiency"),
            metric_accuracy=score("accuracy"),
            metric_goal_accuracy=score("goal_accuracy"),
            metric_behavior_check=score("behavior_check"),
            composite=self.composite,
            first_attempt_pass=self.first_attempt_pass,
            has_trajectory=self.has_trajectory,
            n_steps=self.n_steps,
            n_tool_calls=self.n_tool_calls,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cost_usd=self.cost_usd,
            wall_sec=self.wall_sec,
            agent_label=spec.harness.display,
            judge_label=judge_label(spec),
            backend=spec.backend.display,
            trial_dir=self.trial_dir,
        )


def composite_score(metrics: dict[str, MetricResult], spec: RunSpec) -> float | None:
    """Weighted mean over the configured metrics that were scored (weights renormalised)."""
    total = weight_sum = 0.0
    for name in spec.grading.metrics:
        m = metrics.get(name)
        w = spec.grading.weight_of(name)
        if m is None or m.score is None or w <= 0:
            continue
        total += w * m.score
        weight_sum += w
    return total / weight_sum if weight_sum > 0 else None


def _final_answer(record: TrialRecord, spec: RunSpec, trajectory) -> str | None:
    if record.artifacts_dir is not None:
        answer = record.artifacts_dir / spec.workspace.answer_file
        if answer.is_file():
            return answer.read_text(encoding="utf-8", errors="replace")
    if trajectory is not None:
        for step in reversed(trajectory.steps):
            if step.source == "agent" and isinstance(step.message, str) and step.message.strip():
                return step.message
    return None


def _wall(record: TrialRecord) -> float | None:
    r = record.result
    if r is None or r.started_at is None or r.finished_at is None:
        return None
    return (r.finished_at - r.started_at).total_seconds()


async def grade_one(record: TrialRecord, spec: RunSpec, judge) -> GradedTrial:
    plan = record.plan
    metrics: dict[str, MetricResult] = {}
    trajectory, traj_error = (None, "trial produced no trial dir")
    if record.trajectory_path is not None:
        trajectory, traj_error = load_trajectory(record.trajectory_path)
    final_answer = _final_answer(record, spec, trajectory)
    self_correction = None
    if record.status in ("ok", "agent_error", "timeout", "verifier_error"):
        inp = GradingInput(
            trajectory=trajectory,
            trajectory_error=traj_error,
            case=plan.case,
            condition=plan.condition,
            target_skill=plan.target.name,
            allowed_skills=plan.allowed_skills,
            staged_skills=plan.staged_names,
            skills_dir=spec.workspace.skills_dir,
            workdir=spec.workspace.workdir,
            final_answer=final_answer,
            artifacts_dir=record.artifacts_dir,
        )
        det = grade_deterministic(inp)
        self_correction_result = det.pop("self_correction", None)
        if self_correction_result is not None:
            self_correction = self_correction_result.model_dump(mode="json")
        metrics.update({k: v for k, v in det.items() if k in spec.grading.metrics})
        wanted_judged = [m for m in ("accuracy", "goal_accuracy", "behavior_check") if m in spec.grading.metrics]
        if wanted_judged:
            judged = await grade_judged(inp, judge)
            metrics.update({k: v for k, v in judged.items() if k in wanted_judged})
    else:
        reason = f"trial did not run to completion ({record.status}): {record.failure_cause}"
        metrics = {
            name: MetricResult(metric=name, score=None, unscored_reason=reason, grader="none")
            for name in spec.grading.metrics
        }
    agent_result = record.result.agent_result if record.result else None
    n_tool_calls = sum(len(s.tool_calls or []) for s in trajectory.steps) if trajectory else None
    first_attempt_pass = None
    if self_correction is not None and "first_attempt_pass" in self_correction:
        first_attempt_pass = self_correction["first_attempt_pass"]
    return GradedTrial(
        task_id=record.task_id,
        attempt=record.attempt,
        skill=plan.target.name,
        case_id=plan.case.id,
        case_kind=plan.case.kind,
        negative_control=plan.case.is_negative_control,
        condition=plan.condition,
        workspace_mode=plan.workspace_mode,
        decoy_set=plan.decoy_set,
        n_visible_skills=len(plan.staged),
        status=record.status,
        failure_cause=record.failure_cause,
        trial_name=record.trial_name,
        trial_dir=str(record.trial_dir) if record.trial_dir else None,
        reward=record.reward,
        has_trajectory=trajectory is not None,
        trajectory_error=traj_error,
        metrics=metrics,
        composite=composite_score(metrics, spec),
        first_attempt_pass=first_attempt_pass,
        self_correction=self_correction,
        n_steps=len(trajectory.steps) if trajectory else None,
        n_tool_calls=n_tool_calls,
        input_tokens=agent_result.n_input_tokens if agent_result else None,
        output_tokens=agent_result.n_output_tokens if agent_result else None,
        cost_usd=agent_result.cost_usd if agent_result else None,
        wall_sec=_wall(record),
        final_answer=redact(final_answer) if final_answer else None,
    )


async def grade_records(records: list[TrialRecord], spec: RunSpec) -> list[GradedTrial]:
    judge = build_judge(spec.judge)
    # Judged metrics wait on the judge; its own semaphore bounds the concurrency.
    return list(await asyncio.gather(*(grade_one(r, spec, judge) for r in records)))


def write_grades(path: Path, graded: list[GradedTrial]) -> None:
    """One JSON line per trial, secret-like strings masked."""
    lines = [redact(json.dumps(g.model_dump(mode="json"), ensure_ascii=False)) for g in graded]
    write_text(path, "\n".join(lines) + ("\n" if lines else ""))


def read_grades(path: Path) -> list[GradedTrial]:
    return [GradedTrial.model_validate_json(line) for line in Path(path).read_text().splitlines() if line.strip()]
