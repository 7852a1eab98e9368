"""Cluster-robust inference, small-n honesty and multiplicity, each against code written here.

The references are numpy sandwich formulas, scipy's t and binomial distributions,
statsmodels' Wilson interval and brute-force enumeration; none calls the package's
own estimators.
"""

from __future__ import annotations

import itertools
import math
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from statsmodels.stats.proportion import proportion_confint
from support.stats import cr2_matrix, make_trials

from aces_bench.stats.controls import false_activation
from aces_bench.stats.inference import clustered_mean, wilson_interval
from aces_bench.stats.lift import lift_table
from aces_bench.stats.missingness import check_abstentions, imputation_bounds
from aces_bench.stats.pairing import build_pairs
from aces_bench.stats.significance import (
    benjamini_hochberg,
    mcnemar_test,
    per_skill_tests,
    permutation_test,
    wilcoxon_test,
)

SB = Path(__file__).resolve().parents[2] / ".." / "shared" / "data" / "skillsbench"
needs_shared = pytest.mark.skipif(not (SB / "results-registry.json").is_file(),
                                  reason="../shared/data/skillsbench/results-registry.json is absent")


def cr1_one_way(y, g):
    """Liang-Zeger sandwich for a mean with Stata's CR1 factor G/(G-1) (K = 1)."""
    y, g = np.asarray(y, float), np.asarray(g)
    e = y - y.mean()
    sums = pd.Series(e).groupby(g).sum().to_numpy()
    G = sums.size
    return (sums**2).sum() / y.size**2 * G / (G - 1), G


def cgm_two_way(y, g1, g2):
    """Cameron-Gelbach-Miller: V(g1) + V(g2) - V(g1 & g2), each with its own CR1 factor."""
    inter = [f"{a}|{b}" for a, b in zip(g1, g2, strict=True)]
    v1, k1 = cr1_one_way(y, g1)
    v2, k2 = cr1_one_way(y, g2)
    v12, _ = cr1_one_way(y, inter)
    return v1 + v2 - v12, k1, k2


def clustered_sample(rng, G, m, tau, sigma):
    effects = rng.normal(0.0, tau, G)
    y = np.repeat(effects, m) + rng.normal(0.0, sigma, G * m) + 0.1
    return y, np.repeat(np.arange(G), m)


def test_one_way_interval_is_cr1_with_t_on_clusters_minus_one():
    y, g = clustered_sample(np.random.default_rng(1), 30, 4, 0.2, 0.1)
    cm = clustered_mean(y, g, bounds=None)
    v, G = cr1_one_way(y, g)
    half = sps.t.ppf(0.975, G - 1) * math.sqrt(v)
    assert cm.df == 29 and cm.n_clusters == 30 and cm.n == 120
    assert (cm.ci_lo, cm.ci_hi) == pytest.approx((y.mean() - half, y.mean() + half))
    assert cm.design_effect == pytest.approx(v / (y.var(ddof=1) / y.size))
    # CR2 with Bell-McCaffrey df is the method; on equal cluster sizes it is CR1 with G - 1 df exactly
    assert cm.method == "cluster-robust (CR2, Bell-McCaffrey df) by case, t with 29 df (30 cases)"


def test_two_way_interval_is_cameron_gelbach_miller():
    rng = np.random.default_rng(2)
    G, H = 25, 6
    y = (np.repeat(rng.normal(0, 0.2, G), H) + np.tile(rng.normal(0, 0.1, H), G) + rng.normal(0, 0.1, G * H))
    g1, g2 = np.repeat(np.arange(G), H), np.tile(np.arange(H), G)
    cm = clustered_mean(y, g1, g2, bounds=None)
    v, k1, k2 = cgm_two_way(y, g1, g2)
    half = sps.t.ppf(0.975, min(k1, k2) - 1) * math.sqrt(v)
    assert cm.df == 5 and (cm.n_clusters, cm.n_clusters_2) == (25, 6)
    assert (cm.ci_lo, cm.ci_hi) == pytest.approx((y.mean() - half, y.mean() + half))
    assert cm.method.startswith("two-way cluster-robust by case x configuration")


def test_known_design_effect_is_recovered_on_a_synthetic_clustered_study():
    # random case effect tau, noise sigma, m pairs per case: deff = 1 + (m - 1) rho
    tau, sigma, m = 0.3, 0.3, 6
    rho = tau**2 / (tau**2 + sigma**2)
    expected = 1 + (m - 1) * rho
    deffs = [clustered_mean(*clustered_sample(np.random.default_rng(s), 200, m, tau, sigma)).design_effect
             for s in range(5)]
    assert np.mean(deffs) == pytest.approx(expected, rel=0.15)


