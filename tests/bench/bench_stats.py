"""Speed targets of the statistics layer. Run: .venv/bin/python tests/bench/bench_stats.py"""

from __future__ import annotations

import time

import numpy as np
import pandas as pd

from aces_bench.core.metrics import metric_names
from aces_bench.records.trials import table_columns
from aces_bench.stats.bootstrap import cluster_bootstrap
from aces_bench.stats.summary import study_stats


def synthetic_trials(n_skills=20, n_cases=25, n_attempts=2, seed=0) -> pd.DataFrame:
    """1,000 paired cases (20 skills x 25 cases x 2 attempts), both conditions."""
    rng = np.random.default_rng(seed)
    rows = []
    for s in range(n_skills):
        for c in range(n_cases):
            for a in range(n_attempts):
                for cond in ("with_skill", "baseline"):
                    shift = 0.1 if cond == "with_skill" else 0.0
                    vals = {f"metric_{m}": float(np.clip(rng.normal(0.5 + shift, 0.25), 0, 1)) for m in metric_names()}
                    rows.append({"run_id": "bench", "skill": f"s{s}", "case_id": f"c{c}", "attempt": a,
                                 "harness": "h", "model": "m", "workspace_mode": "isolation", "decoy_set": "none",
                                 "condition": cond, "status": "ok", "has_trajectory": True,
                                 "composite": float(np.mean(list(vals.values()))),
                                 "reward": float(rng.random() < 0.4 + shift), **vals})
    return pd.DataFrame(rows).reindex(columns=list(table_columns()))


def timed(label: str, target: float, fn) -> float:
    start = time.perf_counter()
    fn()
    took = time.perf_counter() - start
    print(f"{label:<62} {took:7.3f} s   target < {target:.1f} s   {'ok' if took < target else 'SLOW'}")
    return took


def main() -> None:
    rng = np.random.default_rng(0)
    lifts = rng.normal(0.1, 0.3, 1000)
    timed("cluster bootstrap, 10,000 resamples, 1,000 pairs, 1,000 clusters", 2.0,
          lambda: cluster_bootstrap(lifts, np.arange(1000), n_resamples=10_000, seed=0))
    timed("cluster bootstrap, 10,000 resamples, 1,000 pairs, 20 skills", 2.0,
          lambda: cluster_bootstrap(lifts, np.repeat(np.arange(20), 50), n_resamples=10_000, seed=0))
    trials = synthetic_trials()
    timed("study_stats (all tables, 9 outcomes, 10,000 resamples), 1,000 pairs", 10.0, lambda: study_stats(trials))


if __name__ == "__main__":
    main()
