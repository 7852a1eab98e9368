"""Missingness audit: every trial and pair that a lift leaves out is counted here.

Lift uses pairs scored on both sides. This module accounts for the rest: unscored or
failed trials per condition, trials without a trajectory, pair keys scored (or run)
on one side only, and a sensitivity line that scores every with-skill-unscored case
as a failure, the pessimistic reading for the skill.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from aces_bench.core.metrics import metric_column, outcome_metrics
from aces_bench.core.outcomes import OUTCOMES
from aces_bench.records.trials import CONDITIONS, PAIR_KEY
from aces_bench.stats.lift import summarise_lift
from aces_bench.stats.pairing import check_outcome, outcome_values


def scored_by_condition(trials: pd.DataFrame, *, outcomes: Sequence[str] = OUTCOMES) -> pd.DataFrame:
    """Per (condition, outcome): rows, scored, unscored, and unscored rows whose trial
    ran fine (``status == "ok"``), i.e. a grader that could not decide."""
    rows = []
    for condition in CONDITIONS:
        part = trials.loc[trials["condition"] == condition]
        ok = part["status"] == "ok"
        for o in outcomes:
            scored = outcome_values(part, check_outcome(o)).notna()
            rows.append({
                "condition": condition, "outcome": o, "n_rows": len(part), "n_scored": int(scored.sum()),
                "n_unscored": int((~scored).sum()), "n_unscored_status_ok": int((~scored & ok).sum()),
            })
    return pd.DataFrame(rows, columns=["condition", "outcome", "n_rows", "n_scored", "n_unscored", "n_unscored_status_ok"])


def status_counts(trials: pd.DataFrame) -> pd.DataFrame:
    """Trials per (condition, status, failure_cause); causes missing in the table show as None."""
    cols = ["condition", "status", "failure_cause"]
    frame = trials.assign(failure_cause=trials["failure_cause"] if "failure_cause" in trials.columns else None)
    counts = frame.groupby(cols, dropna=False, sort=True).size().rename("n").reset_index()
    counts["failure_cause"] = counts["failure_cause"].astype(object).where(counts["failure_cause"].notna(), None)
    return counts[[*cols, "n"]]


def trajectory_gaps(trials: pd.DataFrame) -> pd.DataFrame:
    """Per condition: rows, rows without a trajectory, and of those the ones with status ok."""
    has = trials["has_trajectory"].fillna(False).astype(bool) if "has_trajectory" in trials.columns else pd.Series(False, index=trials.index)
    rows = []
    for condition in CONDITIONS:
        sel = trials["condition"] == condition
        missing = sel & ~has
        rows.append({"condition": condition, "n_rows": int(sel.sum()), "n_missing_trajectory": int(missing.sum()),
                     "n_missing_trajectory_status_ok": int((missing & (trials["status"] == "ok")).sum())})
    return pd.DataFrame(rows)


def outcome_only_partial(trials: pd.DataFrame) -> pd.DataFrame:
    """Per condition: trials whose outcome-only score rests on one of its two metrics."""
    n_scored = sum(outcome_values(trials, m).notna().astype(int) for m in outcome_metrics())
    partial = n_scored == 1
    rows = [{"condition": c, "n_partial": int((partial & (trials["condition"] == c)).sum()),
             "metrics": "+".join(metric_column(m) for m in outcome_metrics())} for c in CONDITIONS]
    return pd.DataFrame(rows)


NOT_RUN_BY_DESIGN = "skipped"
"""The status of a trial the design chose not to run: a sequential study's skill that
stopped before it, an attempt after a pass with stop-on-pass. Not an exclusion: a pair
with such a side was never meant to be analysed, so it is counted apart and never given
worst-case bounds."""


def run_by_design(pairs: pd.DataFrame) -> pd.Series:
    """Per pair key: False when a side is a trial the design chose not to run (``NOT_RUN_BY_DESIGN``)."""
    skipped = pd.Series(False, index=pairs.index)
    for col in ("status_with", "status_base"):
        if col in pairs.columns:
            skipped |= pairs[col].astype(str).eq(NOT_RUN_BY_DESIGN)
    return ~skipped


def _sides(pairs: pd.DataFrame, outcome: str) -> tuple[pd.Series, pd.Series]:
    return pairs[f"with_{outcome}"].notna(), pairs[f"base_{outcome}"].notna()


def one_sided(pairs: pd.DataFrame, *, outcomes: Sequence[str] = OUTCOMES) -> pd.DataFrame:
    """Per outcome: pair keys scored on both sides, with-skill only, baseline only,
    neither; and keys with no trial at all on one side."""
    rows = []
    for o in outcomes:
        w, b = _sides(pairs, check_outcome(o))
        rows.append({
            "outcome": o, "n_keys": len(pairs), "n_both": int((w & b).sum()), "n_with_only": int((w & ~b).sum()),
            "n_base_only": int((~w & b).sum()), "n_neither": int((~w & ~b).sum()),
            "n_no_trial_with": int((~pairs["present_with"]).sum()), "n_no_trial_base": int((~pairs["present_base"]).sum()),
        })
    return pd.DataFrame(rows, columns=["outcome", "n_keys", "n_both", "n_with_only", "n_base_only", "n_neither",
                                       "n_no_trial_with", "n_no_trial_base"])


def one_sided_keys(pairs: pd.DataFrame, outcome: str) -> pd.DataFrame:
    """The pair keys scored on exactly one side for ``outcome``, with which side and statuses."""
    w, b = _sides(pairs, check_outcome(outcome))
    sel = pairs.loc[w ^ b, [*PAIR_KEY, *(c for c in ("status_with", "status_base") if c in pairs.columns)]].copy()
    sel.insert(len(PAIR_KEY), "scored_side", np.where(w[w ^ b], "with_skill", "baseline"))
    return sel.reset_index(drop=True)


def imputation_sensitivity(
    pairs: pd.DataFrame,
    *,
    outcomes: Sequence[str] = OUTCOMES,
    fail_value: float = 0.0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Lift as reported next to lift with every with-skill-unscored case scored ``fail_value``.

    A case enters the sensitivity line when its baseline is scored and its with-skill
    side is unscored or was never run (``n_imputed`` of them). Cases without a scored
    baseline have nothing to compare against and stay out (counted in ``one_sided``).
    Pairs the design chose not to run (``run_by_design``) are not imputed.
    """
    pairs = pairs.loc[run_by_design(pairs)]
    rows = []
    for o in outcomes:
        w, b = _sides(pairs, check_outcome(o))
        primary = summarise_lift(pairs[f"with_{o}"].to_numpy(float), pairs[f"base_{o}"].to_numpy(float), level=level)
        imputed = pairs[f"with_{o}"].where(w | ~b, fail_value)
        sens = summarise_lift(imputed.to_numpy(float), pairs[f"base_{o}"].to_numpy(float), level=level)
        rows.append({"outcome": o, "fail_value": fail_value, "n_imputed": int((~w & b).sum()),
                     "n_primary": primary["n"], "lift_primary": primary["lift"],
                     **{f"{k}_sensitivity": sens[k] for k in ("n", "lift", "ci_lo", "ci_hi")}})
    return pd.DataFrame(rows)



