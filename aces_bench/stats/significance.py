"""Is a skill's lift distinguishable from zero, and how small a lift can this design see?

Per skill, with the distinct case as the unit (as the headline's clustering has it: a
case's attempts, harnesses, models and configurations share its difficulty and are not
independent observations): each case's lift is the mean over its scored pairs, then an
exact sign test, a sign-flip permutation test of the mean case lift (exact up to
``EXACT_MAX_N`` cases, else Monte Carlo with a seed of its own per skill) and the
Wilcoxon signed-rank test (scipy) run on those case lifts; with a pass/fail outcome,
McNemar's exact test by case: the exact sign test of each case's pass difference (share
passing with the skill minus share passing without it), which is McNemar's exact test
of the discordant pairs (statsmodels) when every case has one pair. So no p-value is
below what the number of cases allows: 2 / 2**k for k cases. Every p-value column gets
Holm's step-down and Benjamini-Hochberg adjustments across skills. For the design: the
minimum detectable lift and the cases a target lift needs, planned with the design
effect estimated from the data (``inference.clustered_mean``), never on zero observed
variance.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from aces_bench.core.outcomes import OUTCOME
from aces_bench.stats.inference import CASE_CLUSTER, cluster_codes, clustered_mean
from aces_bench.stats.pairing import check_outcome, check_pass

EXACT_MAX_N = 20  # exact up to 2**20 sign patterns (milliseconds, meeting in the middle)
ADJUSTMENTS = {"holm": "Holm step-down", "bh": "Benjamini-Hochberg"}


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
        return {"p_value": _exact_sign_flip_p(d, n * (observed - tol)), "method": "exact"}
    rng = np.random.default_rng(seed)
    extreme = 0
    for start in range(0, n_permutations, 1000):
        rows = min(1000, n_permutations - start)
        signs = rng.choice(np.array([-1.0, 1.0]), size=(rows, n))
        extreme += int((np.abs(signs @ d) / n >= observed - tol).sum())
    return {"p_value": (1 + extreme) / (1 + n_permutations), "method": f"monte-carlo({n_permutations})"}


def _adjust(pvalues, method: str) -> np.ndarray:
    from statsmodels.stats.multitest import multipletests

    p = np.asarray(pvalues, dtype=float)
    out = np.full(p.shape, np.nan)
    ok = ~np.isnan(p)
    if ok.any():
        out[ok] = _holm(p[ok]) if method == "holm" else multipletests(p[ok], method="fdr_bh")[1]
    return out


def _holm(p: np.ndarray) -> np.ndarray:
    """Holm's step-down adjustment, as statsmodels' ``multipletests(method="holm")``
    computes it (the sorted p-values times m, m-1, ..., 1, made monotone, capped at 1).
    Not called through statsmodels: its Holm branch runs a full ``gc.collect()`` on
    every call, about 0.3 s in a process holding a study's tables."""
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(np.maximum.accumulate(p[order] * np.arange(p.size, 0, -1)), 1.0)
    out = np.empty(p.size)
    out[order] = stepped
    return out


def _sign_sums(d: np.ndarray) -> np.ndarray:
    patterns = 1 - 2 * ((np.arange(2**d.size)[:, None] >> np.arange(d.size)) & 1)
    return patterns @ d


def _exact_sign_flip_p(d: np.ndarray, threshold: float) -> float:
    """Share of the 2**n sign patterns whose |signed sum| >= ``threshold``, by meeting in the
    middle: the sums of each half's 2**(n/2) patterns, one sorted, counted by binary search."""
    if threshold <= 0:
        return 1.0
    half = d.size // 2
    a, b = _sign_sums(d[:half]), np.sort(_sign_sums(d[half:]))
    upper = b.size - np.searchsorted(b, threshold - a, side="left")
    lower = np.searchsorted(b, -threshold - a, side="right")
    return float((upper + lower).sum()) / 2**d.size


def holm(pvalues) -> np.ndarray:
    """Holm step-down adjusted p-values; NaN entries stay NaN and are not counted in m."""
    return _adjust(pvalues, "holm")


def benjamini_hochberg(pvalues) -> np.ndarray:
    """Benjamini-Hochberg adjusted p-values (false discovery rate); NaN entries skipped."""
    return _adjust(pvalues, "bh")


def skill_seed(seed: int, key) -> int:
    """A seed of its own for one group, stable across runs and platforms (not Python's hash)."""
    text = f"{seed}\x1f{key!r}".encode()
    return int.from_bytes(hashlib.sha256(text).digest()[:8], "little")


