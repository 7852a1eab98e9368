"""Tier 1 arithmetic: dimension scores, overall score, grade and gate. Pure functions."""

from __future__ import annotations

from collections import Counter

from aces_bench.static.catalog import DIMENSIONS, Catalog
from aces_bench.static.models import DimensionScore, Finding, SecurityFinding

STRICT_SEVERITY = "high"


def dimension_scores(findings: list[Finding], cat: Catalog) -> list[DimensionScore]:
    """Each dimension starts at 100 and loses its rules' deductions, counting at most
    ``max_hits`` findings per rule; a dimension never goes below 0."""
    rules = cat.by_id()
    per_rule = Counter(f.rule_id for f in findings)
    points = {f.rule_id: cat.severity_points[f.severity] for f in findings}
    lost = dict.fromkeys(DIMENSIONS, 0.0)
    counted = dict.fromkeys(DIMENSIONS, 0)
    for rid, n in per_rule.items():
        rule = rules[rid]
        each = rule.deduction if rule.deduction is not None else points[rid]
        lost[rule.dimension] += each * min(n, rule.max_hits)
        counted[rule.dimension] += n
    return [
        DimensionScore(
            dimension=d,
            weight=cat.dimensions[d],
            score=round(max(0.0, 100.0 - lost[d]), 2),
            deduction=round(lost[d], 2),
            findings=counted[d],
        )
        for d in DIMENSIONS
    ]


def overall(dims: list[DimensionScore], decimals: int = 2) -> float:
    return round(sum(d.weight * d.score for d in dims), decimals)


def grade(score: float, cat: Catalog) -> str:
    for letter, floor in sorted(cat.grades.items(), key=lambda kv: -kv[1]):
        if score >= floor:
            return letter
    return "F"


def gate(
    score: float,
    threshold: float,
    security: list[SecurityFinding],
    missing_contract: list[str],
    strict: bool,
) -> tuple[bool, list[str]]:
    """Pass/fail with the reasons for a failure. A critical security finding fails
    regardless of score; in strict mode so does an incomplete frontmatter contract."""
    reasons = []
    if score < threshold:
        reasons.append(f"structural score {score:.1f} is below the gate {threshold:g}")
    critical = [s for s in security if s.severity == "critical"]
    if critical:
        ids = ", ".join(sorted({s.pattern_id for s in critical}))
        reasons.append(f"{len(critical)} critical security finding(s) ({ids})")
    if strict and missing_contract:
        reasons.append(
            f"strict: frontmatter contract incomplete (missing {', '.join(missing_contract)})"
        )
    return not reasons, reasons
