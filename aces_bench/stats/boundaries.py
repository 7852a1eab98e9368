"""Group-sequential efficacy boundaries from an alpha-spending function (Lan & DeMets 1983).

A study looked at K times has, at look k, a standardized statistic Z_k with
information I_k; under the null boundary (true lift equal to the threshold) the Z's are
jointly normal with Corr(Z_j, Z_k) = sqrt(I_j / I_k), j < k (the canonical joint
distribution, Jennison & Turnbull 2000, ch. 3). A spending function alpha(s), fixed in
advance on a spending time s in (0, 1], says how much of the type I error may have been
used by time s; the boundary c_k is the value for which

    P(Z_1 < c_1, ..., Z_{k-1} < c_{k-1}, Z_k >= c_k) = alpha(s_k) - alpha(s_{k-1}),

so the probability of ever crossing is alpha(1) = alpha, however many looks there are.
The k-dimensional integral is computed by the recursive numerical integration of
Armitage, McPherson & Rowe (1969) as gsDesign does it: the grid and update steps come
from ``gsdesign`` (``gridpts``, ``h1``, ``hupdate``, ports of gsDesign's C code), the
root is found with scipy's ``brentq``. Futility stops are non-binding: the boundaries
ignore them, so stopping for futility can only lower the type I error.

Spending functions (one-sided level alpha, spending time t):

- ``hsd``: Hwang, Shih & DeCani (1990) with gamma = -4 (gsDesign's default),
  alpha (1 - exp(-gamma t)) / (1 - exp(-gamma));
- ``obf``: Lan-DeMets O'Brien-Fleming type, 2 (1 - Phi(z_{1 - alpha/2} / sqrt(t)));
- ``pocock``: Lan-DeMets Pocock type, alpha log(1 + (e - 1) t).

``tests/stats/test_stats_sequential.py`` checks the boundaries against gsDesign's
published values.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

GRID_R = 18  # gsDesign's default grid size (r); its accuracy is about 1e-6 in probability
HSD_GAMMA = -4.0
SPENDING_FUNCTIONS = ("hsd", "obf", "pocock")
_TOP = 40.0  # a boundary past which no probability remains (the grid is cut here)


def spent(name: str, t, alpha: float) -> np.ndarray:
    """Cumulative type I error spent by spending time ``t`` (array-like, clipped to [0, 1])."""
    from scipy.stats import norm

    t = np.clip(np.asarray(t, dtype=float), 0.0, 1.0)
    if name == "hsd":
        return alpha * (1 - np.exp(-HSD_GAMMA * t)) / (1 - math.exp(-HSD_GAMMA))
    if name == "obf":
        with np.errstate(divide="ignore"):
            return np.where(t > 0, 2 * norm.sf(norm.isf(alpha / 2) / np.sqrt(np.maximum(t, 1e-300))), 0.0)
    if name == "pocock":
        return alpha * np.log1p((math.e - 1) * t)
    raise ValueError(f"unknown spending function {name!r}; use one of {', '.join(SPENDING_FUNCTIONS)}")


def _crossing(grid, prev_info: float, info: float, b: float) -> float:
    """P(continue to the previous look, then Z >= b at this one), from the previous look's
    sub-density ``grid`` (``h1``/``hupdate`` output) under the null."""
    from scipy.stats import norm

    z, _, h = grid
    mean = z * math.sqrt(prev_info / info)
    sd = math.sqrt(1 - prev_info / info)
    return float((h * norm.sf((b - mean) / sd)).sum())


def next_boundary(info: Sequence[float], spent_cum: Sequence[float], previous: Sequence[float]) -> float:
    """The boundary of the last look, given the boundaries already used at the earlier ones.

    ``info``: information at every look so far (strictly increasing, any scale);
    ``spent_cum``: cumulative alpha by each look; ``previous``: the boundaries used at
    looks 1..k-1 (``inf`` for a look that spent nothing). Returns ``inf`` when this look
    may spend nothing.
    """
    from gsdesign import h1, hupdate
    from scipy.optimize import brentq
    from scipy.stats import norm

    k = len(info)
    if len(spent_cum) != k or len(previous) != k - 1:
        raise ValueError("info and spent_cum need one value per look, previous one per earlier look")
    if any(b <= a for a, b in zip(info, info[1:], strict=False)):
        raise ValueError(f"information must increase from look to look, got {list(info)}")
    increment = spent_cum[-1] - (spent_cum[-2] if k > 1 else 0.0)
    if increment <= 0:
        return math.inf
    if k == 1:
        return float(norm.isf(increment))
    grid = None
    for j in range(k - 1):
        top = min(previous[j], _TOP)
        grid = h1(GRID_R, 0.0, info[0], -np.inf, top) if j == 0 else \
            hupdate(GRID_R, 0.0, info[j], -np.inf, top, 0.0, info[j - 1], grid)
    available = _crossing(grid, info[-2], info[-1], -_TOP)
    if increment >= available:  # everything not yet crossed may be spent here
        return -_TOP
    return float(brentq(lambda b: _crossing(grid, info[-2], info[-1], b) - increment, -_TOP, _TOP, xtol=1e-10))


def boundaries(info: Sequence[float], spent_cum: Sequence[float]) -> np.ndarray:
    """Every look's boundary for a design whose information and spending are all known."""
    out: list[float] = []
    for k in range(1, len(info) + 1):
        out.append(next_boundary(info[:k], spent_cum[:k], out))
    return np.array(out)