def wilcoxon_test(lifts) -> dict:
    """Two-sided Wilcoxon signed-rank test (zeros set aside); p None without a non-zero difference."""
    from scipy.stats import wilcoxon

    d = np.asarray(lifts, dtype=float)
    d = d[~np.isnan(d)]
    if not (d != 0).any():
        return {"p_value": None, "method": None}
    res = wilcoxon(d, zero_method="wilcox", alternative="two-sided", method="auto")
    nz = int((d != 0).sum())
    return {"p_value": float(res.pvalue), "method": "exact" if nz <= 50 and len(np.unique(np.abs(d[d != 0]))) == nz
            else "normal approximation"}


def mcnemar_test(with_pass, base_pass) -> dict:
    """McNemar's exact test on paired pass/fail (NaN pairs left out): the discordant counts
    b (pass with skill only) and c (pass at baseline only); p None when b + c = 0."""
    from statsmodels.stats.contingency_tables import mcnemar

    w = np.asarray(with_pass, dtype=float)
    b = np.asarray(base_pass, dtype=float)
    keep = ~(np.isnan(w) | np.isnan(b))
    w, b = w[keep].astype(bool), b[keep].astype(bool)
    n01, n10 = int((w & ~b).sum()), int((~w & b).sum())
    out = {"n_pass_with_only": n01, "n_pass_base_only": n10, "p_value": None}
    if n01 + n10:
        table = [[int((w & b).sum()), n01], [n10, int((~w & ~b).sum())]]
        out["p_value"] = float(mcnemar(table, exact=True).pvalue)
    return out


def case_means(pairs: pd.DataFrame, column: str, case_key: Sequence[str] = CASE_CLUSTER) -> np.ndarray:
    """Each case's mean of ``column`` over its rows where it is defined (the unit of the tests)."""
    part = pairs.loc[pairs[column].notna()]
    if not len(part):
        return np.zeros(0)
    if not case_key:
        return part[column].to_numpy(float)
    return part.groupby(list(case_key), sort=True, dropna=False)[column].mean().to_numpy(float)


