"""The offline default judge: deterministic rules over the evidence in the prompt.

It answers only what the evidence decides, and abstains otherwise:
- it reads the ``facts`` and ``final_answer`` sections the graders put in every prompt
  (see ``aces_bench.graders.judge_context``), never free text it would have to interpret;
- a question it cannot decide gets ``answer=None`` (a per-question abstention), and a
  prompt it has no rule for returns ``value=None`` with an error starting
  ``heuristic judge abstains:``.
Its label is ``heuristic`` wherever a score is attributed. It makes no calls and keeps
no cache: the same prompt always gives the same reply.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Literal, TypeVar

from pydantic import BaseModel, ValidationError

from aces_bench.emitters.verifier.check_answer import evaluate_check, numbers_in
from aces_bench.graders.judge_context import Facts
from aces_bench.graders.prompts import (
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
from aces_bench.judges.base import JudgeOutcome

T = TypeVar("T", bound=BaseModel)
ABSTAIN = "heuristic judge abstains"
HEURISTIC_LABEL = "heuristic"
_SCRIPT_MENTION = re.compile(r"[\w./-]+\.(?:py|sh|js|ts|rb|pl)\b")
_SKILL_MENTION = re.compile(r"\b(SKILL\.md|skill)\b", re.IGNORECASE)
_NEGATED = re.compile(
    r"\b(not|never|no|without|avoid|avoids|doesn't|does not)\b", re.IGNORECASE
)


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


def right_skill(f: Facts) -> YesNo:
    used = sorted({a.skill for a in f.activations})
    if f.expected_skill is None:
        if used:
            return _no(
                f"negative control, yet skill(s) {', '.join(used)} activated (step {f.activations[0].step})"
            )
        return _yes(
            f"negative control and no skill activated in {f.tool_calls} tool call(s)"
        )
    right = {f.expected_skill, *f.acceptable_skills}
    hits = [a for a in f.activations if a.skill in right]
    if hits:
        return _yes(f"{hits[0].skill} activated at step {hits[0].step} ({hits[0].how})")
    if used:
        return _no(f"expected {f.expected_skill}, but only {', '.join(used)} activated")
    return _no(
        f"no activation of {f.expected_skill} in {f.tool_calls} tool call(s) "
        "(recognised: SKILL.md reads, activate_skill, Skill)"
    )


def action_correct(f: Facts) -> YesNo:
    if not f.expected_script:
        return _abstain(
            "the case names no expected script, so the right action is a matter of judgment"
        )
    ok = [r for r in f.script_runs if r.ok]
    if ok:
        return _yes(f"{f.expected_script} ran at step {ok[0].step} with {ok[0].detail}")
    if f.script_runs:
        last = f.script_runs[-1]
        return _no(
            f"{f.expected_script} ran {len(f.script_runs)} time(s), never cleanly (step {last.step}: {last.detail})"
        )
    return _no(f"{f.expected_script} was never run")


def facts_consistent(f: Facts, answer: str | None) -> YesNo:
    if answer is None:
        return _no("no final answer to compare with the ground truth")
    checks = [c for c in f.checks if c.file is None]
    if checks:
        results = [evaluate_check(c.model_dump(), answer) for c in checks]
        failed = [d for ok, d in results if not ok]
        if failed:
            return _no(
                f"{len(failed)} of {len(checks)} answer check(s) failed: {'; '.join(failed)}"
            )
        return _yes(f"all {len(checks)} answer check(s) passed")
    expected = numbers_in(f.expected_output or "")
    if expected:
        found = numbers_in(answer)
        missing = [
            n
            for n in expected
            if not any(abs(n - m) <= 1e-9 * max(1.0, abs(n)) for m in found)
        ]
        if not missing:
            return _yes(
                f"every ground-truth number ({', '.join(f'{n:g}' for n in expected)}) is in the answer"
            )
        # A missing number may be a rounding or unit choice: only a reader can tell.
        return _abstain(
            f"ground-truth number(s) {', '.join(f'{n:g}' for n in missing)} not found verbatim"
        )
    return _abstain("no answer checks and no numbers in the ground truth to compare")


def task_addressed(f: Facts, answer: str | None, consistent: YesNo) -> YesNo:
    if answer is None:
        return _no("the agent produced no final answer")
    if consistent.answer == "yes":
        return _yes(
            f"the answer ({f.final_answer_source}) matches the ground truth: {consistent.reason}"
        )
    return _abstain("whether the answer addresses the task needs reading it")


def actionable(answer: str | None) -> YesNo:
    if answer is None:
        return _no("the agent produced no final answer")
    return _abstain("actionability needs reading the answer")


def behavior(f: Facts, text: str) -> YesNo:
    """Decides behaviors about running a named script or using the skill; abstains on the rest."""
    if _NEGATED.search(text):
        return _abstain(
            f"negative behaviors ({text!r}) need the security grader or a reader"
        )
    script = _SCRIPT_MENTION.search(text)
    if (
        script
        and f.expected_script
        and script.group(0).endswith(f.expected_script.rsplit("/", 1)[-1])
    ):
        ok = [r for r in f.script_runs if r.ok]
        if ok:
            return _yes(f"{f.expected_script} ran cleanly at step {ok[0].step}")
        return _no(
            f"{f.expected_script} {'never ran cleanly' if f.script_runs else 'was never run'}"
        )
    if _SKILL_MENTION.search(text) and not script and f.expected_skill:
        return right_skill(f)
    return _abstain(f"no offline rule decides {text!r}")


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
            right_skill=right_skill(f),
            action_correct=action_correct(f),
            facts_consistent=consistent,
            task_addressed=task_addressed(f, answer, consistent),
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
