"""Grade collected trials on the host, after each trial, from read-only inputs.

Executor/grader separation: graders read the trajectory, the retained workspace copy
and the case spec; they never run inside the agent's sandbox and never hold the
judge's credential there. Prompts to an external judge are redacted first
(``graders/judged.py``).

One neutral record, ``TrialSubject`` (``aces_bench/grading/subject.py``), holds everything
needed to grade one trial, whatever produced it: ``StudyGrader`` builds it for the trials of an
aces-bench study, ``aces_bench.grading.external`` for any Harbor job dir. Then
``grade_subject`` runs the deterministic metrics, the judged metrics and (in the
modes that use them) the skill's author graders, and decides composite and pass
(``graders/modes.py``), dimensions and the outcome-only view
(``graders/dimensions.py``), and first-attempt pass (``graders/self_correction.py``).
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass
from pathlib import Path

from harbor.models.trial.result import TrialResult

from aces_bench.agents.traces import shown_skills
from aces_bench.config.spec import GradingSpec, RunSpec, WorkspaceSpec
from aces_bench.core.conditions import graded_as
from aces_bench.core.masking import credential_values
from aces_bench.core.metering import read_meter
from aces_bench.core.metrics import metric_names
from aces_bench.core.modes import mode, trial_class
from aces_bench.graders.atif import load_trial_trajectory
from aces_bench.graders.author import (
    AUTHOR_TIMEOUT_SEC,
    AuthorContext,
    discover_author_graders,
    run_author_graders,
)
from aces_bench.graders.base import GradingInput
from aces_bench.graders.contamination import saw_target, skill_passages, target_attempts
from aces_bench.graders.deterministic import grade_deterministic
from aces_bench.graders.dimensions import (
    dimension_scores,
    outcome_only,
    weighted_composite,
)
from aces_bench.graders.judged import grade_judged
from aces_bench.graders.modes import decide, runs_author_graders
from aces_bench.graders.outcome import NO_CHECK, trial_outcome
from aces_bench.graders.redact import redact, redact_known_value
from aces_bench.graders.self_correction import first_attempt_pass as first_attempt_from
from aces_bench.graders.skill_efficiency import without_routing
from aces_bench.graders.skill_execution import (
    ACTIVATION,
    EXECUTION,
    activations,
    happened,
    norm_skill,
    skill_file_digests,
)
from aces_bench.graders.skill_execution import METRIC as SKILL_EXECUTION
from aces_bench.graders.tool_calls import build_view
from aces_bench.grading.labels import spec_labels
from aces_bench.grading.subject import TrialSubject
from aces_bench.inputs.trialfiles import read_trial_file
from aces_bench.judges.base import Judge
from aces_bench.records.results import MetricResult
from aces_bench.records.trials import LABEL_FIELDS, GradedTrial, TrialFacts
from aces_bench.run.collect import TrialRecord
from aces_bench.run.cost import METERED, TrialSpend, trial_cost, trial_dir_of, trial_spend

GRADABLE = ("ok", "agent_error", "timeout", "verifier_error")
NO_SKILL = "(none)"
"""``fired_skill`` of a trial that activated no skill (None is: not known)."""


@dataclass(frozen=True)
class ProofOfLoad:
    """What a trial's model was shown and whether that holds its target (proof of load)."""

    shown: list[str] | None  # None: the harness's record says nothing
    listed: bool | None
    status: str | None = None  # "setup_error": a with-skill trial not shown its target (its arm's failure)
    cause: str | None = None


def shown_to_model(result, trial_dir) -> tuple[list[str] | None, str]:
    """(the skills the trial's model was shown, where that was read): from the metering
    record of the requests themselves when the trial had one (outside the sandbox), else
    from the harness's own record (``agents.traces.shown_skills``)."""
    metered = read_meter(trial_dir if trial_dir is not None else trial_dir_of(result)) if result is not None else None
    if metered is not None and metered.visible is not None:
        return metered.visible, "model requests seen by the host-side metering proxy"
    return shown_skills(result, trial_dir)


