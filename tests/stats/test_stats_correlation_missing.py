"""Spearman + Fisher-z against scipy; the missingness audit counts every exclusion."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from support.stats import frame, make_trials, trial

from aces_bench.core.errors import ReportError
from aces_bench.stats.correlation import spearman_ci, static_lift_correlation
from aces_bench.stats.missingness import (
    imputation_sensitivity,
    one_sided,
    one_sided_keys,
    outcome_only_partial,
    scored_by_condition,
    status_counts,
    trajectory_gaps,
)
from aces_bench.stats.pairing import build_pairs


def test_spearman_and_fisher_interval_match_scipy_on_ranks():
    rng = np.random.default_rng(1)
    x = rng.normal(size=25)
    y = x + rng.normal(size=25)
    c = spearman_ci(x, y)
    ref = sps.spearmanr(x, y)
    assert c.rho == pytest.approx(ref.statistic) and c.p_value == pytest.approx(ref.pvalue)
    ci = sps.pearsonr(sps.rankdata(x), sps.rankdata(y)).confidence_interval(0.95)
    assert (c.ci_lo, c.ci_hi) == pytest.approx((ci.low, ci.high))


def test_spearman_degenerate_inputs():
    assert spearman_ci([1, 2], [3, 4]).rho is None
    three = spearman_ci([1, 2, 3], [1, 3, 2])
    assert three.rho == pytest.approx(0.5) and three.ci_lo is None and "4+" in three.note
    const = spearman_ci([1, 1, 1, 1], [1, 2, 3, 4])
    assert const.rho is None and "constant" in const.note
    dropped = spearman_ci([1, 2, np.nan, 4, 5], [2, 1, 3, np.nan, 5])
    assert dropped.n == 3 and dropped.n_dropped == 2


def test_static_lift_correlation_joins_by_skill_and_counts_one_sided_skills():
    pairs = build_pairs(make_trials(skills=5, cases=2, attempts=1, seed=3))
    static = {"s0": 0.1, "s1": 0.5, "s2": 0.3, "s3": 0.9, "zz": 0.2}
    corr, joined = static_lift_correlation(static, pairs, outcome="composite")
    live = pairs.groupby("skill")["lift_composite"].mean()
    ref = sps.spearmanr([static[s] for s in ("s0", "s1", "s2", "s3")], live.loc[["s0", "s1", "s2", "s3"]])
    assert corr.n == 4 and corr.n_dropped == 2 and corr.rho == pytest.approx(ref.statistic)
    assert set(joined["skill"]) == {"s0", "s1", "s2", "s3", "s4", "zz"}
    with pytest.raises(ReportError, match="'score'"):
        static_lift_correlation(pd.DataFrame({"skill": ["s0"]}), pairs)


def _audit_table():
    return frame([
        trial(condition="with_skill", metric_accuracy=1.0, metric_goal_accuracy=0.5),
        trial(condition="baseline", metric_accuracy=0.0),
        trial(case_id="c2", condition="with_skill", status="timeout", failure_cause="AgentTimeoutError", has_trajectory=False),
        trial(case_id="c2", condition="baseline", metric_accuracy=0.5),
        trial(case_id="c3", condition="with_skill", has_trajectory=False),  # ran, grader could not decide
        trial(case_id="c3", condition="baseline"),
        trial(case_id="c4", condition="baseline", metric_accuracy=0.25),  # with-skill never ran
    ])


def test_missingness_counts_every_exclusion():
    t = _audit_table()
    pairs = build_pairs(t)
    sc = scored_by_condition(t, outcomes=("accuracy",)).set_index("condition")
    assert sc.loc["with_skill", ["n_rows", "n_scored", "n_unscored", "n_unscored_status_ok"]].tolist() == [3, 1, 2, 1]
    assert sc.loc["baseline", ["n_rows", "n_scored", "n_unscored"]].tolist() == [4, 3, 1]
    os_ = one_sided(pairs, outcomes=("accuracy",)).iloc[0]
    assert os_[["n_keys", "n_both", "n_with_only", "n_base_only", "n_neither", "n_no_trial_with"]].tolist() == [4, 1, 0, 2, 1, 1]
    keys = one_sided_keys(pairs, "accuracy")
    assert keys["case_id"].tolist() == ["c2", "c4"] and set(keys["scored_side"]) == {"baseline"}
    traj = trajectory_gaps(t).set_index("condition")
    assert traj.loc["with_skill", "n_missing_trajectory"] == 2 and traj.loc["with_skill", "n_missing_trajectory_status_ok"] == 1
    st = status_counts(t)
    assert st[(st["status"] == "timeout")]["failure_cause"].tolist() == ["AgentTimeoutError"]
    assert st["n"].sum() == len(t)
    part = outcome_only_partial(t).set_index("condition")
    assert part.loc["with_skill", "n_partial"] == 0 and part.loc["baseline", "n_partial"] == 3


def test_sensitivity_imputes_with_skill_unscored_cases_as_failure():
    pairs = build_pairs(_audit_table())
    row = imputation_sensitivity(pairs, outcomes=("accuracy",)).iloc[0]
    assert row["n_primary"] == 1 and row["lift_primary"] == pytest.approx(1.0)
    assert row["n_imputed"] == 2 and row["n_sensitivity"] == 3
    assert row["lift_sensitivity"] == pytest.approx(((1.0 - 0.0) + (0 - 0.5) + (0 - 0.25)) / 3)
