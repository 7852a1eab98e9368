"""The CI gate over a built report: the gate's rule (``aces_bench/stats/gate.py``), read
from summary.json.

The report stores each skill's plain per-case data (``ReportSummary.gate_cases``), so
``aces-bench report --fail-under-lift X`` re-gates them at threshold X with the very
function the verdict column and ``aces-bench ci`` call (``gate_family``: "helps" and "harms"
adjusted by Holm across the study's skills, unless ``--per-skill`` asks for each skill at
alpha, labelled so). Each skill's interval is the one its verdict was decided from: the
betting test's, at the level Holm gave it. ``--lower-bound`` is kept for the scripts that
pass it: the family control it used to switch on is now the default. A skill fails
unless its verdict is "helps": not enough cases (one pair never passes), a lift that does
not credibly exceed X, harm on its own cases or on should-not-use cases, or a null arm
that shows an effect all fail it, each in its own words.

The null calibration arm (``study.controls=[null]``) is part of every skill's verdict;
pooled over skills it is checked by the same two-sided test. When no null arm ran,
``null_arm_status`` says so; that is not a pass of the check.
"""

from __future__ import annotations

from dataclasses import dataclass

from aces_bench.core.gate import Family, GateSettings
from aces_bench.records.gate import GateVerdict
from aces_bench.records.summary import ReportSummary
from aces_bench.reports.gate import NOT_RUN, describe
from aces_bench.stats.gate import gate_family, sign_flip_p


@dataclass(frozen=True)
class GateFailure:
    skill: str
    reason: str

    def line(self) -> str:
        return f"FAIL {self.skill}: {self.reason}"


def settings_for(summary: ReportSummary, *, threshold: float | None = None, family: Family | None = None,
                 min_cases: int | None = None, alpha: float | None = None) -> GateSettings:
    """The study's gate settings (summary.json), with a command line's threshold and family."""
    base = summary.gate[0].settings if summary.gate else GateSettings()
    update: dict = {}
    if family is not None:
        update["family"] = family
    if threshold is not None:
        update["threshold"] = threshold
    if min_cases is not None:
        update["min_cases"] = min_cases
    if alpha is not None:
        update["alpha"] = alpha
    return GateSettings.model_validate({**base.model_dump(), **update})


def gate_verdicts(summary: ReportSummary, settings: GateSettings) -> list[GateVerdict]:
    """Every skill of the summary gated as one family (``stats.gate.gate_family``)."""
    return gate_family(summary.gate_cases, settings)


def gate_failures(summary: ReportSummary, *, threshold: float, family: Family | None = None,
                  min_cases: int | None = None, alpha: float | None = None) -> list[GateFailure]:
    """Skills whose verdict is not "helps" at ``threshold``, by name, each with its reason."""
    settings = settings_for(summary, threshold=threshold, family=family, min_cases=min_cases, alpha=alpha)
    if not summary.gate_cases:
        return [GateFailure("all skills", "this summary has no per-case gate data (written before the gate was one "
                            "rule, or from external data): rebuild the report with `aces-bench report`")]
    return [GateFailure(v.skill, describe(v)) for v in gate_verdicts(summary, settings) if not v.passed]


def null_arm_failures(summary: ReportSummary) -> list[GateFailure]:
    """The null arm's refusal pooled over skills (each skill's own is part of its verdict)."""
    pooled = pooled_null(summary)
    if pooled is None or pooled[0]:
        return []
    return [GateFailure("null arm (all skills)", f"{pooled[1]}: a skill-free arm shows an effect, so this "
                        "instrument's lifts are not trustworthy")]


def null_arm_status(summary: ReportSummary) -> str:
    """One line on the null arm: not run, or its pooled test and whether it is consistent with 0."""
    pooled = pooled_null(summary)
    if pooled is None:
        return NOT_RUN
    ok, text = pooled
    refused = [v.skill for v in summary.gate if v.verdict == "null arm shows an effect"]
    tail = f"; refused for {', '.join(refused)}" if refused else ""
    return f"null arm: {text} ({'consistent with 0' if ok else 'not consistent with 0'}){tail}"


def pooled_null(summary: ReportSummary) -> tuple[bool, str] | None:
    """The null arm pooled over every skill's cases: (consistent with 0, in words); None when not run."""
    diffs = [x for c in summary.gate_cases if c.null is not None for x in c.null]
    if not any(c.null is not None for c in summary.gate_cases):
        return None
    if not diffs:
        return False, "no case has a pass decided on both baseline runs: the instrument is unchecked"
    alpha = summary.gate[0].settings.null_alpha if summary.gate else GateSettings().null_alpha
    p = sign_flip_p(diffs, tail="two-sided")
    lift = sum(diffs) / len(diffs)
    flips = sum(1 for x in diffs if x != 0)
    text = (f"null lift {lift:+.3f} over {len(diffs)} case(s), {flips} differing; two-sided sign-flip p = "
            f"{p:.4g}")
    return p > alpha, text
