"""pass@k against subset enumeration; routing premium against direct formulas."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from stats_fixtures import frame, make_trials, trial

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
    counts = pass_counts(frame(rows))
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


def test_routing_premium_equals_difference_of_mode_means_with_welch_se():
    t = make_trials(skills=3, cases=4, attempts=2, modes=("isolation", "group"), seed=2)
    pairs = build_pairs(t)
    r = routing_premium(pairs, outcomes=("composite",), n_resamples=300).iloc[0]
    g = pairs[pairs["workspace_mode"] == "group"]["lift_composite"]
    i = pairs[pairs["workspace_mode"] == "isolation"]["lift_composite"]
    assert r["premium"] == pytest.approx(g.mean() - i.mean())
    se = math.sqrt(g.var(ddof=1) / len(g) + i.var(ddof=1) / len(i))
    assert r["se"] == pytest.approx(se)
    assert r["ci_hi"] - r["ci_lo"] == pytest.approx(2 * 1.959963984540054 * se)
    assert r["boot_ci_lo"] < r["premium"] < r["boot_ci_hi"] and r["n_clusters"] == 3


def test_routing_premium_per_cell_clusters_on_cases_and_flags_missing_mode():
    t = make_trials(skills=2, cases=4, attempts=1, modes=("isolation", "group"))
    t = t[~((t["skill"] == "s1") & (t["workspace_mode"] == "group"))]
    table = routing_premium(build_pairs(t), by=("skill",), n_resamples=100).set_index("skill")
    assert table.loc["s0", "cluster_by"] == "case_id" and table.loc["s0", "n_clusters"] == 4
    assert np.isnan(table.loc["s1", "premium"]) and "both group and isolation" in table.loc["s1", "note"]
    assert np.isfinite(table.loc["s1", "lift_isolation"])
