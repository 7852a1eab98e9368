"""Rank and linear correlation with Fisher-z confidence intervals, as the static report shows them.

The statistics are ``aces_bench.stats.correlation``'s (``spearman_ci``,
``fisher_z_interval``): one Spearman and one Fisher-z for the scan and the study
report. This module only adds Pearson's r and the rounded dict the scan writes.
"""

from __future__ import annotations

import math
from typing import Any

MIN_N_FOR_CI = 4


def fisher_ci(r: float, n: int, level: float = 0.95) -> tuple[float, float] | None:
    """``stats.correlation.fisher_z_interval`` rounded to 4 places; None when n < 4 or r is NaN."""
    if n < MIN_N_FOR_CI or math.isnan(r):
        return None
    # Imported on first use (scipy costs ~1 s): a scan may never correlate.
    from aces_bench.stats.correlation import fisher_z_interval

    lo, hi = fisher_z_interval(r, n, level)
    return round(lo, 4), round(hi, 4)


def correlate(xs: list[float], ys: list[float]) -> dict[str, Any]:
    """Spearman and Pearson with Fisher-z 95% CIs. Undefined values are None with a reason."""
    n = len(xs)
    out: dict[str, Any] = {
        "n": n,
        "spearman": None,
        "spearman_ci95": None,
        "spearman_p": None,
        "pearson": None,
        "pearson_ci95": None,
        "detail": "",
    }
    if n < 3:
        out["detail"] = f"needs at least 3 paired skills, got {n}"
        return out
    if len(set(xs)) < 2 or len(set(ys)) < 2:
        out["detail"] = "one side is constant; correlation is undefined"
        return out
    from scipy import stats as sps

    from aces_bench.stats.correlation import spearman_ci

    rank = spearman_ci(xs, ys)
    r, _ = sps.pearsonr(xs, ys)
    out.update(
        spearman=round(float(rank.rho), 4),
        spearman_p=round(float(rank.p_value), 4),
        spearman_ci95=fisher_ci(float(rank.rho), n),
        pearson=round(float(r), 4),
        pearson_ci95=fisher_ci(float(r), n),
    )
    if n < MIN_N_FOR_CI:
        out["detail"] = "n < 4: no confidence interval"
    return out


# Koo & Li (2016) bands for ICC: < 0.5 poor, 0.5-0.75 moderate, 0.75-0.9 good, > 0.9 excellent.
ICC_BANDS = ((0.9, "excellent"), (0.75, "good"), (0.5, "moderate"), (float("-inf"), "poor"))
LOW_AGREEMENT = 0.5


def icc_a1(rows: list[list[float]]) -> float | None:
    """ICC(A,1): two-way random effects, absolute agreement, single rater (McGraw & Wong).

    ``rows`` are items (one list of k judges' scores each, same judge order). None when
    there are fewer than 2 items or 2 judges, or no variance at all.
    """
    n = len(rows)
    k = len(rows[0]) if rows else 0
    if n < 2 or k < 2:
        return None
    grand = sum(map(sum, rows)) / (n * k)
    row_means = [sum(r) / k for r in rows]
    col_means = [sum(r[j] for r in rows) / n for j in range(k)]
    ssr = k * sum((m - grand) ** 2 for m in row_means)
    ssc = n * sum((m - grand) ** 2 for m in col_means)
    sst = sum((x - grand) ** 2 for r in rows for x in r)
    sse = sst - ssr - ssc
    msr, msc = ssr / (n - 1), ssc / (k - 1)
    mse = sse / ((n - 1) * (k - 1))
    denom = msr + (k - 1) * mse + k * (msc - mse) / n
    if denom <= 0:
        return None
    return round((msr - mse) / denom, 4)


def weighted_kappa(a: list[int], b: list[int], lo: int = 0, hi: int = 10) -> float | None:
    """Cohen's kappa with quadratic weights on the ordinal scale lo..hi; None when undefined."""
    if len(a) != len(b) or len(a) < 2:
        return None
    cats = hi - lo + 1
    n = len(a)
    obs = [[0.0] * cats for _ in range(cats)]
    for x, y in zip(a, b, strict=True):
        obs[x - lo][y - lo] += 1 / n
    pa = [sum(row) for row in obs]
    pb = [sum(obs[i][j] for i in range(cats)) for j in range(cats)]
    num = den = 0.0
    for i in range(cats):
        for j in range(cats):
            w = (i - j) ** 2 / (cats - 1) ** 2
            num += w * obs[i][j]
            den += w * pa[i] * pb[j]
    if den == 0:
        return None
    return round(1 - num / den, 4)


def icc_band(icc: float | None) -> str | None:
    if icc is None:
        return None
    return next(label for floor, label in ICC_BANDS if icc >= floor)
