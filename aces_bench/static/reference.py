"""Agreement with SkillEvaluator's own Tier 1 results on the same folders.

``load_skillevaluator(path)`` reads a SkillEvaluator results file as the shared corpus
carries it (``SKILLEVALUATOR_TIER1.json``: ``skills -> {skill_id: {overall_score,
dimensions: {name: {score}}}}``); ``agreement(results, ref)`` pairs it with a scan by
skill id and reports the rank agreement and the two gate figures the ACES paper uses
(share at or above 70 and 80), side by side.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from aces_bench.core.errors import ReportError
from aces_bench.static.catalog import DIMENSIONS
from aces_bench.static.models import SkillResult
from aces_bench.static.stats import correlate

# The acceptance bar for the `skillevaluator` profile.
MIN_SPEARMAN = 0.9
MAX_RATE_GAP = 0.02


def load_skillevaluator(path: Path) -> dict[str, dict[str, Any]]:
    """{skill_id: {"overall": float, "dimensions": {dim: float}}}; a bad file is a ReportError."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
        skills = data["skills"]
        return {
            sid: {
                "overall": float(rec["overall_score"]),
                "dimensions": {
                    d: float(v["score"]) for d, v in rec.get("dimensions", {}).items()
                },
            }
            for sid, rec in skills.items()
        }
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise ReportError(
            f"cannot read SkillEvaluator results: {type(exc).__name__}: {exc}",
            where=path,
            fix="pass a SkillEvaluator Tier 1 JSON such as SKILLEVALUATOR_TIER1.json "
            "(skills -> {id: {overall_score, dimensions}})",
        ) from None


def _share(xs: list[float], floor: float) -> float | None:
    return round(sum(x >= floor for x in xs) / len(xs), 4) if xs else None


def agreement(
    results: list[SkillResult], ref: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Spearman (overall and per dimension), shares >= 70 / >= 80 on both sides, the
    largest disagreements, and which skills only one side has."""
    ours = {r.skill_id: r for r in results if r.status == "ok" and r.score is not None}
    common = sorted(set(ours) & set(ref))
    a = [float(ours[s].score) for s in common]  # type: ignore[arg-type]
    b = [ref[s]["overall"] for s in common]
    dims = {}
    for d in DIMENSIONS:
        pairs = [
            (x.score, ref[s]["dimensions"][d])
            for s in common
            for x in ours[s].dimensions
            if x.dimension == d and d in ref[s]["dimensions"]
        ]
        c = correlate([p[0] for p in pairs], [p[1] for p in pairs])
        dims[d] = c["spearman"]
    corr = correlate(a, b)
    rows = []
    for floor in (70, 80):
        o, r = _share(a, floor), _share(b, floor)
        rows.append(
            {
                "figure": f"share >= {floor}",
                "ours": o,
                "skillevaluator": r,
                "difference": None if o is None or r is None else round(o - r, 4),
            }
        )
    gaps = sorted(common, key=lambda s: -abs(ours[s].score - ref[s]["overall"]))  # type: ignore[operator]
    out = {
        "n_paired": len(common),
        "only_in_scan": sorted(set(ours) - set(ref)),
        "only_in_reference": sorted(set(ref) - set(ours)),
        "spearman": corr["spearman"],
        "spearman_ci95": corr["spearman_ci95"],
        "spearman_by_dimension": dims,
        "mean": {
            "ours": round(sum(a) / len(a), 2) if a else None,
            "skillevaluator": round(sum(b) / len(b), 2) if b else None,
        },
        "exact_matches": sum(abs(x - y) < 0.01 for x, y in zip(a, b, strict=True)),
        "rate_rows": rows,
        "largest_gaps": [
            {"skill_id": s, "ours": ours[s].score, "skillevaluator": ref[s]["overall"]}
            for s in gaps[:5]
        ],
        "detail": corr["detail"],
    }
    out["meets_bar"] = bool(
        out["spearman"] is not None
        and out["spearman"] >= MIN_SPEARMAN
        and all(
            r["difference"] is not None and abs(r["difference"]) <= MAX_RATE_GAP
            for r in rows
        )
    )
    return out


def format_agreement(ag: dict[str, Any], profile: str) -> list[str]:
    """Plain-text lines for the CLI and the tests."""

    def pct(v: float | None) -> str:
        return "n/a" if v is None else f"{100 * v:.1f}%"

    dims = ", ".join(
        f"{d} {'n/a' if v is None else f'{v:.2f}'}"
        for d, v in ag["spearman_by_dimension"].items()
    )
    rho = "n/a" if ag["spearman"] is None else f"{ag['spearman']:.3f}"
    lines = [
        f"vs SkillEvaluator [{profile} profile]: {ag['n_paired']} paired skill(s), "
        f"Spearman {rho} ({dims}); exact score matches {ag['exact_matches']}; "
        f"mean {ag['mean']['ours']} vs {ag['mean']['skillevaluator']}",
    ]
    for r in ag["rate_rows"]:
        lines.append(
            f"    {r['figure']}: ours {pct(r['ours'])} vs SkillEvaluator {pct(r['skillevaluator'])}"
        )
    if ag["only_in_scan"] or ag["only_in_reference"]:
        lines.append(
            f"    unpaired: {len(ag['only_in_scan'])} only in this scan, "
            f"{len(ag['only_in_reference'])} only in the SkillEvaluator file"
        )
    return lines
