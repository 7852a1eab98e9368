"""The task outcome of one trial: the number the headline, the per-skill table and the gate use.

Per trial, in this order:

1. the case has verifier checks (its own assertions, or a native Harbor task's
   ``tests/``): the verifier's reward;
2. else the judged outcome: the mean of ``accuracy`` and ``goal_accuracy`` over those
   scored;
3. else unscored (None), with the reason.

A trial that did not run to completion (timeout, agent or verifier error) has no
outcome: it is left out of the lift and counted by cause. ``outcome_failed`` is the
sensitivity view that scores those trials as failures (0) instead. Infrastructure
failures and trials never run are never the agent's fault and stay unscored in both.

Process metrics (activation, script execution, workflow order) are not part of the
outcome: the baseline cannot earn them by construction, so a lift on them measures
the presence of the skill, not its effect.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from aces_bench.graders.base import MetricResult
from aces_bench.graders.dimensions import outcome_only

NO_CHECK = "no verifier check"
"""Why a case without assertions or a native verifier has no reward."""

FAILED_AS_ZERO = ("timeout", "agent_error", "verifier_error")
"""Statuses the sensitivity view scores as failures: the trial ran and did not finish."""

OutcomeSource = Literal["verifier", "judged"]


@dataclass(frozen=True)
class Outcome:
    score: float | None
    source: OutcomeSource | None
    reason: str | None = None
    failed: float | None = None
    """The sensitivity view: ``score`` for a finished trial, 0 for a trial in ``FAILED_AS_ZERO``."""


def trial_outcome(
    *, status: str, reward: float | None, verifier_checks: bool, metrics: Mapping[str, MetricResult],
    contaminated: str | None = None,
) -> Outcome:
    """The task outcome of one trial (see the module docstring for the rule).

    ``contaminated``: why a baseline trial saw the target skill (graders/contamination.py);
    such a trial is no baseline, so it has no outcome in either view.
    """
    if contaminated:
        return Outcome(None, None, f"{contaminated}: excluded from the pair", None)
    failed_zero = 0.0 if status in FAILED_AS_ZERO else None
    if status != "ok":
        return Outcome(None, None, f"trial did not finish ({status}): excluded from the lift", failed_zero)
    if verifier_checks:
        if reward is None:
            return Outcome(None, "verifier", "the verifier produced no reward", None)
        return Outcome(float(reward), "verifier", None, float(reward))
    judged = outcome_only(metrics)
    if judged is None:
        return Outcome(None, None, f"{NO_CHECK} and neither accuracy nor goal_accuracy was scored", None)
    return Outcome(judged, "judged", None, judged)
