"""SkillsBench registry: reproduce the published v1.1 headline and the shared paired summary."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest
from scipy import stats as sps

from aces_bench.core.errors import ReportError
from aces_bench.records.trials import table_columns
from aces_bench.stats.external import (
    load_skillsbench_registry,
    registry_pass_counts,
    skillsbench_headline,
)
from aces_bench.stats.lift import lift_table
from aces_bench.stats.pairing import build_pairs
from aces_bench.stats.passk import passk_table
from aces_bench.stats.significance import per_skill_tests

SHARED = Path(__file__).resolve().parents[2] / ".." / "shared"
SB = SHARED / "data" / "skillsbench"
REGISTRY = SB / "results-registry.json"
needs_shared = pytest.mark.skipif(not REGISTRY.is_file(), reason=f"SkillsBench registry absent ({REGISTRY}): ../shared not mounted")


@pytest.fixture(scope="module")
def registry() -> pd.DataFrame:
    return load_skillsbench_registry(REGISTRY)


@pytest.mark.shared
@needs_shared
def test_headline_reproduces_skillsbench_v1_1(registry):
    h = skillsbench_headline(registry)
    assert (h.n_tasks, h.n_configs, h.balanced) == (87, 18, True)
    assert round(h.mean_without, 1) == 33.9
    assert round(h.mean_with, 1) == 50.5
    assert round(h.lift, 1) == 16.6
    assert round(h.min_config_lift, 1) == 4.1
    assert round(h.max_config_lift, 1) == 25.7


@pytest.mark.shared
@needs_shared
def test_tidy_shape_and_lift_machinery_match_the_shared_paired_summary(registry):
    assert list(registry.columns[: len(table_columns())]) == list(table_columns())
    assert len(registry) == 3132 and set(registry["condition"]) == {"with_skill", "baseline"}
    summary = pd.read_csv(SB / "summary.csv")
    per_config = summary[summary["harness"].notna()].set_index(["harness", "model_short"])
    pairs = build_pairs(registry, outcomes=("reward",))
    table = lift_table(pairs, by=("harness", "model"), outcomes=("reward",)).set_index(["harness", "model"])
    assert len(table) == len(per_config) == 18
    for key, ref in per_config.iterrows():
        row = table.loc[key]
        assert row["n"] == ref["n_tasks"]
        assert 100 * row["lift"] == pytest.approx(ref["mean_lift"], abs=1e-3)
        assert 100 * row["sd"] == pytest.approx(ref["sd_lift"], abs=1e-3)
        # the shared summary's interval is z-based; ours is t with tasks - 1 df on the same mean and SD
        z_half = ref["mean_lift"] - ref["normal_ci_lo"]
        t_half = z_half * sps.t.ppf(0.975, ref["n_tasks"] - 1) / sps.norm.ppf(0.975)
        assert 100 * row["ci_lo"] == pytest.approx(ref["mean_lift"] - t_half, abs=1e-3)
        assert row["share_pos"] == pytest.approx(ref["frac_pos"], abs=1e-4)
    # pass@1 from (trials, passCount) is the pass rate the summary reports
    p1 = passk_table(registry_pass_counts(registry), ks=(1,), by=()).iloc[0]
    overall = summary[summary["harness"].isna()].iloc[0]
    assert 100 * p1["pass_base"] == pytest.approx(overall["passrate_without"], abs=1e-3)
    assert 100 * p1["pass_with"] == pytest.approx(overall["passrate_with"], abs=1e-3)


@pytest.mark.shared
@needs_shared
def test_study_stats_runs_on_the_registry(registry):
    from aces_bench.records.stats import StatsSettings
    from aces_bench.stats.external import registry_pass_counts
    from aces_bench.stats.summary import study_stats

    s = study_stats(registry, settings=StatsSettings(n_resamples=500), counts=registry_pass_counts(registry))
    reward = next(r for r in s.lift_pooled.rows if r["outcome"] == "reward")
    assert reward["n"] == 87 * 18 and round(100 * reward["lift"], 1) == 16.6
    skill_boot = next(r for r in s.bootstrap.rows if r["outcome"] == "reward" and r["clustering"] == "skill")
    assert skill_boot["n_clusters"] == 87 and skill_boot["ci_lo"] < reward["lift"] < skill_boot["ci_hi"]
    p3 = next(r for r in s.passk_pooled.rows if r["k"] == 3)
    assert p3["n_cases"] == 87 * 18 and p3["lift"] > 0
    traj = {r["condition"]: r["n_missing_trajectory"] for r in s.missingness.trajectories.rows}
    assert traj == {"with_skill": 1566, "baseline": 1566}  # the registry publishes no trajectories


def _write(tmp_path: Path, rows) -> Path:
    path = tmp_path / "results-registry.json"
    path.write_text(json.dumps(rows))
    return path


def _row(**over):
    row = {"task": "t1", "model": "H (M)", "modelShort": "M", "harness": "H", "family": "f",
           "condition": "No Skills", "score": 50.0, "trials": 2, "passCount": 1, "perfectCount": 1}
    row.update(over)
    return row


def test_small_registry_round_trip_and_headline(tmp_path):
    rows = [_row(), _row(condition="With Skills", score=100.0, passCount=2),
            _row(task="t2", score=0.0, passCount=0), _row(task="t2", condition="With Skills", score=50.0)]
    frame = load_skillsbench_registry(_write(tmp_path, rows))
    h = skillsbench_headline(frame)
    assert (h.mean_without, h.mean_with, h.lift) == (25.0, 75.0, 50.0)
    assert frame["reward"].tolist() == [0.5, 1.0, 0.0, 0.5]


def test_the_loader_decides_each_rows_pass_and_mcnemar_counts_it(tmp_path):
    # The registry's solved task: a mean score of 100 (every attempt perfect), decided once when read.
    rows = [_row(), _row(condition="With Skills", score=100.0, passCount=2, perfectCount=2),
            _row(task="t2", score=100.0, passCount=2, perfectCount=2),
            _row(task="t2", condition="With Skills", score=99.5, passCount=2, perfectCount=1)]
    frame = load_skillsbench_registry(_write(tmp_path, rows))
    assert frame["final_pass"].tolist() == [False, True, True, False]
    pairs = build_pairs(frame, outcomes=("reward", "final_pass"))
    tests = per_skill_tests(pairs, outcome="reward", pass_outcome="final_pass", n_permutations=10).set_index("skill")
    assert tests[["n_pass_with_only", "n_pass_base_only"]].to_dict("index") == {
        "t1": {"n_pass_with_only": 1, "n_pass_base_only": 0}, "t2": {"n_pass_with_only": 0, "n_pass_base_only": 1}}
    # A mean reward is not a pass: counting it is refused, naming the column, not thresholded.
    with pytest.raises(ReportError) as err:
        per_skill_tests(pairs, outcome="reward", pass_outcome="reward", n_permutations=10)
    assert str(err.value) == (
        "stats: pass_outcome: pass column 'reward' holds 1 value(s) other than 0/1 (first: 0.995): a pass is decided "
        "once, at grading, and statistics count it, never a score against a threshold of their own\n"
        "  fix: count 'final_pass' (the default), or a column whose values are 1 (pass), 0 (fail) or empty")


@pytest.mark.parametrize("content,message", [
    (None, "not found"),
    ("{not json", "not valid JSON"),
    ({"rows": []}, "expected a JSON array"),
    ([_row(condition="Some Skills")], "unknown condition 'Some Skills'"),
    ([_row(passCount=5)], "passCount 5 > trials 2"),
    ([{"task": "t1"}], "[0].model"),
    ([_row(), _row()], "repeat a (task, configuration, condition)"),
])
def test_bad_registry_files_are_user_errors(tmp_path, content, message):
    path = tmp_path / "results-registry.json"
    if content is not None:
        path.write_text(content if isinstance(content, str) else json.dumps(content))
    with pytest.raises(ReportError) as err:
        load_skillsbench_registry(path)
    assert message in str(err.value) and str(path) in str(err.value) and "fix:" in str(err.value)


def test_headline_needs_both_conditions(tmp_path):
    frame = load_skillsbench_registry(_write(tmp_path, [_row()]))
    with pytest.raises(ReportError, match="lacks one condition"):
        skillsbench_headline(frame)
