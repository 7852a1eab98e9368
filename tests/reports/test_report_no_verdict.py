"""Why a skill got no verdict: one sentence with counts, and the fix, for each cause."""

from __future__ import annotations

import pandas as pd

from aces_bench.analysis.no_verdict import explain
from aces_bench.core.gate import GateSettings
from aces_bench.records.gate import GateVerdict


def _gate(verdict: str, *, n_cases: int = 0, n_wins: int = 0, excluded: int = 0) -> GateVerdict:
    return GateVerdict.model_construct(skill="s", verdict=verdict, n_cases=n_cases, n_wins=n_wins,
                                       n_excluded_pairs=excluded, settings=GateSettings())


def _trials(n: int, **cols) -> pd.DataFrame:
    base = {"skill": ["s"] * n, "condition": ["with_skill", "baseline"] * (n // 2), "case_kind": ["explicit"] * n,
            "negative_control": [False] * n, "status": ["ok"] * n, "outcome": [None] * n, "reward": [None] * n,
            "judge_label": ["heuristic (offline)"] * n, "trial_class": ["finished"] * n, "failure_cause": [None] * n}
    base.update(cols)
    return pd.DataFrame(base)


def test_a_skill_with_a_verdict_needs_no_explanation():
    assert explain(_gate("helps"), _trials(2)) is None
    assert explain(_gate("harms"), _trials(2)) is None


def test_judged_assertions_under_the_heuristic_judge():
    row = explain(_gate("no data"), _trials(4))
    assert row.cause == "no decidable check" and (row.n_trials, row.n_affected) == (4, 4)
    assert "judge=litellm judge.model=" in row.fix and "s/evals/evals.json" in row.fix


def test_a_model_judge_that_abstained_is_not_blamed_on_the_heuristic():
    row = explain(_gate("no data"), _trials(4, judge_label=["litellm openai/gpt-4o-mini"] * 4))
    assert row.cause == "judge abstained" and row.reason.startswith("judge abstained: 4 of 4 trials")


def test_every_pair_excluded_names_the_reasons():
    row = explain(_gate("no data"), _trials(4, status=["infra_error"] * 4, failure_cause=["EnvironmentStartTimeout"] * 4))
    assert row.cause == "every pair excluded"
    assert row.reason == "every pair excluded: 4 of 4 trials left out (4 infrastructure (after retries))"
    assert "re-run the same command" in row.fix


def test_too_few_cases_says_how_many_the_gate_needs():
    row = explain(_gate("not enough cases", n_cases=3, n_wins=3), _trials(6, outcome=[1.0, 0.0] * 3))
    assert row.cause == "too few cases"
    assert row.reason.startswith("too few cases: 3 of 3 cases won") and "at least 5 cases won" in row.reason


def test_a_skill_gaming_the_gate_by_leaving_every_trial_undecided_still_gets_a_reason():
    """A skill that makes every check undecidable (no file, no number) cannot be read as 'helps' or pass silently:
    the same no-decidable-check row, so eval exits 3."""
    row = explain(_gate("no data"), _trials(8))
    assert row is not None and row.n_affected == 8


def test_not_enough_cases_because_most_pairs_are_undecided_blames_the_undecided_not_the_case_count():
    """8 cases, 1 decided, 7 with only judged assertions under the heuristic judge: adding cases
    (the too-few fix) would not help; a decidable check or a model judge would."""
    outcome = [0.0, 0.0] + [None] * 14
    reward = [0.0, 0.0] + [None] * 14
    row = explain(_gate("not enough cases", n_cases=1, n_wins=0, excluded=7), _trials(16, outcome=outcome, reward=reward))
    assert row.cause == "no decidable check", row
    assert row.reason.startswith("no decidable check: 14 of 16 trials undecided")
    assert row.reason.endswith("1 case(s) decided, 0 won, where the gate needs 5 won")
    assert "judge=litellm" in row.fix


def test_not_enough_cases_that_the_left_out_pairs_could_not_have_made_up_asks_for_cases():
    row = explain(_gate("not enough cases", n_cases=2, n_wins=2, excluded=1),
                  _trials(6, outcome=[1.0, 0.0, 1.0, 0.0, None, None], reward=[1.0, 0.0, 1.0, 0.0, None, None]))
    assert row.cause == "too few cases" and "add positive cases" in row.fix


def test_pairs_excluded_for_infrastructure_beside_a_few_decided_cases_say_so():
    row = explain(_gate("not enough cases", n_cases=1, n_wins=1, excluded=4),
                  _trials(10, outcome=[1.0, 0.0] + [None] * 8, reward=[1.0, 0.0] + [None] * 8,
                          status=["ok", "ok"] + ["infra_error"] * 8,
                          failure_cause=[None, None] + ["EnvironmentStartTimeout"] * 8))
    assert row.cause == "pairs left out" and row.reason.startswith("pairs left out: 8 of 10 trials left out")
    assert "re-run the same command" in row.fix
