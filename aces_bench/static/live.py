"""Static scores against live Skill Lift: do document scans predict runtime benefit?

Lift per skill comes from a trials table (``<results>/trials.parquet``, see
aces_bench/records/trials.py) or from a mapping given directly. Negative controls and trials
that were not scored are left out; a skill with no scored pair has no lift (not 0).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aces_bench.core.errors import ReportError
from aces_bench.static.models import SkillResult
from aces_bench.static.stats import correlate

TRIALS_FILE = "trials.parquet"


def lift_from_trials(frame: Any, outcome: str | None = None) -> dict[str, float]:
    """Each skill's live lift, as the report computes it (``stats.correlation.skill_lift``).

    Pairs are matched on ``PAIR_KEY`` by ``stats.build_pairs``; a table without those
    columns is refused (no unpaired fallback). ``outcome`` defaults to the report's
    headline outcome, so ``scan --live`` and the report agree.
    """
    from aces_bench.records.stats import StatsSettings
    from aces_bench.stats import build_pairs
    from aces_bench.stats.correlation import skill_lift

    outcome = outcome or StatsSettings().headline_outcome
    live = skill_lift(build_pairs(frame, outcomes=(outcome,)), outcome)
    return {str(s): float(v) for s, v in zip(live["skill"], live["lift"], strict=True)}


def load_lift(path: Path) -> dict[str, float]:
    """Lift per skill from a results folder, a trials parquet, or a JSON {skill: lift}."""
    path = Path(path)
    if path.is_dir():
        path = path / TRIALS_FILE
    if not path.exists():
        raise ReportError(
            "no live results here",
            where=path,
            fix=f"pass a results folder holding {TRIALS_FILE}, the parquet itself, or a JSON {{skill: lift}}",
        )
    if path.suffix == ".json":
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ReportError(
                f"cannot read lift JSON: {exc}",
                where=path,
                fix="write a JSON object {skill: lift}",
            ) from None
        if not isinstance(data, dict) or not all(
            isinstance(v, (int, float)) for v in data.values()
        ):
            raise ReportError(
                "lift JSON must map skill names to numbers",
                where=path,
                fix="write a JSON object {skill: lift}",
            )
        return {str(k): float(v) for k, v in data.items() if not math.isnan(float(v))}
    import pandas as pd

    try:
        frame = pd.read_parquet(path)
    except (OSError, ValueError) as exc:
        raise ReportError(
            f"cannot read trials table: {exc}",
            where=path,
            fix="pass the trials.parquet written by aces-bench",
        ) from None
    return lift_from_trials(frame)


def _keyed(results: list[SkillResult], values: Mapping[str, float]) -> dict[str, float]:
    """Scores keyed by skill name (when unique in the corpus) and by skill id."""
    names: dict[str, int] = {}
    for r in results:
        names[r.skill] = names.get(r.skill, 0) + 1
    out = {}
    for r in results:
        if r.skill_id in values:
            out[r.skill_id] = values[r.skill_id]
            if names[r.skill] == 1:
                out[r.skill] = values[r.skill_id]
    return out


def static_vs_live(
    results: list[SkillResult],
    lift: Mapping[str, float],
    rubric_means: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """Spearman (with Fisher-z 95% CI) of Tier 1, and Tier 2 when present, against lift."""
    tier1 = _keyed(
        results, {r.skill_id: r.score for r in results if r.score is not None}
    )
    matched = sorted(k for k in lift if k in tier1)
    out: dict[str, Any] = {
        "n_live_skills": len(lift),
        "matched": matched,
        "unmatched_live": sorted(k for k in lift if k not in tier1),
        "tier1": correlate([tier1[k] for k in matched], [lift[k] for k in matched]),
        "tier2": None,
    }
    if rubric_means:
        tier2 = _keyed(results, rubric_means)
        m2 = sorted(k for k in lift if k in tier2)
        out["tier2"] = correlate([tier2[k] for k in m2], [lift[k] for k in m2])
    return out
