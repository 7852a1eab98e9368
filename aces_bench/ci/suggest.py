"""LV1 and LV2 fix suggestions for a failing or negative-lift case.

LV1 says what failed, with the evidence step ids of the with-skill trajectory. LV2
proposes a concrete edit to SKILL.md as a unified diff. Offline, LV2 comes from
deterministic rules for the known failure classes:

- never activated (``activation`` failed on a case the skill is for): description and
  trigger wording;
- fires on should-not-use cases (a negative control it activated on): the description
  narrowed, saying when *not* to use the skill, and a "When not to use" section; never a
  wider trigger;
- wrong arguments (the expected script ran and every invocation failed): a usage example;
- skipped step (the script never ran, or ran before SKILL.md was read, or an expected
  behavior was missed): an ordered checklist.

Every suggestion says how it was produced ("offline rule: <class>"); a case in no known
class gets LV1 only, with the LV2 marked "none: no rule for this failure".
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

from pydantic import BaseModel

from aces_bench.errors import AcesError
from aces_bench.records import GradedTrial
from aces_bench.skills import SKILL_FILE, parse_frontmatter, read_text_file

RULE = "offline rule"


class Lv1Item(BaseModel):
    metric: str
    check: str
    detail: str
    step_id: int | None


class Suggestion(BaseModel):
    skill: str
    case_id: str
    why: str  # "failed" or "negative lift"
    lv1: list[Lv1Item]
    failure_class: str | None
    lv2_diff: str | None
    lv2_produced_by: str
    lv2_note: str = ""


def lv1(trial: GradedTrial) -> list[Lv1Item]:
    """Every check that failed in the trial's grades, in metric order, with its step id."""
    out = []
    for name, result in trial.metrics.items():
        for e in result.evidence:
            if e.passed is False:
                out.append(Lv1Item(metric=name, check=e.check, detail=e.detail, step_id=e.step_id))
        if result.score is None and result.unscored_reason:
            out.append(Lv1Item(metric=name, check="unscored", detail=result.unscored_reason, step_id=None))
    if trial.status != "ok":
        out.insert(0, Lv1Item(metric="trial", check=trial.status, detail=trial.failure_cause or "", step_id=None))
    return out


FIRES_ON_NEGATIVES = "fires on should-not-use cases"


def classify(items: list[Lv1Item], *, negative_control: bool = False) -> str | None:
    checks = {(i.metric, i.check): i for i in items}
    if negative_control:
        # On a should-not-use case a failed activation check means it *did* fire: widening
        # its trigger would make that worse.
        fired = checks.get(("skill_execution", "activation")) or checks.get(("skill_execution", "execution"))
        return FIRES_ON_NEGATIVES if fired is not None else None
    if ("skill_execution", "activation") in checks:
        return "never activated"
    execution = checks.get(("skill_execution", "execution"))
    if execution is not None and "every invocation failed" in execution.detail:
        return "wrong arguments"
    if execution is not None or ("skill_execution", "workflow_order") in checks or any(
            i.metric == "behavior_check" for i in items):
        return "skipped step"
    return None


def _diff(path: Path, before: str, after: str) -> str:
    name = path.name
    return "".join(difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True),
                                        fromfile=f"a/{name}", tofile=f"b/{name}"))


def _with_description(text: str, description: str, trigger: str) -> str:
    """SKILL.md with a trigger sentence appended to the frontmatter description."""
    addition = f" Use when {trigger}"
    pattern = re.compile(r"^(description:[ \t]*)(.*)$", re.MULTILINE)
    m = pattern.search(text)
    if m is None:
        return text
    value = m.group(2).strip()
    quote = value[:1] if value[:1] in "\"'" and value.endswith(value[:1]) else ""
    inner = value[1:-1] if quote else value
    new = f"{quote}{inner.rstrip('.')}.{addition}{quote}"
    return text[:m.start(2)] + new + text[m.end(2):]


