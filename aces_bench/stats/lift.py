"""Skill Lift: the mean paired difference (with skill minus baseline), per group and pooled.

Every summary is computed over the pairs whose lift is defined (both sides scored); the
count of such pairs is ``n`` and of their cases ``n_cases``. A group with no scored pair
keeps its row with ``n = 0`` and empty (None) statistics; one pair gives a mean but no SD
and no CI. The interval is ``inference.clustered_mean``: cluster-robust by case with t on
cases - 1 df (the paired t interval when each case has one pair), clipped to [-1, 1]
with a note; no observed variation gives no interval and the note
"no variation observed (n = ...)". ``adj_ci_lo``/``adj_ci_hi`` are the same interval at
the Bonferroni level 1 - alpha/m over the m groups of a table that have an interval
(what a gate over m skills must use; Holm's step-down has no simpler interval).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from aces_bench.core.order import natural_key
from aces_bench.core.outcomes import OUTCOMES
from aces_bench.records.trials import CELL_KEY, PAIR_KEY
from aces_bench.stats.inference import (
    CASE_CLUSTER,
    CONFIG_CLUSTER,
    FEASIBLE_LIFT,
    cluster_codes,
    clustered_mean,
    interval_at,
)
from aces_bench.stats.pairing import check_outcome

LIFT_FIELDS = (
    "n", "n_cases", "mean_with", "mean_base", "lift", "sd", "se", "ci_lo", "ci_hi", "df", "ci_method", "ci_note",
    "design_effect", "no_variation", "n_pos", "n_zero", "n_neg", "median", "share_pos",
)
ADJUSTED_FIELDS = ("adj_ci_lo", "adj_ci_hi", "adjustment")


def z_value(level: float) -> float:
    """Two-sided standard-normal quantile for a confidence ``level`` in (0, 1)."""
    from scipy.stats import norm

    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")
    return float(norm.ppf(0.5 + level / 2.0))


def _num(x: float) -> float | None:
    return None if x is None or not math.isfinite(x) else float(x)


def summarise_lift(with_vals: np.ndarray, base_vals: np.ndarray, *, level: float = 0.95,
                   clusters=None, clusters_2=None, adjusted_level: float | None = None) -> dict[str, Any]:
    """Lift summary of aligned paired values; pairs with either side NaN are left out.

    Promises the keys in ``LIFT_FIELDS`` (and ``adj_ci_lo``/``adj_ci_hi``, the interval
    at ``adjusted_level`` when given). ``clusters`` labels each pair's case (None:
    every pair its own case); ``clusters_2`` a crossed configuration for two-way
    clustering. Counts are exact (zero means exactly zero difference).
    """
    w = np.asarray(with_vals, dtype=float)
    b = np.asarray(base_vals, dtype=float)
    keep = ~(np.isnan(w) | np.isnan(b))
    d = w - b
    if clusters is None:
        clusters = np.arange(d.size)
    cm = clustered_mean(d, clusters, clusters_2, level=level)
    w, b, d = w[keep], b[keep], d[keep]
    n = int(d.size)
    out: dict[str, Any] = dict.fromkeys(LIFT_FIELDS)
    out.update(n=n, n_cases=cm.n_clusters if n else 0, n_pos=int((d > 0).sum()), n_zero=int((d == 0).sum()),
               n_neg=int((d < 0).sum()), no_variation=cm.no_variation, ci_note=cm.note)
    if n == 0:
        return out
    out.update(
        mean_with=float(w.mean()), mean_base=float(b.mean()), lift=cm.estimate,
        median=float(np.median(d)), share_pos=out["n_pos"] / n,
    )
    if n >= 2:
        out.update(sd=float(d.std(ddof=1)), se=cm.se, ci_lo=cm.ci_lo, ci_hi=cm.ci_hi, df=cm.df,
                   ci_method=cm.method if cm.ci_lo is not None else None, design_effect=cm.design_effect)
    if adjusted_level is not None:
        out["adj_ci_lo"], out["adj_ci_hi"] = interval_at(cm, adjusted_level)
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
    two_way: bool | None = None,
) -> pd.DataFrame:
    """One row per (group in ``by``, outcome) with the ``LIFT_FIELDS`` of its pairs, and
    the ``ADJUSTED_FIELDS`` (Bonferroni over the groups of each outcome).

    ``by=()`` pools every pair (one row per outcome), two-way clustered by case x
    configuration unless ``two_way=False``; grouped rows cluster by case. Groups come
    from every paired row, so a group whose pairs are all unscored appears with ``n = 0``.
    """
    from scipy.stats import t as student_t

    two_way = (not by) if two_way is None else two_way
    cases = cluster_codes(pairs, CASE_CLUSTER) if set(CASE_CLUSTER) <= set(pairs.columns) else None
    configs = cluster_codes(pairs, CONFIG_CLUSTER) if two_way and set(CONFIG_CLUSTER) <= set(pairs.columns) else None
    positions = pd.Series(np.arange(len(pairs)), index=pairs.index)
    groups = list(_groups(pairs, by))
    rows = []
    for o in outcomes:
        check_outcome(o)
        computed = []
        for key, part in groups:
            idx = positions.loc[part.index].to_numpy()
            args = {"clusters": cases[idx] if cases is not None else None,
                    "clusters_2": configs[idx] if configs is not None else None}
            computed.append((key, part, args, summarise_lift(part[f"with_{o}"].to_numpy(float),
                                                             part[f"base_{o}"].to_numpy(float), level=level, **args)))
        m = sum(1 for *_, st in computed if st["ci_lo"] is not None)
        adj_level = 1 - (1 - level) / max(m, 1)
        for key, _part, _args, st in computed:
            st.update(dict.fromkeys(ADJUSTED_FIELDS))
            if st["ci_lo"] is not None:
                if m <= 1:
                    st.update(adj_ci_lo=st["ci_lo"], adj_ci_hi=st["ci_hi"], adjustment="none (one group)")
                else:
                    half = float(student_t.ppf(0.5 + adj_level / 2.0, st["df"])) * st["se"]
                    lo, hi = FEASIBLE_LIFT
                    st.update(adj_ci_lo=max(lo, st["lift"] - half), adj_ci_hi=min(hi, st["lift"] + half),
                              adjustment=f"Bonferroni over {m} groups ({100 * adj_level:.4g}% each)")
            rows.append({**key, "outcome": o, **st})
    frame = pd.DataFrame(rows, columns=[*by, "outcome", *LIFT_FIELDS, *ADJUSTED_FIELDS])
    if by:  # one row per (group, outcome), groups in natural order (n5 before n10)
        frame = frame.sort_values([*by, "outcome"], key=lambda c: c.map({o: i for i, o in enumerate(outcomes)})
                                  if c.name == "outcome" else natural_order(c), kind="stable").reset_index(drop=True)
    return frame


def natural_order(column: pd.Series) -> pd.Series:
    """The column's values replaced by their rank in natural order (for ``sort_values(key=...)``)."""
    ranks = {v: i for i, v in enumerate(sorted(column.dropna().unique(), key=natural_key))}
    return column.map(ranks)


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