def proof_of_load(result, trial_dir, *, target: str, side: str, status: str) -> ProofOfLoad:
    """Whether a trial's model was shown its target, and what follows for its arm.

    Intention to treat: a with-skill trial whose agent ran and whose model was not shown the
    target is a failure of the with-skill arm (``setup_error``, classed ``arm_failure``:
    outcome 0, not passed). Its cause is the skill's own setup (frontmatter the harness
    rejects, a description past its limit, the listing limit reached with decoys) unless
    the harness's infrastructure is shown to be it, and the only evidence of that is a
    harness that never started: such a trial is ``infra_error`` before this check runs
    (``aces_bench.run.collect.classify``). An empty listing is no such evidence: a skill can
    break a harness's whole listing. A baseline whose model was shown the target keeps its
    status and counts as it ran, flagged (``baseline_saw_target``). Unknown (a harness that
    keeps no record) is neither."""
    if result is None:
        return ProofOfLoad(None, None)
    shown, source = shown_to_model(result, trial_dir)
    if shown is None:
        return ProofOfLoad(None, None)
    listed = any(_names_skill(name, target) for name in shown)
    if side != "with_skill" or listed or status not in GRADABLE:
        return ProofOfLoad(shown, listed)
    listing = ", ".join(shown) if shown else "no skill at all"
    return ProofOfLoad(shown, listed, "setup_error",
                       f"setup: the harness did not list the target skill {target} to the model (it listed "
                       f"{listing}; {source}): the skill's own setup failed, a failure of the with-skill arm")


def _names_skill(shown: str, target: str) -> bool:
    """Whether a listed name is the target: as is, or namespaced by the plugin that
    brings it (claude-code lists a plugin's skills as ``<plugin>:<skill>``)."""
    return shown == target or shown.rpartition(":")[2] == target and ":" in shown


def _usage_fields(spend: TrialSpend, agent_result) -> dict:
    """The trial's tokens (metered when it was), the harness's claim beside them, and the flag."""
    if agent_result is None and spend.source != METERED:
        return {}
    claimed_in = sum(u.input_tokens for u in spend.claimed) if agent_result is not None else None
    claimed_out = sum(u.output_tokens for u in spend.claimed) if agent_result is not None else None
    metered = spend.source == METERED
    return {
        "input_tokens": sum(u.input_tokens for u in spend.usage) if metered else agent_result.n_input_tokens,
        "output_tokens": sum(u.output_tokens for u in spend.usage) if metered else agent_result.n_output_tokens,
        "usage_source": spend.source, "claimed_input_tokens": claimed_in, "claimed_output_tokens": claimed_out,
        "usage_mismatch": (spend.mismatch is not None) if spend.source == METERED else None,
    }


def composite_score(metrics: dict[str, MetricResult], spec: RunSpec) -> float | None:
    """Weighted mean over the configured metrics that were scored (weights renormalised)."""
    return weighted_composite(metrics, spec.grading.metrics, spec.grading.weight_of)


# The answer is stored in every grades line and shown in the report: a smaller cap than a log's.
MAX_ANSWER_BYTES = 1024 * 1024


def _final_answer(subject: TrialSubject, trajectory, read_notes: list[str] | None = None) -> str | None:
    if subject.artifacts_dir is not None:
        read = read_trial_file(subject.artifacts_dir / subject.answer_file, limit=MAX_ANSWER_BYTES)
        if read.note and read_notes is not None:
            read_notes.append(read.note)
        if read.ok:
            return read.text()
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
    judge: Judge
    author_timeout_sec: float = AUTHOR_TIMEOUT_SEC
    author_limit: asyncio.Semaphore | None = None


@dataclass
class _Read:
    """What the host read of one trial: its trajectory (or why not), and its final answer."""

    trajectory: object | None
    error: str | None
    path: Path | None
    answer: str | None


