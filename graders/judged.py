"""Entry point for the judged metrics: accuracy, goal_accuracy and behavior_check.

``grade_judged`` runs the three concurrently with one judge; the judge's own
semaphore bounds how many calls are in flight. Every result carries the judge's
label in ``grader`` and the prompt version in ``grader_version``.
"""

from __future__ import annotations

import asyncio

from aces_bench.graders.accuracy import grade_accuracy
from aces_bench.graders.base import GradingInput, MetricResult
from aces_bench.graders.behavior_check import grade_behavior_check
from aces_bench.graders.goal_accuracy import grade_goal_accuracy

from aces_bench.judges.base import Judge

JUDGED_METRICS = ("accuracy", "goal_accuracy", "behavior_check")


async def grade_judged(inp: GradingInput, judge: Judge) -> dict[str, MetricResult]:
    """The three judged metrics for one trial, keyed by metric name; never raises for
    agent behaviour or judge failure (those are unscored results with a reason)."""
    results = await asyncio.gather(
        grade_accuracy(inp, judge),
        grade_goal_accuracy(inp, judge),
        grade_behavior_check(inp, judge),
    )
    return {r.metric: r for r in results}
