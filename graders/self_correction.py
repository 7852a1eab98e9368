"""First-attempt grading and self-correction tracking, as AEVAL defines them.

The first attempt is the first answer the agent produced: the first write of the
answer file, or the first final message when it wrote none
(``graders/first_answer.py``). Self-correction is anything the agent changed after
that: the answer rewritten with another text, a workspace output it had produced (or
a file the case's checks read) written again, and edits to the skill it was given.
From the trajectory this records a ``self_correction`` section:

- ``first_answer``: where the first answer was produced, how, and whether its text
  is in the trace;
- ``later_changes``: every change to the answer or the outputs after it;
- ``first_attempt_checks`` / ``first_attempt_reward``: the case's deterministic
  checks applied to the first answer (and to each checked file as it stood then),
  with the verifier's semantics;
- ``changes``: edits the agent made to skill files (anything written, moved,
  deleted or chmod-ed under a skill folder, in the skills dir or a harness copy)
  or to a harness's skill configuration (``.claude/settings.json``,
  ``.gemini/settings.json``, ``.codex/config.toml``, ``opencode.json``...);
- ``first_attempt_errors``: failed calls that were the first try of their action;
- ``retries``: later tries of an action whose earlier try failed, and whether
  they succeeded;
- ``affected_checks``: skill_execution checks that passed in the end but not
  before the agent's first change to the target skill.

``first_attempt_pass``: the final pass when nothing changed after the first answer;
the first answer's own checks when something did (unknown - None, counted apart -
when its text or a checked file's is not in the trace, or when only the skill's
author graders decide a pass); a fail when the first answer came after the agent had
patched the target skill. The ``self_correction`` metric's score is the
skill_execution score before the first change to the target skill (activation,
execution, workflow order), next to the final ``skill_execution``.

Edits to skills other than the target are recorded but do not change the
first-attempt checks. Baseline and negative controls are graded the same way.
"""

from __future__ import annotations

import posixpath
from pathlib import Path
from typing import Any

from aces_bench.agents.profiles import profile_skill_configs
from aces_bench.graders.base import GradingInput
from aces_bench.graders.first_answer import AnswerHistory, history
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
from aces_bench.inputs.trialfiles import read_trial_file
from aces_bench.records.results import Evidence, MetricResult
from aces_bench.records.self_correction import METRIC, SelfCorrection
from aces_bench.verifier.check_answer import evaluate_check

FIRST_ATTEMPT_CHECKS = (ACTIVATION, EXECUTION, WORKFLOW_ORDER)


def _skill_config(path: str) -> bool:
    """A write to a harness's skill config file (any profile's ``HarnessProfile.skill_configs``)."""
    configs = profile_skill_configs()
    return configs is not None and configs.fullmatch(posixpath.normpath(path)) is not None


def skill_changes(calls: tuple[Call, ...], skills_dir: str, target: set[str]) -> list[dict[str, Any]]:
    """Every write to a skill file or harness skill config, in call order."""
    out: list[dict[str, Any]] = []
    for c in calls:
        for p in c.writes:
            ref = skill_ref(p, skills_dir)
            if ref is not None:
                out.append({"index": c.index, "step_id": c.step_id, "where": c.where, "tool": c.tool, "path": p,
                            "skill": ref.skill, "file": ref.rel or ".", "target": norm_skill(ref.skill) in target})
            elif _skill_config(p):
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
    section = {
        "patched": first is not None,
        "first_patch_index": first["index"] if first else None,
        "first_patch_step": first["step_id"] if first else None,
        "changes": changes,
        "first_attempt_errors": errors,
        "retries": retries,
        "affected_checks": [],
    }
    section.update(_first_answer_part(inp, view, first))
    return section


def _check_files(inp: GradingInput) -> tuple[str, ...]:
    return tuple(sorted({c.file for c in (inp.case.checks if inp.case else []) if c.file}))


def _first_answer_part(inp: GradingInput, view: TraceView, first_patch: dict[str, Any] | None) -> dict[str, Any]:
    """The AEVAL part of the section: the first answer, later changes and the first answer's own checks."""
    hist = history(view, inp.trajectory, workdir=inp.workdir, answer_file=inp.answer_file,
                   skills_dir=inp.skills_dir, check_files=_check_files(inp))
    w = hist.first
    if w is not None:
        first = {"source": "answer_file", "index": w.index, "step_id": w.step_id, "where": w.where, "how": w.how,
                 "content_known": w.content is not None}
    elif hist.first_message is not None:
        sid = hist.first_message[0]
        first = {"source": "final_message", "index": -1, "step_id": sid, "where": f"step {sid}",
                 "how": "the first final message", "content_known": True}
    else:
        first = {"source": "none", "index": -1, "how": "no write of the answer file and no final message in the trace"}
    later = [{"index": c.index, "step_id": c.step_id, "where": c.where, "path": c.path, "how": c.how}
             for c in hist.later_changes]
    cut = w.index if w is not None else None
    patched_before = first_patch is not None and (cut is None or first_patch["index"] < cut)
    patched_after = first_patch is not None and not patched_before
    part: dict[str, Any] = {
        "first_answer": first, "later_changes": later,
        "self_corrected": bool(later) or patched_after,
        "patched_before_first_answer": patched_before,
    }
    part.update(_first_checks(inp, hist))
    return part


