"""The null calibration arm in the gates: `report --fail-under-lift` and `aces-bench ci`'s
policy refuse when the null arm's interval excludes 0, and say so plainly when none ran."""

from __future__ import annotations

import pytest

from aces_bench.ci.run import null_arm_check
from aces_bench.io import write_json
from aces_bench.reports.cli import _gate
from aces_bench.reports.gate import NOT_RUN, null_arm_failures
from aces_bench.reports.summary import build_summary, read_summary
from aces_bench.reports.verdict import control_views, headline_sentence
from aces_bench.stats import build_pairs, study_stats
from aces_bench.stats.summary import StatsSettings
from tests.stats.stats_fixtures import frame, trial

SETTINGS = StatsSettings(outcomes=("outcome", "reward"), n_resamples=200)
N = 8


def _rows(skill: str, cond: str, values: list[float]) -> list[dict]:
    return [trial(skill=skill, case_id=f"c{i}", condition=cond, task_id=f"{skill}-{cond}-{i}", outcome=v, reward=v,
                  final_pass=v >= 1.0) for i, v in enumerate(values)]


def _summary(tmp_path, *, flaky: bool, null: bool = True):
    """Two skills that both help; with ``flaky`` the second baseline run of "unsteady" scores
    higher than the first on most cases (a leaking cache, a warm container): the instrument
    itself shows an effect."""
    rows = []
    base = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    for skill in ("steady", "unsteady"):
        rows += _rows(skill, "with_skill", [1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 1.0, 1.0])
        rows += _rows(skill, "baseline", base)
        if null:
            second = [1.0, 1.0, 1.0, 1.0, 0.0, 1.0, 1.0, 0.0] if flaky and skill == "unsteady" else base
            rows += _rows(skill, "null", second)
    trials = frame(rows)
    stats = study_stats(trials, settings=SETTINGS)
    summary = build_summary(trials, build_pairs(trials, outcomes=SETTINGS.outcomes), stats, source="test")
    write_json(tmp_path / "summary.json", summary)
    return read_summary(tmp_path / "summary.json")


def test_the_gate_refuses_a_null_arm_whose_interval_excludes_zero(tmp_path, capsys):
    summary = _summary(tmp_path, flaky=True)
    row = summary.control("null", "outcome", "unsteady")
    assert row.lift == pytest.approx(4 / 8) and row.adj_ci_lo > 0
    failures = null_arm_failures(summary, outcome="outcome")
    assert [f.skill for f in failures] == ["null arm (all skills)", "null arm (unsteady)"]
    assert failures[1].line() == (
        f"FAIL null arm (unsteady): outcome null lift +0.500, adjusted CI ({row.adjustment}) "
        f"[{row.adj_ci_lo:+.3f}, {row.adj_ci_hi:+.3f}]; 4 of 8 verdicts flipped excludes 0: a skill-free arm shows "
        "an effect, so this instrument's lifts are not trustworthy")
    # The skills' own lifts pass the threshold; the null arm alone makes the gate refuse.
    assert _gate(tmp_path, 0.05, "outcome", False) == 1
    out = capsys.readouterr()
    assert "FAIL null arm (unsteady)" in out.err and "FAIL steady" not in out.err
    assert "below" not in out.err
    assert "gate: null arm: outcome null lift +0.250" in out.out and "(excludes 0); 2 refusal(s)" in out.out
    check = null_arm_check(summary, "outcome")
    assert check.status == "fail" and check.reason.startswith("null arm (all skills): outcome null lift +0.250")
    views = {v.arm: v for v in control_views(summary)}
    assert views["null"].check_class == "bad" and "refused" in views["null"].check
    assert "The null arm (the baseline run twice) shows an effect (its interval excludes 0): null lift +0.250" \
        in headline_sentence(summary)


def test_a_steady_null_arm_passes_and_a_missing_one_is_not_a_pass(tmp_path, capsys):
    steady = _summary(tmp_path / "a", flaky=False)
    assert null_arm_failures(steady, outcome="outcome") == []
    assert _gate(tmp_path / "a", 0.05, "outcome", False) == 0
    out = capsys.readouterr().out
    assert "gate: null arm: outcome null lift +0.000 in each of 16 pairs (no variation, so no interval)" in out
    assert "(contains 0)" in out
    assert null_arm_check(steady, "outcome").status == "pass"

    none = _summary(tmp_path / "b", flaky=False, null=False)
    assert none.controls_run == [] and null_arm_failures(none, outcome="outcome") == []
    assert _gate(tmp_path / "b", 0.05, "outcome", False) == 0
    assert f"gate: {NOT_RUN}" in capsys.readouterr().out
    check = null_arm_check(none, "outcome")
    assert (check.status, check.reason) == ("not run", NOT_RUN)
    assert {v.arm: v.ran for v in control_views(none)} == {"null": False, "placebo": False, "forced": False}
