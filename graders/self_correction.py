"""First-attempt grading and self-correction tracking.

From the trajectory alone this records a ``self_correction`` section:

- ``changes``: edits the agent made to skill files (anything written, moved,
  deleted or chmod-ed under a skill folder, in the skills dir or a harness copy)
  or to a harness's skill configuration (``.claude/settings.json``,
  ``.gemini/settings.json``, ``.codex/config.toml``, ``opencode.json``...);
- ``first_attempt_errors``: failed calls that were the first try of their action
  (the same script, or the same command/tool and target);
- ``retries``: later tries of an action whose earlier try failed, and whether
  they succeeded;
- ``affected_checks``: skill_execution checks that passed in the end but not on
  the first attempt.

First attempt = everything before the agent's first change to the target skill
(or its configuration). A check that only passed after that change counts as
failed on the first attempt. The ``self_correction`` metric's score is the
skill_execution score on the first attempt (activation, execution, workflow
order; error recovery is what happens *after* a first attempt, so it is left
out), next to the final ``skill_execution``. ``first_attempt_pass`` turns a
trial's final pass/fail into its first-attempt pass/fail: an outcome produced
after patching the skill is a first-attempt failure.

Edits to skills other than the target are recorded but do not change the
first-attempt checks. Baseline and negative controls are graded the same way
(in the baseline the target skill is absent, so there is nothing to patch).
"""

from __future__ import annotations

import re
from typing import Any

from pydantic import BaseModel, Field

from aces_bench.graders.base import Evidence, GradingInput, MetricResult
from aces_bench.graders.skill_execution import (
    ACTIVATION,
    EXECUTION,
    WORKFLOW_ORDER,
    analyse,
    norm_skill,
    provenance,
    unscored,
)
from aces_bench.graders.tool_calls import Call, TraceView, skill_ref

METRIC = "self_correction"
FIRST_ATTEMPT_CHECKS = (ACTIVATION, EXECUTION, WORKFLOW_ORDER)
_SKILL_CONFIG = re.compile(
    r"/\.claude/settings(?:\.local)?\.json$|/\.gemini/settings\.json$|/\.codex/config\.toml$|"
    r"/\.config/opencode/opencode\.jsonc?$|(?:^|/)opencode\.jsonc?$|/\.agents/config\.(?:toml|json)$"
)


class TraceEvent(BaseModel):
    """Where in the trajectory an event happened: call index, ATIF step id, and the human
    location (``step 4`` or ``subagent s1 step 2``)."""

    index: int
    step_id: int | None = None
    where: str | None = None


class SkillChange(TraceEvent):
    """A write to a skill file (or a harness skill config) during the trial."""

    tool: str
    path: str
    skill: str | None = None
    file: str
    target: bool


class FirstAttemptError(TraceEvent):
    tool: str
    action: str
    exit_code: int | None = None


class Retry(TraceEvent):
    of_step: int | None = None
    action: str
    succeeded: bool


class SelfCorrection(BaseModel):
    """The ``self_correction`` section: did the agent change the skill, and what passed only after.

    Stored in the self_correction result's ``details["self_correction"]``; read it with
    ``SelfCorrection.of(result)``, never by key.
    """

    patched: bool
    first_patch_index: int | None = None
    first_patch_step: int | None = None
    changes: list[SkillChange] = Field(default_factory=list)
    first_attempt_errors: list[FirstAttemptError] = Field(default_factory=list)
    retries: list[Retry] = Field(default_factory=list)
    affected_checks: list[str] = Field(default_factory=list)
    first_attempt: dict[str, float | None] = Field(default_factory=dict)
    final: dict[str, float | None] = Field(default_factory=dict)

    @classmethod
    def of(cls, result: MetricResult | None) -> SelfCorrection | None:
        """The section of a self_correction result; None when it has none (no trajectory)."""
        raw = result.details.get(METRIC) if result is not None else None
        return cls.model_validate(raw) if raw else None


def skill_changes(calls: tuple[Call, ...], skills_dir: str, target: set[str]) -> list[dict[str, Any]]:
    """Every write to a skill file or harness skill config, in call order."""
    out: list[dict[str, Any]] = []
    for c in calls:
        for p in c.writes:
            ref = skill_ref(p, skills_dir)
            if ref is not None:
                out.append({"index": c.index, "step_id": c.step_id, "where": c.where, "tool": c.tool, "path": p,
                            "skill": ref.skill, "file": ref.rel or ".", "target": norm_skill(ref.skill) in target})
            elif _SKILL_CONFIG.search(p):
                out.append({"index": c.index, "step_id": c.step_id, "where": c.where, "tool": c.tool, "path": p,
                            "skill": None, "file": p, "target": True})
    return out


def _action(c: Call) -> tuple[str, str]:
    if c.execs:
        return ("exec", c.execs[0])
    return (c.tool, c.text)


