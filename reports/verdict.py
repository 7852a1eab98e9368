"""The report's first screen: one verdict row per skill, and the sentences that state it.

Everything here is read from the ``ReportSummary`` (itself one ``study_stats``
computation), so the verdict table, summary.json, the LaTeX verdict table and the gate
can never disagree: a skill's verdict is the gate's (``aces_bench/stats/gate.py``, at the
study's ``study.gate`` settings), the same function ``--fail-under-lift`` and
``aces-bench ci`` call. Every sentence is built from the numbers it talks about. The
calibration panel and the headline sentence state the null arm's pooled test, which the
analysis computes (``aces_bench.analysis.verdict``).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aces_bench.records.gate import GateVerdict
from aces_bench.records.summary import ControlRow, LiftRow, ReportSummary
from aces_bench.reports.gate import describe

AXIS = (-1.0, 1.0)


@dataclass
class VerdictRow:
    skill: str
    href: str | None
    row: LiftRow | None
    n_attempts: int
    pass_with: float | None = None
    pass_base: float | None = None
    pass_counts: str = ""
    false_activation: dict | None = None
    arms: dict[str, ControlRow | None] = field(default_factory=dict)
    """The calibration arms that ran: null lift, lift over placebo, discovery gap (None: no row)."""
    status: str = "no data"
    status_class: str = "bad"
    reason: str = ""
    plot: dict | None = None
    gate: GateVerdict | None = None


STATUS_CLASS = {"helps": "ok", "does not reach threshold": "warn", "not enough cases": "warn", "harms": "bad",
                "harms should-not-use cases": "bad", "null arm shows an effect": "bad", "no data": "bad"}


def _status(gate: GateVerdict | None) -> tuple[str, str, str]:
    """The gate's verdict in words: (status, css class, reason)."""
    if gate is None:
        return "no data", "bad", "no per-case gate data in this summary (rebuild the report)"
    return gate.verdict, STATUS_CLASS.get(gate.verdict, "warn"), describe(gate).split(": ", 1)[1]


def verdict_rows(summary: ReportSummary, hrefs: dict[str, str] | None = None, *,
                 attempts: dict[str, int] | None = None) -> list[VerdictRow]:
    """One row per skill on the headline outcome, in skill order."""
    outcome = summary.headline_outcome
    rows = {r.group.get("skill"): r for r in summary.by_skill if r.outcome == outcome}
    skills = sorted({r.group["skill"] for r in summary.by_skill})
    rates: dict[str, dict[str, object]] = {}
    for r in summary.pass_rates_by_skill:
        rates.setdefault(r.group.get("skill", ""), {})[r.condition] = r
    fa = {}
    if summary.stats.false_activation is not None:
        fa = {r["skill"]: r for r in summary.stats.false_activation.rows}
    gates = {g.skill: g for g in summary.gate}
    out = []
    for s in skills:
        row = rows.get(s)
        status, cls, reason = _status(gates.get(s))
        v = VerdictRow(skill=s, href=(hrefs or {}).get(s), row=row, n_attempts=(attempts or {}).get(s, 0),
                       false_activation=fa.get(s), status=status, status_class=cls, reason=reason,
                       plot=plot_geometry(row), arms={a: summary.control(a, outcome, s) for a in summary.controls_run},
                       gate=gates.get(s))
        skill_rates = rates.get(s, {})
        w, b = skill_rates.get("with_skill"), skill_rates.get("baseline")
        if w is not None and b is not None:
            v.pass_with, v.pass_base = w.final_rate, b.final_rate
            v.pass_counts = f"{w.n_final_pass}/{w.n_final_known} vs {b.n_final_pass}/{b.n_final_known}"
        out.append(v)
    return out


def _fmt(x: float | None, signed: bool = True) -> str:
    return "n/a" if x is None else (f"{x:+.3f}" if signed else f"{x:.3f}")


SUMMARY_MAX_WORDS = 60
UNREVIEWED_FIX = "review them in the skill's evals file, or accept each with `aces-bench dataset refine --confirm CASE_ID`"


