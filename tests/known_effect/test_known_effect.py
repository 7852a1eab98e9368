"""The known-effect suite (known_effect.py): the instrument must recover effects that are
known by construction, on the reference agent and on terminus-2 against the scripted
model server, through the real pipeline and the real CI gate.

By construction (paired differences per case, with minus baseline):
- helpful ledger-verifier: +1 on five cases, 0 on the LEDGER v2 case its script refuses
  -> lift 5/6, 95% case-clustered t interval [0.405, 1] (df 5, clipped at 1), the gate at 0.05
  passes (betting p = 0.046; the suite gates its three skills --per-skill, each its own question);
- useless line-count-tips: 0 on every case -> lift 0, "no variation observed", gate fails (no case won);
- harmful quick-line-count: -1 on five cases, 0 on the file with a trailing newline
  -> lift -5/6, interval [-1, -0.405], the gate says "harms" (p = 0.036);
- confusable decoy ledger-checksum: group lift 0 on every case (the decoy takes the
  route in both arms), isolation lift as above -> routing premium -5/6, [-1.262, -0.405].
One run per harness is shared by every test of this module (``suite`` fixture).
"""

from __future__ import annotations

import json

import pytest
from support.known_effect import (
    ALL_WIN,
    CONFUSABLE,
    CRASHING,
    EXPECTED_VERDICT,
    GAMING,
    HARMFUL,
    HELPFUL,
    OVER_TRIGGERING,
    SINGLE,
    USELESS,
    format_table,
    format_verdicts,
    problems,
    verdict_problems,
)
from support.known_effect_harnesses import run_reference, run_reference_verdicts, run_terminus, run_terminus_verdicts

pytestmark = pytest.mark.sandbox  # skipped without bubblewrap (tests/conftest.py)

# t(0.975, 5) * sd / sqrt(6) for six pairs, five of them +-1 and one 0 (sd = sqrt(1/6)).
HALF_WIDTH = 2.570582 * (1 / 6) ** 0.5 / 6 ** 0.5


@pytest.fixture(scope="module")
def reference_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("known-effect-reference")
    return run_reference(base / "out", root_parent=base), None


@pytest.fixture(scope="module")
def terminus_run(tmp_path_factory):
    base = tmp_path_factory.mktemp("known-effect-terminus")
    return run_terminus(base / "out", root_parent=base)


@pytest.fixture(params=["reference", "terminus-2"])
def suite(request):
    return request.getfixturevalue("reference_run" if request.param == "reference" else "terminus_run")


def test_every_trial_ran_and_was_scored(suite):
    run, _ = suite
    for summary in (run.isolation, run.combined):
        counts = summary.counts
        assert counts.failed_by_status == {}, counts.failed_by_status
        assert counts.n_unscored_status_ok == 0 and counts.n_one_sided == 0 and counts.n_neither == 0
    assert run.isolation.counts.n_scored_pairs == 6 + 5 + 6
    assert run.combined.counts.n_scored_pairs == 6 + 5 + 6 + 6


def test_helpful_skill_lift_is_positive_and_its_interval_excludes_zero(suite):
    e = suite[0].effects[HELPFUL]
    assert e.n == 6 and e.sign == "+"
    assert e.estimate == pytest.approx(5 / 6)
    assert e.ci_lo == pytest.approx(5 / 6 - HALF_WIDTH, abs=1e-4)
    assert e.ci_lo > 0 and e.ci_hi == 1.0 and e.excludes_zero
    assert e.gate == "pass"


def test_useless_skill_lift_is_zero_without_variation_and_the_gate_fails(suite):
    run, _ = suite
    e = run.effects[USELESS]
    assert e.n == 5 and e.estimate == 0.0 and e.sign == "0"
    # Both arms answer alike on every case: the verdict logic gives no interval, and says why.
    assert e.ci_lo is None and e.ci_hi is None
    assert e.note == "no variation observed (n = 5)"
    assert e.gate == "FAIL"
    assert any(line.startswith(f"FAIL {USELESS}: not enough cases: 5 case(s): 0 won by more than +0.050, 0 lost, 5 "
                               "other: the gate needs 5 distinct cases won by more than +0.050 (p = 1); betting "
                               "interval [") for line in run.gate_lines), run.gate_lines