def _narrowed(text: str, prompt: str) -> str:
    """SKILL.md with a "not for" sentence in the description and a "When not to use" section."""
    task = _trigger(prompt).rstrip(".")
    pattern = re.compile(r"^(description:[ \t]*)(.*)$", re.MULTILINE)
    m = pattern.search(text)
    if m is not None:
        value = m.group(2).strip()
        quote = value[:1] if value[:1] in "\"'" and value.endswith(value[:1]) else ""
        inner = value[1:-1] if quote else value
        new = f"{quote}{inner.rstrip('.')}. Do not use it for other tasks, such as: {task}.{quote}"
        text = text[:m.start(2)] + new + text[m.end(2):]
    return _append_section(text, "When not to use", f"- Requests like: {task}. Answer those without this skill.")


def _trigger(prompt: str) -> str:
    words = re.sub(r"\s+", " ", prompt).strip().rstrip(".?!")
    return (words[:1].lower() + words[1:] if words else "the task matches this skill") + "."


def _append_section(text: str, heading: str, body: str) -> str:
    return text.rstrip("\n") + f"\n\n## {heading}\n\n{body.rstrip()}\n"


def lv2(skill_dir: Path, case_id: str, failure: str | None) -> tuple[str | None, str]:
    """(diff, note) for one case by the offline rules; (None, why) when no rule applies."""
    if failure is None:
        return None, "none: no rule for this failure"
    path = skill_dir / SKILL_FILE
    text = read_text_file(path)  # capped, never blocks on a pipe planted in its place
    front, _ = parse_frontmatter(text, path)
    from aces_bench.cases import load_suite

    try:
        cases = {c.id: c for c in load_suite(skill_dir, skill_dir.name).evals}
    except AcesError:  # the suggestion still stands on the skill text alone
        cases = {}
    case = cases.get(case_id)
    script = getattr(case, "expected_script", None) if case is not None else None
    files = list(getattr(case, "files", []) or []) if case is not None else []
    if failure == FIRES_ON_NEGATIVES:
        prompt = getattr(case, "prompt", "") if case is not None else ""
        after = _narrowed(text, prompt)
        note = ("the skill fired on a case it should stay out of: narrow its description and say when not to use "
                "it (a wider trigger would make this worse)")
    elif failure == "never activated":
        prompt = getattr(case, "prompt", "") if case is not None else ""
        after = _with_description(text, str(front.get("description", "")), _trigger(prompt))
        note = "the agent never read SKILL.md: say in the description when to use the skill, in the task's words"
    elif failure == "wrong arguments":
        first = files[0] if files else None
        target = getattr(first, "dest", None) or (str(first) if first else "<input file>")
        example = f"```bash\npython3 {script or 'scripts/<script>.py'} {target}\n```\n"
        after = _append_section(text, "Usage example", "Run the script with the input file as its first "
                                "argument, exactly as here:\n\n" + example)
        note = "the script ran but every call failed: show one complete, correct invocation"
    else:
        steps = ["Read this SKILL.md to the end before running anything."]
        if script:
            steps.append(f"Run `{script}` on the task's input (see Usage).")
        steps.append("Write the result where the task asks for it and check it once.")
        after = _append_section(text, "Checklist", "\n".join(f"{i}. {s}" for i, s in enumerate(steps, start=1)))
        note = "a required step was skipped or came out of order: give the steps as an ordered checklist"
    if after == text:
        return None, "none: the rule found nothing to change in SKILL.md"
    return _diff(path, text, after), note


def suggest(trial: GradedTrial, skill_dir: Path, why: str) -> Suggestion:
    items = lv1(trial)
    failure = classify(items, negative_control=trial.negative_control)
    diff, note = lv2(skill_dir, trial.case_id, failure)
    return Suggestion(skill=trial.skill, case_id=trial.case_id, why=why, lv1=items, failure_class=failure,
                      lv2_diff=diff, lv2_produced_by=f"{RULE}: {failure}" if diff else "none", lv2_note=note)
