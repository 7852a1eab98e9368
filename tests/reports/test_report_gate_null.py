"""The null calibration arm in the gates: `report --fail-under-lift` and `aces-bench ci`'s
policy refuse when the null arm is not consistent with 0 (the gate's exact two-sided
sign-flip test, per skill and pooled), and say so plainly when none ran."""

from __future__ import annotations

from support.stats import frame, trial

from aces_bench.analysis.cli import _gate
from aces_bench.analysis.gate import null_arm_failures
from aces_bench.analysis.summary import build_summary
from aces_bench.analysis.verdict import control_views, headline_sentence
from aces_bench.ci.run import null_arm_check
from aces_bench.core.io import write_json
from aces_bench.records.stats import StatsSettings
from aces_bench.records.summary import read_summary
from aces_bench.reports.gate import NOT_RUN
from aces_bench.stats import build_pairs, study_stats

SETTINGS = StatsSettings(outcomes=("outcome", "reward"), n_resamples=200)
N = 8


def _rows(skill: str, cond: str, values: list[float]) -> list[dict]:
    return [trial(skill=skill, case_id=f"c{i}", condition=cond, task_id=f"{skill}-{cond}-{i}", outcome=v, reward=v,
                  final_pass=v >= 1.0) for i, v in enumerate(values)]


def _summary(tmp_path, *, flaky: bool, null: bool = True):
    """Two skills that both help (6 of 8 cases won, none lost: enough for Holm over the two); with ``flaky`` the second
    baseline run of "unsteady" passes 6 cases the first failed (a leaking cache, a warm
    container): the instrument itself shows an effect."""
    rows = []
    base = [0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    for skill in ("steady", "unsteady"):
        rows += _rows(skill, "with_skill", [1.0] * N)
        rows += _rows(skill, "baseline", base)
        if null:
            second = [1.0] * N if flaky and skill == "unsteady" else base
            rows += _rows(skill, "null", second)
    trials = frame(rows)
    stats = study_stats(trials, settings=SETTINGS)
    summary = build_summary(trials, build_pairs(trials, outcomes=SETTINGS.outcomes), stats, source="test")
    write_json(tmp_path / "summary.json", summary)
    return read_summary(tmp_path / "summary.json")


def test_the_gate_refuses_a_null_arm_that_is_not_consistent_with_zero(tmp_path, capsys):
    summary = _summary(tmp_path, flaky=True)
    gates = {g.skill: g for g in summary.gate}
    # 6 of 8 cases flipped one way: two-sided exact p = 2 * 0.5^6 = 0.03125 <= 0.05.
    assert gates["unsteady"].verdict == "null arm shows an effect"
    assert gates["unsteady"].null.p_value == 2 * 0.5 ** 6 and gates["unsteady"].null.lift == 6 / 8
    assert gates["steady"].verdict == "helps" and gates["steady"].null.consistent
    failures = null_arm_failures(summary)
    assert [f.skill for f in failures] == ["null arm (all skills)"]
    assert failures[0].line().startswith("FAIL null arm (all skills): null lift +0.375 over 16 case(s), 6 differing; "
                                         "two-sided sign-flip p = 0.03125")
    # The skills' own lifts pass the threshold; the null arm alone makes the gate refuse.
    assert _gate(tmp_path, 0.0, None, None, None) == 1
    out = capsys.readouterr()
    assert "FAIL unsteady: null arm shows an effect" in out.err and "FAIL steady" not in out.err
    assert "gate: null arm: null lift +0.375" in out.out and "(not consistent with 0); refused for unsteady" in out.out
    check = null_arm_check(summary)
    assert check.status == "fail" and check.reason.startswith("null arm (all skills): null lift +0.375")
    views = {v.arm: v for v in control_views(summary)}
    assert views["null"].check_class == "bad" and "refused" in views["null"].check
    assert "The null arm (the baseline run twice) shows an effect: null lift +0.375" in headline_sentence(summary)


def test_a_steady_null_arm_passes_and_a_missing_one_is_not_a_pass(tmp_path, capsys):
    steady = _summary(tmp_path / "a", flaky=False)
    assert null_arm_failures(steady) == []
    assert _gate(tmp_path / "a", 0.0, None, None, None) == 0
    out = capsys.readouterr().out
    assert "gate: null arm: null lift +0.000 over 16 case(s), 0 differing; two-sided sign-flip p = 1" in out
    assert "(consistent with 0)" in out
    assert null_arm_check(steady).status == "pass"

    none = _summary(tmp_path / "b", flaky=False, null=False)
    assert none.controls_run == [] and null_arm_failures(none) == []
    assert _gate(tmp_path / "b", 0.0, None, None, None) == 0
    assert f"gate: {NOT_RUN}" in capsys.readouterr().out
    check = null_arm_check(none)
    assert (check.status, check.reason) == ("not run", NOT_RUN)
    assert {v.arm: v.ran for v in control_views(none)} == {"null": False, "placebo": False, "forced": False}
