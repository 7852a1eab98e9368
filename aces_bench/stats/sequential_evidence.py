"""One e-process per sequential study and direction: the passes' betting processes averaged.

A sequential study runs its cases in passes (``stats.sequential``): pass b adds attempt b
of every case. For each pass b there is a betting capital process over the cases in
their scheduled order, K^(b)_t, whose value t is the bet on case t's mean difference over
attempts 1..b (Waudby-Smith & Ramdas 2024, ``stats.betting``). Each of them is a
nonnegative supermartingale with K^(b)_0 = 1 under "mean lift <= m" (cases drawn at
random; the bet on case t uses cases before t only), with respect to one filtration:
G_t, everything about cases 1..t (all their attempts). So their average

    M_t = (1 / A) * sum_{b=1..A} K^(b)_t

is one too (an average of e-processes is an e-process: Vovk & Wang, Annals of Statistics
2021), and Ville's inequality bounds P(sup_t M_t >= 1 / alpha) <= alpha: **one** test,
whatever the number of attempts. At pass a the later passes' K^(b) (b > a) are not yet
seen; they are nonnegative, so the part seen, E_a(t) = (1 / A) sum_{b <= a} K^(b)_t, is at
most M_t at every t, and a rejection read on E_a at any look is a rejection of M: the
union of every look's rejections has probability at most alpha, by construction (before,
each pass's process was read at 1 / alpha on its own: about A alpha in the worst case).

A case not scored at a pass (its pair excluded) is a value not bet on: its factor is 1
and the running mean and variance the bets use skip it, so every process stays aligned
on the case order and the argument above is unchanged.

The interval of a look is the hull of the lifts m that neither merged process (above m,
below m) has driven to 1 / alpha: it holds the lift with probability at least 1 - 2 alpha
at every look at once, however the study stopped. Its ends are computed on a grid of step
1/400 that contains the threshold and 0, rounded outward, and ``stats.sequential`` reads
its decisions from this same interval (``helps`` needs its lower end above the threshold),
so the decision and the interval cannot disagree.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from aces_bench.stats.betting import TRUNC, to_unit

GRID_STEP = 1.0 / 400.0


def capital_path(d, null, *, above: bool, alpha: float, horizon: int, trunc: float = TRUNC) -> np.ndarray:
    """The betting capital after each value of ``d`` (differences in [-1, 1], NaN: not bet on).

    The predictable plug-in bets of ``stats.betting.capital`` (the same numbers on data
    with no NaN), with a missing value skipped: factor 1, and left out of the running
    mean and variance. ``null`` may be an array broadcasting against ``d``'s leading axes
    (several nulls at once, for the interval). Along the last axis."""
    x = to_unit(d)
    m = (np.asarray(null, dtype=float) + 1.0) / 2.0
    if np.any(m <= 0.0) or np.any(m >= 1.0):
        raise ValueError(f"the null mean must lie strictly inside [-1, 1], got {null}")
    seen = ~np.isnan(x)
    x0 = np.where(seen, x, 0.0)
    count = np.cumsum(seen, axis=-1)
    mu = np.minimum((0.5 + np.cumsum(x0, axis=-1)) / (count + 1), 1.0)
    sigma2 = (0.25 + np.cumsum(np.where(seen, (x0 - mu) ** 2, 0.0), axis=-1)) / (count + 1)
    prev = np.concatenate([np.full(x.shape[:-1] + (1,), 0.25), sigma2[..., :-1]], axis=-1)
    lam = np.sqrt(2 * math.log(1 / alpha) / (horizon * prev))
    if above:
        factors = 1.0 + np.minimum(lam, trunc / m) * (x0 - m)
    else:
        factors = 1.0 - np.minimum(lam, trunc / (1.0 - m)) * (x0 - m)
    return np.cumprod(np.where(seen, factors, 1.0), axis=-1)


def merged_path(passes: Sequence, null, *, above: bool, alpha: float, n_attempts: int, horizon: int) -> np.ndarray:
    """E_a(t): the seen part of the study's one e-process, (1 / ``n_attempts``) times the
    sum over the passes given (``passes[b]``: per case in scheduled order, its mean
    difference over attempts 1..b+1, NaN when not scored; all of one length). Bets are
    tuned to the bar a single pass must reach, ``n_attempts`` / alpha."""
    if not 1 <= len(passes) <= n_attempts:
        raise ValueError(f"a study of {n_attempts} attempt(s) has 1..{n_attempts} passes, got {len(passes)}")
    bet_alpha = alpha / n_attempts
    total = sum(capital_path(np.asarray(p, float), null, above=above, alpha=bet_alpha, horizon=horizon)
                for p in passes)
    return total / n_attempts


def merged_max(passes: Sequence, null: float, *, above: bool, alpha: float, n_attempts: int, horizon: int) -> float:
    """The largest value the seen part of the merged e-process reached (1 before any case)."""
    if not len(passes) or np.asarray(passes[0]).shape[-1] == 0:
        return 1.0
    path = merged_path(passes, null, above=above, alpha=alpha, n_attempts=n_attempts, horizon=horizon)
    return float(max(1.0, path.max()))


def _grid(extra: Sequence[float]) -> np.ndarray:
    base = np.linspace(-1.0, 1.0, int(round(2.0 / GRID_STEP)) + 1)[1:-1]
    return np.unique(np.concatenate([base, [v for v in extra if -1.0 < v < 1.0]]))


def merged_interval(passes: Sequence, *, alpha: float, n_attempts: int, horizon: int,
                    include: Sequence[float] = (0.0,)) -> tuple[float, float]:
    """The anytime-valid interval of the lift at a look: the hull of the grid's lifts m
    (the grid holds every value of ``include``, e.g. the threshold) that neither merged
    process has driven to 1 / alpha, widened by one grid step (the lifts between grid
    points are not tested). [-1, 1] before any case is scored."""
    if not len(passes) or np.all(np.isnan(np.asarray(passes[-1], float))):
        return -1.0, 1.0
    grid = _grid(include)
    nulls = grid[:, None]
    bar = 1.0 / alpha
    kw = {"alpha": alpha, "n_attempts": n_attempts, "horizon": horizon}
    up = merged_path(passes, nulls, above=True, **kw).max(axis=-1)
    down = merged_path(passes, nulls, above=False, **kw).max(axis=-1)
    kept = grid[(up < bar) & (down < bar)]
    if not kept.size:  # the two one-sided sets can only both reject everywhere on a sample of probability < 2 alpha
        return -1.0, 1.0
    lo = grid[max(0, int(np.searchsorted(grid, kept[0])) - 1)] if kept[0] > grid[0] else -1.0
    hi = grid[min(grid.size - 1, int(np.searchsorted(grid, kept[-1])) + 1)] if kept[-1] < grid[-1] else 1.0
    return float(lo), float(hi)
