"""Sign, permutation and Holm against scipy and brute force; power formulas against the normal cdf."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from scipy import stats as sps
from support.stats import make_trials

from aces_bench.stats.pairing import build_pairs
from aces_bench.stats.significance import (
    cases_needed,
    design_power,
    holm,
    minimum_detectable_lift,
    per_skill_tests,
    permutation_test,
    sign_test,
)


@pytest.mark.parametrize("n_pos,n_neg,n_zero", [(7, 1, 2), (3, 3, 0), (0, 5, 1), (12, 4, 0), (1, 0, 0)])
def test_sign_test_matches_scipy_binomtest(n_pos, n_neg, n_zero):
    d = [0.3] * n_pos + [-0.2] * n_neg + [0.0] * n_zero
    out = sign_test(d)
    assert (out["n_pos"], out["n_neg"], out["n_zero"]) == (n_pos, n_neg, n_zero)
    assert out["p_value"] == pytest.approx(sps.binomtest(n_pos, n_pos + n_neg, 0.5).pvalue)


def test_sign_test_without_nonzero_differences_has_no_p_value():
    assert sign_test([0.0, 0.0, np.nan])["p_value"] is None
    assert sign_test([])["p_value"] is None


def brute_force_permutation_p(d):
    obs = abs(np.mean(d))
    stats = [abs(np.mean([s * x for s, x in zip(signs, d, strict=True)])) for signs in itertools.product([1, -1], repeat=len(d))]
    return sum(s >= obs - 1e-12 for s in stats) / len(stats)


@pytest.mark.parametrize("seed", range(4))
def test_exact_permutation_test_equals_enumeration_of_sign_patterns(seed):
    d = np.round(np.random.default_rng(seed).normal(0.2, 0.5, 9), 2)
    out = permutation_test(d)
    assert out["method"] == "exact"
    assert out["p_value"] == pytest.approx(brute_force_permutation_p(d.tolist()))


def test_exact_permutation_test_agrees_with_scipy_permutation_test():
    d = np.random.default_rng(8).normal(0.3, 0.6, 11)
    ref = sps.permutation_test((d,), np.mean, permutation_type="samples", n_resamples=np.inf, alternative="two-sided")
    assert permutation_test(d)["p_value"] == pytest.approx(ref.pvalue)


def test_monte_carlo_permutation_test_is_seeded_and_close_to_exact():
    d = np.random.default_rng(9).normal(0.15, 0.5, 14)
    exact = permutation_test(d)["p_value"]
    mc = permutation_test(d, exact_max_n=0, n_permutations=20_000, seed=1)
    assert mc["method"].startswith("monte-carlo")
    assert mc == permutation_test(d, exact_max_n=0, n_permutations=20_000, seed=1)
    assert mc["p_value"] == pytest.approx(exact, abs=0.015)


def brute_holm(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: p[i])
    adj = [0.0] * m
    for rank, i in enumerate(order):
        adj[i] = min(1.0, max((m - j) * p[order[j]] for j in range(rank + 1)))
    return adj


def test_holm_equals_the_step_down_definition_and_skips_nan():
    p = [0.01, 0.04, 0.03, 0.005, 0.5]
    assert holm(p).tolist() == pytest.approx(brute_holm(p))
    with_nan = holm([0.02, np.nan, 0.01])
    assert np.isnan(with_nan[1]) and with_nan[[0, 2]].tolist() == pytest.approx(brute_holm([0.02, 0.01]))
    assert np.isnan(holm([np.nan])).all() and holm([]).size == 0


def test_holm_matches_statsmodels_on_random_p_values_with_ties():
    from statsmodels.stats.multitest import multipletests

    rng = np.random.default_rng(7)
    for m in (1, 2, 5, 17, 60):
        for _ in range(20):
            p = rng.choice([0.001, 0.01, 0.02, 0.05, 0.3, 0.9, 1.0], size=m) * rng.uniform(0.5, 1.0, size=m).round(1)
            assert holm(p) == pytest.approx(multipletests(p, method="holm")[1], abs=0, rel=1e-12)


def test_minimum_detectable_lift_has_the_requested_power():
    sd, n = 0.3, 50
    mde = minimum_detectable_lift(sd, n)
    se = sd / math.sqrt(n)
    crit = sps.norm.ppf(0.975)
    power = sps.norm.sf(crit - mde / se) + sps.norm.cdf(-crit - mde / se)
    assert power == pytest.approx(0.8, abs=1e-3)
    n_needed = cases_needed(sd, mde)
    assert n_needed in (n, n + 1)  # ceil of a float that equals n up to rounding
    assert cases_needed(sd, 0.1) == math.ceil(((crit + sps.norm.ppf(0.8)) * sd / 0.1) ** 2)


def test_power_degenerate_inputs():
    assert minimum_detectable_lift(0.3, 1) is None and minimum_detectable_lift(None, 10) is None
    # zero observed variance is nothing to plan from: never "1 case"
    assert cases_needed(0.3, 0.0) is None and cases_needed(0.0, 0.1) is None
    assert minimum_detectable_lift(0.0, 10) is None


def test_per_skill_tests_apply_holm_across_skills_and_keep_empty_skills():
    t = make_trials(skills=3, cases=4, attempts=2, seed=4)
    t.loc[(t["skill"] == "s2"), "composite"] = np.nan
    table = per_skill_tests(build_pairs(t), outcome="composite", n_permutations=500)
    assert table["skill"].tolist() == ["s0", "s1", "s2"]
    assert table.loc[2, "n"] == 0 and np.isnan(table.loc[2, "p_sign"])
    assert table.loc[:1, "p_sign_holm"].tolist() == pytest.approx(brute_holm(table.loc[:1, "p_sign"].tolist()))
    assert np.isnan(table.loc[2, "p_perm_holm"])  # undefined, and not counted in the Holm family


def test_design_power_uses_observed_sd():
    pairs = build_pairs(make_trials(skills=2, cases=5, attempts=2))
    row = design_power(pairs, outcomes=("accuracy",), target_lift=0.1).iloc[0]
    d = pairs["lift_accuracy"].dropna()
    assert row["sd"] == pytest.approx(d.std(ddof=1)) and row["n"] == len(d)
    # design effect of clustering by case, recomputed: CR1 variance over s^2/n
    case = pairs.loc[d.index, "skill"] + "/" + pairs.loc[d.index, "case_id"]
    e = d - d.mean()
    g = e.groupby(case).sum()
    v_cl = (g**2).sum() / len(d) ** 2 * len(g) / (len(g) - 1)
    deff = v_cl / (d.var(ddof=1) / len(d))
    assert row["design_effect"] == pytest.approx(deff) and row["n_cases"] == len(g) == 10
    z = sps.norm.ppf(0.975) + sps.norm.ppf(0.8)
    assert row["mde"] == pytest.approx(z * math.sqrt(v_cl))
    assert row["n_needed"] == math.ceil((z * d.std(ddof=1) / 0.1) ** 2 * deff / (len(d) / len(g)))


def test_design_power_on_zero_variance_reports_no_plan():
    t = make_trials(skills=1, cases=4, attempts=1)
    t["composite"] = np.where(t["condition"] == "with_skill", 0.9, 0.4)
    row = design_power(build_pairs(t), outcomes=("composite",)).iloc[0]
    assert row["mde"] is None and row["n_needed"] is None and row["note"] == "no variation observed (n = 4)"


def test_per_skill_tests_count_distinct_cases_not_their_repeats():
    # 3 cases, each run in 7 configurations (attempts, harnesses, members): all positive.
    # Treated as 21 independent pairs the sign test says p = 2/2**21; the 3 cases allow 2/2**3.
    t = make_trials(skills=1, cases=3, attempts=7, seed=2, lift=0.0)
    t.loc[t["condition"] == "with_skill", "composite"] = 1.0
    t.loc[t["condition"] == "baseline", "composite"] = 0.0
    t.loc[t["condition"] == "with_skill", "reward"] = 1.0
    t.loc[t["condition"] == "baseline", "reward"] = 0.0
    row = per_skill_tests(build_pairs(t), outcome="composite", pass_outcome="reward").iloc[0]
    assert (row["n"], row["n_cases"], row["n_pos"]) == (21, 3, 3)
    for col in ("p_sign", "p_perm", "p_wilcoxon", "p_mcnemar"):
        assert row[col] == pytest.approx(0.25), col
    assert row["n_pass_with_only"] == 21  # the discordant pairs are still counted, as pairs


def test_per_skill_tests_average_a_cases_pairs_before_testing():
    t = make_trials(skills=1, cases=4, attempts=3, seed=5)
    pairs = build_pairs(t)
    means = pairs.groupby("case_id")["lift_composite"].mean().to_numpy()
    row = per_skill_tests(pairs, outcome="composite").iloc[0]
    assert row["n_cases"] == 4 and row["n"] == 12
    assert row["p_sign"] == pytest.approx(sign_test(means)["p_value"])
    assert row["p_perm"] == pytest.approx(brute_force_permutation_p(means.tolist()))
    assert row["p_wilcoxon"] == pytest.approx(sps.wilcoxon(means).pvalue)
