"""pass@k against subset enumeration; routing premium against direct formulas."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps
from support.stats import frame, make_trials, trial

from aces_bench.core.errors import ReportError
from aces_bench.stats.pairing import build_pairs
from aces_bench.stats.passk import pass_at_k, pass_counts, passk_table
from aces_bench.stats.routing import routing_premium


def enumerate_pass_at_k(outcomes: list[int], k: int) -> float:
    """Share of all k-subsets of the attempts that contain at least one success."""
    subsets = list(itertools.combinations(outcomes, k))
    return sum(any(s) for s in subsets) / len(subsets)


@pytest.mark.parametrize("n,c,k", [(n, c, k) for n in range(1, 7) for c in range(n + 1) for k in range(1, n + 1)])
def test_pass_at_k_equals_subset_enumeration(n, c, k):
    assert pass_at_k(n, c, k)[0] == pytest.approx(enumerate_pass_at_k([1] * c + [0] * (n - c), k))


def test_pass_at_k_is_undefined_below_k_and_rejects_bad_counts():
    assert math.isnan(pass_at_k(2, 1, 3)[0])
    with pytest.raises(ValueError):
        pass_at_k(2, 3, 1)


def test_passk_table_pairs_cases_and_counts_short_and_one_sided_cases():
    rows = []
    # case c1: 3 attempts each side; with 2/3 successes, base 0/3
    for a, (w, b) in enumerate([(1.0, 0.0), (1.0, 0.0), (0.0, 0.0)]):
        rows += [trial(attempt=a, condition="with_skill", reward=w), trial(attempt=a, condition="baseline", reward=b)]
    # case c2: baseline attempt 2 failed to run -> baseline n=2, short for k=3
    for a in range(3):
        rows.append(trial(case_id="c2", attempt=a, condition="with_skill", reward=1.0))
        rows.append(trial(case_id="c2", attempt=a, condition="baseline", reward=1.0 if a < 2 else None,
                          status="ok" if a < 2 else "infra_error"))
    # case c3: with-skill only
    rows.append(trial(case_id="c3", condition="with_skill", reward=1.0))
    counts = pass_counts(frame(rows), success="reward")
    c2b = counts[(counts["case_id"] == "c2") & (counts["condition"] == "baseline")].iloc[0]
    assert (c2b["n"], c2b["c"], c2b["n_unscored"]) == (2, 2, 1)
    table = passk_table(counts, ks=(1, 3), by=()).set_index("k")
    assert table.loc[1, "n_cases"] == 2 and table.loc[1, "n_one_side"] == 1
    assert table.loc[1, "pass_with"] == pytest.approx((2 / 3 + 1.0) / 2)
    assert table.loc[1, "pass_base"] == pytest.approx((0.0 + 1.0) / 2)
    assert table.loc[3, "n_cases"] == 1 and table.loc[3, "n_short"] == 1
    assert table.loc[3, "lift"] == pytest.approx(1.0 - 0.0)


def test_passk_table_on_empty_counts_is_explicit():
    counts = pass_counts(frame([]))
    table = passk_table(counts, ks=(1,), by=())
    assert table["n_cases"].tolist() == [0] and table["lift"].iloc[0] is None


def test_pass_counts_count_the_decided_pass_and_refuse_a_score():
    rows = [trial(attempt=a, condition=c, reward=r, final_pass=p)
            for a, (c, r, p) in enumerate([("with_skill", 0.9, True), ("with_skill", 0.4, False), ("baseline", 1.0, True),
                                           ("baseline", None, None)])]
    # final_pass (the default) is what grading decided, whatever the reward beside it.
    counts = pass_counts(frame(rows)).set_index("condition")
    assert counts[["n", "c", "n_unscored"]].to_dict("index") == {
        "baseline": {"n": 1, "c": 1, "n_unscored": 1}, "with_skill": {"n": 2, "c": 1, "n_unscored": 0}}
    with pytest.raises(ReportError) as err:
        pass_counts(frame(rows), success="reward")
    assert "pass column 'reward' holds 2 value(s) other than 0/1 (first: 0.9)" in str(err.value)
    assert "fix: count 'final_pass' (the default)" in str(err.value)


def test_routing_premium_is_paired_by_case_and_attempt_with_a_case_clustered_t_interval():
    t = make_trials(skills=3, cases=4, attempts=2, modes=("isolation", "group"), seed=2)
    pairs = build_pairs(t)
    r = routing_premium(pairs, outcomes=("composite",), n_resamples=300).iloc[0]
    key = ["skill", "case_id", "attempt", "harness", "model"]
    g = pairs[pairs["workspace_mode"] == "group"].set_index(key)["lift_composite"]
    i = pairs[pairs["workspace_mode"] == "isolation"].set_index(key)["lift_composite"]
    d = (g - i).dropna()
    assert r["n_matched"] == len(d) == 24 and r["premium"] == pytest.approx(d.mean())
    case = [f"{s}/{c}" for s, c, *_ in d.index]
    e = (d - d.mean()).groupby(case).sum()
    se = math.sqrt((e**2).sum() / len(d) ** 2 * len(e) / (len(e) - 1))
    assert r["se"] == pytest.approx(se) and r["df"] == 11 and r["n_clusters"] == 12
    half = sps.t.ppf(0.975, 11) * se
    assert (r["ci_lo"], r["ci_hi"]) == pytest.approx((d.mean() - half, d.mean() + half))
    assert r["boot_ci_lo"] < r["premium"] < r["boot_ci_hi"]


def test_routing_premium_per_skill_counts_unmatched_and_flags_missing_mode():
    t = make_trials(skills=2, cases=4, attempts=1, modes=("isolation", "group"))
    t = t[~((t["skill"] == "s1") & (t["workspace_mode"] == "group"))]
    table = routing_premium(build_pairs(t), by=("skill",), n_resamples=100).set_index("skill")
    assert table.loc["s0", "cluster_by"] == "case" and table.loc["s0", "n_clusters"] == 4
    assert np.isnan(table.loc["s1", "premium"]) and "both group and isolation" in table.loc["s1", "note"]
    assert table.loc["s1", "n_unmatched_isolation"] == 4 and table.loc["s1", "n_matched"] == 0


def _stop_on_pass_case(case_id: str, condition: str, rewards: list[float | None]) -> list[dict]:
    """Attempts 1..n of one case under stop-on-pass: every attempt after a pass is skipped."""
    rows, passed = [], False
    for a, r in enumerate(rewards, start=1):
        if passed:
            rows.append(trial(case_id=case_id, attempt=a, condition=condition, status="skipped"))
            continue
        rows.append(trial(case_id=case_id, attempt=a, condition=condition, reward=r,
                          status="ok" if r is not None else "agent_error"))
        passed = r is not None and r >= 1.0
    return rows


def test_stop_on_pass_counts_a_pass_at_attempt_j_for_every_k_from_j():
    rows = (_stop_on_pass_case("c1", "with_skill", [1.0, None, None])      # passed at 1
            + _stop_on_pass_case("c1", "baseline", [0.0, 1.0, None])       # passed at 2
            + _stop_on_pass_case("c2", "with_skill", [0.0, 0.0, 1.0])      # passed at 3, nothing skipped
            + _stop_on_pass_case("c2", "baseline", [0.0, 0.0, 0.0])        # never passed
            + _stop_on_pass_case("c3", "with_skill", [0.0, None, 1.0])     # attempt 2 unscored
            + _stop_on_pass_case("c3", "baseline", [0.0, 0.0, 0.0]))
    table = passk_table(pass_counts(frame(rows), success="reward"), ks=(1, 2, 3), by=()).set_index("k")
    # k=1: c1 1 vs 0, c2 0 vs 0, c3 0 vs 0
    assert table.loc[1, "n_cases"] == 3 and table.loc[1, "n_short"] == 0
    assert table.loc[1, "pass_with"] == pytest.approx(1 / 3) and table.loc[1, "pass_base"] == 0.0
    # k=2: c1 1 vs 1, c2 0 vs 0; c3's with-skill side is undecided within 2 (attempt 2 unscored)
    assert table.loc[2, "n_cases"] == 2 and table.loc[2, "n_short"] == 1
    assert table.loc[2, "pass_with"] == pytest.approx(0.5) and table.loc[2, "pass_base"] == pytest.approx(0.5)
    # k=3: every case decided; c1 passed on both sides, c2 and c3 with the skill only
    assert table.loc[3, "n_cases"] == 3 and table.loc[3, "n_short"] == 0
    assert table.loc[3, "pass_with"] == 1.0 and table.loc[3, "pass_base"] == pytest.approx(1 / 3)
    assert table.loc[3, "lift"] == pytest.approx(2 / 3)


def test_stop_on_pass_flag_applies_when_no_attempt_was_skipped():
    # One pass at the last attempt: without the flag this reads as 1 of 3 exchangeable attempts.
    rows = _stop_on_pass_case("c1", "with_skill", [0.0, 0.0, 1.0]) + _stop_on_pass_case("c1", "baseline", [0.0] * 3)
    unbiased = passk_table(pass_counts(frame(rows), success="reward"), ks=(1,), by=()).set_index("k")
    assert unbiased.loc[1, "pass_with"] == pytest.approx(1 / 3)
    sequential = passk_table(pass_counts(frame(rows), success="reward", stop_on_pass=True), ks=(1, 3), by=()).set_index("k")
    assert sequential.loc[1, "pass_with"] == 0.0 and sequential.loc[3, "pass_with"] == 1.0
