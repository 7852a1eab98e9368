"""The gate (aces_bench/stats/gate.py): its betting test's validity at small n, its verdicts,
the interval they are read from, and its monotonicity and order-freedom over many random case sets."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import multinomial
from support.stats import frame, trial

from aces_bench.records.gate import GateCases
from aces_bench.stats.betting import evalue_bound
from aces_bench.stats.gate import (
    GateSettings,
    gate_family,
    gate_verdict,
    help_p,
    share_at_most_zero,
    sign_flip_p,
    skill_cases,
)


def _brute_share(x) -> float:
    n = len(x)
    hits = sum(1 for mask in itertools.product((0, 1), repeat=n) if sum(v for v, m in zip(x, mask, strict=True) if m) <= 1e-12)
    return hits / 2 ** n


def test_the_sign_flip_p_value_is_exact_and_five_of_five_wins_is_one_in_32():
    assert sign_flip_p([1.0] * 5) == 0.5 ** 5 == 0.03125
    assert sign_flip_p([1.0] * 4) == 0.0625
    assert sign_flip_p([1.0] * 5 + [0.0] * 7) == 0.03125  # ties do not count, as in the sign test
    assert sign_flip_p([-1.0] * 5, tail="less") == 0.03125
    assert sign_flip_p([1.0] * 6 + [0.0, 0.0], tail="two-sided") == 2 * 0.5 ** 6
    rng = np.random.default_rng(3)
    for _ in range(50):
        x = rng.choice([-1.0, -0.5, 0.0, 1 / 3, 0.5, 1.0], size=rng.integers(1, 11))
        assert share_at_most_zero(x) == pytest.approx(_brute_share(list(x)), abs=1e-12)


def test_past_22_cases_the_programme_agrees_with_the_exact_count_on_a_lattice():
    rng = np.random.default_rng(5)
    x = rng.choice([-1.0, 0.0, 0.5, 1.0], size=22)
    exact = share_at_most_zero(x)  # meet in the middle
    import aces_bench.stats.gate as g

    old, g.EXACT_MAX_N = g.EXACT_MAX_N, 5
    try:
        assert share_at_most_zero(x) == pytest.approx(exact, abs=1e-12)  # the programme, on the 1/2 lattice
    finally:
        g.EXACT_MAX_N = old


def test_five_of_five_wins_pass_at_thresholds_0_and_005_and_four_never_do():
    # The bets are near all-in (betting.MIX_BETS) so that 5 deterministic wins still pass.
    for t in (0.0, 0.05):
        v = gate_verdict(GateCases(skill="a", positive=[1.0] * 5), GateSettings(threshold=t))
        assert v.verdict == "helps" and v.p_value <= 0.05 and v.lower_bound > t, (t, v.reason)
    assert help_p([1.0] * 5, 0.0) == pytest.approx(1 / (0.5 * 1.98 ** 5 + 0.5 * 1.9 ** 5))
    for n in range(1, 5):  # fewer than 5 cases won never passes, however many ties come with them
        v = gate_verdict(GateCases(skill="a", positive=[1.0] * n + [0.0] * 20), GateSettings(min_cases=1))
        assert v.p_value > 0.05 or n >= 5, n


@pytest.mark.parametrize("threshold", [0.0, 0.05, 0.2])
@pytest.mark.parametrize("n", [5, 8, 12])
def test_the_help_test_holds_its_level_over_null_distributions_on_minus_one_zero_one(n, threshold):
    # The exact size of "reject when help_p <= 0.05" under per-case results with mean = threshold.
    reject = {}
    for wins in range(n + 1):
        for losses in range(n - wins + 1):
            d = [1.0] * wins + [0.0] * (n - wins - losses) + [-1.0] * losses
            reject[(wins, losses)] = help_p(d, threshold) <= 0.05
    worst = 0.0
    for p_minus in np.linspace(0, (1 - threshold) / 2, 41):
        probs = [threshold + p_minus, 1 - threshold - 2 * p_minus, p_minus]
        probs[1] = max(probs[1], 0.0)
        size = sum(multinomial.pmf([w, n - w - lo, lo], n, probs) for (w, lo), r in reject.items() if r)
        worst = max(worst, size)
    assert worst <= 0.05 + 1e-9, worst


def test_a_skewed_skill_with_mean_lift_zero_does_not_read_helps_more_than_alpha():
    # Issue 33: breaks 15% of cases, a small gain on the rest, mean exactly 0. The sign flip
    # read "helps" in 9.4% of 10-case studies; the betting test is valid for "mean <= 0".
    rng = np.random.default_rng(11)
    gain = 0.15 / 0.85
    passes = 0
    for _ in range(2000):
        d = np.where(rng.random(10) < 0.15, -1.0, gain)
        passes += help_p(d, 0.0) <= 0.05
    assert passes / 2000 <= 0.05


case_values = st.lists(st.sampled_from([-1.0, -2 / 3, -0.5, -1 / 3, 0.0, 1 / 3, 0.5, 2 / 3, 1.0]),
                       min_size=0, max_size=14)
gate_settings = st.builds(GateSettings, threshold=st.sampled_from([0.0, 0.05, 0.2]),
                          min_cases=st.sampled_from([1, 3, 5, 8]), family=st.sampled_from(["holm", "none"]))
others = st.lists(st.lists(st.sampled_from([-1.0, 0.0, 1 / 3, 2 / 3, 1.0]), min_size=1, max_size=10), max_size=3)


def _family_passes(cases, negative, s, other) -> bool:
    family = [GateCases(skill="s", positive=cases, negative=negative),
              *(GateCases(skill=f"o{i}", positive=o) for i, o in enumerate(other))]
    return gate_family(family, s, bound=False)[0].passed


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases=case_values, failing=st.sampled_from([-1.0, -1 / 3, 0.0, 0.05]), where=st.integers(0, 14),
       s=gate_settings, negative=st.lists(st.sampled_from([-1.0, 0.0, 1.0]), max_size=4), other=others)
def test_adding_a_case_the_skill_fails_never_turns_a_fail_into_a_pass(cases, failing, where, s, negative, other):
    failing = min(failing, s.threshold)  # not won by more than the threshold
    grown = [*cases[:where], failing, *cases[where:]]
    assert not (not _family_passes(cases, negative, s, other) and _family_passes(grown, negative, s, other))
    if cases:
        assert help_p(grown, s.threshold) >= help_p(cases, s.threshold) - 1e-12


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases=case_values, won=st.sampled_from([1 / 3, 0.5, 2 / 3, 1.0]), where=st.integers(0, 14),
       s=gate_settings, negative=st.lists(st.sampled_from([-1.0, 0.0, 1.0]), max_size=4), other=others)
def test_adding_a_case_the_skill_wins_never_turns_a_pass_into_a_fail(cases, won, where, s, negative, other):
    if won <= s.threshold:
        return
    grown = [*cases[:where], won, *cases[where:]]
    assert not (_family_passes(cases, negative, s, other) and not _family_passes(grown, negative, s, other))
    if cases:
        assert help_p(grown, s.threshold) <= help_p(cases, s.threshold) + 1e-12


@settings(max_examples=300, deadline=None)
@given(cases=st.lists(st.sampled_from([-1.0, -1 / 3, 0.0, 1 / 3, 2 / 3, 1.0]), min_size=1, max_size=12),
       seed=st.integers(0, 1000))
def test_the_order_of_the_cases_never_changes_the_verdict(cases, seed):
    shuffled = list(np.random.default_rng(seed).permutation(cases))
    a, b = (gate_verdict(GateCases(skill="s", positive=x), GateSettings(min_cases=1)) for x in (cases, shuffled))
    assert a.verdict == b.verdict and a.p_value == pytest.approx(b.p_value, rel=1e-9)


def test_the_verdicts_in_their_own_words():
    v = gate_verdict(GateCases(skill="a", positive=[1.0] * 5), GateSettings(threshold=0.05))
    assert (v.verdict, v.passed) == ("helps", True) and v.p_value == pytest.approx(0.04591, abs=1e-5)
    assert v.reason == ("pass-rate lift +1.000 over 5 case(s): 5 won by more than +0.050, 0 lost, 0 other; "
                        "lift > +0.050: p = 0.04591 <= 0.05")
    one = gate_verdict(GateCases(skill="a", positive=[1.0]))
    assert one.verdict == "not enough cases" and not one.passed
    harm = gate_verdict(GateCases(skill="a", positive=[-1.0] * 5 + [0.0]))
    assert harm.verdict == "harms" and harm.p_harm <= 0.05
    over = gate_verdict(GateCases(skill="a", positive=[1.0] * 6, negative=[-1.0] * 3, false_activation=(3, 3)))
    assert over.verdict == "harms should-not-use cases" and over.negative.p_value == 0.125
    assert over.negative.false_activation == 1.0
    quiet = gate_verdict(GateCases(skill="a", positive=[1.0] * 6, negative=[0.0] * 3))
    assert quiet.verdict == "helps" and quiet.negative.p_value == 1.0
    none = gate_verdict(GateCases(skill="a", positive=[]))
    assert none.verdict == "no data"
    null = gate_verdict(GateCases(skill="a", positive=[1.0] * 6, null=[1.0] * 6 + [0.0] * 2))
    assert null.verdict == "null arm shows an effect" and null.null.p_value == 2 * 0.5 ** 6
    steady = gate_verdict(GateCases(skill="a", positive=[1.0] * 6, null=[0.0] * 8))
    assert steady.verdict == "helps" and steady.null.consistent


@pytest.mark.parametrize("d", [[1.0] * 8 + [0.0] * 2, [2 / 3] * 10 + [1 / 3] * 6 + [-1 / 3] * 2, [1.0, -1.0, 1.0]])
def test_the_interval_is_the_test_inverted_so_it_agrees_with_the_verdict(d):
    lo = evalue_bound(d, 0.05, lower=True)
    hi = evalue_bound(d, 0.05, lower=False)
    assert lo <= float(np.mean(d)) <= hi
    if lo > -1:
        assert help_p(d, lo - 1e-4) <= 0.05 < help_p(d, lo + 1e-4)
    for t in (0.0, 0.05, 0.3):  # the verdict at t and the interval never disagree
        v = gate_verdict(GateCases(skill="a", positive=d), GateSettings(threshold=t, min_cases=1))
        assert (v.verdict == "helps") == (v.lower_bound > t), (t, v.reason, v.lower_bound)


def test_the_config_declares_the_gate_settings_once():
    # study.gate is the gate's own settings model, and Hydra's schema is made from it.
    from dataclasses import fields

    from aces_bench.config.schema import GROUP_SCHEMAS
    from aces_bench.config.spec import StudySpec

    assert StudySpec.model_fields["gate"].annotation is GateSettings
    gate_conf = {f.name: f.default for f in fields(GROUP_SCHEMAS["study"]().gate.__class__)}
    assert gate_conf == {name: f.default for name, f in GateSettings.model_fields.items()}


def test_per_case_data_from_a_trials_table_counts_failures_as_losses_and_leaves_out_excluded():
    rows = []
    for i, (w, b) in enumerate([(True, False), (False, True), (None, True), (True, True)]):
        rows.append(trial(case_id=f"c{i}", condition="with_skill", task_id=f"w{i}", final_pass=w,
                          status="ok" if w is not None else "infra_error"))
        rows.append(trial(case_id=f"c{i}", condition="baseline", task_id=f"b{i}", final_pass=b))
    # Two attempts of one case average into one per-case difference.
    rows.append(trial(case_id="c4", attempt=0, condition="with_skill", task_id="w4", final_pass=True))
    rows.append(trial(case_id="c4", attempt=0, condition="baseline", task_id="b4", final_pass=False))
    rows.append(trial(case_id="c4", attempt=1, condition="with_skill", task_id="w4", final_pass=False))
    rows.append(trial(case_id="c4", attempt=1, condition="baseline", task_id="b4", final_pass=False))
    rows.append(trial(case_id="n0", condition="with_skill", task_id="wn", final_pass=False, negative_control=True,
                      case_kind="negative"))
    rows.append(trial(case_id="n0", condition="baseline", task_id="bn", final_pass=True, negative_control=True,
                      case_kind="negative"))
    cases = skill_cases(frame(rows), "s1")
    assert cases.positive == [1.0, -1.0, 0.0, 0.5]  # c2's with-skill side is excluded: the pair is out
    assert cases.negative == [-1.0] and cases.n_excluded_pairs == 1
    assert cases.negative_pass_with == 0.0 and cases.negative_pass_base == 1.0
    assert math.isclose(sum(cases.positive) / 4, 0.125)


def test_a_with_skill_answer_no_grader_could_decide_is_not_passed_by_the_gate():
    # A skill that floods its answer where it would lose makes the heuristic judge abstain: the
    # trial finished with no pass decided. Left out, five wins would read "helps" over the five
    # losses it hid; the gate reads it as not passed (the headline leaves it out and shows it).
    rows = []
    for i in range(10):
        hide = i >= 5
        rows.append(trial(case_id=f"c{i}", condition="with_skill", task_id=f"w{i}", trial_class="finished",
                          final_pass=None if hide else True))
        rows.append(trial(case_id=f"c{i}", condition="baseline", task_id=f"b{i}", trial_class="finished",
                          final_pass=hide))
    cases = skill_cases(frame(rows), "s1")
    assert cases.positive == [1.0] * 5 + [-1.0] * 5 and cases.n_excluded_pairs == 0
    assert gate_verdict(cases).verdict != "helps"
    # The baseline's undecided side, or an excluded trial on either side, still leaves the pair out.
    rows = [trial(case_id="c0", condition="with_skill", task_id="w0", trial_class="finished", final_pass=True),
            trial(case_id="c0", condition="baseline", task_id="b0", trial_class="finished", final_pass=None),
            trial(case_id="c1", condition="with_skill", task_id="w1", status="infra_error", trial_class="excluded",
                  final_pass=None),
            trial(case_id="c1", condition="baseline", task_id="b1", trial_class="finished", final_pass=True)]
    cases = skill_cases(frame(rows), "s1")
    assert cases.positive == [] and cases.n_excluded_pairs == 2


def test_a_with_skill_provider_error_left_after_retries_is_not_passed_by_the_gate():
    # A skill running as root in the sandbox can point an in-sandbox agent's endpoint at itself
    # and answer 429: the trial looks like a provider failure. On the with-skill side the gate
    # reads it as not passed; before the agent started (nothing of the skill ran) it stays out.
    from aces_bench.run.collect import PROVIDER_FAILURE

    rows = []
    for i in range(10):
        hide = i >= 5
        rows.append(trial(case_id=f"c{i}", condition="with_skill", task_id=f"w{i}",
                          status="infra_error" if hide else "ok", trial_class="excluded" if hide else "finished",
                          failure_cause=f"ApiRateLimitError ({PROVIDER_FAILURE}): 429" if hide else None,
                          final_pass=None if hide else True))
        rows.append(trial(case_id=f"c{i}", condition="baseline", task_id=f"b{i}", trial_class="finished",
                          final_pass=hide))
    cases = skill_cases(frame(rows), "s1")
    assert cases.positive == [1.0] * 5 + [-1.0] * 5 and gate_verdict(cases).verdict != "helps"
    # The same failure on the baseline side, or an environment that never started: the pair is out.
    rows = [trial(case_id="c0", condition="with_skill", task_id="w0", trial_class="finished", final_pass=True),
            trial(case_id="c0", condition="baseline", task_id="b0", status="infra_error", trial_class="excluded",
                  failure_cause=f"ApiRateLimitError ({PROVIDER_FAILURE}): 429", final_pass=None),
            trial(case_id="c1", condition="with_skill", task_id="w1", status="infra_error", trial_class="excluded",
                  failure_cause="SandboxBuildFailedError before the agent started: no image", final_pass=None),
            trial(case_id="c1", condition="baseline", task_id="b1", trial_class="finished", final_pass=True)]
    cases = skill_cases(frame(rows), "s1")
    assert cases.positive == [] and cases.n_excluded_pairs == 2
