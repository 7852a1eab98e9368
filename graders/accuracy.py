"""accuracy: four yes/no questions to a judge; score = yes / questions answered.

Questions (``judges.prompts.ACCURACY_QUESTIONS``): action correct, facts consistent with
ground truth, task addressed, actionable. There is no "right skill" question: whether
the skill was found and used is process (``skill_execution``, from the trace), and an
accuracy that counted it would credit the with-skill arm for the skill's presence.

Abstention rule (decided here, documented in the result): a question the judge leaves
undecided (``answer=None``; the heuristic judge does this by design) is excluded from
the denominator and shown as ``None`` in ``sub_scores``; the evidence says how many of
the four were answered. Both arms of a pair are judged by the same judge on the same
case, so the set of decidable questions is driven by the case, and the paired lift
stays like-for-like. No answered question -> unscored; fewer than half of them
answered (``MIN_ANSWERED``) -> unscored too, saying so: a score from one of four
questions is not the metric. A judge failure -> unscored with the judge's error; it
is never scored 0.
"""

from __future__ import annotations

from aces_bench.graders.base import GraderContext, GradingInput, require_judge
from aces_bench.graders.judge_context import (
    grader_version,
    precondition,
    trial_sections,
    unscored,
)
from aces_bench.judges.base import Judge, JudgeOutcome
from aces_bench.judges.prompts import ACCURACY, ACCURACY_QUESTIONS, AccuracyReply
from aces_bench.records.results import Evidence, MetricResult

METRIC = "accuracy"
MIN_ANSWERED = 0.5
"""A judged metric needs at least this share of its questions answered to be scored."""


def accuracy_user(inp: GradingInput) -> str:
    """The user message: the shared trial sections (agent output fenced as untrusted)."""
    return trial_sections(inp)


def score_accuracy(outcome: JudgeOutcome[AccuracyReply], *, min_answered: float = MIN_ANSWERED) -> MetricResult:
    """Pure: the metric from one judge outcome (see the module docstring for the rules)."""
    version = grader_version(ACCURACY.version)
    if outcome.value is None:
        return unscored(
            METRIC,
            f"judge {outcome.judge} gave no usable reply: {outcome.error}",
            outcome.judge,
            version,
        )
    replies = {key: getattr(outcome.value, key) for key in ACCURACY_QUESTIONS}
    decided = {k: r for k, r in replies.items() if r.answer is not None}
    sub_scores = {
        k: (None if r.answer is None else float(r.answer == "yes"))
        for k, r in replies.items()
    }
    evidence = [
        Evidence(
            check=k,
            passed=None if r.answer is None else r.answer == "yes",
            detail=r.reason,
        )
        for k, r in replies.items()
    ]
    undecided = [k for k, r in replies.items() if r.answer is None]
    evidence.append(
        Evidence(
            check="coverage",
            passed=None,
            detail=f"{len(decided)} of {len(replies)} questions answered by {outcome.judge}"
            + (f"; undecided: {', '.join(undecided)}" if undecided else "")
            + ("; reply from cache" if outcome.cached else ""),
        )
    )
    if not decided or len(decided) < min_answered * len(replies):
        return MetricResult(
            metric=METRIC,
            score=None,
            unscored_reason=f"judge {outcome.judge} answered none of the {len(replies)} questions" if not decided
            else f"judge {outcome.judge} answered {len(decided)} of {len(replies)} questions, fewer than "
                 f"{min_answered:.0%}: too few to score",
            sub_scores=sub_scores,
            evidence=evidence,
            grader=outcome.judge,
            grader_version=version,
        )
    yes = sum(1 for r in decided.values() if r.answer == "yes")
    return MetricResult(
        metric=METRIC,
        score=yes / len(decided),
        sub_scores=sub_scores,
        evidence=evidence,
        grader=outcome.judge,
        grader_version=version,
    )


async def grade_accuracy(inp: GradingInput, judge: Judge) -> MetricResult:
    """accuracy for one trial; unscored (never 0) when it cannot be judged."""
    blocked = precondition(inp, METRIC, judge.label, grader_version(ACCURACY.version))
    if blocked is not None:
        return blocked
    outcome = await judge.ask(
        prompt_id=ACCURACY.id,
        prompt_version=ACCURACY.version,
        system=ACCURACY.system,
        user=accuracy_user(inp),
        schema=AccuracyReply,
    )
    return score_accuracy(outcome)


async def grade(inp: GradingInput, ctx: GraderContext) -> MetricResult:
    """The registered grader (``aces_bench/core/metrics.py``): ``grade_accuracy`` with the context's judge."""
    return await grade_accuracy(inp, require_judge(ctx, METRIC))