def per_skill_tests(
    pairs: pd.DataFrame,
    *,
    outcome: str = OUTCOME,
    by: Sequence[str] = ("skill",),
    n_permutations: int = 10_000,
    seed: int = 0,
    pass_outcome: str | None = None,
    case_key: Sequence[str] = CASE_CLUSTER,
) -> pd.DataFrame:
    """Sign, permutation, Wilcoxon and (with ``pass_outcome``, a 0/1 pass column such as
    ``final_pass``: ``pairing.check_pass``) McNemar tests per group on
    its distinct cases (``case_key``; each case's lift the mean of its scored pairs),
    each adjusted by Holm and by Benjamini-Hochberg across groups.

    ``n`` counts scored pairs and ``n_cases`` the cases the tests ran on; ``n_pos``,
    ``n_zero`` and ``n_neg`` count cases. Groups with no scored pair keep a row with None
    p-values; they do not count in the families. The permutation test of a group past
    ``EXACT_MAX_N`` cases draws from ``skill_seed(seed, group key)``.
    """
    column = f"lift_{check_outcome(outcome)}"
    pass_cols = None
    if pass_outcome is not None:
        check_outcome(pass_outcome)
        pass_cols = (f"with_{pass_outcome}", f"base_{pass_outcome}")
        if not set(pass_cols) <= set(pairs.columns):
            pass_cols = None
    for c in pass_cols or ():
        check_pass(pairs[c], pass_outcome)
    cases = [c for c in case_key if c in pairs.columns]
    rows = []
    for key, part in pairs.groupby(list(by), sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        scored = part.loc[part[column].notna()]
        d = case_means(scored, column, cases)
        s = sign_test(d)
        perm = permutation_test(d, n_permutations=n_permutations, seed=skill_seed(seed, key))
        wil = wilcoxon_test(d)
        row = {**dict(zip(by, key, strict=True)), "outcome": outcome, "n": len(scored), "n_cases": int(d.size),
               "lift": float(scored[column].mean()) if len(scored) else None,
               "n_pos": s["n_pos"], "n_zero": s["n_zero"], "n_neg": s["n_neg"],
               "p_sign": s["p_value"], "p_perm": perm["p_value"], "perm_method": perm["method"],
               "p_wilcoxon": wil["p_value"], "pass_outcome": pass_outcome if pass_cols else None,
               "n_pass_with_only": None, "n_pass_base_only": None, "p_mcnemar": None}
        if pass_cols:
            both = part.loc[part[pass_cols[0]].notna() & part[pass_cols[1]].notna()]
            wp, bp = (both[c].to_numpy(float) for c in pass_cols)
            mc = mcnemar_test(wp, bp)
            by_case = case_means(both.assign(_pass_diff=wp - bp), "_pass_diff", cases)
            row.update(n_pass_with_only=mc["n_pass_with_only"], n_pass_base_only=mc["n_pass_base_only"],
                       p_mcnemar=sign_test(by_case)["p_value"])
        rows.append(row)
    cols = [*by, "outcome", "n", "n_cases", "lift", "n_pos", "n_zero", "n_neg", "p_sign", "p_perm", "perm_method",
            "p_wilcoxon", "pass_outcome", "n_pass_with_only", "n_pass_base_only", "p_mcnemar"]
    frame = pd.DataFrame(rows, columns=cols)
    for col in ("p_sign", "p_perm", "p_wilcoxon", "p_mcnemar"):
        p = frame[col].astype(float).to_numpy()
        frame[f"{col}_holm"] = holm(p)
        frame[f"{col}_bh"] = benjamini_hochberg(p)
    return frame


def _z_sum(alpha: float, power: float) -> float:
    from scipy.stats import norm

    if not (0 < alpha < 1 and 0 < power < 1):
        raise ValueError(f"alpha and power must be in (0, 1), got alpha={alpha}, power={power}")
    return float(norm.ppf(1 - alpha / 2) + norm.ppf(power))


def minimum_detectable_lift(sd: float, n: int, *, alpha: float = 0.05, power: float = 0.8,
                            design_effect: float = 1.0) -> float | None:
    """Smallest true mean lift a two-sided test detects with ``power``:
    (z_a/2 + z_b) sd sqrt(deff / n), deff the design effect (1 for independent pairs).

    None when n < 2 or sd is unknown or 0 (no variance to plan from).
    """
    if n < 2 or sd is None or not math.isfinite(sd) or sd == 0:
        return None
    return _z_sum(alpha, power) * sd * math.sqrt(design_effect / n)


def cases_needed(sd: float, lift: float, *, alpha: float = 0.05, power: float = 0.8,
                 design_effect: float = 1.0, pairs_per_case: float = 1.0) -> int | None:
    """Cases needed to detect a true mean ``lift``: ceil((z_a/2 + z_b)^2 sd^2 deff / lift^2 / m),
    m the scored pairs per case at which the design effect was estimated.

    None when ``lift`` is 0 or sd unknown or 0: zero observed variance gives nothing to
    plan from (it is not evidence that one case would do)."""
    if sd is None or not math.isfinite(sd) or sd == 0 or lift == 0:
        return None
    pairs = (_z_sum(alpha, power) * sd / abs(lift)) ** 2 * design_effect
    return max(2, math.ceil(pairs / pairs_per_case - 1e-9))


def design_power(
    pairs: pd.DataFrame,
    *,
    outcomes: Sequence[str] = (OUTCOME,),
    target_lift: float = 0.1,
    alpha: float = 0.05,
    power: float = 0.8,
    case_key: Sequence[str] = CASE_CLUSTER,
) -> pd.DataFrame:
    """Per outcome: scored pairs and cases, SD of paired lift, design effect of clustering by
    case, minimum detectable lift for this design and cases needed for ``target_lift``."""
    rows = []
    cases = cluster_codes(pairs, case_key) if len(pairs) else np.zeros(0, int)
    for o in outcomes:
        values = pairs[f"lift_{check_outcome(o)}"].to_numpy(float) if len(pairs) else np.zeros(0)
        keep = ~np.isnan(values)
        d = values[keep]
        n_cases = int(np.unique(cases[keep]).size)
        sd = float(d.std(ddof=1)) if d.size >= 2 else None
        cm = clustered_mean(values, cases, level=1 - alpha, bounds=None)
        deff = cm.design_effect if cm.design_effect is not None else (1.0 if n_cases == d.size else None)
        note = cm.note if cm.no_variation else None
        if deff is None and not cm.no_variation and d.size >= 2:
            note = "design effect undefined (one case): no plan"
        usable = deff is not None and not cm.no_variation and d.size >= 2
        rows.append({"outcome": o, "n": int(d.size), "n_cases": n_cases, "sd": sd, "design_effect": deff,
                     "alpha": alpha, "power": power,
                     "mde": minimum_detectable_lift(sd, d.size, alpha=alpha, power=power, design_effect=deff)
                     if usable else None,
                     "target_lift": target_lift,
                     "n_needed": cases_needed(sd, target_lift, alpha=alpha, power=power, design_effect=deff,
                                              pairs_per_case=d.size / n_cases) if usable else None,
                     "note": note})
    return pd.DataFrame(rows, columns=["outcome", "n", "n_cases", "sd", "design_effect", "alpha", "power", "mde",
                                       "target_lift", "n_needed", "note"])
