"""Entry point for the judged metrics: accuracy, goal_accuracy, behavior_check (the registry's judged kind).

``grade_judged`` runs every judged metric of the registry (``aces_bench/core/metrics.py``)
concurrently with one judge; the judge's own
semaphore bounds how many calls are in flight. Every result carries the judge's
label in ``grader`` and the prompt version in ``grader_version``. A panel
(``judge.models=[...]``, ``judges.factory.JudgePanel``) grades with every member and
``aggregate_panel`` makes each metric's score the stated aggregate (mean or median) of
the members that scored it, each member's result kept in ``details["per_judge"]``.

A judge that sends prompts off the host (``kind == "llm"``) only ever receives them
redacted (``RedactingJudge``): the judge never sees a raw secret from a trajectory,
an answer or an artifact. The offline heuristic judge reads them unmasked.
"""

from __future__ import annotations

import asyncio
import statistics
from collections.abc import Mapping

from aces_bench.core.metrics import metrics
from aces_bench.graders.base import GraderContext, GradingInput
from aces_bench.graders.redact import redact
from aces_bench.judges.base import Judge, JudgeOutcome, T
from aces_bench.records.results import PER_JUDGE, MetricResult


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


def aggregate_panel(per_judge: dict[str, dict[str, MetricResult]], how: str) -> dict[str, MetricResult]:
    """One result per metric from each panel member's: the ``how`` (mean, median) of the scores given.

    Members that left a metric unscored are left out of its score and named; a metric no
    member scored is unscored, with every member's reason. Sub-scores are aggregated the
    same way, key by key. Evidence keeps each member's, prefixed with its label.
    """
    labels = list(per_judge)
    names = list(dict.fromkeys(n for r in per_judge.values() for n in r))
    out: dict[str, MetricResult] = {}
    for name in names:
        given = {lab: per_judge[lab][name] for lab in labels if name in per_judge[lab]}
        scored = {lab: r.score for lab, r in given.items() if r.score is not None}
        keys = list(dict.fromkeys(k for r in given.values() for k in r.sub_scores))
        subs = {k: _agg([r.sub_scores[k] for r in given.values() if r.sub_scores.get(k) is not None], how)
                for k in keys}
        details = {PER_JUDGE: {lab: {"score": r.score, "unscored_reason": r.unscored_reason, "grader": r.grader,
                                     "sub_scores": dict(r.sub_scores)} for lab, r in given.items()},
                   "aggregate": how}
        missing = [lab for lab in given if lab not in scored]
        evidence = [e.model_copy(update={"detail": f"[{lab}] {e.detail}"}) for lab, r in given.items()
                    for e in r.evidence]
        first = next(iter(given.values()))
        out[name] = MetricResult(
            metric=name, score=_agg(list(scored.values()), how), sub_scores=subs, evidence=evidence,
            grader=f"{how} of {len(scored)} of {len(given)} judges", grader_version=first.grader_version,
            details=details,
            unscored_reason=None if scored else "no judge of the panel scored it: " + "; ".join(
                f"{lab}: {given[lab].unscored_reason}" for lab in missing),
        )
        if scored and missing:
            out[name].details["unscored_by"] = missing
    return out


def _agg(values: list[float], how: str) -> float | None:
    if not values:
        return None
    if how == "median":
        return float(statistics.median(values))
    return round(sum(values) / len(values), 6)


async def grade_panel(inp: GradingInput, panel, *, earlier: Mapping[str, MetricResult] | None = None
                      ) -> dict[str, MetricResult]:
    """Every judged metric graded by each member of ``panel`` (a ``JudgePanel``), then aggregated."""
    results = await asyncio.gather(*(grade_judged(inp, j, earlier=earlier) for j in panel.members))
    return aggregate_panel(dict(zip(panel.labels, results, strict=True)), panel.aggregate)


async def grade_judged(
    inp: GradingInput, judge: Judge, *, earlier: Mapping[str, MetricResult] | None = None
) -> dict[str, MetricResult]:
    """Every judged metric for one trial, keyed by metric name; never raises for
    agent behaviour or judge failure (those are unscored results with a reason).
    Prompts to a non-heuristic judge are redacted first. ``earlier``: the trial's
    deterministic results, for a judged grader that reads them. A panel grades with every member."""
    if getattr(judge, "members", None):
        return await grade_panel(inp, judge, earlier=earlier)
    ctx = GraderContext(judge=guarded(judge), earlier=dict(earlier or {}))
    judged = metrics("judged")
    results = await asyncio.gather(*(m.load_grader()(inp, ctx) for m in judged))
    return {m.name: r for m, r in zip(judged, results, strict=True)}
