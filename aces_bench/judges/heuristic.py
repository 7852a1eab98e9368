"""The offline default judge: deterministic rules over the evidence in the prompt.

It answers only what the evidence decides, and abstains otherwise. It never turns
activation into accuracy: whether the right skill was read or its script run is
process, scored by ``skill_execution``; the accuracy prompt does not ask it, and the
question whether the action was right (the expected script, or equivalent work)
abstains here, so a with-skill arm cannot out-score its baseline by having read a skill.
Numbers in the answer are compared with the ground truth's within the precision the
ground truth is written to (a percent sign or a k/M/thousand/million suffix scales
the number), giving yes or no; a behaviour is decided from the trace only when its
meaning maps onto it (ran the expected script; never ran it; read the skill before
running it), else the judge abstains.
- it reads the ``facts`` and ``final_answer`` sections the graders put in every prompt
  (``aces_bench.judges.facts``, built by the graders), never free text it would have to interpret;
- a question it cannot decide gets ``answer=None`` (a per-question abstention), and a
  prompt it has no rule for returns ``value=None`` with an error starting
  ``heuristic judge abstains:``.
Its label is ``heuristic`` wherever a score is attributed. It makes no calls and keeps
no cache: the same prompt always gives the same reply.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from typing import Literal, TypeVar

from pydantic import BaseModel, ValidationError

from aces_bench.judges.base import JudgeOutcome
from aces_bench.judges.facts import Facts
from aces_bench.judges.prompts import (
    ACCURACY,
    BEHAVIOR,
    GOAL_COMPARE,
    GOAL_INFER,
    AccuracyReply,
    GoalOutcome,
    GoalVerdict,
    YesNo,
    read_sections,
)
from aces_bench.verifier.check_answer import MAX_CHARS, evaluate_check, hedged

T = TypeVar("T", bound=BaseModel)
ABSTAIN = "heuristic judge abstains"
HEURISTIC_LABEL = "heuristic"
_SCRIPT_MENTION = re.compile(r"[\w./-]+\.(?:py|sh|js|ts|rb|pl)\b")
_NEGATED = re.compile(
    r"\b(not|never|no|without|avoid|avoids|doesn't|does not)\b", re.IGNORECASE
)
_RUN_VERB = r"(?:run|runs|ran|running|execute|executes|executed|executing|invoke|invokes|invoked|call|calls|called|use|uses|used)"
_READ_SKILL = re.compile(r"\b(?:reads?|read|opens?|loads?|consults?)\s+(?:the\s+)?(?:[\w-]+\s+)?(?:SKILL\.md|skill)\b",
                         re.IGNORECASE)
# Words that qualify a behaviour beyond what the trace's facts decide (timing, conditions, arguments).
_QUALIFIED = re.compile(r"\b(only|after|when|if|unless|then|until|instead|with|and|or|first|last|twice|again)\b",
                        re.IGNORECASE)
_NUMBER_UNIT = re.compile(
    r"(?<![\w.])([-+]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?)\s*"
    r"(%|percent\b|k\b|thousand\b|m\b|mn\b|million\b|bn\b|b\b|billion\b)?",
    re.IGNORECASE,
)
_SCALE = {"%": 0.01, "percent": 0.01, "k": 1e3, "thousand": 1e3, "m": 1e6, "mn": 1e6, "million": 1e6,
          "b": 1e9, "bn": 1e9, "billion": 1e9}


def is_abstention(outcome: JudgeOutcome) -> bool:
    """True when a whole prompt was declined by the heuristic judge (not a failure)."""
    return outcome.value is None and (outcome.error or "").startswith(ABSTAIN)


def _yes(reason: str) -> YesNo:
    return YesNo(answer="yes", reason=reason)


def _no(reason: str) -> YesNo:
    return YesNo(answer="no", reason=reason)


def _abstain(reason: str) -> YesNo:
    return YesNo(answer=None, reason=f"{ABSTAIN}: {reason}")


# --- the rules, one per question --------------------------------------------------------


PROCESS = "a process question (skill read, script run): scored by skill_execution, never counted as accuracy"


def quantities(text: str) -> list[tuple[float, int]]:
    """(value with its stated unit applied, its precision in decimals of that value) per number in ``text``."""
    out = []
    for m in _NUMBER_UNIT.finditer(text or ""):
        raw = m.group(1).replace(",", "")
        try:
            value = float(raw)
        except ValueError:
            continue
        mantissa = raw.lower().split("e")[0]
        decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
        scale = _SCALE.get((m.group(2) or "").lower(), 1.0)
        out.append((value * scale, decimals - round(math.log10(scale))))
    return out


def _matches(expected: tuple[float, int], found: tuple[float, int]) -> bool:
    """Equal within half a unit of the ground truth's last written digit, or the answer rounds it.

    An answer written to fewer decimals than the ground truth matches when it is the
    ground truth rounded to those decimals and within 0.5% of it (34648 for 34648.04,
    not 0.7 for 0.68885). Units stated on either side are applied first.
    """
    e, e_dec = expected
    a, a_dec = found
    if abs(a - e) <= max(0.5 * 10.0 ** (-e_dec), 1e-9 * max(1.0, abs(e))):
        return True
    if a_dec < e_dec:
        rounded = round(e, a_dec)
        return abs(rounded - a) <= 1e-9 * max(1.0, abs(a)) and abs(a - e) <= 0.005 * max(abs(e), 1e-12)
    return False


def facts_consistent(f: Facts, answer: str | None) -> YesNo:
    if answer is None:
        return _no("no final answer to compare with the ground truth")
    checks = [c for c in f.checks if c.file is None]
    if checks:
        results = [evaluate_check(c.as_checker_dict(), answer) for c in checks]
        failed = [d for ok, d in results if not ok]
        if failed:
            return _no(
                f"{len(failed)} of {len(checks)} answer check(s) failed: {'; '.join(failed)}"
            )
        return _yes(f"all {len(checks)} answer check(s) passed")
    expected = quantities(f.expected_output or "")
    if expected:
        if len(answer) > MAX_CHARS:
            return _abstain(f"the answer is {len(answer)} characters, over the {MAX_CHARS} an answer check reads: "
                            "a flood is not judged")
        found = quantities(answer)
        missing = [e for e in expected if not any(_matches(e, a) for a in found)]
        for e in expected:
            if e in missing:
                continue
            # The same rule as the strict number check: values offered as alternatives to the
            # ground truth's (or a flood of numbers) are candidates, not a stated result.
            why = hedged(answer, e[0], 0.5 * 10.0 ** (-e[1]))
            if why:
                return _abstain(f"ground truth {e[0]:g}: {why}")
        if not missing:
            return _yes(
                f"every ground-truth number ({', '.join(f'{e[0]:g}' for e in expected)}) is in the answer"
            )
        shown = ", ".join(f"{a[0]:g}" for a in found[:6]) or "none"
        return _no(
            f"ground-truth number(s) {', '.join(f'{e[0]:g}' for e in missing)} not in the answer "
            f"(within the precision written; the answer's numbers: {shown})"
        )
    return _abstain("no answer checks and no numbers in the ground truth to compare")


def task_addressed(answer: str | None) -> YesNo:
    # Not derived from facts_consistent: a right answer would then count twice and a wrong
    # one once, so a pair's arms would be scored over different questions.
    if answer is None:
        return _no("the agent produced no final answer")
    return _abstain("whether the answer addresses the task needs reading it")


def actionable(answer: str | None) -> YesNo:
    if answer is None:
        return _no("the agent produced no final answer")
    return _abstain("actionability needs reading the answer")


def _names_expected_script(f: Facts, text: str) -> bool:
    script = _SCRIPT_MENTION.search(text)
    return bool(script and f.expected_script and script.group(0).endswith(f.expected_script.rsplit("/", 1)[-1]))


def behavior(f: Facts, text: str) -> YesNo:
    """Decides a behavior only where its meaning maps onto the trace's facts; abstains on the rest.

    Decided: "runs <expected script>", "never runs <expected script>", "reads the
    skill before running <expected script>". Anything qualified further (timing,
    conditions, arguments, several clauses) or about something else abstains: the
    word "skill" alone never decides a behaviour by activation.
    """
    if not _names_expected_script(f, text):
        return _abstain(f"no offline rule decides {text!r}")
    before = re.search(r"\bbefore\b", text, re.IGNORECASE)
    if before and _READ_SKILL.search(text[: before.start()]) and re.search(_RUN_VERB, text[before.end():], re.I):
        if _NEGATED.search(text) or _QUALIFIED.search(text.replace(before.group(0), " ")):
            return _abstain(f"{text!r} qualifies the order further than the trace's facts decide")
        right = {f.expected_skill, *f.acceptable_skills}
        reads = [a.step for a in f.activations if a.skill in right]
        runs = [r.step for r in f.script_runs]
        if not runs:
            return _no(f"{f.expected_script} was never run")
        if reads and min(reads) < min(runs):
            return _yes(f"the skill was read at step {min(reads)}, before {f.expected_script} ran at step {min(runs)}")
        return _no(f"{f.expected_script} ran at step {min(runs)} "
                   + (f"before the skill was read (step {min(reads)})" if reads else "and the skill was never read"))
    if _QUALIFIED.search(text) or not re.search(_RUN_VERB, text, re.IGNORECASE):
        return _abstain(f"{text!r} asks more than whether {f.expected_script} ran")
    if _NEGATED.search(text):
        if f.script_runs:
            return _no(f"{f.expected_script} ran at step {f.script_runs[0].step}")
        return _yes(f"{f.expected_script} was never run")
    ok = [r for r in f.script_runs if r.ok]
    if ok:
        return _yes(f"{f.expected_script} ran cleanly at step {ok[0].step}")
    return _no(f"{f.expected_script} {'never ran cleanly' if f.script_runs else 'was never run'}")


# --- the judge ----------------------------------------------------------------------------


class HeuristicJudge:
    """The ``Judge`` protocol with deterministic rules; see the module docstring."""

    label = HEURISTIC_LABEL
    kind: Literal["llm", "heuristic"] = "heuristic"

    def __init__(self) -> None:
        self._rules: dict[str, Callable[[dict[str, str], Facts], BaseModel]] = {
            ACCURACY.id: self._accuracy,
            GOAL_INFER.id: self._goal_infer,
            GOAL_COMPARE.id: self._goal_compare,
            BEHAVIOR.id: lambda sections, f: behavior(f, sections.get("behavior", "")),
        }

    async def ask(
        self,
        *,
        prompt_id: str,
        prompt_version: str,
        system: str,
        user: str,
        schema: type[T],
    ) -> JudgeOutcome[T]:
        """A reply decided by rule, or an abstention naming why; never a guess."""
        rule = self._rules.get(prompt_id)
        if rule is None:
            return self._decline(schema, f"no offline rule for prompt {prompt_id!r}")
        sections = read_sections(user)
        try:
            facts = Facts.model_validate_json(sections["facts"])
        except (KeyError, ValidationError) as exc:
            return self._decline(
                schema,
                f"prompt {prompt_id!r} carries no readable facts section ({type(exc).__name__})",
            )
        reply = rule(sections, facts)
        if not isinstance(reply, schema):
            return self._decline(
                schema,
                f"prompt {prompt_id!r} asks for {schema.__name__}, its rule gives {type(reply).__name__}",
            )
        return JudgeOutcome[schema](value=reply, judge=self.label)

    def _decline(self, schema: type[T], why: str) -> JudgeOutcome[T]:
        return JudgeOutcome[schema](
            value=None, error=f"{ABSTAIN}: {why}", judge=self.label
        )

    @staticmethod
    def _answer(sections: dict[str, str]) -> str | None:
        return sections.get("final_answer") if "final_answer" in sections else None

    def _accuracy(self, sections: dict[str, str], f: Facts) -> AccuracyReply:
        answer = self._answer(sections)
        consistent = facts_consistent(f, answer)
        return AccuracyReply(
            action_correct=_abstain(PROCESS),
            facts_consistent=consistent,
            task_addressed=task_addressed(answer),
            actionable=actionable(answer),
        )

    def _goal_infer(self, sections: dict[str, str], f: Facts) -> GoalOutcome:
        # Restating the evidence is not a guess: the end state is the final answer as given.
        answer = self._answer(sections)
        end_state = (
            f"final answer ({f.final_answer_source}): {answer}"
            if answer
            else "no final answer was produced"
        )
        return GoalOutcome(
            user_goal=sections.get("task", "").strip(), end_state=end_state
        )

    def _goal_compare(self, sections: dict[str, str], f: Facts) -> GoalVerdict:
        arrived = sections.get("arrived_outcome", "")
        verdict = facts_consistent(f, arrived if arrived.strip() else None)
        return GoalVerdict(achieved=verdict.answer, reason=verdict.reason)
