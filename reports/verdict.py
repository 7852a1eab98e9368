"""The report's first screen: one verdict row per skill, and the sentences that state it.

Everything here is read from the ``ReportSummary`` (itself one ``study_stats``
computation), so the verdict table, summary.json, the LaTeX verdict table and the gate
can never disagree: a skill's verdict is the gate's (``aces_bench/stats/gate.py``, at the
study's ``study.gate`` settings), the same function ``--fail-under-lift`` and
``aces-bench ci`` call. Every sentence is built from the numbers it talks about.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aces_bench.core.conditions import CONTROLS
from aces_bench.records.gate import GateVerdict
from aces_bench.records.summary import ControlRow, LiftRow, ReportSummary
from aces_bench.reports.gate import NOT_RUN, describe, pooled_null

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


ARM_LABELS = {"null": "null lift (A/A)", "placebo": "lift over placebo", "forced": "discovery gap"}
ARM_MEANING = {
    "null": "the baseline run a second time, analysed as the treatment: the instrument's own lift, expected 0",
    "placebo": "with skill minus a sham skill with the same name and description: what the content adds",
    "forced": "SKILL.md placed in the instruction minus the skill merely available: value lost to discovery",
}


@dataclass
class ControlView:
    arm: str
    label: str
    meaning: str
    row: ControlRow | None
    ran: bool
    check: str = ""
    check_class: str = ""


def control_views(summary: ReportSummary) -> list[ControlView]:
    """The first screen's calibration panel: each arm, pooled, on the headline outcome (arms not run say so)."""
    outcome = summary.headline_outcome
    refused = sorted(g.skill for g in summary.gate if g.verdict == "null arm shows an effect")
    pooled = pooled_null(summary)
    out = []
    for arm in CONTROLS:
        ran = arm in summary.controls_run
        v = ControlView(arm, ARM_LABELS[arm], ARM_MEANING[arm], summary.control(arm, outcome) if ran else None, ran)
        if arm == "null":
            if not ran:
                v.check, v.check_class = NOT_RUN, "warn"
            elif pooled is not None:
                ok = pooled[0]
                v.check = "consistent with 0" if ok else "not consistent with 0: the gate refuses"
                if refused:
                    v.check += f" (refused: {', '.join(refused)})"
                v.check_class = "ok" if ok and not refused else "bad"
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


def headline_sentence(summary: ReportSummary) -> str:
    """The headline in one sentence: lift (intention to treat), interval and its method, what was
    left out with the worst case over it, and how many skills the gate passes."""
    outcome = summary.headline_outcome
    head = next((r for r in summary.pooled if r.outcome == outcome), None)
    if head is None or head.lift is None:
        return f"No pair has {outcome} decided in both conditions: there is no lift to report."
    if head.ci_lo is not None:
        interval = f"{int(summary.stats.settings.level * 100)}% CI [{head.ci_lo:+.3f}, {head.ci_hi:+.3f}], {head.ci_method}"
    else:
        interval = head.ci_note or "no interval"
    parts = [f"Across {head.n} pairs of positive cases ({head.n_cases} cases; every scheduled pair, an arm's "
             f"timeouts and errors counted as failures), the {outcome} lift is {head.lift:+.3f} ({interval})."]
    a = summary.intention_to_treat
    if a is not None and a.n_excluded:
        parts.append(f"{a.n_excluded} of {a.n_pair_keys} pairs are excluded ({exclusion_reasons(a)}); were every "
                     f"excluded side the worst for the skill the lift would be {_fmt(a.lift_worst_case)}, at best "
                     f"{_fmt(a.lift_best_case)}.")
    if a is not None and a.n_not_run_by_design:
        parts.append(f"{a.n_not_run_by_design} more pair(s) were not run by design (trials a sequential study's "
                     "stopped skill or stop-on-pass never needed): not exclusions, so no bound is drawn over them.")
    if a is not None and a.flagged_trials:
        parts.append("In the analysis, flagged: " + "; ".join(f"{n} {r}" for r, n in a.flagged_trials.items()) + ".")
    if a is not None and a.lift_per_protocol is not None and any(a.arm_failures_by_condition.values()):
        parts.append(f"Per protocol (finished trials only, a secondary view) it is {a.lift_per_protocol:+.3f} over "
                     f"{a.n_per_protocol} pairs.")
    verdicts = verdict_rows(summary)
    n = len(verdicts)
    if n and summary.gate:
        st = summary.gate[0].settings
        helps = [v.skill for v in verdicts if v.status == "helps"]
        harms = [v.skill for v in verdicts if v.status in ("harms", "harms should-not-use cases")]
        parts.append(f"The gate passes {len(helps)} of {n} skill(s) (pass-rate lift credibly above "
                     f"{st.threshold:+.3f}, one-sided {st.alpha:g}, at least {st.min_cases} cases won)"
                     + (f": {', '.join(helps)}" if helps else "") + "."
                     + (f" It finds harm in {', '.join(harms)}." if harms else ""))
    pooled = pooled_null(summary)
    if pooled is not None:
        ok, text = pooled
        parts.append(f"The null arm (the baseline run twice) {'is consistent with 0' if ok else 'shows an effect'}: "
                     f"{text}.")
    return " ".join(parts)


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
