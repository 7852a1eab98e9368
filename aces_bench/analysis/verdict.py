"""The first screen's calibration panel and headline sentence: they state the null arm's
pooled test (``analysis.gate.pooled_null``), so the analysis writes them; the verdict rows
and the other sentences are the report's (``aces_bench.reports.verdict``).
"""

from __future__ import annotations

from dataclasses import dataclass

from aces_bench.analysis.gate import pooled_null
from aces_bench.core.conditions import CONTROLS
from aces_bench.records.summary import ControlRow, ReportSummary
from aces_bench.reports.gate import NOT_RUN
from aces_bench.reports.verdict import _fmt, exclusion_reasons, verdict_rows

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
