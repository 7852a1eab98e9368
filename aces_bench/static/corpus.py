"""Corpus figures over per-skill results, and the side-by-side with the ACES paper.

Error entries (unscored skills) are counted in ``n_errors`` and excluded from every
statistic; they are never scored as 0.
"""

from __future__ import annotations

import json
import statistics
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from aces_bench.core.errors import ReportError
from aces_bench.static.catalog import DIMENSIONS, Catalog, catalog
from aces_bench.static.models import CorpusResult, RuleShare, ScoreStats, SkillResult


def score_stats(scores: list[float], passed: list[bool]) -> ScoreStats:
    """Summary of scores; every field is None for an empty list (not 0)."""
    n = len(scores)
    if n == 0:
        return ScoreStats(
            n=0,
            mean=None,
            median=None,
            sd=None,
            min=None,
            max=None,
            share_at_or_above_70=None,
            share_at_or_above_80=None,
            share_passing_gate=None,
        )
    return ScoreStats(
        n=n,
        mean=round(statistics.fmean(scores), 2),
        median=round(statistics.median(scores), 2),
        sd=round(statistics.stdev(scores), 2) if n > 1 else None,
        min=min(scores),
        max=max(scores),
        share_at_or_above_70=round(sum(s >= 70 for s in scores) / n, 4),
        share_at_or_above_80=round(sum(s >= 80 for s in scores) / n, 4),
        share_passing_gate=round(sum(passed) / n, 4),
    )


def rule_shares(results: list[SkillResult], cat: Catalog) -> list[RuleShare]:
    """Share of scored skills violating each rule (at least once), most violated first."""
    ok = [r for r in results if r.status == "ok"]
    counts = Counter(rid for r in ok for rid in {f.rule_id for f in r.findings})
    rules = cat.by_id()
    shares = [
        RuleShare(
            rule_id=rid,
            rule_name=rules[rid].name,
            title=rules[rid].title,
            dimension=rules[rid].dimension,
            skills=n,
            share=round(n / len(ok), 4),
        )
        for rid, n in counts.items()
    ]
    return sorted(shares, key=lambda s: (-s.skills, s.rule_id))


def _by_source(ok: list[SkillResult]) -> list[dict[str, Any]]:
    groups: dict[str, list[SkillResult]] = defaultdict(list)
    for r in ok:
        groups[r.source].append(r)
    rows = []
    for source, rs in sorted(groups.items()):
        st = score_stats(
            [r.score for r in rs if r.score is not None],
            [bool(r.passed_gate) for r in rs],
        )
        rows.append(
            {
                "source": source,
                "n": st.n,
                "mean": st.mean,
                "median": st.median,
                "sd": st.sd,
                "min": st.min,
                "max": st.max,
                "share_at_or_above_70": st.share_at_or_above_70,
                "share_at_or_above_80": st.share_at_or_above_80,
            }
        )
    return rows


def summarize(
    results: list[SkillResult],
    *,
    roots: list[str],
    gate: float,
    strict: bool,
    cat: Catalog | None = None,
) -> CorpusResult:
    cat = cat or catalog()
    ok = [r for r in results if r.status == "ok" and r.score is not None]
    errors = [r for r in results if r.status != "ok"]
    scores = [r.score for r in ok if r.score is not None]
    shares = rule_shares(results, cat)
    dim_means: dict[str, float | None] = {}
    for d in DIMENSIONS:
        vals = [x.score for r in ok for x in r.dimensions if x.dimension == d]
        dim_means[d] = round(statistics.fmean(vals), 2) if vals else None
    grades = Counter(r.grade for r in ok if r.grade)
    contract = (
        {
            k: round(
                sum(not r.frontmatter_declared.get(k, False) for r in ok) / len(ok), 4
            )
            for k in cat.contract
        }
        if ok
        else {}
    )
    top_level = (
        {
            k: round(
                sum(not r.frontmatter_top_level.get(k, False) for r in ok) / len(ok), 4
            )
            for k in cat.contract
        }
        if ok
        else {}
    )
    not_eval = Counter(k for r in ok for k in r.not_evaluable)
    sec = Counter(s.severity for r in ok for s in r.security)
    return CorpusResult(
        roots=roots,
        gate=gate,
        strict=strict,
        profile=cat.profile,
        n_skills=len(results),
        n_errors=len(errors),
        stats=score_stats(scores, [bool(r.passed_gate) for r in ok]),
        dimension_means=dim_means,
        grade_counts={g: grades.get(g, 0) for g in ("A", "B", "C", "D", "F")},
        top_violations=shares[:10],
        rule_shares=shares,
        contract_missing_share=contract,
        contract_missing_top_level_share=top_level,
        not_evaluable_skills=dict(sorted(not_eval.items())),
        security_counts={
            s: sec.get(s, 0) for s in ("critical", "high", "medium", "low")
        },
        by_source=_by_source(ok),
        errors=[
            {"skill_id": r.skill_id, "path": r.path, "error": r.error or ""}
            for r in errors
        ],
    )