def imputation_bounds(
    pairs: pd.DataFrame,
    *,
    outcomes: Sequence[str] = OUTCOMES,
    low: float = 0.0,
    high: float = 1.0,
    level: float = 0.95,
) -> pd.DataFrame:
    """Two-sided bounds on the lift over every pair key, whatever the unscored values were.

    Every unscored (or never run) side is imputed at the worst value for the skill
    (with-skill side ``low``, baseline ``high``) for the lower bound, and at the best
    (with-skill ``high``, baseline ``low``) for the upper bound (Manski-style bounds on
    the scale [``low``, ``high``]). Each bound carries its own case-clustered interval.
    ``n_imputed_with``/``n_imputed_base`` count the sides filled in. A pair the design
    chose not to run (``run_by_design``) is neither a key nor imputed: it is counted in
    ``n_not_run_by_design``, so ``n_observed <= n_keys`` and the bounds cover only what was
    meant to run.
    """
    from aces_bench.stats.inference import CASE_CLUSTER, cluster_codes, clustered_mean

    planned = run_by_design(pairs)
    n_by_design = int((~planned).sum())
    pairs = pairs.loc[planned]
    rows = []
    cases = cluster_codes(pairs, CASE_CLUSTER) if len(pairs) else np.zeros(0, int)
    for o in outcomes:
        w, b = pairs[f"with_{check_outcome(o)}"].astype(float), pairs[f"base_{o}"].astype(float)
        observed = clustered_mean((w - b).to_numpy(float), cases, level=level)
        worst = clustered_mean((w.fillna(low) - b.fillna(high)).to_numpy(float), cases, level=level)
        best = clustered_mean((w.fillna(high) - b.fillna(low)).to_numpy(float), cases, level=level)
        rows.append({
            "outcome": o, "n_keys": len(pairs), "n_observed": observed.n, "n_not_run_by_design": n_by_design,
            "n_imputed_with": int(w.isna().sum()), "n_imputed_base": int(b.isna().sum()),
            "lift_observed": observed.estimate,
            "lift_lower": worst.estimate, "ci_lo_lower": worst.ci_lo, "ci_hi_lower": worst.ci_hi,
            "lift_upper": best.estimate, "ci_lo_upper": best.ci_lo, "ci_hi_upper": best.ci_hi,
        })
    return pd.DataFrame(rows, columns=["outcome", "n_keys", "n_observed", "n_not_run_by_design", "n_imputed_with", "n_imputed_base",
                                       "lift_observed", "lift_lower", "ci_lo_lower", "ci_hi_lower",
                                       "lift_upper", "ci_lo_upper", "ci_hi_upper"])


def check_abstentions(checks: pd.DataFrame) -> pd.DataFrame:
    """Per (metric, condition): sub-checks graded, decided and undecided (abstained).

    ``checks`` has one row per sub-check of a graded trial: ``metric``, ``condition``,
    ``check`` and ``decided`` (False when the grader or judge returned no verdict).
    A metric can be scored while some of its sub-checks abstain; this counts them.
    """
    cols = ["metric", "condition", "n_checks", "n_decided", "n_undecided", "share_undecided"]
    if checks is None or checks.empty:
        return pd.DataFrame(columns=cols)
    g = checks.assign(decided=checks["decided"].astype(bool)).groupby(["metric", "condition"], sort=True)["decided"]
    out = pd.DataFrame({"n_checks": g.size(), "n_decided": g.sum().astype(int)}).reset_index()
    out["n_undecided"] = out["n_checks"] - out["n_decided"]
    out["share_undecided"] = out["n_undecided"] / out["n_checks"]
    return out[cols]
