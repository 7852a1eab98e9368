"""Skill Lift: the mean paired difference (with skill minus baseline), per group and pooled.

Every summary is computed over the pairs whose lift is defined (both sides scored); the
count of such pairs is ``n``. A group with no scored pair keeps its row with ``n = 0``
and empty (None) statistics; one pair gives a mean but no SD and no CI.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import norm

from aces_bench.records import CELL_KEY, PAIR_KEY
from aces_bench.stats.pairing import OUTCOMES, check_outcome

LIFT_FIELDS = (
    "n", "mean_with", "mean_base", "lift", "sd", "se", "ci_lo", "ci_hi",
    "n_pos", "n_zero", "n_neg", "median", "share_pos",
)


def z_value(level: float) -> float:
    """Two-sided standard-normal quantile for a confidence ``level`` in (0, 1)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")
    return float(norm.ppf(0.5 + level / 2.0))


def _num(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def summarise_lift(with_vals: np.ndarray, base_vals: np.ndarray, *, level: float = 0.95) -> dict[str, Any]:
    """Lift summary of aligned paired values; pairs with either side NaN are left out.

    Promises the keys in ``LIFT_FIELDS``. ``ci_lo``/``ci_hi`` is the paired-case normal
    interval mean +/- z * sd / sqrt(n); None when ``n < 2``. Counts are exact
    (zero means exactly zero difference).
    """
    w = np.asarray(with_vals, dtype=float)
    b = np.asarray(base_vals, dtype=float)
    keep = ~(np.isnan(w) | np.isnan(b))
    w, b = w[keep], b[keep]
    d = w - b
    n = int(d.size)
    out: dict[str, Any] = dict.fromkeys(LIFT_FIELDS)
    out.update(n=n, n_pos=int((d > 0).sum()), n_zero=int((d == 0).sum()), n_neg=int((d < 0).sum()))
    if n == 0:
        return out
    mean = float(d.mean())
    out.update(
        mean_with=float(w.mean()), mean_base=float(b.mean()), lift=mean,
        median=float(np.median(d)), share_pos=out["n_pos"] / n,
    )
    if n >= 2:
        sd = float(d.std(ddof=1))
        se = sd / math.sqrt(n)
        half = z_value(level) * se
        out.update(sd=sd, se=se, ci_lo=mean - half, ci_hi=mean + half)
    return {k: (_num(v) if isinstance(v, float) else v) for k, v in out.items()}


def _groups(frame: pd.DataFrame, by: Sequence[str]):
    if not by:
        yield {}, frame
        return
    for key, part in frame.groupby(list(by), sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        yield dict(zip(by, key, strict=True)), part


def lift_table(
    pairs: pd.DataFrame,
    *,
    by: Sequence[str] = CELL_KEY,
    outcomes: Sequence[str] = OUTCOMES,
    level: float = 0.95,
) -> pd.DataFrame:
    """One row per (group in ``by``, outcome) with the ``LIFT_FIELDS`` of its pairs.

    ``by=()`` pools every pair (one row per outcome). Groups come from every paired row,
    so a group whose pairs are all unscored appears with ``n = 0``.
    """
    rows = []
    for key, part in _groups(pairs, by):
        for o in outcomes:
            check_outcome(o)
            stats = summarise_lift(part[f"with_{o}"].to_numpy(float), part[f"base_{o}"].to_numpy(float), level=level)
            rows.append({**key, "outcome": o, **stats})
    return pd.DataFrame(rows, columns=[*by, "outcome", *LIFT_FIELDS])


def pooled_lift(pairs: pd.DataFrame, *, outcomes: Sequence[str] = OUTCOMES, level: float = 0.95) -> pd.DataFrame:
    """Lift over all pairs, one row per outcome (``lift_table`` with no grouping)."""
    return lift_table(pairs, by=(), outcomes=outcomes, level=level)


def within_cell_sd(
    pairs: pd.DataFrame,
    *,
    by: Sequence[str] = CELL_KEY,
    outcomes: Sequence[str] = OUTCOMES,
) -> pd.DataFrame:
    """Run-to-run spread of each group's score where the group repeats trials (attempts).

    For each (group, outcome, condition in with_skill/baseline/lift): the score of one
    attempt is the mean over its scored cases; ``sd_between_attempts`` is the SD
    (ddof=1) of those scores across attempts; ``pooled_within_case_sd`` is the square
    root of the mean, over cases with two or more scored attempts, of each case's
    variance across attempts. Groups with a single attempt are left out (there is no
    repetition to measure); a spread needing two values and having fewer is None.
    """
    case_cols = [k for k in PAIR_KEY if k not in by and k != "attempt"]
    cols = [*by, "outcome", "condition", "n_attempts", "n_cases", "sd_between_attempts", "pooled_within_case_sd"]
    rows = []
    for key, part in _groups(pairs, by):
        if part["attempt"].nunique() < 2:
            continue
        for o in outcomes:
            check_outcome(o)
            for condition, column in (("with_skill", f"with_{o}"), ("baseline", f"base_{o}"), ("lift", f"lift_{o}")):
                scored = part.loc[part[column].notna()]
                per_attempt = scored.groupby("attempt")[column].mean()
                if case_cols:
                    by_case = scored.groupby(case_cols, dropna=False)[column]
                    case_var = by_case.var(ddof=1).dropna()
                    n_cases = by_case.ngroups
                else:
                    case_var = pd.Series([scored[column].var(ddof=1)]).dropna()
                    n_cases = int(len(scored) > 0)
                rows.append({
                    **key, "outcome": o, "condition": condition,
                    "n_attempts": int(per_attempt.size), "n_cases": int(n_cases),
                    "sd_between_attempts": _num(float(per_attempt.std(ddof=1))) if per_attempt.size >= 2 else None,
                    "pooled_within_case_sd": _num(math.sqrt(float(case_var.mean()))) if len(case_var) else None,
                })
    return pd.DataFrame(rows, columns=cols)
