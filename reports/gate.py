"""The gate's verdicts in words, read from summary.json: the interval a verdict was decided
from, the family it was adjusted over, one line per skill, and the null arm pooled over
skills. ``aces_bench.analysis.gate`` re-gates a built report (``--fail-under-lift``).
"""

from __future__ import annotations

from aces_bench.core.gate import GateSettings
from aces_bench.records.gate import GateVerdict
from aces_bench.records.summary import ReportSummary
from aces_bench.stats.gate import sign_flip_p

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


