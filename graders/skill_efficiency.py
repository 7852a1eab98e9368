"""The deterministic ``skill_efficiency`` metric: routing and tool efficiency.

- ``routing``: of the skills the agent read (activated, or read/ran any file in
  the skill's folder; listing the skills dir is not reading), the share it was
  allowed to read. Allowed = ``GradingInput.allowed_skills`` (the target in
  isolation, target plus configured support skills in group mode) plus the case's
  ``acceptable_skills``. For a negative control the target skill is *not* allowed
  (the case expects no skill) unless listed as acceptable. Reading no skill is
  vacuously routed correctly: 1.
- ``tool_efficiency``: productive calls over all calls (harness control calls
  such as ``mark_task_complete`` or todo lists are not counted). A call is waste
  when it shows a named indicator:
  ``help_fishing`` (``--help``, a lone ``-h``, ``man``/``pydoc``/``help()``),
  ``wrong_path`` (listing a path that does not exist),
  ``package_install`` (pip/apt/npm/... installs during the task),
  ``duplicate_call`` (the same call again with nothing written or run in between).
  Not applicable when the agent made no tool call.

Score: mean of the applicable sub-scores. Baseline and negative controls use the
same functions; in the baseline the target skill is absent, so routing is about
decoys only and tool efficiency shows how much the missing skill cost.
"""

from __future__ import annotations

import re

from aces_bench.graders.base import GraderContext, GradingInput
from aces_bench.graders.skill_execution import activations, norm_skill
from aces_bench.graders.tool_calls import Call, TraceView, skill_ref
from aces_bench.records.results import Evidence, MetricResult

METRIC = "skill_efficiency"
# Sub-score (and evidence check) names; other modules import these, never the bare strings.
ROUTING, TOOL_EFFICIENCY = "routing", "tool_efficiency"
SUB_CHECKS = (ROUTING, TOOL_EFFICIENCY)
WASTE_INDICATORS = ("help_fishing", "wrong_path", "package_install", "duplicate_call")
MAX_EXAMPLES = 3
_NOT_FOUND = re.compile(r"No such file or directory|cannot access|does not exist|not found|ENOENT", re.IGNORECASE)


def skills_read(calls: tuple[Call, ...], skills_dir: str) -> dict[str, Call]:
    """Skill (normalised name) -> first call that read, activated or ran it."""
    seen: dict[str, Call] = {}
    for a in activations(calls, skills_dir):
        seen.setdefault(norm_skill(a.skill), a.call)
    for c in calls:
        for p in c.reads + c.execs:
            ref = skill_ref(p, skills_dir)
            if ref is not None and ref.rel:
                key = norm_skill(ref.skill)
                if key not in seen or seen[key].index > c.index:
                    seen[key] = c
    return seen


def waste(calls: tuple[Call, ...]) -> dict[int, str]:
    """Call index -> the waste indicator it shows (first that applies)."""
    out: dict[int, str] = {}
    generation = 0
    seen: set[tuple[str, str, int]] = set()
    for c in calls:
        if c.kind == "control":
            continue
        if "help" in c.flags:
            out[c.index] = "help_fishing"
        elif "install" in c.flags:
            out[c.index] = "package_install"
        elif (c.kind == "list" or (c.kind == "shell" and c.lists and not c.execs and not c.writes)) and (
            c.failed is True or _NOT_FOUND.search(c.output[:2000])
        ):
            out[c.index] = "wrong_path"
        else:
            key = (c.tool, c.text, generation)
            if c.text and key in seen and c.kind in ("shell", "read", "list", "search", "web", "activate"):
                out[c.index] = "duplicate_call"
            elif c.failed is not True:
                seen.add(key)
        if c.writes or c.execs or (c.kind == "shell" and not (c.reads or c.lists)):
            generation += 1  # the world may have changed: a repeat is not a duplicate
    return out


def grade_skill_efficiency(inp: GradingInput, view: TraceView | None) -> MetricResult:
    """Score ``skill_efficiency`` for one trial (see the module docstring)."""
    if view is None:
        return MetricResult(metric=METRIC, score=None, grader="deterministic",
                            unscored_reason=f"no trajectory: {inp.trajectory_error or 'not provided'}")
    ev: list[Evidence] = []
    subs: dict[str, float | None] = {}

    allowed = {norm_skill(s) for s in inp.allowed_skills}
    if inp.case is not None:
        allowed |= {norm_skill(s) for s in inp.case.acceptable_skills}
        if inp.case.is_negative_control:
            allowed.discard(norm_skill(inp.target_skill))
            allowed |= {norm_skill(s) for s in inp.case.acceptable_skills}
    read = skills_read(view.calls, inp.skills_dir)
    if not read:
        subs["routing"] = 1.0
        ev.append(Evidence(check="routing", passed=True, detail="no skill was read"))
    else:
        bad = sorted(s for s in read if s not in allowed)
        subs["routing"] = round(1 - len(bad) / len(read), 6)
        for s in sorted(read):
            c = read[s]
            ok = s in allowed
            ev.append(Evidence(check="routing", passed=ok, step_id=c.step_id,
                               detail=f"skill {s!r} read at {c.where}: " + ("allowed" if ok else "not allowed "
                                      f"(allowed: {sorted(allowed) or 'none'})")))

    counted = [c for c in view.calls if c.kind != "control"]
    wasted = waste(view.calls)
    if not counted:
        subs["tool_efficiency"] = None
        ev.append(Evidence(check="tool_efficiency", passed=None, detail="not applicable: no tool calls"))
    else:
        subs["tool_efficiency"] = round((len(counted) - len(wasted)) / len(counted), 6)
        for name in WASTE_INDICATORS:
            hits = [c for c in counted if wasted.get(c.index) == name]
            if hits:
                examples = "; ".join(f"{c.where}: {c.tool} {c.text[:60]!r}" for c in hits[:MAX_EXAMPLES])
                ev.append(Evidence(check=f"tool_efficiency.{name}", passed=False, step_id=hits[0].step_id,
                                   detail=f"{len(hits)} call(s): {examples}"))
        ev.append(Evidence(check="tool_efficiency", passed=not wasted,
                           detail=f"{len(counted) - len(wasted)} productive of {len(counted)} calls"))
    vals = [v for v in subs.values() if v is not None]
    score = round(sum(vals) / len(vals), 6) if vals else None
    details = {"skills_read": sorted(read), "allowed_skills": sorted(allowed),
               "waste": {n: sum(1 for v in wasted.values() if v == n) for n in WASTE_INDICATORS}}
    return MetricResult(metric=METRIC, score=score, sub_scores=subs, evidence=ev, grader="deterministic",
                        details=details)


def without_routing(r: MetricResult, reason: str) -> MetricResult:
    """``r`` with routing left unscored (the allowed skills are unknown): the score is
    tool efficiency alone, or unscored when that is not applicable either."""
    subs = {**r.sub_scores, "routing": None}
    ev = [e for e in r.evidence if e.check != "routing"]
    ev.insert(0, Evidence(check="routing", passed=None, detail=f"not scored: {reason}"))
    score = subs.get("tool_efficiency")
    update = {"sub_scores": subs, "evidence": ev, "score": score}
    if score is None and r.score is not None:
        update["unscored_reason"] = f"routing not scored ({reason}) and tool efficiency not applicable"
    return r.model_copy(update=update)


def grade(inp: GradingInput, ctx: GraderContext) -> MetricResult:
    """The registered grader (``aces_bench/core/metrics.py``)."""
    return grade_skill_efficiency(inp, ctx.view)
