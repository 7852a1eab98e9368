"""StudyStats: everything at once, JSON round trip, determinism and degenerate tables."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from pydantic import ValidationError
from support.stats import frame, make_trials, trial

from aces_bench.records.stats import StatsSettings, StudyStats
from aces_bench.stats.summary import study_stats

FAST = StatsSettings(n_resamples=200)


def test_study_stats_round_trips_through_json_and_is_deterministic():
    t = make_trials(skills=3, cases=3, attempts=3, modes=("isolation", "group"), unscored_rate=0.1, seed=1)
    s = study_stats(t, settings=FAST, static_scores={"s0": 0.2, "s1": 0.9, "s2": 0.4})
    text = s.model_dump_json()
    assert "NaN" not in text
    assert StudyStats.model_validate_json(text) == s
    assert study_stats(t, settings=FAST, static_scores={"s0": 0.2, "s1": 0.9, "s2": 0.4}) == s
    assert json.loads(text)["schema_version"] == "1"
    pooled = s.lift_pooled.frame().set_index("outcome")
    assert pooled.loc["composite", "n"] == s.missingness.one_sided.frame().set_index("outcome").loc["composite", "n_both"]
    assert s.static_correlation is not None and s.static_correlation.n == 3


def test_unknown_schema_version_is_rejected_with_the_fix():
    s = study_stats(make_trials(skills=1, cases=2, attempts=1), settings=FAST)
    data = s.model_dump(mode="json")
    data["schema_version"] = "99"
    with pytest.raises(ValidationError, match="regenerate with `aces-bench report`"):
        StudyStats.model_validate(data)


def test_empty_table_gives_zero_counts_and_no_statistics():
    s = study_stats(frame([]), settings=FAST)
    assert s.n_trials == 0 and s.n_pair_keys == 0
    assert all(r["n"] == 0 and r["lift"] is None and r["ci_lo"] is None for r in s.lift_pooled.rows)
    assert s.lift_by_cell.rows == [] and s.significance.rows == []
    assert all(r["estimate"] is None for r in s.bootstrap.rows)
    assert all(r["n_cases"] == 0 for r in s.passk_pooled.rows)
    assert s.routing_pooled.rows[0]["premium"] is None


def test_one_pair_has_a_lift_but_no_interval():
    t = frame([trial(condition="with_skill", composite=0.8, reward=1.0), trial(condition="baseline", composite=0.3, reward=0.0)])
    s = study_stats(t, settings=FAST)
    row = s.lift_pooled.frame().set_index("outcome").loc["composite"]
    assert row["n"] == 1 and row["lift"] == pytest.approx(0.5)
    assert row["ci_lo"] is None or math.isnan(row["ci_lo"])
    boot = [r for r in s.bootstrap.rows if r["outcome"] == "composite"]
    assert all(r["ci_lo"] is None and r["note"] for r in boot)
    assert s.design_power.rows[0]["mde"] is None


def test_all_nan_metric_and_one_side_missing_are_reported_not_zeroed():
    t = make_trials(skills=2, cases=3, attempts=1)
    t["metric_behavior_check"] = np.nan
    t = t[~((t["skill"] == "s1") & (t["condition"] == "with_skill"))]
    s = study_stats(t, settings=FAST)
    behavior = next(r for r in s.lift_pooled.rows if r["outcome"] == "behavior_check")
    assert behavior["n"] == 0 and behavior["lift"] is None and behavior["share_pos"] is None
    one = s.missingness.one_sided.frame().set_index("outcome").loc["composite"]
    assert one["n_no_trial_with"] == 3 and one["n_base_only"] == 3 and one["n_both"] == 3
    sens = s.missingness.sensitivity.frame().set_index("outcome").loc["composite"]
    assert sens["n_imputed"] == 3 and sens["n_sensitivity"] == 6


def test_bad_outcome_setting_is_a_user_error():
    from aces_bench.core.errors import ReportError

    with pytest.raises(ReportError, match="unknown outcome 'acuracy'"):
        study_stats(frame([]), settings=StatsSettings(outcomes=("acuracy",)))


def test_negative_controls_get_their_own_lift_rows():
    t = frame([
        trial(condition="with_skill", composite=0.9), trial(condition="baseline", composite=0.5),
        trial(case_id="n1", case_kind="negative", negative_control=True, condition="with_skill", composite=0.4),
        trial(case_id="n1", case_kind="negative", negative_control=True, condition="baseline", composite=0.6),
    ])
    s = study_stats(t, settings=FAST)
    rows = {(r["case_kind"], r["negative_control"]): r for r in s.lift_by_case_kind.rows if r["outcome"] == "composite"}
    assert rows[("explicit", False)]["lift"] == pytest.approx(0.4)
    assert rows[("negative", True)]["lift"] == pytest.approx(-0.2)
