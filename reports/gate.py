"""A CI gate over a built report: fail when a skill's lift (or its CI's lower bound) is too low.

The lift judged is the one the report's verdict table shows per skill (the skill's
positive cases, pooled over harnesses, models and modes; negative controls are reported
apart). With ``--lower-bound`` the bound is the multiplicity-adjusted one
(``LiftRow.adj_ci_lo``: Bonferroni over the skills with an interval, case-clustered t),
and the failure line names the adjustment. A skill whose lift or bound is undefined (no
scored pair; one pair; no variation observed) fails the gate: a change cannot pass on
evidence that does not exist.

The null calibration arm (``study.controls=[null]``) is checked too: the gate refuses
when the null lift's interval excludes 0, pooled (the interval beside the headline) or
for any skill (its multiplicity-adjusted interval, as the per-skill verdict uses). An
interval that could not be built counts as containing 0 only when the null lift is
exactly 0 (no variation: every case gave the same outcome in both baseline runs).
When no null arm ran, ``null_arm_status`` says so; that is not a pass of the check.
"""

from __future__ import annotations

from dataclasses import dataclass

from aces_bench.reports.summary import ControlRow, LiftRow, ReportSummary

NOT_RUN = ("null arm not run: the instrument's own lift is unchecked "
           "(add study.controls=[null] to run the baseline twice)")


@dataclass(frozen=True)
class GateFailure:
    skill: str
    reason: str

    def line(self) -> str:
        return f"FAIL {self.skill}: {self.reason}"


def _check(row: LiftRow | None, skill: str, threshold: float, outcome: str, lower_bound: bool) -> GateFailure | None:
    if row is None or row.n == 0 or row.lift is None:
        return GateFailure(skill, f"no pair scored on both sides for {outcome}; lift undefined (needs >= {threshold:+.3f})")
    if lower_bound:
        if row.no_variation:
            return GateFailure(skill, f"{outcome} lift {row.lift:+.3f}: {row.ci_note}; no interval, so its lower "
                                      f"bound cannot be checked against {threshold:+.3f}")
        bound = row.adj_ci_lo if row.adj_ci_lo is not None else row.ci_lo
        if bound is None:
            why = f"n={row.n} pair(s)" + (f"; {row.ci_note}" if row.ci_note else "")
            return GateFailure(skill, f"{outcome} lift {row.lift:+.3f} has no CI ({why}); "
                                      f"its lower bound cannot be checked against {threshold:+.3f}")
        adjustment = row.adjustment or "unadjusted"
        if bound < threshold:
            return GateFailure(skill, f"{outcome} lift {row.lift:+.3f}, adjusted lower bound {bound:+.3f} "
                                      f"< {threshold:+.3f} ({adjustment}; n={row.n} pairs, {row.n_cases} cases)")
        return None
    if row.lift < threshold:
        return GateFailure(skill, f"{outcome} lift {row.lift:+.3f} < {threshold:+.3f} (n={row.n} pairs)")
    return None


def gate_failures(summary: ReportSummary, *, threshold: float, outcome: str, lower_bound: bool = False) -> list[GateFailure]:
    """Skills that fail ``lift >= threshold`` (or adjusted ``ci_lo >= threshold`` with ``lower_bound``), by name."""
    rows = {r.group.get("skill"): r for r in summary.by_skill if r.outcome == outcome}
    skills = sorted({r.group["skill"] for r in summary.by_skill} | {k for k in rows if k})
    return [f for s in skills if (f := _check(rows.get(s), s, threshold, outcome, lower_bound)) is not None]


def null_interval(row: ControlRow, *, adjusted: bool = False) -> tuple[bool, str]:
    """Whether the null lift's interval contains 0, and the interval in words."""
    lo, hi = (row.adj_ci_lo, row.adj_ci_hi) if adjusted and row.adj_ci_lo is not None else (row.ci_lo, row.ci_hi)
    if row.n == 0 or row.lift is None:
        return False, "no pair scored on both baseline runs: the instrument is unchecked"
    flips = (f"; {row.n_flipped} of {row.n_flip_known} verdicts flipped" if row.n_flip_known else "")
    if lo is None or hi is None:
        zero = abs(row.lift) < 1e-12
        if row.no_variation:
            return zero, f"null lift {row.lift:+.3f} in each of {row.n} pairs (no variation, so no interval){flips}"
        why = row.ci_note or f"n={row.n} pair(s)"
        return zero, f"null lift {row.lift:+.3f}, no interval ({why}){flips}"
    which = f"adjusted CI ({row.adjustment})" if adjusted and row.adj_ci_lo is not None else "95% CI"
    return lo <= 0 <= hi, f"null lift {row.lift:+.3f}, {which} [{lo:+.3f}, {hi:+.3f}]{flips}"


def null_arm_failures(summary: ReportSummary, *, outcome: str) -> list[GateFailure]:
    """The null arm's refusals: pooled, then per skill; empty when it passes or did not run."""
    if "null" not in summary.controls_run:
        return []
    out = []
    pooled = summary.control("null", outcome)
    checks = [("all skills", pooled, False)] + [
        (r.group["skill"], r, True) for r in summary.controls_by_skill if r.arm == "null" and r.outcome == outcome]
    for name, row, adjusted in checks:
        if row is None:
            out.append(GateFailure(f"null arm ({name})", f"no {outcome} null lift was computed"))
            continue
        ok, text = null_interval(row, adjusted=adjusted)
        if not ok:
            out.append(GateFailure(f"null arm ({name})", f"{outcome} {text} excludes 0: a skill-free arm shows an "
                                   "effect, so this instrument's lifts are not trustworthy"))
    return out


def null_arm_status(summary: ReportSummary, *, outcome: str) -> str:
    """One line on the null arm: not run, or its pooled interval and whether it contains 0."""
    if "null" not in summary.controls_run:
        return NOT_RUN
    row = summary.control("null", outcome)
    if row is None:
        return f"null arm: no {outcome} null lift was computed"
    failures = null_arm_failures(summary, outcome=outcome)
    ok, text = null_interval(row)
    verdict = "contains 0" if ok else "excludes 0"
    tail = f"; {len(failures)} refusal(s)" if failures else ""
    return f"null arm: {outcome} {text} ({verdict}){tail}"
