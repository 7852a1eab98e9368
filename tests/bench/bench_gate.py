"""The gate's error rates and power, simulated through its own function (``gate_family``).

Run: ``make bench-gate`` (also part of ``make bench``). Prints one line:

    gate: power@thr0.05x3 n20 X% n40 Y%; FWER k10 Z%; skewed-null size n10 W%; monotone violations V

with MISSED on it when a target is missed (X >= 50, Y >= 90, Z <= 5, W <= 5, V = 0). The
scenarios (docs/gate.md, "How well it works"):

- power: per case, the baseline passes each of 3 attempts with probability 0.3 and the
  skill with 0.6 (true lift +0.3), gated at threshold 0.05, one skill;
- FWER: 10 skills that change nothing (A/A: both arms draw from the same per-case pass
  probability, uniform on [0.1, 0.9]), 20 cases x 3 attempts each, gated together at
  threshold 0: the share of studies where any skill reads "helps";
- skewed null: mean lift exactly 0 over cases drawn at random, 15% of cases broken (-1)
  and the rest a gain of 0.15 / 0.85, 10 cases, threshold 0: the share reading "helps";
- monotone: random case sets of fractional per-case means; a case lost (at most the
  threshold) or won (above it) inserted anywhere, gated in a family of three skills: the
  number of fails turned into passes, or passes into fails.

Seeded; the simulation counts keep it well under two minutes on one core.
"""

from __future__ import annotations

import time

import numpy as np

from aces_bench.core.gate import GateSettings
from aces_bench.records.gate import GateCases
from aces_bench.stats.gate import gate_family

SEED = 33
POWER_STUDIES = 4000
FWER_STUDIES = 400
SKEW_STUDIES = 4000
MONOTONE_TRIALS = 1500
VALUES = np.array([-1.0, -2 / 3, -1 / 3, 0.0, 1 / 3, 2 / 3, 1.0])


def _passes(studies: list[list[list[float]]], settings: GateSettings) -> np.ndarray:
    """Per study (a list of skills' per-case means): whether any skill reads "helps"."""
    return np.array([any(v.passed for v in gate_family([GateCases(skill=f"s{i}", positive=d)
                                                        for i, d in enumerate(study)], settings, bound=False))
                     for study in studies])


def _case_means(rng: np.random.Generator, base: np.ndarray, skill: np.ndarray, attempts: int) -> np.ndarray:
    return (rng.binomial(attempts, skill) - rng.binomial(attempts, base)) / attempts


def power(rng: np.random.Generator, n: int) -> float:
    studies = [[_case_means(rng, np.full(n, 0.3), np.full(n, 0.6), 3).tolist()] for _ in range(POWER_STUDIES)]
    return float(_passes(studies, GateSettings(threshold=0.05)).mean())


def fwer(rng: np.random.Generator, k: int = 10, n: int = 20) -> float:
    studies = []
    for _ in range(FWER_STUDIES):
        study = []
        for _ in range(k):
            p = rng.uniform(0.1, 0.9, n)
            study.append(_case_means(rng, p, p, 3).tolist())
        studies.append(study)
    return float(_passes(studies, GateSettings(threshold=0.0)).mean())


def skewed_null_size(rng: np.random.Generator, n: int = 10) -> float:
    gain = 0.15 / 0.85
    studies = [[np.where(rng.random(n) < 0.15, -1.0, gain).tolist()] for _ in range(SKEW_STUDIES)]
    return float(_passes(studies, GateSettings(threshold=0.0)).mean())


def monotone_violations(rng: np.random.Generator) -> int:
    bad = 0
    for _ in range(MONOTONE_TRIALS):
        s = GateSettings(threshold=float(rng.choice([0.0, 0.05, 0.2])), min_cases=int(rng.choice([1, 3, 5])),
                         family=str(rng.choice(["holm", "none"])))
        d = rng.choice(VALUES, size=int(rng.integers(3, 16))).tolist()
        others = [rng.choice(VALUES, size=int(rng.integers(5, 12))).tolist() for _ in range(2)]

        def passes(x: list[float], s=s, others=others) -> bool:
            family = [GateCases(skill="s", positive=x), *(GateCases(skill=f"o{i}", positive=o)
                                                          for i, o in enumerate(others))]
            return gate_family(family, s, bound=False)[0].passed

        before = passes(d)
        where = int(rng.integers(0, len(d) + 1))
        lost = float(min(rng.choice(VALUES), s.threshold))
        won = float(rng.choice(VALUES[VALUES > s.threshold]))
        bad += (not before) and passes([*d[:where], lost, *d[where:]])
        bad += before and not passes([*d[:where], won, *d[where:]])
    return bad


def main() -> int:
    start = time.perf_counter()
    rng = np.random.default_rng(SEED)
    x, y = power(rng, 20), power(rng, 40)
    z = fwer(rng)
    w = skewed_null_size(rng)
    v = monotone_violations(rng)
    missed = [name for name, ok in (("power n20 < 50%", x >= 0.5), ("power n40 < 90%", y >= 0.9),
                                    ("FWER > 5%", z <= 0.05), ("skewed-null size > 5%", w <= 0.05),
                                    ("monotone violations", v == 0)) if not ok]
    line = (f"gate: power@thr0.05x3 n20 {100 * x:.1f}% n40 {100 * y:.1f}%; FWER k10 {100 * z:.1f}%; "
            f"skewed-null size n10 {100 * w:.2f}%; monotone violations {v}")
    print(line + (f"  MISSED: {', '.join(missed)}" if missed else ""))
    print(f"  ({POWER_STUDIES} studies per power figure, {FWER_STUDIES} families of 10, {SKEW_STUDIES} skewed "
          f"studies, {MONOTONE_TRIALS} x 2 insertions; seed {SEED}; {time.perf_counter() - start:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
