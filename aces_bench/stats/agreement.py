"""Agreement of a judge panel, per judged metric: ICC(A,1) with its interval and Cohen's kappa per pair.

Items are the trials every judge of the panel scored (a judge that abstained is left
out of nothing but that item). ICC(A,1) (two-way random effects, absolute agreement,
single rater; McGraw & Wong 1996, case 2A) is taken over the metric's scores with the
F-based confidence interval of that paper; Cohen's kappa per pair of judges over the
pass/fail the scores give (score >= 0.5), with its asymptotic interval (kappa -/+ z
times the asymptotic standard error statsmodels' ``cohens_kappa`` reports, clipped to
[-1, 1]). Undefined values (fewer
than two items, no variance, one category only) are None with the reason, never 0.
"""

from __future__ import annotations

from itertools import combinations

import numpy as np

from aces_bench.records.stats import AgreementRow, KappaPair

# Koo & Li (2016): < 0.5 poor, 0.5-0.75 moderate, 0.75-0.9 good, > 0.9 excellent.
BANDS = ((0.9, "excellent"), (0.75, "good"), (0.5, "moderate"), (float("-inf"), "poor"))
PASS_AT = 0.5


def icc_a1(scores: np.ndarray, level: float = 0.95) -> tuple[float | None, tuple[float, float] | None, str | None]:
    """(ICC(A,1), its confidence interval, why undefined) for an items x judges matrix."""
    from scipy import stats as sps

    x = np.asarray(scores, dtype=float)
    n, k = x.shape if x.ndim == 2 else (0, 0)
    if n < 2 or k < 2:
        return None, None, f"needs 2+ items and 2+ judges (has {n} x {k})"
    grand = x.mean()
    msr = k * ((x.mean(axis=1) - grand) ** 2).sum() / (n - 1)
    msc = n * ((x.mean(axis=0) - grand) ** 2).sum() / (k - 1)
    sse = ((x - x.mean(axis=1, keepdims=True) - x.mean(axis=0, keepdims=True) + grand) ** 2).sum()
    mse = sse / ((n - 1) * (k - 1))
    denom = msr + (k - 1) * mse + k * (msc - mse) / n
    if denom <= 0 or (msr == 0 and mse == 0):
        return None, None, "no variance in the scores"
    icc = (msr - mse) / denom
    alpha = 1 - level
    if icc >= 1 or mse == 0:
        return float(icc), None, None
    a = k * icc / (n * (1 - icc))
    b = 1 + k * icc * (n - 1) / (n * (1 - icc))
    v = (a * msc + b * mse) ** 2 / ((a * msc) ** 2 / (k - 1) + (b * mse) ** 2 / ((n - 1) * (k - 1)))
    f_low = sps.f.ppf(1 - alpha / 2, n - 1, v)
    f_up = sps.f.ppf(1 - alpha / 2, v, n - 1)
    lo = n * (msr - f_low * mse) / (f_low * (k * msc + (k * n - k - n) * mse) + n * msr)
    hi = n * (f_up * msr - mse) / (k * msc + (k * n - k - n) * mse + n * f_up * msr)
    return float(icc), (float(lo), float(hi)), None


def cohen_kappa(a: list[bool], b: list[bool], level: float = 0.95) -> tuple[float | None, tuple[float, float] | None,
                                                                            str | None]:
    """(Cohen's kappa, its asymptotic interval, why undefined) of two judges' pass/fail over the same items."""
    from scipy import stats as sps
    from statsmodels.stats.inter_rater import cohens_kappa

    if len(a) < 2:
        return None, None, f"needs 2+ items (has {len(a)})"
    table = np.zeros((2, 2))
    for x, y in zip(a, b, strict=True):
        table[int(x), int(y)] += 1
    expected = table.sum(axis=1) @ table.sum(axis=0) / table.sum() ** 2
    if np.isclose(expected, 1.0):
        return None, None, "both judges gave one category only: kappa is undefined"
    with np.errstate(divide="ignore", invalid="ignore"):  # its z-test divides by a null-variance of 0 at times
        res = cohens_kappa(table)
    if not (np.isfinite(res.std_kappa) and res.std_kappa > 0):
        return float(res.kappa), None, None
    z = sps.norm.ppf(1 - (1 - level) / 2)  # statsmodels' interval is kappa -/+ z * ASE at 95%; any level here
    lo, hi = float(res.kappa - z * res.std_kappa), float(res.kappa + z * res.std_kappa)
    return float(res.kappa), (max(-1.0, lo), min(1.0, hi)), None


def band(icc: float | None) -> str | None:
    return None if icc is None else next(label for floor, label in BANDS if icc >= floor)


def panel_agreement(per_item: dict[str, list[dict[str, float | None]]], aggregate: str,
                    level: float = 0.95) -> list[AgreementRow]:
    """One row per metric from ``metric -> [ {judge: score or None} per trial ]``."""
    rows = []
    for metric, items in sorted(per_item.items()):
        judges = sorted({j for it in items for j in it})
        if len(judges) < 2:
            continue
        full = [[it[j] for j in judges] for it in items if all(it.get(j) is not None for j in judges)]
        icc, ci, why = icc_a1(np.array(full), level) if full else (None, None, "no trial was scored by every judge")
        kappas = []
        for i, j in combinations(range(len(judges)), 2):
            pairs = [(it[judges[i]], it[judges[j]]) for it in items
                     if it.get(judges[i]) is not None and it.get(judges[j]) is not None]
            kap, kci, kwhy = cohen_kappa([x >= PASS_AT for x, _ in pairs], [y >= PASS_AT for _, y in pairs], level)
            kappas.append(KappaPair(judges=(judges[i], judges[j]), n=len(pairs), kappa=kap, ci=kci, note=kwhy))
        rows.append(AgreementRow(metric=metric, judges=judges, aggregate=aggregate, n_items=len(full), icc=icc,
                                 icc_ci=ci, band=band(icc), kappas=kappas, note=why))
    return rows
