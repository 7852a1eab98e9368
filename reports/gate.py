"""A CI gate over a built report: fail when a skill's lift (or its CI's lower bound) is too low.

The lift judged is the one the report shows under "By skill" (every paired case of the
skill, negative controls included, pooled over harnesses, models and modes). A skill
whose lift or bound is undefined (no scored pair; one pair has no CI) fails the gate:
a change cannot pass on evidence that does not exist.
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
        if row.ci_lo is None:
            return GateFailure(skill, f"{outcome} lift {row.lift:+.3f} has no CI (n={row.n} pair(s)); "
                                      f"its lower bound cannot be checked against {threshold:+.3f}")
        if row.ci_lo < threshold:
            return GateFailure(skill, f"{outcome} lift {row.lift:+.3f}, CI lower bound {row.ci_lo:+.3f} "
                                      f"< {threshold:+.3f} (n={row.n} pairs)")
        return None
    if row.lift < threshold:
        return GateFailure(skill, f"{outcome} lift {row.lift:+.3f} < {threshold:+.3f} (n={row.n} pairs)")
    return None


def gate_failures(summary: ReportSummary, *, threshold: float, outcome: str, lower_bound: bool = False) -> list[GateFailure]:
    """Skills that fail ``lift >= threshold`` (or ``ci_lo >= threshold`` with ``lower_bound``), by skill name."""
    rows = {r.group.get("skill"): r for r in summary.by_skill if r.outcome == outcome}
    skills = sorted({r.group["skill"] for r in summary.by_skill} | {k for k in rows if k})
    return [f for s in skills if (f := _check(rows.get(s), s, threshold, outcome, lower_bound)) is not None]
