"""LV1 and LV2 fix suggestions for a failing or negative-lift case.

LV1 says what failed, with the evidence step ids of the with-skill trajectory. LV2
proposes a concrete edit to SKILL.md as a unified diff. Offline, LV2 comes from
deterministic rules for the known failure classes:

- never activated (``activation`` failed on a case the skill is for): description and
  trigger wording;
- fires on should-not-use cases (a negative control it activated on): the description
  narrowed (broad trigger claims dropped, its purpose in its own cases' words, never a
  word of the should-not-use request) and a "When not to use" section naming that
  request; never a wider trigger;
- wrong arguments (the expected script ran and every invocation failed): a usage example;
- wrong result (the expected script ran cleanly and the answer is still wrong: an outcome
  check failed or the verifier's reward is below 1): no SKILL.md edit, since the
  instructions were followed; it names the script, the case and what the check saw,
  and asks for the computation to be fixed;
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

from aces_bench.core.errors import AcesError
from aces_bench.inputs.skills import SKILL_FILE, parse_frontmatter, read_text_file
from aces_bench.records.trials import GradedTrial

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
WRONG_RESULT = "wrong result"


def classify(items: list[Lv1Item], *, negative_control: bool = False, script_ran: bool | None = None,
             reward: float | None = None) -> str | None:
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
    if script_ran and (_outcome_failed(items) or (reward is not None and reward < 1)):
        return WRONG_RESULT  # the script was found and ran as documented: the number it computed is wrong
    if execution is not None or ("skill_execution", "workflow_order") in checks or any(
            i.metric == "behavior_check" for i in items):
        return "skipped step"
    return None


def _outcome_failed(items: list[Lv1Item]) -> bool:
    from aces_bench.core.metrics import outcome_metrics

    outcome = set(outcome_metrics())
    return any(i.metric in outcome and i.check != "unscored" for i in items)


def wrong_result_note(skill_dir: Path, case_id: str, items: list[Lv1Item]) -> str:
    """Where to look when the skill's script ran and its answer is wrong: the script and the case."""
    from aces_bench.cases import load_suite

    try:
        case = next((c for c in load_suite(skill_dir, skill_dir.name).evals if c.id == case_id), None)
    except AcesError:
        case = None
    script = getattr(case, "expected_script", None) or "the skill's script"
    seen = next((f"{i.metric} {i.check}: {i.detail}" for i in items if i.check != "unscored"), "")
    expected = getattr(case, "expected_output", None)
    return (f"{script} ran as documented and the answer to case {case_id} is wrong"
            + (f" ({seen})" if seen else "") + f": fix the computation in {script} and check it on case {case_id}'s "
            "inputs" + (f" (expected: {str(expected)[:200]})" if expected else "")
            + "; SKILL.md was followed, so no edit to it is proposed")


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


# A description sentence that claims requests ("Use for ...", "Use it when ...") in broad
# terms: what makes a skill fire where it should stay out.
_TRIGGER_SENTENCE = re.compile(r"^\s*(?:use|useful|invoke|trigger|apply|call)\b", re.IGNORECASE)
_BROAD = re.compile(r"\b(?:any|anything|every|everything|all|whatever|general|generic|misc\w*)\b", re.IGNORECASE)
_WORDS = re.compile(r"[A-Za-z][A-Za-z0-9_-]*")
MAX_TOPIC_WORDS = 6


def _words(text: str) -> set[str]:
    return {w.casefold() for w in _WORDS.findall(text)}


def _narrowed(text: str, prompt: str, own_prompts: list[str]) -> str:
    """SKILL.md narrowed after the skill fired on a should-not-use case (``prompt``).

    The description loses its broad trigger claims ("Use for any question about any file
    ...") and says what the skill is for in the words of its own cases that the
    should-not-use request does not share; that request goes into a "When not to use"
    section of the body, never into the description. The description never gains a
    word of the should-not-use request it did not have: a router that matches words (the
    reference agent's BM25) would fire on it more, not less.
    """
    from aces_bench.agents.routing import STOPWORDS

    task = _trigger(prompt).rstrip(".")
    pattern = re.compile(r"^(description:[ \t]*)(.*)$", re.MULTILINE)
    m = pattern.search(text)
    if m is not None:
        value = m.group(2).strip()
        quote = value[:1] if value[:1] in "\"'" and value.endswith(value[:1]) else ""
        inner = value[1:-1] if quote else value
        sentences = [x.strip() for x in re.split(r"(?<=[.!?])\s+", inner) if x.strip()]
        kept = [x for x in sentences if not (_TRIGGER_SENTENCE.match(x) and _BROAD.search(x))]
        unwanted = _words(prompt) - _words(inner)
        topic: list[str] = []
        for w in _WORDS.findall(" ".join(own_prompts)):
            key = w.casefold()
            if key in _words(prompt) or key in STOPWORDS or key in {t.casefold() for t in topic}:
                continue
            topic.append(w)
        if topic:
            kept.append(f"Only for requests about {', '.join(topic[:MAX_TOPIC_WORDS])}.")
        described = " ".join(x if x.endswith((".", "!", "?")) else x + "." for x in kept)
        if described and not (_words(described) & unwanted):
            text = text[:m.start(2)] + f"{quote}{described}{quote}" + text[m.end(2):]
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
        own = [c.prompt for c in cases.values() if not c.is_negative_control]
        after = _narrowed(text, prompt, own)
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
    failure = classify(items, negative_control=trial.negative_control, script_ran=trial.script_ran,
                       reward=trial.reward)
    if failure == WRONG_RESULT:
        return Suggestion(skill=trial.skill, case_id=trial.case_id, why=why, lv1=items, failure_class=failure,
                          lv2_diff=None, lv2_produced_by=f"{RULE}: {failure}",
                          lv2_note=wrong_result_note(skill_dir, trial.case_id, items))
    diff, note = lv2(skill_dir, trial.case_id, failure)
    return Suggestion(skill=trial.skill, case_id=trial.case_id, why=why, lv1=items, failure_class=failure,
                      lv2_diff=diff, lv2_produced_by=f"{RULE}: {failure}" if diff else "none", lv2_note=note)
