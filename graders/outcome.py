"""The task outcome of one trial: the number the headline, the per-skill table and the gate use.

Intention to treat (``aces_bench/core/modes.py`` decides, for every mode):

1. a finished trial: the mode's outcome. In ``aces_default`` and ``aces_plus_custom``
   the verifier's reward where the case has verifier checks (its own assertions, or a
   native Harbor task's ``tests/``), else the judged outcome (the mean of ``accuracy``
   and ``goal_accuracy`` over those scored); in ``custom_only`` the author graders'
   score. Undecided (no reward, an abstaining judge): left out, counted, never 0;
2. a failure of its arm (timeout, agent error, a verifier that found no readable
   answer, a sandbox that died after the agent started, a with-skill trial whose model
   was not shown its target): 0, not passed;
3. excluded (infrastructure shown, after retries; never run): no outcome, counted and
   bounded beside the headline.

A baseline that saw the target skill (its listing, a read, its text) counts as it ran and
is flagged (``baseline_saw_target``): dropping it would drop its pair, and the skill's
contamination of the baseline can only lower its own lift.

``outcome_per_protocol`` is the secondary view: finished trials only.

Process metrics (activation, script execution, workflow order) are not part of the
outcome: the baseline cannot earn them by construction, so a lift on them measures
the presence of the skill, not its effect.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from aces_bench.core.modes import TrialOutcome, mode, trial_class
from aces_bench.graders.dimensions import outcome_only
from aces_bench.records.results import MetricResult

NO_CHECK = "no verifier check"
"""Why a case without assertions or a native verifier has no reward."""

def trial_outcome(
    *, status: str, reward: float | None, verifier_checks: bool, metrics: Mapping[str, MetricResult],
    grading_mode: str, pass_threshold: float, contaminated: str | None = None,
    author_score: float | None = None, author_pass: bool | None = None, failure_cause: str | None = None,
) -> TrialOutcome:
    """The task outcome and pass of one trial (see the module docstring for the rule).

    ``contaminated``: why a baseline trial saw the target skill (graders/contamination.py,
    proof of load); it counts as it ran, and the reason says it is flagged.
    """
    why = f"{status}" + (f" ({failure_cause})" if failure_cause else "") if status != "ok" else None
    out = mode(grading_mode).decide(trial_class(status), reward=reward, verifier_checks=verifier_checks,
                                    judged=outcome_only(metrics), author_score=author_score, author_pass=author_pass,
                                    pass_threshold=pass_threshold, why=why)
    if contaminated:
        flag = f"{contaminated}: counted as it ran, flagged"
        out = replace(out, reason=f"{out.reason}; {flag}" if out.reason else flag)
    return out
