"""Does a static score predict live Skill Lift? Spearman's rho with a Fisher-z interval.

The interval is the Fisher transform of rho with standard error 1/sqrt(n - 3), the
same construction scipy uses for Pearson's r (Spearman's rho is Pearson's r on ranks).
It needs n >= 4; smaller samples give rho without an interval.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd

from aces_bench.core.errors import ReportError
from aces_bench.core.outcomes import OUTCOME
from aces_bench.records.stats import Correlation
from aces_bench.stats.lift import z_value
from aces_bench.stats.pairing import check_outcome


def fisher_z_interval(r: float, n: int, level: float = 0.95) -> tuple[float, float]:
    """CI of a correlation ``r`` from ``n`` pairs: tanh(atanh(r) -/+ z / sqrt(n - 3))."""
    if n < 4:
        raise ValueError("Fisher-z interval needs n >= 4")
    with np.errstate(divide="ignore"):
        z = float(np.arctanh(np.clip(r, -1.0, 1.0)))
    half = z_value(level) / math.sqrt(n - 3)
    return float(np.tanh(z - half)), float(np.tanh(z + half))


def spearman_ci(x, y, *, x_name: str = "x", y_name: str = "y", level: float = 0.95) -> Correlation:
    """Spearman's rho of ``x`` and ``y`` over positions where both are finite.

    Dropped positions are counted in ``n_dropped``. Constant input or n < 3 gives rho
    None; n < 4 gives no interval.
    """
    from scipy.stats import spearmanr

    xa, ya = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    keep = np.isfinite(xa) & np.isfinite(ya)
    xa, ya = xa[keep], ya[keep]
    n = int(xa.size)
    base = {"x": x_name, "y": y_name, "n": n, "n_dropped": int((~keep).sum()), "level": level}
    empty = {"rho": None, "p_value": None, "ci_lo": None, "ci_hi": None}
    if n < 3:
        return Correlation(**base, **empty, note=f"needs 3+ complete pairs, got {n}")
    if np.ptp(xa) == 0 or np.ptp(ya) == 0:
        return Correlation(**base, **empty, note="a series is constant: rank correlation undefined")
    res = spearmanr(xa, ya)
    rho, p = float(res.statistic), float(res.pvalue)
    if n < 4:
        return Correlation(**base, rho=rho, p_value=p, ci_lo=None, ci_hi=None, note="Fisher-z interval needs 4+ pairs")
    lo, hi = fisher_z_interval(rho, n, level)
    return Correlation(**base, rho=rho, p_value=p, ci_lo=lo, ci_hi=hi)


def skill_lift(pairs: pd.DataFrame, outcome: str = OUTCOME) -> pd.DataFrame:
    """Each skill's live lift: the mean paired lift over its pairs scored on both sides.

    Negative controls are left out (their with-skill minus baseline difference measures
    not triggering, not the skill's benefit). The one definition of per-skill lift for
    the static tier (``scan --live``) and the report alike. Columns: skill, lift, n_pairs.
    """
    check_outcome(outcome)
    column = f"lift_{outcome}"
    scored = pairs.loc[pairs[column].notna()]
    if "negative_control" in scored.columns:
        scored = scored.loc[~scored["negative_control"].fillna(False).astype(bool)]
    return scored.groupby("skill")[column].agg(lift="mean", n_pairs="size").reset_index()


def static_lift_correlation(
    static: pd.DataFrame | Mapping[str, float],
    pairs: pd.DataFrame,
    *,
    score: str = "score",
    outcome: str = OUTCOME,
    level: float = 0.95,
) -> tuple[Correlation, pd.DataFrame]:
    """Spearman between a per-skill static score and the skill's live lift (``skill_lift``).

    ``static`` is a mapping skill -> score or a frame with columns ``skill`` and
    ``score``. Returns the correlation and the joined per-skill frame (skill, static,
    lift, n_pairs); skills on one side only stay in the frame with NaN and are counted
    in ``n_dropped``.
    """
    check_outcome(outcome)
    if isinstance(static, Mapping):
        static = pd.DataFrame({"skill": list(static), score: list(static.values())})
    missing = [c for c in ("skill", score) if c not in static.columns]
    if missing:
        raise ReportError(f"static scores lack column(s): {', '.join(missing)}", where="static scores",
                          fix=f"give a frame with columns 'skill' and {score!r}, one row per skill")
    if static["skill"].duplicated().any():
        dup = static.loc[static["skill"].duplicated(), "skill"].iloc[0]
        raise ReportError(f"skill {dup!r} has more than one static score", where="static scores",
                          fix="give one score per skill")
    column = f"lift_{outcome}"
    live = skill_lift(pairs, outcome)
    joined = static[["skill", score]].rename(columns={score: "static"}).merge(live, on="skill", how="outer")
    joined = joined.sort_values("skill", kind="stable").reset_index(drop=True)
    corr = spearman_ci(joined["static"], joined["lift"], x_name=score, y_name=column, level=level)
    return corr, joined
