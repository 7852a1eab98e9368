"""An independent recomputation of the gate's help decision (issue 33, item 8).

Written apart from ``aces_bench.stats.betting``: the e-value in exact rational arithmetic
(every product of factors over the cases, as fractions), the decision "e >= 1/alpha"
compared without floating point, and the confidence bound found by scipy's root finder
on a separately written log e-value. A second, plain simulation checks the test's size at
its null boundary on distributions of 3-attempt case means the gate never saw written down.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pytest
from scipy.optimize import brentq

from aces_bench.core.gate import GateSettings
from aces_bench.records.gate import GateCases
from aces_bench.stats.gate import gate_family, gate_verdict, help_p

# docs/gate.md: two bets, 98% and 90% of the largest bet that keeps every factor positive, weight 1/2 each.
BETS = ((Fraction(98, 100), Fraction(1, 2)), (Fraction(90, 100), Fraction(1, 2)))


def exact_evalue(d: list[Fraction], threshold: Fraction) -> Fraction:
    """sum_w w * prod_i ((1 - c) + c * x_i / m), x = (d + 1) / 2, m = (threshold + 1) / 2."""
    m = (threshold + 1) / 2
    total = Fraction(0)
    for c, w in BETS:
        prod = Fraction(1)
        for v in d:
            prod *= (1 - c) + c * ((v + 1) / 2) / m
        total += w * prod
    return total


def independent_decision(d: list[Fraction], threshold: Fraction, alpha: Fraction, min_cases: int) -> bool:
    wins = sum(1 for v in d if v > threshold)
    mean = sum(d, Fraction(0)) / len(d)
    # Harm on its own cases (the same bets from the other side, against "mean >= 0") stops a pass first.
    harm = Fraction(0)
    for c, w in BETS:
        prod = Fraction(1)
        for v in d:
            prod *= (1 - c) + c * (1 - (v + 1) / 2) / Fraction(1, 2)
        harm += w * prod
    if harm >= 1 / alpha and mean < 0:
        return False
    return wins >= min_cases and exact_evalue(d, threshold) >= 1 / alpha


THIRDS = [Fraction(k, 3) for k in range(-3, 4)]


def test_the_gate_decides_exactly_as_rational_arithmetic_does():
    rng = np.random.default_rng(20261206)
    checked = 0
    for _ in range(1500):
        d = [THIRDS[i] for i in rng.integers(0, 7, size=int(rng.integers(1, 25)))]
        threshold = Fraction(int(rng.choice([0, 5, 10, 30])), 100)
        expected = independent_decision(d, threshold, Fraction(1, 20), 5)
        v = gate_verdict(GateCases(skill="s", positive=[float(x) for x in d]),
                         GateSettings(threshold=float(threshold)), bound=False)
        e = exact_evalue(d, threshold)
        if abs(float(e) * 0.05 - 1) < 1e-9:  # on the boundary to rounding: not a disagreement worth a verdict
            continue
        assert v.passed == expected, ([str(x) for x in d], str(threshold), float(e), v.reason)
        assert v.p_value == pytest.approx(min(1.0, 1 / float(e)), rel=1e-9)
        checked += 1
    assert checked > 1400


def _log_e(d: np.ndarray, t: float) -> float:
    m = (t + 1) / 2
    x = (d + 1) / 2
    return math.log(sum(float(w) * math.exp(float(np.sum(np.log((1 - float(c)) + float(c) * x / m))))
                        for c, w in BETS))


@pytest.mark.parametrize("seed", range(5))
def test_the_lower_bound_is_the_root_of_an_independently_written_e_value(seed):
    rng = np.random.default_rng(seed)
    d = np.round(rng.binomial(3, 0.8, 15) / 3 - rng.binomial(3, 0.2, 15) / 3, 12)
    v = gate_verdict(GateCases(skill="s", positive=d.tolist()), GateSettings(min_cases=1))
    root = brentq(lambda t: _log_e(d, t) - math.log(20), -0.999, 0.999, xtol=1e-10)
    assert v.lower_bound == pytest.approx(root, abs=2e-6)


@pytest.mark.parametrize("threshold", [0.0, 0.05, 0.3])
def test_the_size_at_the_null_boundary_is_at_most_alpha_on_three_attempt_case_means(threshold):
    # Per case: with-skill and baseline pass probabilities drawn so the mean lift is exactly the
    # threshold, some cases far below it and the rest above (skewed), 3 attempts each.
    rng = np.random.default_rng(int(threshold * 100) + 1)
    studies, n, hits = 3000, 12, 0
    for _ in range(studies):
        broken = rng.random(n) < 0.2
        lift = np.where(broken, -0.6, (threshold + 0.2 * 0.6) / 0.8)  # E[lift] = threshold
        base = np.where(broken, 0.8, 0.1)
        skill = np.clip(base + lift, 0.0, 1.0)
        d = (rng.binomial(3, skill) - rng.binomial(3, base)) / 3
        hits += help_p(d.tolist(), threshold) <= 0.05
    assert hits / studies <= 0.05


def test_a_family_of_one_is_the_skill_alone():
    c = GateCases(skill="s", positive=[1.0, 1.0, 2 / 3, 1.0, 1 / 3, 1.0])
    assert gate_family([c])[0].passed == gate_verdict(c).passed