def test_harmful_skill_lift_is_negative_and_the_gate_fails(suite):
    run, _ = suite
    e = run.effects[HARMFUL]
    assert e.n == 6 and e.sign == "-"
    assert e.estimate == pytest.approx(-5 / 6)
    assert e.ci_lo == -1.0 and e.ci_hi == pytest.approx(-5 / 6 + HALF_WIDTH, abs=1e-4)
    assert e.gate == "FAIL"
    assert any(line.startswith(f"FAIL {HARMFUL}: harms: pass-rate lift -0.833 over 6 case(s): 0 won by more than "
                               "+0.050, 5 lost, 1 other; the skill makes its own cases fail (one-sided p = 0.03624")
               for line in run.gate_lines), run.gate_lines


def test_the_gate_exits_one_naming_exactly_the_useless_and_harmful_skills(suite):
    run, _ = suite
    assert run.gate_rc == 1
    assert sorted(line.split()[1].rstrip(":") for line in run.gate_lines if line.startswith("FAIL ")) == [
        USELESS, HARMFUL]
    assert any(line.startswith("gate: 2 of 3 skill(s) fail: pass-rate lift credibly above +0.050")
               for line in run.gate_lines), run.gate_lines


def test_confusable_decoy_gives_a_negative_routing_premium(suite):
    run, _ = suite
    e = run.effects[CONFUSABLE]
    assert e.n == 6 and e.sign == "-"
    assert e.estimate == pytest.approx(-5 / 6)
    assert e.ci_lo == pytest.approx(-5 / 6 - HALF_WIDTH, abs=1e-4)
    assert e.ci_hi == pytest.approx(-5 / 6 + HALF_WIDTH, abs=1e-4)
    group = [r for r in run.combined.by_workspace_mode if r.group.get("workspace_mode") == "group"
             and r.outcome == "outcome"]
    assert [r.lift for r in group] == [0.0]


def test_the_table_prints_sign_estimate_and_interval_of_each(reference_run, terminus_run):
    runs = [reference_run[0], terminus_run[0]]
    table = format_table(runs)
    assert [problems(r) for r in runs] == [[], []]
    for harness in ("reference", "terminus-2"):
        assert f"\n{harness} " in table
    assert "helpful" in table and "useless" in table and "harmful" in table and "confusable" in table
    assert "+0.833" in table and "-0.833" in table and "no variation observed (n = 5)" in table


def test_the_scripted_model_decided_from_what_terminus_showed_it(terminus_run):
    _, server = terminus_run
    assert server.errors == []
    first = [r for r in server.requests if len(r.user_texts) == 1]
    listed = [r for r in first if "<available_skills>" in r.user_texts[0]]
    # One conversation per trial; the isolation baseline and null arm list no skill.
    assert len(first) == 3 * (6 + 5 + 6) + 2 * 6  # isolation: with-skill, baseline, null arm
    assert len(listed) == (6 + 5 + 6) + 2 * 6  # with-skill isolation, and both group arms (the decoy)
    # Every reply the model gave is terminus-2 JSON.
    assert all(r.usage["prompt_tokens"] > 0 for r in server.requests)
    replies = [json.loads(m["content"]) for r in server.requests[-3:] for m in r.body["messages"]
               if m["role"] == "assistant"]
    assert all({"analysis", "plan", "commands", "task_complete"} <= set(x) for x in replies)


def test_the_family_gate_over_three_skills_needs_more_than_five_wins(suite):
    # report --fail-under-lift 0 (the default family): Holm over the three skills of this study,
    # the strongest tested at 0.05/3. Five wins give p = 0.036 > 0.0167: no skill passes, each in
    # its own words; five losses are not shown to harm at that level either, and still fail.
    from aces_bench.analysis.gate import gate_failures

    failures = {f.skill: f.reason for f in gate_failures(suite[0].isolation, threshold=0.0)}
    assert sorted(failures) == sorted([HELPFUL, USELESS, HARMFUL])
    assert "p = 0.03624 > 0.01667 (Holm over 3 skills)" in failures[HELPFUL]
    assert failures[USELESS].startswith("not enough cases")
    assert failures[HARMFUL].startswith("not enough cases: 6 case(s): 0 won")


