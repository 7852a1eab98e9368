"""Entry point for the judged metrics: accuracy, goal_accuracy, behavior_check (the registry's judged kind).

``grade_judged`` runs every judged metric of the registry (``aces_bench/metrics.py``)
concurrently with one judge; the judge's own
semaphore bounds how many calls are in flight. Every result carries the judge's
label in ``grader`` and the prompt version in ``grader_version``.

A judge that sends prompts off the host (``kind == "llm"``) only ever receives them
redacted (``RedactingJudge``): the judge never sees a raw secret from a trajectory,
an answer or an artifact. The offline heuristic judge reads them unmasked.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping

from aces_bench.graders.base import GraderContext, GradingInput, MetricResult
from aces_bench.graders.redact import redact
from aces_bench.judges.base import Judge, JudgeOutcome, T
from aces_bench.metrics import metrics


class RedactingJudge:
    """A judge whose prompts are redacted before they reach ``inner``; same label and kind."""

    def __init__(self, inner: Judge):
        self.inner = inner
        self.label = inner.label
        self.kind = inner.kind

    async def ask(
        self, *, prompt_id: str, prompt_version: str, system: str, user: str, schema: type[T]
    ) -> JudgeOutcome[T]:
        return await self.inner.ask(prompt_id=prompt_id, prompt_version=prompt_version, system=redact(system),
                                    user=redact(user), schema=schema)


def guarded(judge: Judge) -> Judge:
    """``judge`` itself when it stays on the host (heuristic), else wrapped in ``RedactingJudge``."""
    if judge.kind == "heuristic" or isinstance(judge, RedactingJudge):
        return judge
    return RedactingJudge(judge)


async def grade_judged(
    inp: GradingInput, judge: Judge, *, earlier: Mapping[str, MetricResult] | None = None
) -> dict[str, MetricResult]:
    """Every judged metric for one trial, keyed by metric name; never raises for
    agent behaviour or judge failure (those are unscored results with a reason).
    Prompts to a non-heuristic judge are redacted first. ``earlier``: the trial's
    deterministic results, for a judged grader that reads them."""
    ctx = GraderContext(judge=guarded(judge), earlier=dict(earlier or {}))
    judged = metrics("judged")
    results = await asyncio.gather(*(m.load_grader()(inp, ctx) for m in judged))
    return {m.name: r for m, r in zip(judged, results, strict=True)}