def load_reported(path: Path) -> dict[str, Any]:
    """The ``static_scan`` block of a reported-figures file (the ACES paper's reported.json)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise ReportError(
            f"cannot read reported figures: {exc}",
            where=path,
            fix="pass a JSON file such as aces-paper/reported.json",
        ) from None
    block = data.get("static_scan") if isinstance(data, dict) else None
    if not isinstance(block, dict) or not isinstance(
        block.get("structural_score"), dict
    ):
        raise ReportError(
            "no 'static_scan.structural_score' block",
            where=path,
            fix="pass the ACES paper's reported.json",
        )
    return {"source": data.get("source", str(path)), **block}


def compare(
    corpus: CorpusResult, reported: dict[str, Any], cat: Catalog | None = None
) -> dict[str, Any]:
    """Side-by-side rows (ours vs reported) for the score distribution, the rules the
    paper names, and frontmatter fields missing. A figure absent on either side is None."""
    cat = cat or catalog()
    s, ss = corpus.stats, reported.get("structural_score", {})
    rows = [
        {
            "figure": "skills scanned",
            "ours": corpus.n_skills - corpus.n_errors,
            "reported": reported.get("n_skills"),
        },
        {"figure": "mean", "ours": s.mean, "reported": ss.get("mean")},
        {"figure": "median", "ours": s.median, "reported": ss.get("median")},
        {"figure": "sd", "ours": s.sd, "reported": ss.get("sd")},
        {"figure": "min", "ours": s.min, "reported": ss.get("min")},
        {"figure": "max", "ours": s.max, "reported": ss.get("max")},
        {
            "figure": "share >= 70",
            "ours": s.share_at_or_above_70,
            "reported": reported.get("pass_rate_at_70"),
        },
        {
            "figure": "share >= 80",
            "ours": s.share_at_or_above_80,
            "reported": reported.get("share_at_or_above_80"),
        },
    ]
    by_label = {r.paper_label: r for r in cat.rules if r.paper_label}
    shares = {r.rule_id: r.share for r in corpus.rule_shares}
    violations = [
        {
            "reported_label": label,
            "rule_id": by_label[label].id if label in by_label else None,
            "ours": shares.get(by_label[label].id, 0.0) if label in by_label else None,
            "reported": share,
        }
        for label, share in (reported.get("top_violations_share") or {}).items()
    ]
    for row in rows:
        o, r = row["ours"], row["reported"]
        row["difference"] = (
            round(o - r, 4)
            if isinstance(o, (int, float)) and isinstance(r, (int, float))
            else None
        )
    for row in violations:
        o, r = row["ours"], row["reported"]
        row["difference"] = round(o - r, 4) if o is not None and r is not None else None
    return {
        "reported_source": reported.get("source"),
        "note": (
            "Different corpora: the paper scanned its own production skills; this scan covers the skills given here. "
            "Rule deductions are set by principle in rules.yaml (per finding: "
            + ", ".join(f"{k} {v:g}" for k, v in cat.severity_points.items() if v)
            + " points off the rule's dimension), not fitted to the paper's figures, so differences are expected. "
            + _severity_mix(corpus, cat)
        ),
        "score_rows": rows,
        "violation_rows": violations,
        "contract_rows": [
            {
                "field": k,
                "ours_any_alias": v,
                "ours_top_level_key": corpus.contract_missing_top_level_share.get(k),
                "reported": _reported_contract(reported, k),
            }
            for k, v in corpus.contract_missing_share.items()
        ],
    }


def _severity_mix(corpus: CorpusResult, cat: Catalog) -> str:
    """'Findings by severity here: low 61%, medium 33%, ...', read from the rule shares."""
    if not corpus.rule_shares:
        return ""
    rules = cat.by_id()
    weight = Counter()
    for share in corpus.rule_shares:
        weight[rules[share.rule_id].severity] += share.skills
    total = sum(weight.values())
    mix = ", ".join(f"{sev} {100 * n / total:.0f}%" for sev, n in weight.most_common())
    return f"Rule violations here by severity (skill x rule pairs): {mix}."


def _reported_contract(reported: dict[str, Any], field_name: str) -> float | None:
    """The paper reports missing shares for some contract fields among its top violations."""
    labels = {
        "tools": "tools not declared in frontmatter",
        "author": "author not declared",
        "tags": "tags not declared",
    }
    label = labels.get(field_name)
    return (reported.get("top_violations_share") or {}).get(label) if label else None