def _read_trial(subject: TrialSubject, notes: list[str], read_notes: list[str]) -> _Read:
    trajectory, error, path = None, "trial produced no trial dir", None
    if subject.trial_dir is not None:
        loaded = load_trial_trajectory(subject.trial_dir)
        trajectory, error, path = loaded.trajectory, loaded.error, loaded.source
        notes += list(loaded.notes)
        if error and ("read cap" in error or ", not read" in error):
            read_notes.append(error)
        read_notes += [n for n in loaded.notes if "read cap" in n]
    return _Read(trajectory, error, path, _final_answer(subject, trajectory, read_notes))


async def _grade_metrics(subject: TrialSubject, ctx: GradingContext, read: _Read,
                         notes: list[str]) -> tuple[dict[str, MetricResult], MetricResult | None]:
    """The configured metrics (deterministic, judged, the author's) of a trial that ran, and
    its self-correction section; every metric unscored, with the reason, for one that did not."""
    grading = ctx.grading
    if subject.facts.status not in GRADABLE:
        reason = f"trial did not run to completion ({subject.facts.status}): {subject.facts.failure_cause}"
        names = list(grading.metrics)
        if runs_author_graders(grading.mode):
            names += [g.metric for g in discover_author_graders(subject.skill_dir)]
        return _unscored_all(names, reason), None
    inp = GradingInput(
        trajectory=read.trajectory, trajectory_error=read.error, case=subject.case,
        # Graders know two sides; a calibration arm is graded as the side it stands for.
        condition=graded_as(subject.facts.condition), target_skill=subject.target_skill,
        allowed_skills=subject.allowed_skills, staged_skills=subject.staged_skills,
        skills_dir=subject.skills_dir, workdir=subject.workdir, answer_file=subject.answer_file,
        final_answer=read.answer,
        artifacts_dir=subject.artifacts_dir,
        skill_digests=skill_file_digests(subject.skill_dir, subject.target_skill)
        if subject.skill_dir is not None and subject.target_skill in subject.staged_skills else {},
    )
    det = grade_deterministic(inp)
    self_correction = det.pop("self_correction", None)
    if not subject.routing_known and "skill_efficiency" in det:
        det["skill_efficiency"] = without_routing(det["skill_efficiency"], "the skills this trial may read are unknown")
    metrics = {k: v for k, v in det.items() if k in grading.metrics}
    wanted_judged = [m for m in metric_names("judged") if m in grading.metrics]
    if wanted_judged:
        judged = await grade_judged(inp, ctx.judge, earlier=metrics)
        metrics.update({k: v for k, v in judged.items() if k in wanted_judged})
    if runs_author_graders(grading.mode):
        if subject.skill_dir is None:
            notes.append("author graders not run: no skill folder is known for this trial (no case matched)")
        graders = discover_author_graders(subject.skill_dir)
        actx = AuthorContext(
            skill=subject.facts.skill, skill_dir=subject.skill_dir, case=subject.case, case_id=subject.facts.case_id,
            condition=subject.facts.condition, trial_name=subject.facts.trial_name, reward=subject.facts.reward,
            workspace=subject.artifacts_dir, trajectory_path=read.path if read.trajectory is not None else None,
            final_answer=read.answer,
        )
        metrics.update(await run_author_graders(graders, actx, timeout_sec=ctx.author_timeout_sec,
                                                limit=ctx.author_limit))
    return metrics, self_correction


def _contamination(subject: TrialSubject, view, notes: list[str]) -> str | None:
    """Why a baseline trial saw its target skill (it read it, or its model was shown it), or None."""
    if graded_as(subject.facts.condition) != "baseline":
        return None
    contaminated = None
    if view is not None:
        contaminated = saw_target(view, target=subject.target_skill,
                                  skills_dir=subject.skills_dir, passages=skill_passages(subject.skill_dir))
        if contaminated is None:
            notes += [f"baseline tried to read the target skill, which was not there: {a}; pair kept"
                      for a in target_attempts(view, target=subject.target_skill, skills_dir=subject.skills_dir)[:5]]
    if contaminated is None and subject.facts.target_listed:
        contaminated = f"the baseline's model was shown the target skill {subject.target_skill} (proof of load)"
    return contaminated


