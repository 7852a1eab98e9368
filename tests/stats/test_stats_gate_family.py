"""The gate across a study's skills (Holm on "helps" and on "harms", ``gate_family``) and its
regression check on should-not-use cases (issue 33, items 2 and 3)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from support.stats import frame, trial

from aces_bench.core.gate import GateSettings
from aces_bench.records.gate import GateCases, NegativeCase
from aces_bench.stats.gate import gate_family, gate_table, gate_verdict, help_p, holm_levels, skill_cases


def test_holm_levels_step_down_and_stop_at_the_first_failure():
    # Sorted: 0.001 at 0.05/4, 0.01 at 0.05/3, 0.03 fails 0.05/2, so it and every later one are read there.
    levels = holm_levels([0.03, 0.001, 0.2, 0.01], 0.05)
    assert levels == pytest.approx([0.025, 0.0125, 0.025, 0.05 / 3])
    assert holm_levels([0.001, 0.002], 0.05) == pytest.approx([0.025, 0.05])
    assert holm_levels([], 0.05) == []


def test_holm_rejects_exactly_what_the_textbook_procedure_rejects():
    rng = np.random.default_rng(2)
    for _ in range(500):
        k = int(rng.integers(1, 8))
        p = list(rng.choice([0.001, 0.004, 0.008, 0.012, 0.02, 0.03, 0.06, 0.5], size=k))
        order = np.argsort(p, kind="stable")
        textbook = set()
        for j, i in enumerate(order):  # Holm 1979, written out
            if p[i] > 0.05 / (k - j):
                break
            textbook.add(int(i))
        levels = holm_levels(p, 0.05)
        assert {i for i in range(k) if p[i] <= levels[i]} == textbook


def test_many_null_skills_rarely_read_helps_together():
    # Issue 33: 10 A/A skills of 20 cases x 3 attempts each at 0.05 alone: P(some "helps") 27%.
    rng = np.random.default_rng(7)
    studies, hits = 300, 0
    for _ in range(studies):
        cases = []
        for k in range(10):
            p = rng.uniform(0.1, 0.9, 20)
            d = (rng.binomial(3, p) - rng.binomial(3, p)) / 3
            cases.append(GateCases(skill=f"s{k}", positive=d.tolist()))
        hits += any(v.passed for v in gate_family(cases, bound=False))
    assert hits / studies <= 0.05


def test_the_family_is_stated_and_per_skill_is_labelled():
    cases = [GateCases(skill=f"s{i}", positive=[1.0] * 5) for i in range(3)] + [GateCases(skill="empty", positive=[])]
    holm = gate_family(cases)
    assert [v.family for v in holm] == ["Holm over 3 skills"] * 4  # the skill with no data is not in the family
    assert [v.verdict for v in holm] == ["does not reach threshold"] * 3 + ["no data"]
    assert all(v.level == pytest.approx(0.05 / 3) for v in holm[:3])
    alone = gate_family(cases, GateSettings(family="none"))
    assert [v.verdict for v in alone[:3]] == ["helps"] * 3
    assert alone[0].family == "none: each of 3 skills at 0.05, unadjusted" and "unadjusted" in alone[0].reason
    one = gate_family(cases[:1])
    assert one[0].family == "1 skill" and one[0].verdict == "helps"


def test_a_skill_alone_reads_the_same_through_the_family_and_alone():
    c = GateCases(skill="s", positive=[1.0, 2 / 3, 1 / 3, 1.0, 0.0, 1.0, 2 / 3])
    assert gate_family([c])[0] == gate_verdict(c)


def test_harms_is_adjusted_too_and_a_strong_harm_still_reads_harms():
    cases = [GateCases(skill="bad", positive=[-1.0] * 8), GateCases(skill="ok", positive=[1.0] * 8),
             GateCases(skill="mild", positive=[-1.0] * 5)]
    v = {x.skill: x for x in gate_family(cases)}
    assert v["bad"].verdict == "harms" and v["bad"].harm_level == pytest.approx(0.05 / 3)
    assert v["ok"].verdict == "helps"
    assert v["mild"].verdict == "not enough cases" and v["mild"].p_harm > v["mild"].harm_level


def test_the_interval_beside_each_verdict_is_read_at_its_holm_level():
    cases = [GateCases(skill="a", positive=[1.0] * 9), GateCases(skill="b", positive=[1.0] * 6 + [0.0] * 2)]
    for v in gate_family(cases, GateSettings(threshold=0.05)):
        assert (v.verdict == "helps") == (v.lower_bound > 0.05), (v.skill, v.reason, v.lower_bound)
        assert help_p([1.0], 0.0) > 0.05  # one case never decides anything


# --- should-not-use cases: a regression is not a statistic to reach -------------------------


def _negative(case_id: str, with_skill: list[float], baseline: list[float], activated_failures: int = 0):
    return NegativeCase(case_id=case_id, with_skill=with_skill, baseline=baseline, activated_failures=activated_failures)


def test_one_broken_should_not_use_case_is_a_regression_named_by_case():
    # Issue 33: wins all 6 of its cases, writes a wrong answer on 1 of 3 should-not-use cases the
    # baseline gets right: the harm test's p = 0.5 let it read "helps".
    negatives = [_negative("n0", [0.0, 0.0, 0.0], [1.0, 1.0, 1.0]), _negative("n1", [1.0] * 3, [1.0] * 3),
                 _negative("n2", [1.0] * 3, [1.0] * 3)]
    v = gate_verdict(GateCases(skill="s", positive=[1.0] * 6, negative=[-1.0, 0.0, 0.0], negative_cases=negatives))
    assert v.verdict == "harms should-not-use cases" and not v.passed
    assert v.negative.regressions == ["n0 (failed in all 3 with-skill attempt(s))"]
    assert "n0" in v.reason and v.negative.p_value == 0.5


def test_a_false_activation_that_led_to_a_wrong_answer_is_a_regression():
    negatives = [_negative("n0", [1.0, 0.0, 1.0], [1.0, 1.0, 1.0], activated_failures=1)]
    v = gate_verdict(GateCases(skill="s", positive=[1.0] * 6, negative=[-1 / 3], negative_cases=negatives))
    assert v.verdict == "harms should-not-use cases"
    assert v.negative.regressions == ["n0 (1 with-skill trial(s) activated the skill and failed)"]


def test_noise_on_should_not_use_cases_is_not_a_regression():
    # The baseline itself fails some attempts, or the skill fails some but not all: not a regression.
    negatives = [_negative("n0", [0.0, 0.0, 0.0], [1.0, 0.0, 1.0]), _negative("n1", [0.0, 1.0, 0.0], [1.0] * 3),
                 _negative("n2", [0.0], [])]
    v = gate_verdict(GateCases(skill="s", positive=[1.0] * 6, negative=[-2 / 3, -2 / 3], negative_cases=negatives))
    assert v.verdict == "helps" and v.negative.regressions == []


def _neg_trials(with_passes, base_passes, *, case="n0", activated=None):
    rows = []
    for i in range(6):
        rows.append(trial(case_id=f"c{i}", condition="with_skill", task_id=f"w{i}", final_pass=True))
        rows.append(trial(case_id=f"c{i}", condition="baseline", task_id=f"b{i}", final_pass=False))
    for a, (w, b) in enumerate(zip(with_passes, base_passes, strict=True)):
        for cond, passed in (("with_skill", w), ("baseline", b)):
            rows.append(trial(case_id=case, attempt=a, condition=cond, task_id=f"{cond}-{a}", final_pass=passed,
                              negative_control=True, case_kind="negative"))
    return frame(rows)


def test_per_attempt_negative_data_comes_from_the_trials_table():
    trials = _neg_trials([False, False, False], [True, True, True])
    cases = skill_cases(trials, "s1")
    assert cases.negative_cases == [_negative("n0", [0.0] * 3, [1.0] * 3)]
    assert gate_table(trials)[0].verdict == "harms should-not-use cases"
    # The activation rows name the trial (pair key): a failed with-skill trial that activated is a regression.
    trials = _neg_trials([True, False, True], [True, True, True])
    act = pd.DataFrame([{"skill": "s1", "case_id": "n0", "attempt": a, "harness": "h1", "model": "m1",
                         "workspace_mode": "isolation", "decoy_set": "none", "activated": a == 1} for a in range(3)])
    (v,) = gate_table(trials, activations=act)
    assert v.verdict == "harms should-not-use cases" and v.negative.regressions == [
        "n0 (1 with-skill trial(s) activated the skill and failed)"]
    # Activated on attempts that passed only: no regression.
    act["activated"] = [True, False, True]
    assert gate_table(trials, activations=act)[0].verdict == "helps"


def test_settings_written_before_holm_still_read():
    # summary.json from before this rule stored a Bonferroni family size.
    assert GateSettings.model_validate({"family": 1}).family == "none"
    assert GateSettings.model_validate({"family": 3}).family == "holm"
    with pytest.raises(ValueError, match="holm"):
        GateSettings(family="bonferroni")
