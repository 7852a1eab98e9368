"""Rank and linear correlation with Fisher-z confidence intervals. Pure functions."""

from __future__ import annotations

import math
from typing import Any

from scipy import stats as sps

MIN_N_FOR_CI = 4


def fisher_ci(r: float, n: int, level: float = 0.95) -> tuple[float, float] | None:
    """CI for a correlation via atanh with standard error 1/sqrt(n-3); None when n < 4."""
    if n < MIN_N_FOR_CI or math.isnan(r):
        return None
    z = math.atanh(max(min(r, 1 - 1e-12), -1 + 1e-12))
    half = sps.norm.ppf(0.5 + level / 2) / math.sqrt(n - 3)
    return round(math.tanh(z - half), 4), round(math.tanh(z + half), 4)


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
    rho, p = sps.spearmanr(xs, ys)
    r, _ = sps.pearsonr(xs, ys)
    out.update(
        spearman=round(float(rho), 4),
        spearman_p=round(float(p), 4),
        spearman_ci95=fisher_ci(float(rho), n),
        pearson=round(float(r), 4),
        pearson_ci95=fisher_ci(float(r), n),
    )
    if n < MIN_N_FOR_CI:
        out["detail"] = "n < 4: no confidence interval"
    return out