def _fired_skill(subject: TrialSubject, view) -> str | None:
    """The staged skill the trial activated first (``NO_SKILL`` for none); None without a trajectory."""
    if view is None:
        return None
    acts = activations(view.calls, subject.skills_dir)
    staged = {norm_skill(n): n for n in subject.staged_skills}
    return staged.get(norm_skill(acts[0].skill), acts[0].skill) if acts else NO_SKILL


async def grade_subject(subject: TrialSubject, ctx: GradingContext) -> GradedTrial:
    """Grade one trial; never raises for agent, judge or author-grader behaviour."""
    grading = ctx.grading
    notes = list(subject.notes)
    read_notes: list[str] = []  # trial files the host skipped or read only in part
    read = _read_trial(subject, notes, read_notes)
    trajectory = read.trajectory
    metrics, self_correction = await _grade_metrics(subject, ctx, read, notes)
    facts = subject.facts
    if not subject.verifier_checks and facts.reward is not None:
        notes.append(f"reward unscored: {NO_CHECK} (the case has no assertions and no native verifier)")
        facts = facts.model_copy(update={"reward": None})
    verdict = decide(grading, metrics)
    # The tool-call view, built once: the baseline's contamination check and the skill fired read it.
    view = build_view(trajectory, subject.workdir) if trajectory is not None and facts.status in GRADABLE else None
    contaminated = _contamination(subject, view, notes)
    outcome = trial_outcome(status=facts.status, reward=facts.reward, verifier_checks=subject.verifier_checks,
                            metrics=metrics, contaminated=contaminated, grading_mode=grading.mode,
                            pass_threshold=grading.pass_threshold, author_score=verdict.author_score,
                            author_pass=verdict.author_pass, failure_cause=facts.failure_cause)
    if outcome.reason:
        notes.append(f"outcome: {outcome.reason}")
    if verdict.note:
        notes.append(verdict.note)
    first_pass = None
    if self_correction is not None and trajectory is not None:
        first_pass = first_attempt_from(outcome.final_pass, self_correction, pass_threshold=grading.pass_threshold,
                                        author_decides=mode(grading.mode).author_decides)
    agent_result = subject.result.agent_result if subject.result else None
    spend = (trial_spend(subject.result, trial_dir=subject.trial_dir) if subject.result is not None
             else TrialSpend([], "", []))
    if spend.mismatch:
        notes.append(spend.mismatch)
    notes += spend.notes
    n_tool_calls = sum(len(s.tool_calls or []) for s in trajectory.steps) if trajectory else None
    names = sorted(subject.case.required_credentials) if subject.case is not None else []
    values = credential_values(names)
    unmasked = [n for n in names if n not in values]
    if unmasked:
        notes.append(f"credential {', '.join(unmasked)} is not set where this trial was graded: "
                     "its value could not be masked in this record")
    final_answer = read.answer
    graded = GradedTrial(
        **facts.model_dump(), has_trajectory=trajectory is not None, trajectory_error=read.error,
        metrics=metrics, composite=verdict.composite, first_attempt_pass=first_pass,
        self_correction=self_correction,
        n_steps=len(trajectory.steps) if trajectory else None, n_tool_calls=n_tool_calls,
        **_usage_fields(spend, agent_result),
        # One price function for every harness (aces_bench.core.pricing), never a harness's own figure.
        cost_usd=trial_cost(subject.result, trial_dir=subject.trial_dir) if agent_result or spend.source == METERED
        else None,
        wall_sec=_wall(subject.result),
        final_answer=redact(final_answer) if final_answer else None,
        grading_mode=grading.mode, final_pass=outcome.final_pass, outcome_only=outcome_only(metrics),
        outcome=outcome.outcome, outcome_source=outcome.source, outcome_per_protocol=outcome.per_protocol,
        trial_class=trial_class(facts.status),
        baseline_saw_target=contaminated is not None,
        expected_skill=subject.case.expected_skill if subject.case is not None else None,
        fired_skill=_fired_skill(subject, view),
        activated=happened(metrics.get(SKILL_EXECUTION), ACTIVATION, negative_control=facts.negative_control),
        script_ran=happened(metrics.get(SKILL_EXECUTION), EXECUTION, negative_control=facts.negative_control),
        dimensions=dimension_scores(metrics), author_score=verdict.author_score, notes=notes,
        read_limits=read_notes, credential_names=names,
        **{k: subject.labels.get(k) for k in LABEL_FIELDS},
    )
    # The values of the credentials passed in are masked everywhere in the record (the
    # answer, every metric's evidence and details, the notes), inside other text too.
    return redact_known_value(graded, values) if values else graded