def attempts(calls: tuple[Call, ...]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """(first-attempt errors, retries of actions that had failed)."""
    tried: set[tuple[str, str]] = set()
    failed_at: dict[tuple[str, str], Call] = {}
    errors: list[dict[str, Any]] = []
    retries: list[dict[str, Any]] = []
    for c in calls:
        if c.kind == "control":
            continue
        key = _action(c)
        if key in failed_at:
            prev = failed_at[key]
            retries.append({"index": c.index, "step_id": c.step_id, "where": c.where, "of_step": prev.step_id,
                            "action": key[1][:200], "succeeded": c.failed is not True})
        elif c.failed is True and key not in tried:
            errors.append({"index": c.index, "step_id": c.step_id, "where": c.where, "tool": c.tool,
                           "action": key[1][:200], "exit_code": c.exit_code})
        tried.add(key)
        if c.failed is True:
            failed_at.setdefault(key, c)
        else:
            failed_at.pop(key, None)
    return errors, retries


def self_correction_section(inp: GradingInput, view: TraceView) -> dict[str, Any]:
    """The ``self_correction`` section (case-independent parts always filled)."""
    case = inp.case
    if case is None or case.is_negative_control:
        target = {norm_skill(inp.target_skill)}
    else:
        target = {norm_skill(case.expected_skill or inp.target_skill)} | {norm_skill(s) for s in case.acceptable_skills}
    changes = skill_changes(view.calls, inp.skills_dir, target)
    errors, retries = attempts(view.calls)
    first = next((ch for ch in changes if ch["target"]), None)
    return {
        "patched": first is not None,
        "first_patch_index": first["index"] if first else None,
        "first_patch_step": first["step_id"] if first else None,
        "changes": changes,
        "first_attempt_errors": errors,
        "retries": retries,
        "affected_checks": [],
    }


def grade_self_correction(inp: GradingInput, view: TraceView | None, final: MetricResult | None = None) -> MetricResult:
    """First-attempt skill_execution score with the ``self_correction`` section in ``details``.

    ``final`` is the trial's skill_execution result, used to list affected checks.
    """
    if view is None:
        return MetricResult(metric=METRIC, score=None, grader="deterministic",
                            unscored_reason=f"no trajectory: {inp.trajectory_error or 'not provided'}")
    section = self_correction_section(inp, view)
    ev = [Evidence(check="self_correction.change", passed=None, step_id=ch["step_id"],
                   detail=f"{ch['tool']} changed {ch['path']} at {ch['where']}"
                          + ("" if ch["target"] else " (not the target skill)"))
          for ch in section["changes"][:20]]
    ev += [Evidence(check="self_correction.first_attempt_error", passed=False, step_id=e["step_id"],
                    detail=f"{e['tool']} {e['action'][:80]!r} failed at {e['where']}"
                           + (f" (exit {e['exit_code']})" if e["exit_code"] is not None else ""))
           for e in section["first_attempt_errors"][:20]]
    ev += [Evidence(check="self_correction.retry", passed=r["succeeded"], step_id=r["step_id"],
                    detail=f"retry at {r['where']} of the action that failed at step {r['of_step']}: "
                           + ("succeeded" if r["succeeded"] else "failed again"))
           for r in section["retries"][:20]]
    missing = unscored(inp, view, METRIC)
    if missing is not None:
        return missing.model_copy(update={"details": {"self_correction": section}, "evidence": ev})

    cut = section["first_patch_index"]
    prefix = view.calls if cut is None else view.calls[:cut]
    facts = analyse(prefix, inp.case, inp.target_skill, inp.skills_dir, inp.condition, recovery=False,
                    target_staged=inp.target_skill in inp.staged_skills, provenance=provenance(inp))
    first_subs = {k: facts.sub_scores.get(k) for k in FIRST_ATTEMPT_CHECKS}
    final_subs = dict(final.sub_scores) if final is not None else {}
    affected = [k for k in FIRST_ATTEMPT_CHECKS
                if final_subs.get(k) is not None and (first_subs.get(k) is None or first_subs[k] < final_subs[k])]
    section["affected_checks"] = affected
    section["first_attempt"] = first_subs
    section["final"] = {k: final_subs.get(k) for k in FIRST_ATTEMPT_CHECKS}
    # A check not applicable on the first attempt but applicable in the end (the script
    # only ran after the patch) failed on the first attempt.
    scored = {k: (v if v is not None else (0.0 if k in affected else None)) for k, v in first_subs.items()}
    vals = [v for v in scored.values() if v is not None]
    score = round(sum(vals) / len(vals), 6) if vals else None
    if cut is None:
        ev.append(Evidence(check="self_correction", passed=True,
                           detail="the agent did not change the target skill: first attempt = final"))
    else:
        ev.append(Evidence(check="self_correction", passed=not affected, step_id=section["first_patch_step"],
                           detail=f"first attempt ends at step {section['first_patch_step']}, the first change to "
                                  "the target skill; "
                                  + (f"checks that only passed after it: {', '.join(affected)}" if affected
                                     else "no check depended on the change")))
    ev += [e for e in facts.evidence if e.check in FIRST_ATTEMPT_CHECKS]
    return MetricResult(metric=METRIC, score=score, sub_scores=scored, evidence=ev, grader="deterministic",
                        details={"self_correction": section})


def first_attempt_pass(final_pass: bool | None, self_correction: MetricResult) -> bool | None:
    """A trial's pass on the first attempt: the final pass, unless it came after patching the skill.

    None when the final outcome is unknown (unscored stays unscored).
    """
    if final_pass is None:
        return None
    if not final_pass:
        return False
    section = SelfCorrection.of(self_correction)
    return not (section is not None and section.patched)
