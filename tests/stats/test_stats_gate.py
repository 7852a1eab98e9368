"""The gate (aces_bench/stats/gate.py): exact p-values, its verdicts, its validity at small n,
and its monotonicity over many random case sets."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.stats import multinomial
from support.stats import frame, trial

from aces_bench.config.spec import GateSpec
from aces_bench.stats.gate import (
    GateCases,
    GateSettings,
    gate_verdict,
    help_p,
    lower_bound,
    share_at_most_zero,
    sign_flip_p,
    skill_cases,
    worst_case_p,
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


def test_the_worst_case_is_exact_where_it_can_be_written_down():
    # All wins: the worst distribution puts (1 + t) / 2 on +1 and the rest on -1.
    for n, t in ((5, 0.05), (6, 0.1), (8, 0.3)):
        assert worst_case_p([1.0] * n, t) == pytest.approx(((1 + t) / 2) ** n, rel=1e-9)
    assert help_p([1.0] * 5, 0.05)[0] == pytest.approx(0.525 ** 5)
    assert help_p([1.0] * 5, 0.0) == (0.03125, "exact sign-flip test (one-sided)")


@pytest.mark.parametrize("threshold", [0.05, 0.2])
@pytest.mark.parametrize("n", [5, 8, 12])
def test_the_help_test_holds_its_level_over_every_null_distribution_on_minus_one_zero_one(n, threshold):
    # The exact size of "reject when help_p <= 0.05" under per-case results with mean = threshold.
    reject = {}
    for wins in range(n + 1):
        for losses in range(n - wins + 1):
            d = [1.0] * wins + [0.0] * (n - wins - losses) + [-1.0] * losses
            reject[(wins, losses)] = help_p(d, threshold)[0] <= 0.05
    worst = 0.0
    for p_minus in np.linspace(0, (1 - threshold) / 2, 41):
        probs = [threshold + p_minus, 1 - threshold - 2 * p_minus, p_minus]
        probs[1] = max(probs[1], 0.0)
        size = sum(multinomial.pmf([w, n - w - lo, lo], n, probs) for (w, lo), r in reject.items() if r)
        worst = max(worst, size)
    assert worst <= 0.05 + 1e-9, worst



case_values = st.lists(st.sampled_from([-1.0, -0.5, 0.0, 1 / 3, 0.5, 2 / 3, 1.0]), min_size=0, max_size=14)


@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(cases=case_values, failing=st.sampled_from([-1.0, 0.0, -0.5]),
       threshold=st.sampled_from([0.0, 0.05, 0.2]), min_cases=st.sampled_from([1, 3, 5, 8]),
       family=st.sampled_from([1, 3]), negative=st.lists(st.sampled_from([-1.0, 0.0, 1.0]), max_size=4))
def test_adding_a_case_the_skill_fails_never_turns_a_fail_into_a_pass(cases, failing, threshold, min_cases, family,
                                                                        negative):
    s = GateSettings(threshold=threshold, min_cases=min_cases, family=family)
    before = gate_verdict(GateCases(skill="s", positive=cases, negative=negative), s)
    after = gate_verdict(GateCases(skill="s", positive=[*cases, failing], negative=negative), s)
    assert not (not before.passed and after.passed), (before.reason, after.reason)
    if cases:
        assert help_p([*cases, failing], threshold)[0] >= help_p(cases, threshold)[0] - 1e-12


def test_the_verdicts_in_their_own_words():
    v = gate_verdict(GateCases(skill="a", positive=[1.0] * 5), GateSettings(threshold=0.05))
    assert (v.verdict, v.passed, v.p_value) == ("helps", True, pytest.approx(0.525 ** 5))
    assert v.reason == ("pass-rate lift +1.000 over 5 case(s): 5 won by more than +0.050, 0 lost, 0 other; "
                        "lift > +0.050: p = 0.03988 <= 0.05")
    one = gate_verdict(GateCases(skill="a", positive=[1.0]))
    assert one.verdict == "not enough cases" and not one.passed
    harm = gate_verdict(GateCases(skill="a", positive=[-1.0] * 5 + [0.0]))
    assert harm.verdict == "harms" and harm.p_harm == 0.03125
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


def test_the_lower_bound_inverts_the_same_test():
    d = [1.0] * 8 + [0.0] * 2
    lb = lower_bound(d, 0.05)
    assert help_p(d, lb - 1e-3)[0] <= 0.05 < help_p(d, lb + 1e-3)[0]
    assert lower_bound([1.0, -1.0, 1.0], 0.05) is None


def test_the_config_keys_are_the_settings_keys():
    assert set(GateSpec.model_fields) <= set(GateSettings.model_fields)
    for name, field in GateSpec.model_fields.items():
        assert field.default == GateSettings.model_fields[name].default, name


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
