"""Cluster bootstrap CIs for Skill Lift: resample whole clusters (skills, or cells).

Pairs in a cluster share a skill (and maybe an agent), so they are not independent;
resampling clusters keeps that dependence. The statistic is the pooled mean over all
pairs in the resampled clusters (a ratio of sums), the same estimator as the point lift.

Seed stream (so a slow loop can reproduce it): ``rng = numpy.random.default_rng(seed)``;
resample ``b`` draws ``u = rng.random(k)`` and takes clusters ``floor(u * k)``. Random
doubles use one 64-bit draw each, so drawing rows in chunks gives the same stream.
The interval is the percentile interval (``numpy.quantile``, linear).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
from pydantic import BaseModel

from aces_bench.core.outcomes import OUTCOMES
from aces_bench.records.stats import DEFAULT_RESAMPLES
from aces_bench.records.trials import CELL_KEY
from aces_bench.stats.pairing import check_outcome

CLUSTERINGS: dict[str, tuple[str, ...]] = {"case": ("skill", "case_id"), "skill": ("skill",), "cell": CELL_KEY}
RESAMPLED = {
    "case": "whole cases (all attempts and configurations of a case together)",
    "skill": "whole skills (all their cases together)",
    "cell": "cells: skill x harness x model x workspace mode (where each cell is one row, this is a row bootstrap)",
}
_CHUNK_VALUES = 2_000_000  # bound memory per chunk (rows x clusters x columns)


class BootstrapCI(BaseModel):
    """A cluster bootstrap interval. ``ci_lo``/``ci_hi`` are None with a ``note`` when undefined."""

    estimate: float | None
    ci_lo: float | None
    ci_hi: float | None
    boot_se: float | None
    n: int
    n_clusters: int
    n_resamples: int
    n_valid_resamples: int
    seed: int
    level: float
    note: str | None = None


def cluster_indices(rng: np.random.Generator, n_rows: int, k: int) -> np.ndarray:
    """``n_rows`` resamples of ``k`` cluster indices, following the documented seed stream."""
    return np.floor(rng.random((n_rows, k)) * k).astype(np.intp)


def resampled_sums(table: np.ndarray, *, n_resamples: int, seed: int) -> np.ndarray:
    """Column sums of ``table`` (clusters x columns) over ``n_resamples`` cluster resamples.

    Returns an array (n_resamples, columns). Vectorised in chunks; the result does not
    depend on the chunk size.
    """
    table = np.asarray(table, dtype=float)
    k, m = table.shape
    rng = np.random.default_rng(seed)
    out = np.empty((n_resamples, m))
    step = max(1, _CHUNK_VALUES // max(1, k * m))
    for start in range(0, n_resamples, step):
        rows = min(step, n_resamples - start)
        idx = cluster_indices(rng, rows, k)
        if m == 1:
            out[start:start + rows, 0] = table[idx, 0].sum(axis=1)
        else:
            for j in range(m):  # column by column keeps the gather 2-D and cache friendly
                out[start:start + rows, j] = table[:, j][idx].sum(axis=1)
    return out


def _cluster_table(values: np.ndarray, clusters: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per-cluster (sum, count) of the non-NaN values; clusters without values are left out."""
    values = np.asarray(values, dtype=float)
    keep = ~np.isnan(values)
    codes, _ = pd.factorize(pd.Series(np.asarray(clusters, dtype=object)[keep]), sort=True)
    k = int(codes.max()) + 1 if codes.size else 0
    sums = np.bincount(codes, weights=values[keep], minlength=k)
    counts = np.bincount(codes, minlength=k).astype(float)
    return sums, counts


def _interval(stats: np.ndarray, level: float) -> tuple[float, float, float, int]:
    valid = stats[np.isfinite(stats)]
    alpha = 1.0 - level
    lo, hi = np.quantile(valid, [alpha / 2, 1 - alpha / 2])
    return float(lo), float(hi), float(valid.std(ddof=1)) if valid.size > 1 else float("nan"), int(valid.size)