def test_singleton_clusters_give_the_paired_t_interval():
    d = np.random.default_rng(3).normal(0.1, 0.3, 12)
    cm = clustered_mean(d, np.arange(12), bounds=None)
    assert (cm.ci_lo, cm.ci_hi) == pytest.approx(sps.t.interval(0.95, 11, loc=d.mean(), scale=sps.sem(d)))


def test_small_n_interval_is_clipped_to_the_feasible_range_with_a_note():
    d = np.array([1.0, 1.0, 1.0, 0.0])  # reward lifts of four pairs: t interval [-0.046, 1.546]
    cm = clustered_mean(d, np.arange(4))
    raw = sps.t.interval(0.95, 3, loc=d.mean(), scale=sps.sem(d))
    assert raw[0] == pytest.approx(-0.0457, abs=1e-3) and raw[1] > 1
    assert (cm.ci_lo, cm.ci_hi) == pytest.approx((raw[0], 1.0)) and cm.clipped
    assert "clipped to the feasible range [-1, 1]" in cm.note


def test_zero_variance_gives_no_interval_and_says_so():
    cm = clustered_mean(np.full(5, 0.5), np.arange(5))
    assert cm.ci_lo is None and cm.ci_hi is None and cm.no_variation
    assert cm.note == "no variation observed (n = 5)"
    one = clustered_mean([0.5], [0])
    assert one.ci_lo is None and not one.no_variation and one.note == "one pair: no interval"


def test_lift_table_gives_each_skill_a_bonferroni_adjusted_interval():
    pairs = build_pairs(make_trials(skills=4, cases=5, attempts=1, seed=7))
    table = lift_table(pairs, by=("skill",), outcomes=("composite",))
    for _, row in table.iterrows():
        d = pairs.loc[pairs["skill"] == row["skill"], "lift_composite"].to_numpy()
        lo, hi = sps.t.interval(1 - 0.05 / 4, len(d) - 1, loc=d.mean(), scale=sps.sem(d))
        assert (row["adj_ci_lo"], row["adj_ci_hi"]) == pytest.approx((max(lo, -1), min(hi, 1)))
        assert row["adjustment"] == "Bonferroni over 4 groups (98.75% each)"


def test_exact_sign_flip_up_to_twenty_pairs_equals_enumeration():
    d = np.round(np.random.default_rng(4).normal(0.1, 0.4, 18), 3)
    out = permutation_test(d)
    assert out["method"] == "exact"
    signs = np.array(list(itertools.product([1.0, -1.0], repeat=d.size)))
    brute = np.mean(np.abs(signs @ d) >= abs(d.sum()) - 1e-9)
    assert out["p_value"] == pytest.approx(brute)
    assert permutation_test(np.random.default_rng(5).normal(0, 1, 21))["method"].startswith("monte-carlo")


def test_four_positive_pairs_give_sign_flip_p_of_one_eighth_and_ties_p_one():
    # all four pairs +1: only the all-plus and all-minus patterns reach |mean| = 1
    assert permutation_test([1.0, 1.0, 1.0, 1.0])["p_value"] == pytest.approx(2 / 16)
    assert permutation_test([0.0, 0.0])["p_value"] == 1.0


def test_wilcoxon_matches_the_enumerated_signed_rank_distribution():
    d = np.array([0.31, -0.12, 0.45, 0.22, -0.05, 0.6, 0.18, 0.27])
    ranks = sps.rankdata(np.abs(d))
    w_plus = ranks[d > 0].sum()
    sums = [sum(r for r, s in zip(ranks, signs, strict=True) if s) for signs in itertools.product([0, 1], repeat=8)]
    mean = ranks.sum() / 2
    p = np.mean([abs(s - mean) >= abs(w_plus - mean) - 1e-9 for s in sums])
    assert wilcoxon_test(d)["p_value"] == pytest.approx(p)
    assert wilcoxon_test([0.0, 0.0])["p_value"] is None


def test_mcnemar_is_the_exact_binomial_on_discordant_pairs():
    w = np.array([1, 1, 1, 1, 1, 0, 1, 0, 1, 1], float)
    b = np.array([0, 0, 0, 1, 0, 0, 1, 1, 0, 0], float)
    out = mcnemar_test(w, b)
    assert (out["n_pass_with_only"], out["n_pass_base_only"]) == (6, 1)
    assert out["p_value"] == pytest.approx(sps.binomtest(6, 7, 0.5).pvalue)
    assert mcnemar_test([1.0, 0.0], [1.0, 0.0])["p_value"] is None


