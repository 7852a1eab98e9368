"""Calibration arms in the stats layer: null lift with verdict flips, lift over placebo,
discovery gap, computed from one trials table holding every condition."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.stats import t as student_t
from support.stats import frame, trial

from aces_bench.core.errors import ReportError
from aces_bench.records.stats import StatsSettings
from aces_bench.stats import build_pairs, study_stats
from aces_bench.stats.arms import arm_table

SETTINGS = StatsSettings(outcomes=("outcome", "reward"), n_resamples=200)


def _study(values: dict[str, list[float]], *, skill="s1", passes: dict[str, list[bool]] | None = None) -> list[dict]:
    """One row per (case, condition) with the given outcome per case."""
    rows = []
    for cond, vals in values.items():
        for i, v in enumerate(vals):
            p = (passes or {}).get(cond)
            rows.append(trial(skill=skill, case_id=f"c{i}", condition=cond, task_id=f"{skill}-{cond}-{i}",
                              outcome=v, reward=v, final_pass=bool(p[i]) if p else v >= 1.0))
    return rows


def _paired_t(d: np.ndarray) -> tuple[float, float, float]:
    m, se = d.mean(), d.std(ddof=1) / math.sqrt(d.size)
    half = student_t.ppf(0.975, d.size - 1) * se
    return m, max(-1, m - half), min(1, m + half)


def test_each_arm_is_its_own_paired_difference_with_the_headline_interval():
    base = [0.0, 0.5, 0.25, 1.0, 0.0, 0.75]
    null = [0.25, 0.5, 0.0, 1.0, 0.25, 0.75]
    with_ = [1.0, 1.0, 0.75, 1.0, 0.5, 1.0]
    placebo = [0.0, 0.75, 0.25, 1.0, 0.0, 0.5]
    forced = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0]
    trials = frame(_study({"with_skill": with_, "baseline": base, "null": null, "placebo": placebo, "forced": forced}))
    table = arm_table(trials, outcomes=("outcome",))
    got = {r["arm"]: r for r in table.to_dict("records")}
    assert list(got) == ["null", "placebo", "forced"]
    for arm, (a, b) in {"null": (null, base), "placebo": (with_, placebo), "forced": (forced, with_)}.items():
        m, lo, hi = _paired_t(np.array(a) - np.array(b))
        assert got[arm]["lift"] == pytest.approx(m) and got[arm]["n"] == 6
        assert (got[arm]["ci_lo"], got[arm]["ci_hi"]) == pytest.approx((lo, hi))
    assert got["placebo"]["treatment"] == "with_skill" and got["placebo"]["control"] == "placebo"
    assert got["forced"]["comparison"].startswith("discovery gap")
    # Pass/fail verdict (final_pass: outcome 1.0 here) flips between the two baseline runs: none does.
    assert (got["null"]["n_flip_known"], got["null"]["n_flipped"], got["null"]["flip_share"]) == (6, 0, 0.0)
    assert got["placebo"]["flip_share"] is None

    # The headline is untouched by the arms: the same as a table without them.
    stats = study_stats(trials, settings=SETTINGS)
    alone = study_stats(trials.loc[trials["condition"].isin(["with_skill", "baseline"])], settings=SETTINGS)
    assert stats.lift_pooled.rows == alone.lift_pooled.rows and stats.significance.rows == alone.significance.rows
    assert stats.controls_run == ["null", "placebo", "forced"] and alone.controls is None
    assert stats.n_trials == 30
    pooled = {r["arm"]: r for r in stats.controls.rows if r["outcome"] == "outcome"}
    assert pooled["null"]["lift"] == pytest.approx(np.mean(np.array(null) - np.array(base)))
    by_skill = [r for r in stats.controls_by_skill.rows if r["outcome"] == "outcome" and r["arm"] == "null"]
    assert [r["skill"] for r in by_skill] == ["s1"]


def test_flips_count_verdicts_that_differ_between_the_baseline_runs():
    # Same mean outcome in both runs, but three cases swap pass and fail: the lift hides it, the flips show it.
    base = [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]
    null = [0.0, 1.0, 1.0, 0.0, 0.0, 1.0]
    passes = {"baseline": [v >= 1 for v in base], "null": [v >= 1 for v in null]}
    trials = frame(_study({"with_skill": [1.0] * 6, "baseline": base, "null": null}, passes=passes))
    row = arm_table(trials, outcomes=("outcome",)).iloc[0]
    assert row["arm"] == "null" and row["lift"] == pytest.approx(0.0)
    assert row["ci_lo"] < 0 < row["ci_hi"]
    assert (row["n_flip_known"], row["n_flipped"]) == (6, 4) and row["flip_share"] == pytest.approx(4 / 6)


def test_a_study_without_arms_has_none_and_an_unknown_condition_is_refused():
    trials = frame(_study({"with_skill": [1.0, 0.0], "baseline": [0.0, 0.0]}))
    assert arm_table(trials).empty
    assert study_stats(trials, settings=SETTINGS).controls_run == []
    bad = trials.copy()
    bad.loc[bad.index[0], "condition"] = "placeb"
    with pytest.raises(ReportError, match="unknown condition value"):
        study_stats(bad, settings=SETTINGS)
    # The generic pairing pairs any two conditions of the same key.
    both = frame(_study({"null": [1.0], "baseline": [0.0]}))
    assert build_pairs(both, outcomes=("outcome",), sides=("null", "baseline"))["lift_outcome"].tolist() == [1.0]