def unreviewed_notes(summary: ReportSummary) -> list[str]:
    """One sentence per skill whose verdict rests on drafts nobody reviewed (``unreviewed_drafts``), with the fix.

    A draft's checks were written by ``dataset create``, not by a person: a verdict on them
    is as good as those checks, so the console and the report's first screen both say so.
    """
    out = []
    for skill, cases in sorted(summary.unreviewed_drafts.items()):
        shown = ", ".join(cases[:5]) + (f" and {len(cases) - 5} more" if len(cases) > 5 else "")
        out.append(f"{skill}: the verdict rests on {len(cases)} unreviewed draft case(s) ({shown}); {UNREVIEWED_FIX}")
    return out


def first_screen_summary(summary: ReportSummary) -> str:
    """The first screen's summary, at most ``SUMMARY_MAX_WORDS`` words: how many skills got each verdict,
    and the headline lift with its interval (the long account is ``headline_sentence``, below the table)."""
    from collections import Counter

    verdicts = Counter(v.status for v in verdict_rows(summary))
    outcome = summary.headline_outcome
    head = next((r for r in summary.pooled if r.outcome == outcome), None)
    parts = [f"{sum(verdicts.values())} skill(s): " + ", ".join(f"{n} {word}" for word, n in verdicts.most_common())
             + "."]
    if head is not None and head.lift is not None:
        interval = f" ({int(summary.stats.settings.level * 100)}% CI [{head.ci_lo:+.3f}, {head.ci_hi:+.3f}])" \
            if head.ci_lo is not None else ""
        parts.append(f"Headline {outcome} lift {head.lift:+.3f}{interval} over {head.n} pairs of {head.n_cases} cases.")
    else:
        parts.append(f"No pair has {outcome} decided in both conditions.")
    return " ".join(parts)


def exclusion_reasons(a) -> str:
    """Why pairs are excluded, every reason with its number of trials; a pair whose side has
    no trial at all is named as such (the sentence never lacks a number)."""
    why = [f"{n} {r} trial(s)" for r, n in a.excluded_trials_by_reason.items()]
    counted = sum(a.excluded_trials_by_reason.values())
    if counted < a.n_excluded:
        why.append(f"{a.n_excluded - counted} pair(s) with a side that has no graded trial" if not why
                   else "the rest with a side that has no graded trial")
    return ", ".join(why)


def correlation_sentence(corr, what: str) -> str:
    """What a static-vs-live correlation shows, stated from its own numbers."""
    if corr is None:
        return f"No {what} correlation was computed."
    if corr.rho is None:
        return f"The {what} correlation is undefined ({corr.note}; n = {corr.n})."
    if corr.ci_lo is None:
        return (f"Spearman rho = {corr.rho:+.2f} over {corr.n} skills, too few for an interval: "
                "this alone neither shows nor rules out that the scan predicts lift.")
    if corr.ci_lo <= 0 <= corr.ci_hi:
        return (f"Spearman rho = {corr.rho:+.2f} (CI [{corr.ci_lo:+.2f}, {corr.ci_hi:+.2f}], n = {corr.n}): the interval "
                "includes 0, so this study does not show that the scan predicts lift.")
    sign = "higher" if corr.rho > 0 else "lower"
    return (f"Spearman rho = {corr.rho:+.2f} (CI [{corr.ci_lo:+.2f}, {corr.ci_hi:+.2f}], n = {corr.n}): skills scoring "
            f"higher on the scan had {sign} lift in this study.")


def plot_geometry(row: LiftRow | None, width: int = 180, axis: tuple[float, float] = AXIS) -> dict | None:
    """Pixel positions for the inline dot-and-interval plot (no script, no external image)."""
    if row is None or row.lift is None:
        return None

    def x(v: float) -> float:
        v = min(max(v, axis[0]), axis[1])
        return round(4 + (v - axis[0]) / (axis[1] - axis[0]) * (width - 8), 1)

    g = {"width": width, "zero": x(0.0), "dot": x(row.lift), "lo": None, "hi": None, "alo": None, "ahi": None}
    if row.ci_lo is not None:
        g.update(lo=x(row.ci_lo), hi=x(row.ci_hi))
    if row.adj_ci_lo is not None:
        g.update(alo=x(row.adj_ci_lo), ahi=x(row.adj_ci_hi))
    return g