def _retained(inp: GradingInput, rel: str) -> str | None:
    """A file of the retained final workspace (the trial wrote it: read capped, never blocking)."""
    if inp.artifacts_dir is None:
        return None
    read = read_trial_file(Path(inp.artifacts_dir) / rel, limit=1024 * 1024)
    return read.text() if read.ok else None


def _first_checks(inp: GradingInput, hist: AnswerHistory) -> dict[str, Any]:
    """The case's checks on the first answer: results, reward, or why they cannot be applied."""
    checks = [c.model_dump(mode="json") for c in (inp.case.checks if inp.case else [])]
    if not checks:
        return {"first_attempt_checks": [], "first_attempt_reward": None,
                "first_attempt_unknown": "the case has no deterministic check"}
    root = inp.workdir.rstrip("/") or "/"
    texts: dict[str | None, str | None] = {}
    unknown: list[str] = []
    for rel in sorted({c.get("file") for c in checks}, key=lambda r: r or ""):
        name = rel or inp.answer_file
        path = name if name.startswith("/") else f"{root}/{name}"
        if rel is None and hist.source == "final_message":
            text = hist.first_message[1] if hist.first_message else None
        elif path in hist.contents_at_first and hist.contents_at_first[path] is not None:
            text = hist.contents_at_first[path]
        elif path not in hist.changed_after_first:
            text = _retained(inp, name)  # unchanged since the first answer: the final file is the one it left
        else:
            text = None
        if text is None and rel and inp.artifacts_dir is not None and (Path(inp.artifacts_dir) / rel).is_dir() and any(
                c["kind"] == "written" and c.get("file") == rel for c in checks):
            unknown.append(f"{name} is a folder (a 'written' check): what it held at the first answer is not in "
                           "the trace")
        elif text is None and path in hist.changed_after_first:
            how = next((w.how for w in [hist.first, *hist.answer_writes] if w is not None and w.path == path), "a write")
            unknown.append(f"{name}'s text at the first answer is not in the trace (written by {how})")
        texts[rel] = text
    if unknown:
        return {"first_attempt_checks": [], "first_attempt_reward": None, "first_attempt_unknown": "; ".join(unknown)}
    results = []
    for check in checks:
        passed, detail = evaluate_check(check, texts.get(check.get("file")))
        results.append({"check": check, "passed": passed, "detail": detail})
    return {"first_attempt_checks": results, "first_attempt_unknown": None,
            "first_attempt_reward": 1.0 if all(r["passed"] for r in results) else 0.0}


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
    ev += _answer_evidence(section)
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


def _answer_evidence(section: dict[str, Any]) -> list[Evidence]:
    """The first answer, what changed after it, and the first answer's own checks, as evidence."""
    first = section.get("first_answer") or {}
    ev = [Evidence(check="self_correction.first_answer", passed=None, step_id=first.get("step_id"),
                   detail=(f"first answer at {first['where']}: {first['how']}"
                           + ("" if first.get("content_known") else " (its text is not in the trace)"))
                   if first.get("where") else f"first answer: {first.get('how', 'none')}")]
    ev += [Evidence(check="self_correction.later_change", passed=None, step_id=c["step_id"],
                    detail=f"{c['path']} changed at {c['where']} after the first answer ({c['how']})")
           for c in section.get("later_changes", [])[:20]]
    if section.get("patched_before_first_answer"):
        ev.append(Evidence(check="self_correction.first_attempt", passed=False,
                           detail="the first answer came after the agent changed the target skill"))
    elif section.get("self_corrected"):
        reward = section.get("first_attempt_reward")
        failed = [r["detail"] for r in section.get("first_attempt_checks", []) if not r["passed"]]
        ev.append(Evidence(
            check="self_correction.first_attempt", passed=None if reward is None else reward >= 1.0,
            detail=(f"first answer not graded: {section.get('first_attempt_unknown')}" if reward is None else
                    "the first answer passes every check" if not failed else
                    f"the first answer fails: {'; '.join(failed)}")))
    return ev


def first_attempt_pass(final_pass: bool | None, self_correction: MetricResult, *, pass_threshold: float,
                       author_decides: bool = False) -> bool | None:
    """A trial's pass on its first answer (AEVAL), from the ``self_correction`` section.

    - None when the final outcome is unknown (unscored stays unscored);
    - False when the first answer came after the agent patched the target skill;
    - the final pass when nothing changed after the first answer;
    - otherwise the case's checks on the first answer (reward >= ``pass_threshold``),
      None when they cannot be applied (its text is not in the trace, the case has no
      check of its own, or ``author_decides``: the author's graders saw only the end).
    A section written before first answers were tracked falls back to the patch rule.
    """
    if final_pass is None:
        return None
    section = SelfCorrection.of(self_correction)
    if section is None:
        return final_pass
    if section.first_answer is None:  # an older section: only skill patches were tracked
        return final_pass and not section.patched
    if section.patched_before_first_answer:
        return False
    if not section.self_corrected:
        return final_pass
    if author_decides or section.first_attempt_reward is None:
        return None
    return section.first_attempt_reward >= pass_threshold
