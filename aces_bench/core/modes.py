"""Grading modes, and pass, decided in one place.

A mode says which graders run and what decides a trial's task outcome; from the
outcome, this module decides ``final_pass``, the one pass every consumer reads
(attempts and stop-on-pass, pass@k, McNemar, the pass rates, the gate, ``aces-bench ci``).

Intention to treat: every scheduled trial is in one of three classes
(``TrialClass``), decided by collection (``aces_bench.run.collect.classify``):

- ``finished``: it ran to the end; its outcome is what the mode's grader says (None
  when the grader could not decide: a judge that abstained, an author grader left
  unscored; such a trial is left out and counted, never scored 0);
- ``arm_failure``: it timed out, the agent errored, the verifier found no answer it
  could read, its sandbox died after the agent started, or it is a with-skill trial
  whose model was not shown its target (proof of load's ``setup_error``: the skill's own
  setup failed): a failure of its arm, outcome 0 and not passed;
- ``excluded``: shown to be infrastructure (the environment never started, a model
  provider error) and still failing after the configured retries, or never run: left
  out, counted and shown with a worst-case bound beside the headline.

A baseline that saw the target skill counts as it ran, flagged (``baseline_saw_target``).

Adding a mode is one ``GradingMode`` registered in ``MODES`` (the registry type of every
extension point) and its one-line Hydra option, ``conf/grading/<name>.yaml``; a test checks
they agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from aces_bench.core.registry import Registry

Status = Literal["ok", "agent_error", "verifier_error", "timeout", "infra_error", "not_run", "skipped", "setup_error"]
"""A trial's status, as collection records it (``aces_bench.run.collect``) and every table carries it."""
TrialClass = Literal["finished", "arm_failure", "excluded"]
Source = Literal["verifier", "judged", "author"]
CLASS_OF_STATUS: dict[str, TrialClass] = {
    "ok": "finished", "timeout": "arm_failure", "agent_error": "arm_failure", "verifier_error": "arm_failure",
    "infra_error": "excluded", "not_run": "excluded", "skipped": "excluded",
    # Proof of load (grading.proof_of_load): a with-skill trial whose model was not shown the
    # target failed the skill's own setup (its frontmatter, its description, the listing limit
    # with decoys): a failure of the with-skill arm, never a reason to leave the pair out.
    "setup_error": "arm_failure",
}
"""A trial's class by its collected status (``aces_bench.run.collect.classify`` decides the status)."""
ARM_FAILURES = tuple(s for s, c in CLASS_OF_STATUS.items() if c == "arm_failure")


def trial_class(status: str) -> TrialClass:
    return CLASS_OF_STATUS.get(status, "excluded")


@dataclass(frozen=True)
class TrialOutcome:
    """A trial's outcome and pass under its mode (None: left out of the analysis)."""

    outcome: float | None
    """Intention to treat: the graded outcome, 0 for an arm failure, None when excluded or undecided."""
    per_protocol: float | None
    """The graded outcome of a finished trial; None otherwise (the secondary, scored-only view)."""
    final_pass: bool | None
    source: Source | None
    reason: str | None = None


@dataclass(frozen=True)
class GradingMode:
    name: str
    description: str
    runs_author_graders: bool
    author_decides: bool
    """True: the author graders' score and pass are the outcome and the pass."""

    def decide(self, trial_class: TrialClass, *, reward: float | None, verifier_checks: bool,
               judged: float | None, author_score: float | None, author_pass: bool | None,
               pass_threshold: float, why: str | None = None) -> TrialOutcome:
        """The trial's outcome and pass. ``reward``: the verifier's; ``judged``: the judged
        outcome (mean of accuracy and goal_accuracy scored); ``why``: why the trial is
        excluded or failed, for the reason."""
        if trial_class == "excluded":
            return TrialOutcome(None, None, None, None, why or "excluded")
        if trial_class == "arm_failure":
            # Scored a failure of its arm whatever the mode: 0, not passed.
            return TrialOutcome(0.0, None, False, None, f"failure of its arm, scored 0: {why}" if why else None)
        if self.author_decides:
            if author_score is None or author_pass is None:
                return TrialOutcome(None, None, None, "author", f"{self.name}: the author graders did not decide "
                                    f"({why or 'unscored'}); left out")
            return TrialOutcome(author_score, author_score, bool(author_pass), "author")
        if verifier_checks:
            if reward is None:
                return TrialOutcome(None, None, None, "verifier", "the verifier produced no reward; left out")
            return TrialOutcome(float(reward), float(reward), float(reward) >= pass_threshold, "verifier")
        if judged is None:
            return TrialOutcome(None, None, None, None, "no verifier check and neither accuracy nor goal_accuracy "
                                "was scored; left out")
        return TrialOutcome(judged, judged, judged >= pass_threshold, "judged")


MODES: Registry[GradingMode] = Registry("grading mode", where="grading.mode", plugins=False, ordered=True)
for _mode in (
    GradingMode("aces_default", "the six ACES metrics; the task outcome (verifier reward, else judged) decides pass",
                runs_author_graders=False, author_decides=False),
    GradingMode("aces_plus_custom", "as aces_default, and the skill's author graders reported beside it",
                runs_author_graders=True, author_decides=False),
    GradingMode("custom_only", "the skill's author graders alone decide outcome, pass and lift",
                runs_author_graders=True, author_decides=True),
):
    MODES.register(_mode.name, _mode)
MODE_NAMES: tuple[str, ...] = tuple(MODES.names())


def mode(name: str) -> GradingMode:
    """The grading mode ``name``; an unknown one is a ConfigError listing the valid ones."""
    return MODES.get(name)
