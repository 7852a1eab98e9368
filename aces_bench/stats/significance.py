"""Is a skill's lift distinguishable from zero, and how small a lift can this design see?

Per skill: an exact paired sign test and a paired sign-flip permutation test of the
mean lift, each with Holm's step-down correction across skills. For the design: the
minimum detectable lift (two-sided alpha, given power) from the observed SD of paired
differences, and the number of paired cases a target lift would need (normal approx.).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd
from scipy.stats import norm

from aces_bench.stats.pairing import OUTCOME, check_outcome

EXACT_MAX_N = 16  # 2**16 sign patterns: exact enumeration stays well under a second


def sign_test(lifts) -> dict:
    """Exact two-sided sign test of median lift 0; zero differences are set aside.

    Returns n_pos, n_neg, n_zero and p_value (None when no non-zero difference).
    """
    d = np.asarray(lifts, dtype=float)
    d = d[~np.isnan(d)]
    n_pos, n_neg = int((d > 0).sum()), int((d < 0).sum())
    n = n_pos + n_neg
    out = {"n_pos": n_pos, "n_neg": n_neg, "n_zero": int((d == 0).sum()), "p_value": None}
    if n:
        tail = sum(math.comb(n, i) for i in range(min(n_pos, n_neg) + 1))
        out["p_value"] = min(1.0, 2 * tail / 2**n)
    return out


def permutation_test(lifts, *, n_permutations: int = 10_000, seed: int = 0, exact_max_n: int = EXACT_MAX_N) -> dict:
    """Two-sided paired permutation test: flip the sign of each difference at random.

    Statistic |mean lift|. Exact over all 2**n sign patterns when n <= ``exact_max_n``
    (p = share of patterns at least as extreme); else ``n_permutations`` random patterns
    from ``numpy.random.default_rng(seed)`` with p = (1 + extreme) / (1 + n_permutations).
    Returns p_value (None when n = 0) and method.
    """
    d = np.asarray(lifts, dtype=float)
    d = d[~np.isnan(d)]
    n = d.size
    if n == 0:
        return {"p_value": None, "method": None}
    observed = abs(d.mean())
    tol = 1e-12 * max(1.0, np.abs(d).max())  # ties in float sums must count as extreme
    if n <= exact_max_n:
        patterns = 1 - 2 * ((np.arange(2**n)[:, None] >> np.arange(n)) & 1)
        stats = np.abs(patterns @ d) / n
        return {"p_value": float((stats >= observed - tol).mean()), "method": "exact"}
    rng = np.random.default_rng(seed)
    extreme = 0
    for start in range(0, n_permutations, 1000):
        rows = min(1000, n_permutations - start)
        signs = rng.choice(np.array([-1.0, 1.0]), size=(rows, n))
        extreme += int((np.abs(signs @ d) / n >= observed - tol).sum())
    return {"p_value": (1 + extreme) / (1 + n_permutations), "method": f"monte-carlo({n_permutations})"}


def holm(pvalues) -> np.ndarray:
    """Holm step-down adjusted p-values; NaN entries stay NaN and are not counted in m."""
    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    idx = np.flatnonzero(~np.isnan(p))
    m = idx.size
    if m == 0:
        return out
    order = idx[np.argsort(p[idx], kind="stable")]
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out[order] = adjusted
    return out


def per_skill_tests(
    pairs: pd.DataFrame,
    *,
    outcome: str = OUTCOME,
    by: Sequence[str] = ("skill",),
    n_permutations: int = 10_000,
    seed: int = 0,
) -> pd.DataFrame:
    """Sign and permutation test per group (default: per skill), Holm-corrected across groups.

    Groups with no scored pair keep a row with None p-values; they do not count in
    the Holm family.
    """
    column = f"lift_{check_outcome(outcome)}"
    rows = []
    for key, part in pairs.groupby(list(by), sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        d = part[column].to_numpy(float)
        d = d[~np.isnan(d)]
        s = sign_test(d)
        perm = permutation_test(d, n_permutations=n_permutations, seed=seed)
        rows.append({**dict(zip(by, key, strict=True)), "outcome": outcome, "n": int(d.size),
                     "lift": float(d.mean()) if d.size else None,
                     "n_pos": s["n_pos"], "n_zero": s["n_zero"], "n_neg": s["n_neg"],
                     "p_sign": s["p_value"], "p_perm": perm["p_value"], "perm_method": perm["method"]})
    frame = pd.DataFrame(rows, columns=[*by, "outcome", "n", "lift", "n_pos", "n_zero", "n_neg",
                                        "p_sign", "p_perm", "perm_method"])
    for col in ("p_sign", "p_perm"):
        frame[f"{col}_holm"] = holm(frame[col].astype(float).to_numpy())
    return frame


def _z_sum(alpha: float, power: float) -> float:
    if not (0 < alpha < 1 and 0 < power < 1):
        raise ValueError(f"alpha and power must be in (0, 1), got alpha={alpha}, power={power}")
    return float(norm.ppf(1 - alpha / 2) + norm.ppf(power))


def minimum_detectable_lift(sd: float, n: int, *, alpha: float = 0.05, power: float = 0.8) -> float | None:
    """Smallest true mean lift a paired two-sided z-test detects with ``power``: (z_a/2 + z_b) sd / sqrt(n).

    None when n < 2 or sd is unknown (no variance to plan from).
    """
    if n < 2 or sd is None or not math.isfinite(sd):
        return None
    return _z_sum(alpha, power) * sd / math.sqrt(n)


def cases_needed(sd: float, lift: float, *, alpha: float = 0.05, power: float = 0.8) -> int | None:
    """Paired cases needed to detect a true mean ``lift``: ceil(((z_a/2 + z_b) sd / lift)^2).

    None when ``lift`` is 0 or sd unknown; 1 when sd is 0 (no noise)."""
    if sd is None or not math.isfinite(sd) or lift == 0:
        return None
    return max(1, math.ceil((_z_sum(alpha, power) * sd / abs(lift)) ** 2))


def design_power(
    pairs: pd.DataFrame,
    *,
    outcomes: Sequence[str] = (OUTCOME,),
    target_lift: float = 0.1,
    alpha: float = 0.05,
    power: float = 0.8,
) -> pd.DataFrame:
    """Per outcome: scored pairs, SD of paired lift, minimum detectable lift for this n,
    and cases needed to detect ``target_lift``."""
    rows = []
    for o in outcomes:
        d = pairs[f"lift_{check_outcome(o)}"].dropna().to_numpy(float)
        sd = float(d.std(ddof=1)) if d.size >= 2 else None
        rows.append({"outcome": o, "n": int(d.size), "sd": sd, "alpha": alpha, "power": power,
                     "mde": minimum_detectable_lift(sd, d.size, alpha=alpha, power=power),
                     "target_lift": target_lift, "n_needed": cases_needed(sd, target_lift, alpha=alpha, power=power)})
    return pd.DataFrame(rows)
