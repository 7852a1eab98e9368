"""pass@k with and without the skill, and its lift, by the unbiased estimator.

For a case with ``n`` scored attempts of which ``c`` succeed, pass@k is
``1 - C(n - c, k) / C(n, k)`` (Chen et al. 2021): the chance that k attempts drawn
without replacement from the n include a success. It is undefined when ``n < k``;
such cases are counted (``n_short``), never scored 0.

With stop-on-pass (``study.stop_on_pass``) attempts are sequential, not exchangeable:
attempts after the first pass are ``skipped``, so the estimator above does not apply.
There a case passed within k attempts iff its first pass came at attempt j <= k (it
counts as passed for every k >= j), failed within k iff its first k attempts were all
scored and failed, and is short of k otherwise.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from aces_bench.core.outcomes import FINAL_PASS
from aces_bench.records.trials import CELL_KEY, PAIR_KEY
from aces_bench.stats.pairing import check_pass, outcome_values, validate_trials

CASE_KEY = tuple(k for k in PAIR_KEY if k != "attempt")
PASSK_FIELDS = ("k", "n_cases", "n_short", "n_one_side", "pass_with", "pass_base", "lift")
SKIPPED = "skipped"


def pass_at_k(n: np.ndarray | int, c: np.ndarray | int, k: int) -> np.ndarray:
    """Unbiased pass@k per case; NaN where ``n < k``. Exact integer binomials."""
    if k < 1:
        raise ValueError(f"k must be >= 1, got {k}")
    n_arr = np.atleast_1d(np.asarray(n, dtype=np.int64))
    c_arr = np.atleast_1d(np.asarray(c, dtype=np.int64))
    if np.any(c_arr < 0) or np.any(c_arr > n_arr):
        raise ValueError("pass counts must satisfy 0 <= c <= n")
    out = np.full(n_arr.shape, np.nan)
    for i, (ni, ci) in enumerate(zip(n_arr.tolist(), c_arr.tolist(), strict=True)):
        if ni >= k:
            out[i] = 1.0 - math.comb(ni - ci, k) / math.comb(ni, k)
    return out


def pass_counts(
    trials: pd.DataFrame,
    *,
    success: str = FINAL_PASS,
    case_key: Sequence[str] = CASE_KEY,
    stop_on_pass: bool | None = None,
) -> pd.DataFrame:
    """Per (case, condition): ``n`` scored attempts, ``c`` whose ``success`` is 1 (by default
    the one pass, ``final_pass``: an arm's failures count as attempts that failed; any other
    column must hold 0/1 too, see ``pairing.check_pass``),
    and ``n_unscored`` attempts whose outcome is missing (failed or unscored trials:
    they are not failures of the agent, so they are counted apart, not as misses).

    For stop-on-pass studies (``stop_on_pass=True``, or None and some attempt is
    ``skipped``) the rows also carry ``sequential=True``, ``first_pass`` (the position,
    from 1, of the first passing attempt; NaN if none) and ``lead_scored`` (how many
    attempts in order were scored before the first unscored one), which
    ``passk_table`` reads instead of the unbiased estimator.
    """
    validate_trials(trials)
    value = check_pass(outcome_values(trials, success), success)
    frame = trials[[*case_key, "condition"]].assign(
        scored=(~np.isnan(value)).astype(int), success=(value == 1.0).astype(int), unscored=np.isnan(value).astype(int)
    )
    grouped = frame.groupby([*case_key, "condition"], sort=True, dropna=False)[["scored", "success", "unscored"]].sum()
    out = grouped.rename(columns={"scored": "n", "success": "c", "unscored": "n_unscored"}).reset_index()
    if stop_on_pass is None:
        stop_on_pass = bool((trials["status"].astype(str) == SKIPPED).any()) if len(trials) else False
    if not stop_on_pass:
        return out
    seq = frame.assign(attempt=trials["attempt"].to_numpy()).sort_values([*case_key, "condition", "attempt"])
    firsts, leads = [], []
    for _, g in seq.groupby([*case_key, "condition"], sort=True, dropna=False):
        passed = (g["success"].to_numpy() == 1) & (g["scored"].to_numpy() == 1)
        scored = g["scored"].to_numpy() == 1
        firsts.append(float(np.argmax(passed) + 1) if passed.any() else np.nan)
        leads.append(int(np.argmin(scored)) if not scored.all() else int(len(scored)))
    return out.assign(sequential=True, first_pass=firsts, lead_scored=leads)


def _sequential_pass_at_k(first_pass: np.ndarray, lead_scored: np.ndarray, k: int) -> np.ndarray:
    """Stop-on-pass pass@k per case: 1 if the first pass is at attempt <= k, 0 if the
    first k attempts were scored without a pass, NaN (short of k) otherwise."""
    hit = ~np.isnan(first_pass) & (np.nan_to_num(first_pass, nan=np.inf) <= k)
    return np.where(hit, 1.0, np.where(lead_scored >= k, 0.0, np.nan))


def passk_table(
    counts: pd.DataFrame,
    *,
    ks: Sequence[int] = (1, 3),
    by: Sequence[str] = CELL_KEY,
    case_key: Sequence[str] = CASE_KEY,
) -> pd.DataFrame:
    """pass@k per group in ``by`` (``()`` pools everything) and k, paired by case.

    A case counts (``n_cases``) when both conditions have ``n >= k`` (stop-on-pass
    counts: when both sides' pass@k is decided, see the module docstring); ``pass_with`` and
    ``pass_base`` average its per-case pass@k and ``lift`` is their difference. Cases
    with a side short of k attempts are counted in ``n_short``, cases seen in one
    condition only in ``n_one_side``. No case: ``n_cases = 0`` and None values.
    """
    keys = list(case_key)
    sequential = "sequential" in counts.columns and bool(counts["sequential"].fillna(False).any())
    value_cols = ["n", "c", *(["first_pass", "lead_scored"] if sequential else [])]
    summed = counts.groupby([*keys, "condition"], sort=True, dropna=False)[value_cols].agg(
        {c: ("min" if c == "first_pass" else "sum") for c in value_cols})
    wide = summed.unstack("condition")
    wide.columns = [f"{v}_{cond}" for v, cond in wide.columns]
    extra = ("first_pass_with_skill", "first_pass_baseline", "lead_scored_with_skill", "lead_scored_baseline")
    for col in ("n_with_skill", "c_with_skill", "n_baseline", "c_baseline", *(extra if sequential else ())):
        if col not in wide.columns:
            wide[col] = np.nan
    wide = wide.reset_index()
    both = (wide["n_with_skill"].notna() & wide["n_baseline"].notna()).to_numpy()
    nw, nb = wide["n_with_skill"].fillna(0).astype(int).to_numpy(), wide["n_baseline"].fillna(0).astype(int).to_numpy()
    cw, cb = wide["c_with_skill"].fillna(0).astype(int).to_numpy(), wide["c_baseline"].fillna(0).astype(int).to_numpy()
    parts = []
    for k in ks:
        if sequential:
            pw = _sequential_pass_at_k(wide["first_pass_with_skill"].to_numpy(float),
                                       wide["lead_scored_with_skill"].fillna(0).to_numpy(float), k)
            pb = _sequential_pass_at_k(wide["first_pass_baseline"].to_numpy(float),
                                       wide["lead_scored_baseline"].fillna(0).to_numpy(float), k)
            ok = both & ~np.isnan(pw) & ~np.isnan(pb)
        else:
            ok = both & (nw >= k) & (nb >= k)
            pw, pb = pass_at_k(nw, cw, k), pass_at_k(nb, cb, k)  # NaN below k, masked by ok below
        parts.append(wide[list(by)].assign(
            k=int(k), n_cases=ok.astype(int), n_short=(both & ~ok).astype(int), n_one_side=(~both).astype(int),
            pass_with=np.where(ok, pw, np.nan), pass_base=np.where(ok, pb, np.nan), lift=np.where(ok, pw - pb, np.nan),
        ))
    if not parts:
        return pd.DataFrame(columns=[*by, *PASSK_FIELDS])
    long = pd.concat(parts, ignore_index=True)
    if not by and long.empty:  # pooled over nothing: still one explicit row per k
        return pd.DataFrame([{"k": int(k), "n_cases": 0, "n_short": 0, "n_one_side": 0,
                              "pass_with": None, "pass_base": None, "lift": None} for k in ks], columns=list(PASSK_FIELDS))
    out = long.groupby([*by, "k"], sort=True, dropna=False).agg(
        n_cases=("n_cases", "sum"), n_short=("n_short", "sum"), n_one_side=("n_one_side", "sum"),
        pass_with=("pass_with", "mean"), pass_base=("pass_base", "mean"), lift=("lift", "mean"),
    ).reset_index()
    return out[[*by, *PASSK_FIELDS]]