def test_the_helpful_skills_null_arm_interval_contains_zero(suite):
    # The baseline run again as the treatment: the instrument's own lift. The agents here are
    # deterministic, so every null difference is 0: no variation, no interval, estimate 0.
    n = suite[0].null
    assert n.n == 6 and n.estimate == 0.0
    assert (n.ci_lo is None and n.note == "no variation observed (n = 6)") or n.ci_lo <= 0.0 <= n.ci_hi


# --- verdicts only a real effect can pass (issue 22): each skill its own study, gated at 0.05 ---


@pytest.fixture(scope="module")
def reference_verdicts(tmp_path_factory):
    base = tmp_path_factory.mktemp("verdicts-reference")
    return run_reference_verdicts(base / "out", root_parent=base), None


@pytest.fixture(scope="module")
def terminus_verdicts(tmp_path_factory):
    base = tmp_path_factory.mktemp("verdicts-terminus")
    return run_terminus_verdicts(base / "out", root_parent=base)


@pytest.fixture(params=["reference", "terminus-2"])
def verdicts(request):
    return request.getfixturevalue("reference_verdicts" if request.param == "reference" else "terminus_verdicts")


def test_every_verdict_is_the_one_the_construction_asks_for(verdicts):
    outcomes, server = verdicts
    assert verdict_problems(outcomes) == [], format_verdicts("run", outcomes)
    assert {s: o.verdict for s, o in outcomes.items()} == EXPECTED_VERDICT
    if server is not None:
        assert server.errors == []


def test_a_flood_of_candidates_wins_nothing(verdicts):
    o = verdicts[0][GAMING]
    # Strict checks: the echo of the input and every number 0..2000 pass no case; the case judged by
    # the heuristic judge (no assertion) is abstained on, so its pair is left out of the headline
    # and counted; the gate reads that undecided with-skill side as not passed (a tie: the baseline
    # fails it too), so flooding cannot take a case out of the verdict.
    assert o.lift == 0.0 and o.n_cases == 6 and o.n_excluded == 1
    assert f"FAIL {GAMING}: not enough cases: 6 case(s): 0 won by more than +0.050" in "\n".join(o.lines)
    grades = [g for g in o.summary.gate_cases if g.skill == GAMING]
    assert grades and grades[0].positive == [0.0] * 6


def test_a_crashing_skills_failures_are_its_losses_not_dropped_pairs(verdicts):
    o = verdicts[0][CRASHING]
    # Three cases lost to a hang or a killed sandbox count as losses (intention to treat): the
    # headline is 0, never the per-protocol view; nothing is excluded as "infrastructure".
    assert o.lift == 0.0 and o.n_excluded == 0 and o.n_cases == 6
    gate = next(g for g in o.summary.gate if g.skill == CRASHING)
    assert gate.n_losses == 3 and gate.verdict == "not enough cases"
    statuses = {r for r in o.summary.intention_to_treat.arm_failures_by_condition}
    assert statuses == {"with_skill"}
    assert o.lift_per_protocol is None or o.lift_per_protocol > o.lift


def test_an_over_triggering_skill_fails_on_the_cases_it_should_stay_out_of(verdicts):
    o = verdicts[0][OVER_TRIGGERING]
    assert o.lift == 1.0  # on the cases it is for it is right every time
    assert o.false_activation == 1.0
    line = next(x for x in o.lines if x.startswith("FAIL "))
    assert line.startswith(f"FAIL {OVER_TRIGGERING}: harms should-not-use cases: on 3 should-not-use case(s) the skill "
                           "lowers the pass rate by 1.000 (pass rate 0% with the skill vs 100% without): one-sided "
                           "p = 0.125 <= 0.2; false activation 100%")


def test_five_wins_of_five_help_with_and_without_the_lower_bound_and_one_case_never_passes(verdicts):
    win, single = verdicts[0][ALL_WIN], verdicts[0][SINGLE]
    assert (win.rc, win.rc_lower_bound, win.verdict) == (0, 0, "helps")
    assert win.p_value == pytest.approx(0.04591, abs=1e-5) and win.lift == 1.0
    assert any(line.startswith("gate: all 1 skill(s) pass") for line in win.lines)
    # The verdict column (threshold 0): "helps" with its p, not "no variation".
    column = next(g for g in win.summary.gate if g.skill == ALL_WIN)
    assert column.verdict == "helps" and column.p_value == pytest.approx(0.03624, abs=1e-5)
    assert (single.rc, single.rc_lower_bound, single.verdict) == (1, 1, "not enough cases") and single.lift == 1.0
