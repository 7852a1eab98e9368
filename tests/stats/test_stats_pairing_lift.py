"""Pairing and Skill Lift against direct computations and degenerate inputs."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from support.stats import frame, make_trials, trial

from aces_bench.core.errors import ReportError
from aces_bench.records.trials import PAIR_KEY
from aces_bench.stats.lift import (
    lift_table,
    pooled_lift,
    summarise_lift,
    within_cell_sd,
)
from aces_bench.stats.pairing import build_pairs, outcome_values


def test_pairs_subtract_baseline_from_with_skill_per_key():
    t = frame([
        trial(condition="with_skill", metric_accuracy=0.9, reward=1.0),
        trial(condition="baseline", metric_accuracy=0.4, reward=0.0),
        trial(case_id="c2", condition="with_skill", metric_accuracy=0.5),
        trial(case_id="c2", condition="baseline", metric_accuracy=0.7),
    ])
    pairs = build_pairs(t)
    assert list(pairs["case_id"]) == ["c1", "c2"]
    assert pairs["lift_accuracy"].tolist() == pytest.approx([0.5, -0.2])
    assert pairs["lift_reward"].iloc[0] == 1.0 and math.isnan(pairs["lift_reward"].iloc[1])


def test_outcome_only_is_mean_of_scored_outcome_metrics_and_nan_when_neither():
    t = frame([
        trial(metric_accuracy=0.2, metric_goal_accuracy=0.6),
        trial(case_id="c2", metric_accuracy=0.4),
        trial(case_id="c3"),
    ])
    vals = outcome_values(t, "outcome_only")
    assert vals.iloc[:2].tolist() == pytest.approx([0.4, 0.4])
    assert math.isnan(vals.iloc[2])


def test_one_side_missing_keeps_the_row_with_nan_lift():
    t = frame([trial(condition="with_skill", metric_accuracy=1.0), trial(case_id="c2", condition="baseline", metric_accuracy=0.0)])
    pairs = build_pairs(t)
    assert len(pairs) == 2
    assert pairs["lift_accuracy"].isna().all()
    assert pairs["present_with"].tolist() == [True, False]
    assert pairs["present_base"].tolist() == [False, True]


def test_duplicate_pair_key_is_a_user_error_naming_the_key():
    t = frame([trial(), trial(run_id="r2")])
    with pytest.raises(ReportError) as err:
        build_pairs(t)
    assert "case_id='c1'" in str(err.value) and "fix:" in str(err.value)


def test_unknown_condition_and_missing_columns_are_user_errors():
    t = frame([trial()])
    t.loc[0, "condition"] = "treated"
    with pytest.raises(ReportError, match="treated"):
        build_pairs(t)
    with pytest.raises(ReportError, match="missing columns: skill"):
        build_pairs(frame([trial()]).drop(columns=["skill"]))


def test_lift_summary_matches_scipy_and_direct_formulas():
    rng = np.random.default_rng(3)
    w, b = rng.random(40), rng.random(40)
    w[[3, 7]] = np.nan
    s = summarise_lift(w, b)
    keep = ~np.isnan(w)
    d = w[keep] - b[keep]
    desc = sps.describe(d)
    assert s["n"] == 38 and s["lift"] == pytest.approx(desc.mean)
    assert s["sd"] == pytest.approx(math.sqrt(desc.variance))
    lo, hi = sps.t.interval(0.95, len(d) - 1, loc=d.mean(), scale=sps.sem(d))  # one pair per case: paired t
    assert (s["ci_lo"], s["ci_hi"]) == pytest.approx((lo, hi)) and s["df"] == 37
    assert s["median"] == pytest.approx(np.median(d))
    assert s["n_pos"] + s["n_neg"] + s["n_zero"] == 38
    assert s["share_pos"] == pytest.approx((d > 0).mean())


def test_lift_degenerate_inputs_give_explicit_empty_results():
    none = summarise_lift(np.array([]), np.array([]))
    assert none["n"] == 0 and none["lift"] is None and none["ci_lo"] is None and none["share_pos"] is None
    one = summarise_lift(np.array([0.7]), np.array([0.2]))
    assert one["n"] == 1 and one["lift"] == pytest.approx(0.5) and one["sd"] is None and one["ci_lo"] is None
    all_nan = summarise_lift(np.array([np.nan, np.nan]), np.array([1.0, 0.0]))
    assert all_nan["n"] == 0 and all_nan["lift"] is None


def test_lift_table_per_cell_equals_a_loop_over_cells_and_keeps_unscored_cells():
    t = make_trials(skills=2, cases=3, attempts=2, harnesses=("h1", "h2"), seed=5)
    t.loc[(t["skill"] == "s1") & (t["harness"] == "h2"), "metric_security"] = np.nan
    pairs = build_pairs(t)
    table = lift_table(pairs, outcomes=("security",))
    assert len(table) == 4
    for _, row in table.iterrows():
        sel = pairs[(pairs["skill"] == row["skill"]) & (pairs["harness"] == row["harness"])]
        d = sel["lift_security"].dropna()
        assert row["n"] == len(d)
        if len(d):
            assert row["lift"] == pytest.approx(d.mean())
        else:
            assert row["lift"] is None or pd.isna(row["lift"])
    pooled = pooled_lift(pairs, outcomes=("security",))
    assert pooled["n"].iloc[0] == pairs["lift_security"].notna().sum()


def test_within_cell_sd_matches_a_direct_loop():
    t = make_trials(skills=1, cases=4, attempts=3, seed=9)
    pairs = build_pairs(t)
    table = within_cell_sd(pairs, outcomes=("accuracy",))
    row = table[(table["condition"] == "with_skill")].iloc[0]
    with_ = t[t["condition"] == "with_skill"]
    per_attempt = [with_[with_["attempt"] == a]["metric_accuracy"].mean() for a in range(3)]
    assert row["n_attempts"] == 3 and row["n_cases"] == 4
    assert row["sd_between_attempts"] == pytest.approx(np.std(per_attempt, ddof=1))
    case_vars = [with_[with_["case_id"] == c]["metric_accuracy"].var(ddof=1) for c in with_["case_id"].unique()]
    assert row["pooled_within_case_sd"] == pytest.approx(math.sqrt(np.mean(case_vars)))
    lift_row = table[table["condition"] == "lift"].iloc[0]
    lifts = [pairs[pairs["attempt"] == a]["lift_accuracy"].mean() for a in range(3)]
    assert lift_row["sd_between_attempts"] == pytest.approx(np.std(lifts, ddof=1))


def test_within_cell_sd_skips_cells_without_repeats():
    pairs = build_pairs(make_trials(skills=2, cases=2, attempts=1))
    assert within_cell_sd(pairs).empty


def test_pair_key_is_the_shared_contract():
    pairs = build_pairs(make_trials(skills=1, cases=1, attempts=1))
    assert list(pairs.columns[: len(PAIR_KEY)]) == list(PAIR_KEY)