def test_benjamini_hochberg_equals_the_step_up_definition():
    p = np.array([0.01, 0.04, 0.03, 0.005, 0.5, np.nan])
    q = benjamini_hochberg(p)
    ok = p[:5]
    order = np.argsort(ok)
    m = ok.size
    raw = ok[order] * m / np.arange(1, m + 1)
    adj = np.minimum.accumulate(raw[::-1])[::-1]
    expected = np.empty(m)
    expected[order] = np.minimum(adj, 1)
    assert q[:5] == pytest.approx(expected) and np.isnan(q[5])


def test_per_skill_tests_carry_every_test_and_both_adjustments():
    t = make_trials(skills=3, cases=4, attempts=1, seed=11)
    table = per_skill_tests(build_pairs(t), outcome="composite", pass_outcome="reward")
    for col in ("p_sign", "p_perm", "p_wilcoxon", "p_mcnemar"):
        assert {f"{col}_holm", f"{col}_bh"} <= set(table.columns)
    assert (table["perm_method"] == "exact").all()


def test_wilson_interval_matches_statsmodels():
    for k, n in ((0, 10), (3, 10), (10, 10), (17, 40)):
        assert wilson_interval(k, n) == pytest.approx(proportion_confint(k, n, alpha=0.05, method="wilson"))
    assert wilson_interval(0, 0) == (None, None)


def test_false_activation_rate_counts_unknowns_apart():
    acts = pd.DataFrame({"skill": ["a", "a", "a", "b"], "activated": [True, False, None, False]})
    table = false_activation(acts, by=("skill",)).set_index("skill")
    assert table.loc["a", "n_known"] == 2 and table.loc["a", "n_unknown"] == 1 and table.loc["a", "rate"] == 0.5
    assert (table.loc["a", "ci_lo"], table.loc["a", "ci_hi"]) == pytest.approx(
        proportion_confint(1, 2, method="wilson"))


def test_imputation_bounds_fill_each_arm_with_its_worst_and_best_value():
    pairs = pd.DataFrame({"skill": ["s"] * 4, "case_id": list("abcd"),
                          "with_reward": [1.0, np.nan, 0.0, 1.0], "base_reward": [0.0, 0.0, np.nan, 1.0]})
    row = imputation_bounds(pairs, outcomes=("reward",)).iloc[0]
    assert row["lift_observed"] == pytest.approx(0.5)
    assert row["lift_lower"] == pytest.approx((1 + 0 - 1 + 0) / 4) and row["lift_upper"] == pytest.approx((1 + 1 + 0 + 0) / 4)
    assert (row["n_imputed_with"], row["n_imputed_base"]) == (1, 1)


def test_check_abstentions_count_undecided_sub_checks_per_metric_and_arm():
    checks = pd.DataFrame({"metric": ["accuracy"] * 3 + ["behavior_check"], "condition": ["with_skill"] * 2 + ["baseline"] * 2,
                           "check": list("abcd"), "decided": [True, False, False, True]})
    out = check_abstentions(checks).set_index(["metric", "condition"])
    assert out.loc[("accuracy", "with_skill"), "n_undecided"] == 1
    assert out.loc[("accuracy", "baseline"), "share_undecided"] == 1.0


@pytest.mark.shared
@needs_shared
def test_skillsbench_headline_is_task_clustered_with_design_effect_and_mdl():
    from aces_bench.stats.external import load_skillsbench_registry
    from aces_bench.stats.significance import design_power
    from aces_bench.stats.summary import inference_table

    raw = pd.read_json(SB / "results-registry.json")
    wide = raw.pivot_table(index=["task", "model"], columns="condition", values="score")
    d = (wide["With Skills"] - wide["No Skills"]).reset_index()  # points, 87 x 18 cells
    v, G = cr1_one_way(d[0], d["task"])
    assert G == 87 and len(d) == 1566
    pairs = build_pairs(load_skillsbench_registry(SB / "results-registry.json"), outcomes=("reward",))
    table = inference_table(pairs, ("reward",), 0.95).set_index("clustering")
    case = table.loc["case"]
    assert 100 * case["ci_lo"] == pytest.approx(11.8, abs=0.1) and 100 * case["ci_hi"] == pytest.approx(21.4, abs=0.1)
    half = sps.t.ppf(0.975, 86) * math.sqrt(v)
    assert 100 * case["ci_lo"] == pytest.approx(d[0].mean() - half, abs=1e-6)
    assert case["design_effect"] == pytest.approx(6.1, abs=0.05)
    two = table.loc["case x configuration"]
    assert bool(two["headline"]) and two["df"] == 17 and two["n_clusters_2"] == 18
    power = design_power(pairs, outcomes=("reward",)).iloc[0]
    assert 100 * power["mde"] == pytest.approx(6.8, abs=0.1)


