"""Grade collected trials on the host, after each trial, from read-only inputs.

Executor/grader separation: graders read the trajectory, the retained workspace copy
and the case spec; they never run inside the agent's sandbox and never hold the
judge's credential there. Prompts to an external judge are redacted first
(``graders/judged.py``).

One neutral record, ``TrialSubject``, holds everything needed to grade one trial,
whatever produced it: ``subject_from_record`` builds it for the trials of an
aces-bench study, ``aces_bench.graders.external`` for any Harbor job dir. Then
``grade_subject`` runs the deterministic metrics, the judged metrics and (in the
modes that use them) the skill's author graders, and decides composite and pass
(``graders/modes.py``), dimensions and the outcome-only view
(``graders/dimensions.py``), and first-attempt pass (``graders/self_correction.py``).
"""

from __future__ import annotations

import asyncio
import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from harbor.models.trial.result import TrialResult
from pydantic import BaseModel, ConfigDict, Field, model_validator

from aces_bench.cases import EvalCase
from aces_bench.collect import TrialRecord
from aces_bench.config.spec import GradingSpec, RunSpec
from aces_bench.errors import ReportError
from aces_bench.graders.atif import load_trial_trajectory
from aces_bench.graders.author import (
    AUTHOR_TIMEOUT_SEC,
    AuthorContext,
    discover_author_graders,
    run_author_graders,
)
from aces_bench.graders.base import GradingInput, MetricResult
from aces_bench.graders.deterministic import grade_deterministic
from aces_bench.graders.dimensions import (
    dimension_scores,
    outcome_only,
    weighted_composite,
)
from aces_bench.graders.judged import JUDGED_METRICS, grade_judged
from aces_bench.graders.modes import decide, runs_author_graders
from aces_bench.graders.redact import redact, redact_value
from aces_bench.graders.self_correction import first_attempt_pass as first_attempt_from
from aces_bench.graders.skill_efficiency import without_routing
from aces_bench.io import write_text
from aces_bench.judges.base import Judge
from aces_bench.judges.factory import build_judge
from aces_bench.provenance import judge_label
from aces_bench.table import TrialRow
from aces_bench.versioning import load_model, migrate

GRADES_SCHEMA_VERSION = "1"
GRADES_REGENERATE = "re-grade the study (`aces-bench grade`)"
GRADABLE = ("ok", "agent_error", "timeout", "verifier_error")
LABEL_FIELDS = ("run_id", "harness", "model", "agent_label", "judge_label", "backend")


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
    # Added with grading modes, dimensions and `aces-bench grade` (all optional: older files still read).
    grading_mode: str | None = None
    final_pass: bool | None = Field(default=None, description="reward >= pass_threshold; author pass in custom_only")
    outcome_only: float | None = Field(default=None, description="mean of accuracy and goal_accuracy scored")
    dimensions: dict[str, float | None] = Field(default_factory=dict)
    author_score: float | None = None
    notes: list[str] = Field(default_factory=list, description="how the trial was graded where it is not obvious")
    run_id: str | None = None
    harness: str | None = None
    model: str | None = None
    agent_label: str | None = None
    judge_label: str | None = None
    backend: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        # Version 1 grew only optional fields (grading modes, labels): nothing to rewrite yet.
        return migrate(data, artifact="grades", current=GRADES_SCHEMA_VERSION, regenerate=GRADES_REGENERATE)

    def to_row(self, spec: RunSpec | None = None) -> TrialRow:
        """The trials-table row; labels from ``spec`` when given, else from this record's own labels."""

        def score(name: str) -> float | None:
            m = self.metrics.get(name)
            return m.score if m else None

        if spec is not None:
            labels = {"run_id": spec.output_dir.name, "harness": spec.harness.name, "model": spec.model.display,
                      "agent_label": spec.harness.display, "judge_label": judge_label(spec),
                      "backend": spec.backend.display}
        else:
            labels = {k: getattr(self, k) for k in LABEL_FIELDS}
            missing = [k for k in LABEL_FIELDS if labels[k] is None and k != "judge_label"]
            if missing:
                raise ReportError(f"graded trial {self.task_id} has no {', '.join(missing)}",
                                  where="grades.jsonl", fix="pass the run spec: to_row(spec)")
        return TrialRow(
            skill=self.skill,
            case_id=self.case_id,
            case_kind=self.case_kind,
            negative_control=self.negative_control,
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
            final_pass=self.final_pass,
            author_score=self.author_score,
            has_trajectory=self.has_trajectory,
            n_steps=self.n_steps,
            n_tool_calls=self.n_tool_calls,
            input_tokens=self.input_tokens,
            output_tokens=self.output_tokens,
            cost_usd=self.cost_usd,
            wall_sec=self.wall_sec,
            trial_dir=self.trial_dir,
            **labels,
        )


