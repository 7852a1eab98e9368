"""A CI gate over a built report: fail when a skill's lift (or its CI's lower bound) is too low.

The lift judged is the one the report's verdict table shows per skill (the skill's
positive cases, pooled over harnesses, models and modes; negative controls are reported
apart). With ``--lower-bound`` the bound is the multiplicity-adjusted one
(``LiftRow.adj_ci_lo``: Bonferroni over the skills with an interval, case-clustered t),
and the failure line names the adjustment. A skill whose lift or bound is undefined (no
scored pair; one pair; no variation observed) fails the gate: a change cannot pass on
evidence that does not exist.
"""

from __future__ import annotations

from dataclasses import dataclass

from aces_bench.reports.summary import LiftRow, ReportSummary


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