def test_cr2_by_hand_on_a_small_unbalanced_example():
    from aces_bench.stats.inference import cr2_mean

    # y = (1, 0, 1 | 1, 0 | 0), mean 1/2, cluster sizes 3, 2, 1 of n = 6 (p = 1/2, 1/3, 1/6);
    # residual sums 1/2, 0, -1/2: V = (0.25 / (1/2) + 0 + 0.25 / (5/6)) / 36 = 0.8 / 36.
    var, df = cr2_mean([1, 0, 1, 1, 0, 0], [0, 0, 0, 1, 1, 2])
    assert var == pytest.approx(0.8 / 36, abs=1e-15)
    # df: G'G = D^-1/2 (diag p - p p') D^-1/2 / n with D = diag(1 - p), by hand:
    p = np.array([1 / 2, 1 / 3, 1 / 6])
    m = (np.diag(p) - np.outer(p, p)) / np.sqrt(np.outer(1 - p, 1 - p)) / 6
    lam = np.linalg.eigvalsh(m)
    assert df == pytest.approx(lam.sum() ** 2 / (lam ** 2).sum()) and df < 2  # fewer than G - 1 = 2


@pytest.mark.parametrize("sizes", [[1, 1, 5, 9, 2], [3, 3, 3, 3], [10, 1, 1], [2, 7, 1, 1, 1, 4, 6]])
def test_cr2_and_its_df_match_the_general_matrix_formula(sizes):
    rng = np.random.default_rng(len(sizes))
    g = np.repeat(np.arange(len(sizes)), sizes)
    y = rng.normal(size=g.size) + np.repeat(rng.normal(size=len(sizes)), sizes)
    v_ref, df_ref = cr2_matrix(y, g)
    cm = clustered_mean(y, g, bounds=None)
    assert cm.se ** 2 == pytest.approx(v_ref, rel=1e-9) and cm.df == pytest.approx(df_ref, rel=1e-9)
    if len(set(sizes)) == 1:  # equal sizes: CR1 and G - 1 df, exactly
        v1, G = cr1_one_way(y, g)
        assert cm.se ** 2 == pytest.approx(v1, rel=1e-12) and cm.df == G - 1
    else:
        assert cm.df < len(sizes) - 1
    half = sps.t.ppf(0.975, df_ref) * math.sqrt(v_ref)
    assert (cm.ci_lo, cm.ci_hi) == pytest.approx((y.mean() - half, y.mean() + half))


def test_cr2_holds_its_level_where_cr1_does_not_with_few_unbalanced_cases():
    # 6 cases, one with 12 attempts and five with 1; case effects only (the attempts of a
    # case share it): CR1 with G - 1 df undercovers; CR2 with Bell-McCaffrey df is closer to 95%.
    rng = np.random.default_rng(7)
    sizes = [12, 1, 1, 1, 1, 1]
    g = np.repeat(np.arange(6), sizes)
    cover = {"cr2": 0, "cr1": 0}
    reps = 2000
    for _ in range(reps):
        y = np.repeat(rng.normal(size=6), sizes) + 0.3 * rng.normal(size=g.size)
        cm = clustered_mean(y, g, bounds=None)
        cover["cr2"] += cm.ci_lo <= 0.0 <= cm.ci_hi
        v1, G = cr1_one_way(y, g)
        h = sps.t.ppf(0.975, G - 1) * math.sqrt(v1)
        cover["cr1"] += abs(y.mean()) <= h
    assert cover["cr2"] / reps > cover["cr1"] / reps + 0.02
    assert cover["cr2"] / reps >= 0.93


def test_identical_case_means_give_no_interval_never_a_zero_width_one():
    # Each case 1, 1, 0 over its attempts: every case mean is 2/3, the clustered variance is 0
    # up to rounding (a sweep once printed [+0.667, +0.667] with se 6.6e-17).
    y = np.tile([1.0, 1.0, 0.0], 4)
    g = np.repeat(np.arange(4), 3)
    cm = clustered_mean(y, g)
    assert cm.ci_lo is None and cm.ci_hi is None and cm.no_variation and cm.note == "no variation observed (n = 12)"
    from aces_bench.stats.bootstrap import cluster_bootstrap

    b = cluster_bootstrap(y, g)
    assert b.ci_lo is None and b.note == "no variation observed (n = 12)"