@dataclass(frozen=True)
class TrialSubject:
    """Everything needed to grade one trial, whatever produced it."""

    task_id: str
    attempt: int
    skill: str
    case: EvalCase | None
    case_id: str
    condition: str
    status: str
    failure_cause: str | None
    trial_name: str | None
    trial_dir: Path | None
    result: TrialResult | None
    reward: float | None
    target_skill: str
    allowed_skills: tuple[str, ...]
    staged_skills: tuple[str, ...] = ()
    case_kind: str | None = None
    negative_control: bool = False
    workspace_mode: str = "isolation"
    decoy_set: str = "none"
    n_visible_skills: int = 0
    skills_dir: str = "/skills"
    workdir: str = "/workspace"
    answer_file: str = "answer.txt"
    artifacts_dir: Path | None = None
    skill_dir: Path | None = None  # the target skill's folder: where its author graders live
    labels: dict[str, str | None] = field(default_factory=dict)
    notes: tuple[str, ...] = ()
    routing_known: bool = True  # False: nothing says which skills the agent may read


def subject_from_record(record: TrialRecord, spec: RunSpec) -> TrialSubject:
    plan = record.plan
    return TrialSubject(
        task_id=record.task_id, attempt=record.attempt, skill=plan.intervention_name, case=plan.case,
        case_id=plan.case.id, case_kind=plan.case.kind, negative_control=plan.case.is_negative_control,
        condition=plan.condition, status=record.status, failure_cause=record.failure_cause,
        trial_name=record.trial_name, trial_dir=record.trial_dir, result=record.result, reward=record.reward,
        target_skill=plan.target.name, allowed_skills=plan.allowed_skills, staged_skills=plan.staged_names,
        workspace_mode=plan.workspace_mode, decoy_set=plan.decoy_set, n_visible_skills=len(plan.staged),
        skills_dir=spec.workspace.skills_dir, workdir=spec.workspace.workdir,
        answer_file=spec.workspace.answer_file, artifacts_dir=record.artifacts_dir, skill_dir=plan.target.path,
        labels={"run_id": spec.output_dir.name, "harness": spec.harness.name, "model": spec.model.display,
                "agent_label": spec.harness.display, "judge_label": judge_label(spec),
                "backend": spec.backend.display},
    )


def composite_score(metrics: dict[str, MetricResult], spec: RunSpec) -> float | None:
    """Weighted mean over the configured metrics that were scored (weights renormalised)."""
    return weighted_composite(metrics, spec.grading.metrics, spec.grading.weight_of)


def _final_answer(subject: TrialSubject, trajectory) -> str | None:
    if subject.artifacts_dir is not None:
        answer = subject.artifacts_dir / subject.answer_file
        if answer.is_file():
            return answer.read_text(encoding="utf-8", errors="replace")
    if trajectory is not None:
        for step in reversed(trajectory.steps):
            if step.source == "agent" and isinstance(step.message, str) and step.message.strip():
                return step.message
    return None


def _wall(result: TrialResult | None) -> float | None:
    if result is None or result.started_at is None or result.finished_at is None:
        return None
    return (result.finished_at - result.started_at).total_seconds()


def _unscored_all(names, reason: str) -> dict[str, MetricResult]:
    return {n: MetricResult(metric=n, score=None, unscored_reason=reason, grader="none") for n in names}


@dataclass
class GradingContext:
    """What stays the same across the trials of one grading run."""

    grading: GradingSpec
    judge: object
    author_timeout_sec: float = AUTHOR_TIMEOUT_SEC
    author_limit: asyncio.Semaphore | None = None