def author_process_limit() -> asyncio.Semaphore:
    """At most one author-grader process per core: they are CPU-bound host processes."""
    return asyncio.Semaphore(max(1, os.cpu_count() or 1))


async def grade_subjects(subjects: list[TrialSubject], ctx: GradingContext) -> list[GradedTrial]:
    if ctx.author_limit is None:
        ctx.author_limit = author_process_limit()
    # Judged metrics wait on the judge; its own semaphore bounds the concurrency.
    return list(await asyncio.gather(*(grade_subject(s, ctx) for s in subjects)))


@dataclass(frozen=True)
class StudyGrader:
    """Grades one study's trial records. The spec is read once, when the study makes it
    (``of``): the grading settings and judge, the workspace paths, the trials' labels."""

    ctx: GradingContext
    workspace: WorkspaceSpec
    labels: dict[str, str | None]

    @classmethod
    def of(cls, spec: RunSpec, judge: Judge) -> StudyGrader:
        return cls(GradingContext(grading=spec.grading, judge=judge), spec.workspace, spec_labels(spec))

    async def grade(self, records: list[TrialRecord]) -> list[GradedTrial]:
        """Every record graded, in order."""
        return await grade_subjects([self.subject(r) for r in records], self.ctx)

    def subject(self, record: TrialRecord) -> TrialSubject:
        """What grading reads of one trial of the study."""
        plan = record.plan
        load = proof_of_load(record.result, record.trial_dir, target=plan.target.name,
                             side=graded_as(plan.condition), status=record.status)
        facts = TrialFacts(
            task_id=record.task_id, attempt=record.attempt, skill=plan.intervention_name, case_id=plan.case.id,
            case_kind=plan.case.kind, negative_control=plan.case.is_negative_control, condition=plan.condition,
            workspace_mode=plan.workspace_mode, decoy_set=plan.decoy_set,
            n_visible_skills=len(load.shown) if load.shown is not None else len(plan.staged),
            status=load.status or record.status, failure_cause=load.cause or record.failure_cause,
            trial_name=record.trial_name, trial_dir=str(record.trial_dir) if record.trial_dir else None,
            reward=record.reward, visible_skills=",".join(load.shown) if load.shown is not None else None,
            target_listed=load.listed, case_unreviewed=plan.case.status == "draft",
        )
        return TrialSubject(
            facts=facts, case=plan.case, result=record.result,
            target_skill=plan.target.name, allowed_skills=plan.allowed_skills, staged_skills=plan.staged_names,
            skills_dir=self.workspace.skills_dir, workdir=self.workspace.workdir,
            answer_file=self.workspace.answer_file, artifacts_dir=record.artifacts_dir, skill_dir=plan.target.path,
            labels=self.labels, verifier_checks=plan.native_task is not None or bool(plan.case.checks),
        )