def cluster_bootstrap(
    values: np.ndarray,
    clusters: np.ndarray,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> BootstrapCI:
    """Percentile CI of the pooled mean of ``values`` resampling ``clusters``.

    NaN values are ignored (and not counted in ``n``). Fewer than two clusters give an
    estimate without interval and a ``note`` saying why.
    """
    sums, counts = _cluster_table(values, clusters)
    n, k = int(counts.sum()), int(sums.size)
    base = {"n": n, "n_clusters": k, "n_resamples": n_resamples, "seed": seed, "level": level}
    if n == 0:
        return BootstrapCI(estimate=None, ci_lo=None, ci_hi=None, boot_se=None, n_valid_resamples=0, note="no scored pairs", **base)
    estimate = float(sums.sum() / n)
    finite = np.asarray(values, dtype=float)
    finite = finite[~np.isnan(finite)]
    if np.ptp(finite) == 0:  # every resample gives the estimate: a zero-width interval would claim certainty
        return BootstrapCI(estimate=estimate, ci_lo=None, ci_hi=None, boot_se=None, n_valid_resamples=0,
                           note=f"no variation observed (n = {n})", **base)
    if k < 2:
        return BootstrapCI(estimate=estimate, ci_lo=None, ci_hi=None, boot_se=None, n_valid_resamples=0,
                           note="fewer than 2 clusters: cluster bootstrap undefined", **base)
    if np.ptp(sums / counts) <= 1e-12 * max(1.0, abs(estimate)):
        # Every cluster's mean is the same (its attempts vary): every resample gives the
        # estimate again, and a zero-width interval would claim certainty.
        return BootstrapCI(estimate=estimate, ci_lo=None, ci_hi=None, boot_se=None, n_valid_resamples=0,
                           note=f"no variation observed (n = {n})", **base)
    boot = resampled_sums(np.column_stack([sums, counts]), n_resamples=n_resamples, seed=seed)
    lo, hi, se, n_valid = _interval(boot[:, 0] / boot[:, 1], level)
    return BootstrapCI(estimate=estimate, ci_lo=lo, ci_hi=hi, boot_se=se, n_valid_resamples=n_valid, **base)


def cluster_bootstrap_difference(
    values_a: np.ndarray,
    clusters_a: np.ndarray,
    values_b: np.ndarray,
    clusters_b: np.ndarray,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> BootstrapCI:
    """Percentile CI of mean(a) - mean(b), resampling the union of clusters jointly.

    A cluster drawn contributes its ``a`` and its ``b`` pairs together, which keeps a
    skill's two arms linked. Resamples with no ``a`` or no ``b`` pair are undefined and
    left out; ``n_valid_resamples`` counts the rest.
    """
    a, b = np.asarray(values_a, float), np.asarray(values_b, float)
    ka, kb = ~np.isnan(a), ~np.isnan(b)
    labels = pd.Series(np.concatenate([np.asarray(clusters_a, object)[ka], np.asarray(clusters_b, object)[kb]]))
    codes, _ = pd.factorize(labels, sort=True)
    k = int(codes.max()) + 1 if codes.size else 0
    ca, cb = codes[: int(ka.sum())], codes[int(ka.sum()):]
    table = np.column_stack([
        np.bincount(ca, weights=a[ka], minlength=k), np.bincount(ca, minlength=k),
        np.bincount(cb, weights=b[kb], minlength=k), np.bincount(cb, minlength=k),
    ]).astype(float) if k else np.zeros((0, 4))
    n = int(ka.sum() + kb.sum())
    base = {"n": n, "n_clusters": k, "n_resamples": n_resamples, "seed": seed, "level": level}
    if not ka.any() or not kb.any():
        return BootstrapCI(estimate=None, ci_lo=None, ci_hi=None, boot_se=None, n_valid_resamples=0,
                           note="one side has no scored pairs", **base)
    estimate = float(a[ka].mean() - b[kb].mean())
    if k < 2:
        return BootstrapCI(estimate=estimate, ci_lo=None, ci_hi=None, boot_se=None, n_valid_resamples=0,
                           note="fewer than 2 clusters: cluster bootstrap undefined", **base)
    boot = resampled_sums(table, n_resamples=n_resamples, seed=seed)
    with np.errstate(invalid="ignore", divide="ignore"):
        stats = boot[:, 0] / boot[:, 1] - boot[:, 2] / boot[:, 3]
    if not np.isfinite(stats).any():
        return BootstrapCI(estimate=estimate, ci_lo=None, ci_hi=None, boot_se=None, n_valid_resamples=0,
                           note="no resample held both sides", **base)
    lo, hi, se, n_valid = _interval(stats, level)
    return BootstrapCI(estimate=estimate, ci_lo=lo, ci_hi=hi, boot_se=se if np.isfinite(se) else None,
                       n_valid_resamples=n_valid, **base)


def bootstrap_table(
    pairs: pd.DataFrame,
    *,
    clusterings: Sequence[str] = tuple(CLUSTERINGS),
    outcomes: Sequence[str] = OUTCOMES,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Pooled lift with a cluster bootstrap CI per (clustering, outcome), one row each."""
    rows = []
    for name in clusterings:
        if name not in CLUSTERINGS:
            raise ValueError(f"unknown clustering {name!r}; valid: {', '.join(CLUSTERINGS)}")
        cols = list(CLUSTERINGS[name])
        labels = pairs.groupby(cols, dropna=False, sort=True).ngroup().to_numpy()
        for o in outcomes:
            check_outcome(o)
            ci = cluster_bootstrap(pairs[f"lift_{o}"].to_numpy(float), labels, n_resamples=n_resamples, seed=seed, level=level)
            rows.append({"clustering": name, "resampled": RESAMPLED[name], "outcome": o, **ci.model_dump()})
    return pd.DataFrame(rows, columns=["clustering", "resampled", "outcome", *BootstrapCI.model_fields])
