"""Cluster bootstrap against a slow per-resample loop drawing the same seed stream."""

from __future__ import annotations

import numpy as np
import pytest
from support.stats import make_trials

import aces_bench.stats.bootstrap as boot
from aces_bench.stats.bootstrap import (
    bootstrap_table,
    cluster_bootstrap,
    cluster_bootstrap_difference,
)
from aces_bench.stats.pairing import build_pairs


def slow_cluster_bootstrap(values, clusters, n_resamples, seed, level=0.95):
    """Reference: resample clusters one bootstrap replicate at a time, with a python loop."""
    labels = sorted(set(clusters))
    groups = {c: [v for v, cc in zip(values, clusters, strict=True) if cc == c] for c in labels}
    rng = np.random.default_rng(seed)
    k = len(labels)
    stats = []
    for _ in range(n_resamples):
        u = rng.random(k)
        picked = [labels[int(np.floor(x * k))] for x in u]
        vals = [v for c in picked for v in groups[c]]
        stats.append(sum(vals) / len(vals))
    alpha = 1 - level
    return np.quantile(stats, [alpha / 2, 1 - alpha / 2])


def test_vectorised_bootstrap_equals_slow_loop_with_same_seed():
    rng = np.random.default_rng(0)
    clusters = rng.integers(0, 7, 60)
    values = rng.normal(0.1, 0.5, 60)
    fast = cluster_bootstrap(values, clusters, n_resamples=500, seed=42)
    lo, hi = slow_cluster_bootstrap(values.tolist(), clusters.tolist(), 500, 42)
    assert (fast.ci_lo, fast.ci_hi) == pytest.approx((lo, hi), rel=1e-12)
    assert fast.estimate == pytest.approx(values.mean())
    assert fast.n_clusters == 7 and fast.n == 60


def test_chunking_does_not_change_the_result(monkeypatch):
    rng = np.random.default_rng(1)
    values, clusters = rng.random(200), rng.integers(0, 30, 200)
    whole = cluster_bootstrap(values, clusters, n_resamples=300, seed=7)
    monkeypatch.setattr(boot, "_CHUNK_VALUES", 64)  # forces many small chunks
    chunked = cluster_bootstrap(values, clusters, n_resamples=300, seed=7)
    assert whole == chunked


def test_seeded_and_reproducible_and_seed_sensitive():
    rng = np.random.default_rng(2)
    values, clusters = rng.random(100), rng.integers(0, 10, 100)
    a = cluster_bootstrap(values, clusters, n_resamples=200, seed=3)
    assert a == cluster_bootstrap(values, clusters, n_resamples=200, seed=3)
    assert a.ci_lo != cluster_bootstrap(values, clusters, n_resamples=200, seed=4).ci_lo


def test_singleton_clusters_match_ordinary_bootstrap_spread():
    rng = np.random.default_rng(4)
    values = rng.normal(0, 1, 400)
    ci = cluster_bootstrap(values, np.arange(400), n_resamples=4000, seed=0)
    se = values.std(ddof=1) / np.sqrt(400)
    assert ci.boot_se == pytest.approx(se, rel=0.08)


def test_degenerate_bootstrap_inputs():
    empty = cluster_bootstrap(np.array([]), np.array([]))
    assert empty.n == 0 and empty.estimate is None and empty.ci_lo is None and empty.note
    one = cluster_bootstrap(np.array([0.2, 0.4]), np.array(["s", "s"]))
    assert one.estimate == pytest.approx(0.3) and one.ci_lo is None and "fewer than 2 clusters" in one.note
    nan = cluster_bootstrap(np.array([np.nan, 0.5, np.nan]), np.array(["a", "b", "c"]))
    assert nan.n == 1 and nan.n_clusters == 1


def test_difference_bootstrap_equals_slow_loop():
    rng = np.random.default_rng(5)
    a, ca = rng.normal(0.3, 0.2, 30), rng.integers(0, 5, 30)
    b, cb = rng.normal(0.1, 0.2, 25), rng.integers(0, 5, 25)
    fast = cluster_bootstrap_difference(a, ca, b, cb, n_resamples=300, seed=11)
    labels = sorted(set(ca) | set(cb))
    k = len(labels)
    r = np.random.default_rng(11)
    stats = []
    for _ in range(300):
        picked = [labels[int(np.floor(x * k))] for x in r.random(k)]
        va = [v for c in picked for v, cc in zip(a, ca, strict=True) if cc == c]
        vb = [v for c in picked for v, cc in zip(b, cb, strict=True) if cc == c]
        stats.append(np.mean(va) - np.mean(vb) if va and vb else np.nan)
    stats = np.array(stats)
    stats = stats[np.isfinite(stats)]
    assert fast.n_valid_resamples == stats.size
    assert (fast.ci_lo, fast.ci_hi) == pytest.approx(tuple(np.quantile(stats, [0.025, 0.975])))
    assert fast.estimate == pytest.approx(a.mean() - b.mean())


def test_bootstrap_table_clusters_over_skills_and_cells():
    pairs = build_pairs(make_trials(skills=4, cases=3, attempts=2, harnesses=("h1", "h2")))
    table = bootstrap_table(pairs, outcomes=("composite",), n_resamples=200)
    by = table.set_index("clustering")
    assert by.loc["skill", "n_clusters"] == 4 and by.loc["cell", "n_clusters"] == 8
    assert by.loc["skill", "n"] == by.loc["cell", "n"] == 48  # 4 skills x 3 cases x 2 attempts x 2 harnesses
    assert by.loc["skill", "ci_lo"] < by.loc["skill", "estimate"] < by.loc["skill", "ci_hi"]