async def grade_subject(subject: TrialSubject, ctx: GradingContext) -> GradedTrial:
    """Grade one trial; never raises for agent, judge or author-grader behaviour."""
    grading = ctx.grading
    notes = list(subject.notes)
    metrics: dict[str, MetricResult] = {}
    trajectory, traj_error = None, "trial produced no trial dir"
    traj_path = None
    self_correction: MetricResult | None = None
    if subject.trial_dir is not None:
        loaded = load_trial_trajectory(subject.trial_dir)
        trajectory, traj_error, traj_path = loaded.trajectory, loaded.error, loaded.source
        notes += list(loaded.notes)
    final_answer = _final_answer(subject, trajectory)
    if subject.status in GRADABLE:
        inp = GradingInput(
            trajectory=trajectory, trajectory_error=traj_error, case=subject.case,
            condition=subject.condition, target_skill=subject.target_skill,  # type: ignore[arg-type]
            allowed_skills=subject.allowed_skills, staged_skills=subject.staged_skills,
            skills_dir=subject.skills_dir, workdir=subject.workdir, final_answer=final_answer,
            artifacts_dir=subject.artifacts_dir,
        )
        det = grade_deterministic(inp)
        self_correction = det.pop("self_correction", None)
        if not subject.routing_known and "skill_efficiency" in det:
            det["skill_efficiency"] = without_routing(det["skill_efficiency"], "the skills this trial may read are unknown")
        metrics.update({k: v for k, v in det.items() if k in grading.metrics})
        wanted_judged = [m for m in JUDGED_METRICS if m in grading.metrics]
        if wanted_judged:
            judged = await grade_judged(inp, ctx.judge)  # type: ignore[arg-type]
            metrics.update({k: v for k, v in judged.items() if k in wanted_judged})
        if runs_author_graders(grading.mode):
            if subject.skill_dir is None:
                notes.append("author graders not run: no skill folder is known for this trial (no case matched)")
            graders = discover_author_graders(subject.skill_dir)
            actx = AuthorContext(
                skill=subject.skill, skill_dir=subject.skill_dir, case=subject.case, case_id=subject.case_id,
                condition=subject.condition, trial_name=subject.trial_name, reward=subject.reward,
                workspace=subject.artifacts_dir, trajectory_path=traj_path if trajectory is not None else None,
                final_answer=final_answer,
            )
            metrics.update(await run_author_graders(graders, actx, timeout_sec=ctx.author_timeout_sec,
                                                    limit=ctx.author_limit))
    else:
        reason = f"trial did not run to completion ({subject.status}): {subject.failure_cause}"
        names = list(grading.metrics)
        if runs_author_graders(grading.mode):
            names += [g.metric for g in discover_author_graders(subject.skill_dir)]
        metrics = _unscored_all(names, reason)
    verdict = decide(grading, metrics, subject.reward)
    if verdict.note:
        notes.append(verdict.note)
    first_pass = None
    if self_correction is not None and trajectory is not None:
        first_pass = first_attempt_from(verdict.final_pass, self_correction)
    agent_result = subject.result.agent_result if subject.result else None
    n_tool_calls = sum(len(s.tool_calls or []) for s in trajectory.steps) if trajectory else None
    return GradedTrial(
        task_id=subject.task_id, attempt=subject.attempt, skill=subject.skill, case_id=subject.case_id,
        case_kind=subject.case_kind, negative_control=subject.negative_control, condition=subject.condition,
        workspace_mode=subject.workspace_mode, decoy_set=subject.decoy_set,
        n_visible_skills=subject.n_visible_skills, status=subject.status, failure_cause=subject.failure_cause,
        trial_name=subject.trial_name, trial_dir=str(subject.trial_dir) if subject.trial_dir else None,
        reward=subject.reward, has_trajectory=trajectory is not None,
        trajectory_error=traj_error,
        metrics=metrics, composite=verdict.composite, first_attempt_pass=first_pass,
        self_correction=self_correction.model_dump(mode="json") if self_correction is not None else None,
        n_steps=len(trajectory.steps) if trajectory else None, n_tool_calls=n_tool_calls,
        input_tokens=agent_result.n_input_tokens if agent_result else None,
        output_tokens=agent_result.n_output_tokens if agent_result else None,
        cost_usd=agent_result.cost_usd if agent_result else None, wall_sec=_wall(subject.result),
        final_answer=redact(final_answer) if final_answer else None,
        grading_mode=grading.mode, final_pass=verdict.final_pass, outcome_only=outcome_only(metrics),
        dimensions=dimension_scores(metrics), author_score=verdict.author_score, notes=notes,
        **{k: subject.labels.get(k) for k in LABEL_FIELDS},
    )


async def grade_one(record: TrialRecord, spec: RunSpec, judge) -> GradedTrial:
    return await grade_subject(subject_from_record(record, spec), GradingContext(grading=spec.grading, judge=judge))


def author_process_limit() -> asyncio.Semaphore:
    """At most one author-grader process per core: they are CPU-bound host processes."""
    return asyncio.Semaphore(max(1, os.cpu_count() or 1))


async def grade_subjects(subjects: list[TrialSubject], ctx: GradingContext) -> list[GradedTrial]:
    if ctx.author_limit is None:
        ctx.author_limit = author_process_limit()
    # Judged metrics wait on the judge; its own semaphore bounds the concurrency.
    return list(await asyncio.gather(*(grade_subject(s, ctx) for s in subjects)))


async def grade_records(records: list[TrialRecord], spec: RunSpec, judge: Judge | None = None) -> list[GradedTrial]:
    """Grade every record; ``judge`` defaults to the one the spec configures."""
    ctx = GradingContext(grading=spec.grading, judge=judge if judge is not None else build_judge(spec.judge))
    return await grade_subjects([subject_from_record(r, spec) for r in records], ctx)


def write_grades(path: Path, graded: list[GradedTrial]) -> None:
    """One JSON line per trial, secret-like strings masked.

    Masked as values (every string, recursively) before serialization, never in the
    serialized text, where a mask could swallow an escape and break the line.
    """
    lines = [json.dumps(redact_value(g.model_dump(mode="json")), ensure_ascii=False) for g in graded]
    write_text(path, "\n".join(lines) + ("\n" if lines else ""))


def read_grades(path: Path) -> list[GradedTrial]:
    """Every line of a grades.jsonl as a (migrated) GradedTrial; a bad line is a ReportError naming it."""
    path = Path(path)
    fix = f"{GRADES_REGENERATE} or restore the file"
    out = []
    for lineno, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            raw = json.loads(line)
        except json.JSONDecodeError as exc:
            raise ReportError(f"line {lineno} is not JSON: {exc.msg}", where=path, fix=fix) from None
        out.append(load_model(GradedTrial, raw, where=path, fix=fix, prefix=f"line {lineno}"))
    return out
