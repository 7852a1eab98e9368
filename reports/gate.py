"""The gate's verdicts in words, read from summary.json: the interval a verdict was decided
from, the family it was adjusted over, one line per skill, and what is said when no null arm
ran. ``aces_bench.analysis.gate`` re-gates a built report (``--fail-under-lift``) and tests
the null arm pooled over skills.
"""

from __future__ import annotations

from aces_bench.core.gate import GateSettings
from aces_bench.records.gate import GateVerdict

NOT_RUN = ("null arm not run: the instrument's own lift is unchecked "
           "(add study.controls=[null] to run the baseline twice)")


def interval_text(v: GateVerdict) -> str:
    """The interval the verdict was decided from, with its one-sided level, or "" when unset."""
    if v.lower_bound is None or v.upper_bound is None or v.level is None:
        return ""
    return f"betting interval [{v.lower_bound:+.3f}, {v.upper_bound:+.3f}] ({100 * (1 - v.level):.4g}% each side)"


def family_text(settings: GateSettings, verdicts: list[GateVerdict]) -> str:
    """The family the verdicts were adjusted over, its size and the method, in words."""
    k = sum(1 for v in verdicts if v.n_cases)
    if settings.family == "none" and k > 1:
        return f"per-skill, unadjusted: each of {k} skills at {settings.alpha:g}"
    return f"Holm across the study's {k} skills with data at {settings.alpha:g}" if k > 1 else \
        f"1 skill at {settings.alpha:g}"


def describe(v: GateVerdict) -> str:
    """One line: the verdict, its reason and the interval it was decided from."""
    interval = interval_text(v)
    bound = f"; {interval}" if interval else ""
    fa = v.negative.false_activation
    shown = fa is not None and "false activation" not in v.reason
    tail = f"; false activation {fa:.0%} of {v.negative.false_activation_n}" if shown else ""
    return f"{v.verdict}: {v.reason}{bound}{tail}"


