"""Intention to treat in the gate's trial classification (aces_bench/stats/gate.py, bottom):
a with-skill trial not shown its target is a loss, a baseline that saw the target counts as
it ran, and a verdict whose worst case over excluded pairs is not above the threshold says so."""

from __future__ import annotations

import pytest
from support.stats import frame, trial

from aces_bench.core.gate import GateSettings
from aces_bench.core.modes import trial_class
from aces_bench.stats.gate import gate_verdict, skill_cases, worst_case_lift


def _pair(i: int, with_skill: dict, baseline: dict) -> list[dict]:
    return [trial(case_id=f"c{i}", condition="with_skill", task_id=f"w{i}", **with_skill),
            trial(case_id=f"c{i}", condition="baseline", task_id=f"b{i}", **baseline)]


WON = ({"trial_class": "finished", "final_pass": True}, {"trial_class": "finished", "final_pass": False})
# The harness never started (infrastructure shown): excluded, the baseline passed.
EXCLUDED = ({"status": "infra_error", "trial_class": "excluded", "final_pass": None,
             "failure_cause": "SandboxBuildFailedError before the agent started: no image"},
            {"trial_class": "finished", "final_pass": True})


def test_a_with_skill_trial_not_shown_its_target_is_a_loss_and_a_baseline_that_saw_it_counts():
    not_shown = {"status": "setup_error", "trial_class": trial_class("setup_error"), "final_pass": False,
                 "target_listed": False}
    saw = {"trial_class": "finished", "final_pass": True, "baseline_saw_target": True}
    rows = [r for i in range(5) for r in _pair(i, *WON)]
    rows += _pair(5, not_shown, {"trial_class": "finished", "final_pass": True})
    rows += _pair(6, {"trial_class": "finished", "final_pass": True}, saw)
    cases = skill_cases(frame(rows), "s1")
    assert cases.positive == [1.0] * 5 + [-1.0, 0.0] and cases.n_excluded_pairs == 0
    assert cases.worst_case_lift is None  # nothing left out: no worst case to state


def test_the_worst_case_is_every_excluded_side_at_its_worst_for_the_skill():
    rows = [r for i in range(5) for r in _pair(i, *WON)] + _pair(5, *EXCLUDED)
    cases = skill_cases(frame(rows), "s1")
    assert cases.positive == [1.0] * 5 and cases.n_excluded_pairs == 1
    assert cases.worst_case_lift == pytest.approx((5 - 1) / 6) == worst_case_lift(frame(rows))
    # Above the threshold: the reason does not mention it.
    assert "were every excluded side" not in gate_verdict(cases, GateSettings(threshold=0.05)).reason


def test_a_verdict_whose_worst_case_is_not_above_the_threshold_says_so():
    # Five wins and five pairs whose with-skill side the infrastructure took out while the
    # baseline passed: at its worst for the skill the lift is 0, not above 0.05.
    rows = [r for i in range(5) for r in _pair(i, *WON)] + [r for i in range(5, 10) for r in _pair(i, *EXCLUDED)]
    cases = skill_cases(frame(rows), "s1")
    assert cases.n_excluded_pairs == 5 and cases.worst_case_lift == pytest.approx(0.0)
    v = gate_verdict(cases, GateSettings(threshold=0.05))
    assert ("were every excluded side the worst for the skill the lift would be +0.000, not above +0.050"
            in v.reason), v.reason
