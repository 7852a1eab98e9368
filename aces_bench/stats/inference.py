"""The unit of inference: cases are the clusters, everything else nests in them.

A paired difference (with minus baseline) is one observation; observations of the same
case (its attempts, harnesses, models, configurations) share the case's difficulty and
are not independent. ``clustered_mean`` estimates the mean difference with a
cluster-robust (sandwich) standard error with the CR2 small-sample correction (Bell &
McCaffrey 2002; Pustejovsky & Tipton, JBES 2018) and a t interval on Bell-McCaffrey
(Satterthwaite-type) degrees of freedom (Imbens & Kolesar, REStat 2016): ``cr2_mean``.
With equal cluster sizes both equal statsmodels' CR1 (the G/(G-1) factor) and G - 1 df;
with few or unbalanced clusters (a case with many attempts beside cases with one) CR1's
variance is biased down and G - 1 df too many, and CR2 with its df corrects both. Two-way
clustering (case x
configuration; Cameron, Gelbach & Miller 2011) uses statsmodels' two-group sandwich and
min(G1, G2) - 1 degrees of freedom, when there are at least ``TWO_WAY_MIN_CONFIGS``
configurations (with fewer, by case only, and the label says so); a non-positive two-way variance falls back to the
larger one-way variance, with a note.

Small samples are honest: with one observation per cluster the interval is exactly the
paired t interval with n - 1 df; an interval reaching past what the outcome can take is
clipped to the feasible range with a note; no observed variation gives no interval, only
the note "no variation observed (n = ...)", and so does a cluster-robust variance that is
zero up to rounding (every case's mean the same while its attempts vary: the design
effect is 0 and a "se 1e-17" interval would have zero width).

The design effect is the clustered variance over the independent-observations variance
(s^2 / n); power and cases-needed plan with it (``planning``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from aces_bench.records.stats import ClusteredMean

CASE_CLUSTER = ("skill", "case_id")
CONFIG_CLUSTER = ("harness", "model")
FEASIBLE_LIFT = (-1.0, 1.0)
# Two-way clustering needs enough configurations to estimate their variance from (its df
# is min(G1, G2) - 1); with fewer, configurations are a handful of fixed design factors
# nested in every case and the case is the only cluster dimension.
TWO_WAY_MIN_CONFIGS = 5
_TOL = 1e-12
_SE_TOL = 1e-9  # a standard error below this (relative to the estimate) is rounding, not variation


def no_variation_note(n: int) -> str:
    return f"no variation observed (n = {n})"


def cr2_mean(y, clusters) -> tuple[float, float]:
    """(variance, Bell-McCaffrey df) of the mean of ``y`` clustered by ``clusters`` (CR2).

    The regression is on a constant (X = 1, n rows, G clusters of sizes n_g, p_g = n_g / n).
    Its hat matrix's block of cluster g is J / n, so CR2's adjustment (I - H_gg)^(-1/2)
    scales the cluster's residual sum by 1 / sqrt(1 - p_g):

        V = sum_g (sum_{i in g} e_i)^2 / (1 - p_g) / n^2.

    Bell-McCaffrey df = (sum lambda)^2 / sum lambda^2 over the eigenvalues of G'G, the
    columns G_g = (I - H)_{., g} A_g X_g (X'X)^{-1}: here G'G = D^(-1/2) (diag(p) - p p')
    D^(-1/2) / n with D = diag(1 - p) (under working independence). Balanced clusters
    give G/(G-1) times CR0 and G - 1 df, CR1's."""
    y = np.asarray(y, dtype=float)
    codes = _codes(np.asarray(clusters, dtype=object))
    n = y.size
    sizes = np.bincount(codes).astype(float)
    sizes = sizes[sizes > 0]
    p = sizes / n
    if np.any(p >= 1.0):
        raise ValueError("CR2 needs at least two clusters")
    sums = np.bincount(codes, weights=y - y.mean())
    sums = sums[np.bincount(codes) > 0]
    var = float((sums ** 2 / (1.0 - p)).sum() / n ** 2)
    scale = 1.0 / np.sqrt(1.0 - p)
    gtg = (np.diag(p) - np.outer(p, p)) * np.outer(scale, scale) / n
    lam = np.linalg.eigvalsh(gtg)
    lam = lam[lam > 1e-12 * lam.max()]
    df = float(lam.sum() ** 2 / (lam ** 2).sum())
    return var, float(round(df)) if abs(df - round(df)) < 1e-9 else df  # balanced: exactly G - 1


def _df_text(df: float) -> str:
    """Degrees of freedom as a reader sees them: whole when they are (to 0.01), else to 0.1."""
    return f"{round(df):d}" if abs(df - round(df)) < 0.01 else f"{df:.1f}"


def _codes(labels) -> np.ndarray:
    """Integer cluster codes of the labels, by their text; missing labels (None, NaN) are one level."""
    labels = np.asarray(labels, dtype=object)
    present = ~pd.isna(labels)
    codes = np.full(labels.size, -1)
    codes[present] = np.unique(labels[present].astype(str), return_inverse=True)[1].reshape(-1)
    return codes


def cluster_codes(frame: pd.DataFrame, columns: Sequence[str]) -> np.ndarray:
    """Integer cluster codes of ``frame``'s rows over ``columns`` (missing values are one level)."""
    if not len(frame):
        return np.zeros(0, dtype=int)
    return frame.groupby(list(columns), dropna=False, sort=True).ngroup().to_numpy()


def interval_at(cm: ClusteredMean, level: float, bounds: tuple[float, float] | None = FEASIBLE_LIFT
                ) -> tuple[float | None, float | None]:
    """The same estimate, SE and df as ``cm`` at another confidence ``level`` (clipped to ``bounds``)."""
    from scipy.stats import t as student_t

    if cm.ci_lo is None or cm.se is None or cm.df is None or cm.estimate is None:
        return None, None
    half = float(student_t.ppf(0.5 + level / 2.0, cm.df)) * cm.se
    lo, hi = cm.estimate - half, cm.estimate + half
    if bounds is not None:
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    return lo, hi


def _label(kind: str, k1: int, k2: int | None, df: float | None, names: tuple[str, str]) -> str:
    if kind == "iid":
        return f"paired t, df = {df:g} ({k1} pairs treated as independent)"
    if kind == "t":
        return f"paired t, df = {df:g} ({k1} {names[0]}s, one pair each)"
    if kind == "one-way":
        return (f"cluster-robust (CR2, Bell-McCaffrey df) by {names[0]}, t with {_df_text(df)} df "
                f"({k1} {names[0]}s)")
    return (f"two-way cluster-robust by {names[0]} x {names[1]}, t with {df:g} df "
            f"({k1} {names[0]}s x {k2} {names[1]}s)")


def clustered_mean(
    values,
    clusters=None,
    clusters_2=None,
    *,
    level: float = 0.95,
    bounds: tuple[float, float] | None = FEASIBLE_LIFT,
    names: tuple[str, str] = ("case", "configuration"),
) -> ClusteredMean:
    """Mean of ``values`` (NaN left out) with a cluster-robust t interval.

    ``clusters``: one label per value (None: every value its own cluster, giving the
    plain t interval). ``clusters_2``: a second crossed dimension for two-way
    clustering, used when it has ``TWO_WAY_MIN_CONFIGS`` or more levels among the scored values.
    ``bounds``: the feasible range of the statistic; an interval past it is clipped.
    """
    from scipy.stats import t as student_t

    if not 0.0 < level < 1.0:
        raise ValueError(f"confidence level must be in (0, 1), got {level}")
    y = np.asarray(values, dtype=float)
    keep = ~np.isnan(y)
    y = y[keep]
    n = int(y.size)
    g1 = np.arange(n) if clusters is None else _codes(np.asarray(clusters, dtype=object)[keep])
    g2 = None if clusters_2 is None else _codes(np.asarray(clusters_2, dtype=object)[keep])
    k1 = int(np.unique(g1).size)
    k2 = int(np.unique(g2).size) if g2 is not None else None
    two_way = g2 is not None and k2 is not None and k2 >= TWO_WAY_MIN_CONFIGS
    kind = "two-way" if two_way else ("iid" if clusters is None else "t" if k1 == n else "one-way")
    cluster_by = f"{names[0]} x {names[1]}" if two_way else names[0]
    base = {"n": n, "n_clusters": k1, "n_clusters_2": k2 if two_way else None, "level": level, "cluster_by": cluster_by}
    if n == 0:
        return ClusteredMean(estimate=None, se=None, ci_lo=None, ci_hi=None, df=None, method="no scored pairs",
                             note="no scored pairs", **base)
    estimate = float(y.mean())
    if n == 1:
        return ClusteredMean(estimate=estimate, se=None, ci_lo=None, ci_hi=None, df=None, method="none",
                             note="one pair: no interval", **base)
    if np.ptp(y) <= _TOL * max(1.0, float(np.abs(y).max())):
        return ClusteredMean(estimate=estimate, se=0.0, ci_lo=None, ci_hi=None, df=None,
                             method="none", no_variation=True, note=no_variation_note(n), **base)
    if k1 < 2 or (two_way and min(k1, k2) < 2):
        return ClusteredMean(estimate=estimate, se=None, ci_lo=None, ci_hi=None, df=None, method="none",
                             note=f"one {names[0]} only: no between-{names[0]} variation to build an interval from",
                             **base)
    iid_se = float(y.std(ddof=1) / math.sqrt(n))
    exog = np.ones((n, 1))
    note = None
    if two_way:
        # statsmodels costs half a second to import; only the two-way sandwich needs it
        # (one-way is CR2 in closed form), so a report that never fits one does not pay it.
        from statsmodels.regression.linear_model import OLS

        fit = OLS(y, exog).fit(cov_type="cluster", cov_kwds={"groups": np.column_stack([g1, g2])})
        var = float(fit.cov_params()[0, 0])
        df = min(k1, k2) - 1
        if not var > 0:
            one = [float(OLS(y, exog).fit(cov_type="cluster", cov_kwds={"groups": g}).cov_params()[0, 0])
                   for g in (g1, g2)]
            var = max(one)
            note = "two-way variance not positive: the larger one-way variance is used"
    elif kind == "one-way":
        var, df = cr2_mean(y, g1)
    else:  # one pair per cluster (or none given): the paired t interval
        var, df = iid_se ** 2, n - 1
    se = math.sqrt(max(var, 0.0))
    if not se > _SE_TOL * max(1.0, abs(estimate)):
        # Every cluster's mean is the same (up to rounding): no between-case variation to
        # build an interval from; a zero-width interval would claim certainty.
        return ClusteredMean(estimate=estimate, se=0.0, ci_lo=None, ci_hi=None, df=None, method="none",
                             iid_se=iid_se, design_effect=0.0, no_variation=True,
                             note=no_variation_note(n), **base)
    half = float(student_t.ppf(0.5 + level / 2.0, df)) * se
    lo, hi = estimate - half, estimate + half
    clipped = False
    if bounds is not None and (lo < bounds[0] or hi > bounds[1]):
        clipped = True
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
        note = "; ".join(x for x in (note, f"clipped to the feasible range [{bounds[0]:g}, {bounds[1]:g}]") if x)
    return ClusteredMean(
        estimate=estimate, se=se, ci_lo=lo, ci_hi=hi, df=df, method=_label(kind, k1, k2, df, names),
        iid_se=iid_se, design_effect=var / iid_se**2 if iid_se > 0 else None, clipped=clipped, note=note, **base,
    )


def paired_clustered(
    pairs: pd.DataFrame,
    column: str,
    *,
    level: float = 0.95,
    two_way: bool = True,
    case_key: Sequence[str] = CASE_CLUSTER,
    config_key: Sequence[str] = CONFIG_CLUSTER,
    bounds: tuple[float, float] | None = FEASIBLE_LIFT,
) -> ClusteredMean:
    """``clustered_mean`` of ``pairs[column]`` clustered by case, and two-way by case x
    configuration when ``two_way`` and several configurations are pooled."""
    cases = cluster_codes(pairs, case_key)
    configs = cluster_codes(pairs, config_key) if two_way else None
    return clustered_mean(pairs[column].to_numpy(float), cases, configs, level=level, bounds=bounds)


def wilson_interval(successes: int, n: int, *, level: float = 0.95) -> tuple[float | None, float | None]:
    """Wilson score interval for a proportion (scipy's); (None, None) when n = 0 (undefined, not 0).
    The one Wilson helper: process rates, control arms and trigger precision/recall use it."""
    from scipy.stats import binomtest

    if n == 0:
        return None, None
    ci = binomtest(successes, n).proportion_ci(confidence_level=level, method="wilson")
    return float(ci.low), float(ci.high)