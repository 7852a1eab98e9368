"""Testing by betting: the gate's exact e-value for the mean of bounded values.

Waudby-Smith & Ramdas, "Estimating means of bounded random variables by betting"
(JRSS-B 2024). For values x_i in [0, 1] and a null mean m, the capital

    K_t = prod_{i <= t} (1 + lambda_i (x_i - m)),   lambda_i >= 0 fixed before x_i is seen,

is a nonnegative supermartingale under any distribution whose mean is at most m (each
factor has expectation 1 + lambda_i (mean - m) <= 1), so by Ville's inequality
P(sup_t K_t >= 1 / alpha) <= alpha: the null may be rejected the first time the
capital reaches 1 / alpha, looking after every value, with no approximation. Betting
on the mean being *below* m uses the factors 1 - lambda_i (x_i - m) instead. Paired
differences in [-1, 1] are mapped to [0, 1] by (d + 1) / 2, as the paper suggests for
bounded data.

The gate's bets are fixed (``MIX_BETS``), so its e-value is the same whatever the order of
the cases, and it is a supermartingale as cases arrive in any order fixed in advance: a
sequential study reads it after every round of new cases (``stats.sequential``). A run of
identical values has no variance and an infinite t statistic, but a bounded bet can only
multiply the capital by a bounded factor per case.
"""

from __future__ import annotations

import math

import numpy as np


def to_unit(d) -> np.ndarray:
    """Paired differences in [-1, 1] mapped to [0, 1]."""
    return (np.asarray(d, dtype=float) + 1.0) / 2.0


# --- the gate's fixed-design test: a mixture of two fixed bets ------------------------------

MIX_BETS: tuple[tuple[float, float], ...] = ((0.98, 0.5), (0.90, 0.5))
"""The gate's bets, as (share c of the largest bet that keeps every factor positive, weight).

Against "mean <= m" (m in (0, 1) on the unit scale) a bet of c / m per case turns a case x
into the factor (1 - c) + c x / m: a case won outright (x = 1) multiplies the capital by
about 1 / m, a case lost outright (x = 0) keeps 1 - c of it. Bets near all-in are what make
5 wins of 5 pass at thresholds 0 and 0.05 (the exact worst case there is p = 0.525^5 = 0.040,
e = 25.4; this mixture gives e = 21.8 >= 20) and they are also the growth-optimal bets on a
skill that lifts the per-attempt pass rate by +0.3 over 3 attempts (docs/gate.md: the
simulation that chose these two, among one to three bets of 0.5 to 0.99, on the bench's own
scenario and on 5 of 5)."""


def log_factors(d, null: float, c: float, *, above: bool) -> np.ndarray:
    """Per case of ``d``, the log of its factor in the product of bet share ``c`` (``MIX_BETS``)."""
    x = to_unit(d)
    m = (null + 1.0) / 2.0
    if not 0.0 < m < 1.0:
        raise ValueError(f"the null mean must lie strictly inside [-1, 1], got {null}")
    ratio = x / m if above else (1.0 - x) / (1.0 - m)
    return np.log((1.0 - c) + c * ratio)


def log_evalue(d, null: float, *, above: bool) -> float:
    """log of the gate's e-value against "mean of ``d`` <= ``null``" (``above``) or ">= ``null``".

    ``d``: per-case paired differences in [-1, 1], one per case, in any order: the value is
    a symmetric function of them (a weighted sum of products of one factor per case). Under
    any distribution of independent cases whose mean is on the null side, each product has
    expectation at most 1, so the mixture does too (an e-value: P(e >= 1/alpha) <= alpha,
    Markov); it is also a nonnegative supermartingale as cases arrive in any fixed order,
    so it stays valid at every number of cases (Ville). Each factor rises with its case's
    value (falls, below), so adding a won case never lowers it and adding a lost one never
    raises it; and it falls as the null rises (rises, below), so the rejected nulls form an
    interval."""
    d = np.asarray(d, dtype=float)
    if d.size == 0:
        return 0.0
    logs = [math.log(w) + float(log_factors(d, null, c, above=above).sum()) for c, w in MIX_BETS]
    top = max(logs)
    return top + math.log(sum(math.exp(v - top) for v in logs))


def evalue_p(d, null: float, *, above: bool) -> float:
    """The p-value min(1, 1 / e) of ``log_evalue`` (valid by Markov's inequality)."""
    return float(min(1.0, math.exp(-log_evalue(d, null, above=above))))


BOUND_TOL = 1e-6


def evalue_bound(d, level: float, *, lower: bool) -> float:
    """The end of the gate's confidence interval of the mean of ``d`` at one-sided ``level``.

    ``lower``: the largest null m that the e-value against "mean <= m" still rejects at
    ``level`` (e >= 1 / level), so the test rejects "mean <= t" exactly when t is below it;
    -1 when it rejects none. Else the smallest m rejected from above ("mean >= m"), 1 when
    none. By bisection to ``BOUND_TOL`` (the e-value is monotone in m), rounded away from
    the estimate so the interval never claims more than the test."""
    d = np.asarray(d, dtype=float)
    bar = -math.log(level)
    lo, hi = -1.0 + BOUND_TOL, 1.0 - BOUND_TOL
    if d.size == 0:
        return -1.0 if lower else 1.0

    def rejects(m: float) -> bool:
        return log_evalue(d, m, above=lower) >= bar

    if lower:
        if not rejects(lo):
            return -1.0
        if rejects(hi):
            return hi
    else:
        if not rejects(hi):
            return 1.0
        if rejects(lo):
            return lo
    while hi - lo > BOUND_TOL:
        mid = (lo + hi) / 2
        if rejects(mid) == lower:
            lo = mid
        else:
            hi = mid
    return lo if lower else hi
