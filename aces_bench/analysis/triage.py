"""Negative-lift triage: why did a paired case do worse with the skill than without?

Each negative paired case (headline outcome, both sides scored) is put in the first
mechanism whose rule holds, in this order. The rules are shown on the report page.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import pandas as pd
from harbor.models.trajectories import Trajectory

from aces_bench.graders.skill_execution import ACTIVATION, happened, target_activated
from aces_bench.graders.skill_execution import METRIC as SKILL_EXECUTION
from aces_bench.graders.tool_calls import build_view
from aces_bench.records.trials import PAIR_KEY, GradedTrial


@dataclass(frozen=True)
class Mechanism:
    key: str
    label: str
    rule: str


MECHANISMS = (
    Mechanism("arm_failed", "one arm failed to run",
              "One side of the pair has a status other than ok (timeout, agent, verifier or infrastructure error), "
              "yet both sides were scored: the comparison is with a run that did not finish normally."),
    Mechanism("never_discovered", "never discovered",
              "The with-skill arm never activated the target skill: skill_execution's activation check failed, or "
              "(without grades) the trajectory has no read of the target's SKILL.md and no activation tool call for it."),
    Mechanism("unstable", "unstable grader",
              "Another attempt of the same case in the same cell (skill, case, harness, model, workspace mode, decoys) "
              "has a lift of zero or more: repeated attempts disagree, so this case's sign is not reliable."),
    Mechanism("misused", "discovered but misused",
              "The with-skill arm activated the target skill (for a negative control: activated it although no skill "
              "should be used) and still scored below the baseline: the skill's checks failed."),
    Mechanism("other", "not classifiable",
              "None of the rules above decides: no activation evidence was recorded for the with-skill arm, or a "
              "negative control that correctly left the skill alone scored lower."),
)
MECHANISM_BY_KEY = {m.key: m for m in MECHANISMS}


def activation(grade: GradedTrial | None, trajectory: Trajectory | None, skill: str,
               dirs: tuple[str, str]) -> bool | None:
    """Did this with-skill trial trigger ``skill``? The graders' answer, never a rule of its own.

    The graded record's ``activated`` (``skill_execution.happened``: for a negative control
    a sub-score of 1 means the skill was left alone, so it is read the other way round);
    a record graded before that field existed, through the same rule; without a
    ``skill_execution`` result, the graders' activation rule over the trajectory; None
    when neither is there.
    """
    if grade is not None:
        if grade.activated is not None:
            return grade.activated
        found = happened(grade.metrics.get(SKILL_EXECUTION), ACTIVATION, negative_control=grade.negative_control)
        if found is not None:
            return found
    if trajectory is None:
        return None
    # ``dirs``: the trial's (workdir, skills dir), its study's (``reports.records.workspace_dirs``);
    # harness copies (~/.gemini/skills, ...) are recognised whatever the skills dir.
    workdir, skills_dir = dirs
    return target_activated(build_view(trajectory, workdir).calls, skill, skills_dir)


@dataclass
class TriageCase:
    key: dict
    lift: float
    with_score: float
    base_score: float
    status_with: str
    status_base: str
    negative_control: bool
    activated: bool | None
    detail: str
    href: str = ""


@dataclass
class TriageGroup:
    mechanism: Mechanism
    cases: list[TriageCase] = field(default_factory=list)


def classify(row: dict, *, outcome: str, activated: bool | None, negative_control: bool,
             sibling_lifts: Sequence[float]) -> tuple[str, str]:
    """(mechanism key, one-line reason) for one negative paired case; first rule that holds."""
    sw, sb = str(row.get("status_with") or "ok"), str(row.get("status_base") or "ok")
    if sw != "ok" or sb != "ok":
        side = "with-skill" if sw != "ok" else "baseline"
        return "arm_failed", f"{side} arm status {sw if sw != 'ok' else sb}"
    if activated is False and not negative_control:
        return "never_discovered", "target skill never activated in the with-skill arm"
    others = [x for x in sibling_lifts if not math.isnan(x)]
    if any(x >= 0 for x in others):
        return "unstable", f"other attempts' lifts: {', '.join(f'{x:+.2f}' for x in others)}"
    if activated is True:
        why = "activated although this is a negative control" if negative_control else "activated, checks failed"
        return "misused", why
    if negative_control:
        return "other", "negative control; the skill was correctly left alone"
    return "other", "no activation evidence (no grades, no trajectory)"


def triage(
    pairs: pd.DataFrame,
    *,
    outcome: str,
    activation: Callable[[dict], bool | None],
    negative_control: Callable[[dict], bool],
) -> list[TriageGroup]:
    """Every negative paired case in its mechanism group (all groups returned, maybe empty).

    ``activation(row)`` says whether the with-skill trial of a paired row activated its
    target (None: unknown); ``negative_control(row)`` whether the case is a negative control.
    """
    lift_col = f"lift_{outcome}"
    groups = {m.key: TriageGroup(m) for m in MECHANISMS}
    cell = [k for k in PAIR_KEY if k != "attempt"]
    scored = pairs.loc[pairs[lift_col].notna()]
    siblings = {k: part for k, part in scored.groupby(cell, sort=False, dropna=False)}
    for rec in scored.loc[scored[lift_col] < 0].to_dict("records"):
        ck = tuple(rec[k] for k in cell)
        sib = siblings[ck]
        others = sib.loc[sib["attempt"] != rec["attempt"], lift_col].astype(float).tolist()
        act = activation(rec)
        neg = bool(negative_control(rec))
        key, detail = classify(rec, outcome=outcome, activated=act, negative_control=neg, sibling_lifts=others)
        groups[key].cases.append(TriageCase(
            key={k: rec[k] for k in PAIR_KEY}, lift=float(rec[lift_col]), with_score=float(rec[f"with_{outcome}"]),
            base_score=float(rec[f"base_{outcome}"]), status_with=str(rec.get("status_with")),
            status_base=str(rec.get("status_base")), negative_control=neg, activated=act, detail=detail,
        ))
    for g in groups.values():
        g.cases.sort(key=lambda c: (c.lift, *map(str, c.key.values())))
    return list(groups.values())
