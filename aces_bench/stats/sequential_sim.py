"""Simulated studies of the fixed and the sequential gate, vectorised over studies where the rule allows.

Used by ``make bench-sequential`` (SkillsBench's per-task success rates) and by
``aces-bench plan`` (expected trials). Each simulated study draws, per case and
attempt, a with-skill and a baseline outcome as Bernoulli(p) from the case's two
success probabilities (a pass is a pass, a failure of either kind a failure: the
gate's data), and then:

- the **fixed design** runs every case with every attempt and asks the gate itself,
  ``stats.gate.gate_verdict``, on the case means (``fixed_verdicts``);
- the **sequential design** runs cases in a fresh random order per study, in case rounds
  (every attempt of a case in the round that adds it), and makes at each look the
  decision of ``sequential.analyse``: the gate's e-values along the order and the
  conditional power vectorised, the gate's verdict asked by calling ``gate_verdict`` for
  every study that could stop (an e-value at 1 / alpha, or a futility stop to word) and,
  at the last look, reading the fixed design's verdict of the same study (the same data:
  every case, every attempt). ``tests/stats/test_stats_sequential.py`` checks it decision
  for decision against ``analyse``.

Should-not-use cases and the null arm are not simulated (SkillsBench has neither).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from aces_bench.core.gate import CONTINUE, GateSettings
from aces_bench.records.gate import GateCases
from aces_bench.records.sequential import SequentialDesign
from aces_bench.stats.betting import MIX_BETS, log_factors
from aces_bench.stats.gate import gate_verdict
from aces_bench.stats.sequential import EARLY, chance_of_reaching, futility_word, harm_leaning

DECISIONS = (CONTINUE, "helps", "harms", "does not reach threshold", "not enough cases", "no data",
             "harms should-not-use cases", "null arm shows an effect")
_CODE = {name: i for i, name in enumerate(DECISIONS)}


@dataclass(frozen=True)
class SimResult:
    passed: np.ndarray  # bool per study
    trials: np.ndarray  # trials used per study (both arms)
    decision: np.ndarray  # index into DECISIONS per study
    stop_look: np.ndarray  # look index at which it stopped
    e_max: np.ndarray  # the largest value the gate's e-value for "lift > threshold" reached at a look until it stopped

    @property
    def anytime_p(self) -> np.ndarray:
        """Per study the anytime-valid p-value of "lift <= threshold", 1 / e_max (Ville)."""
        return np.minimum(1.0, 1.0 / self.e_max)


@dataclass(frozen=True)
class FixedResult:
    passed: np.ndarray  # bool per study: the gate's verdict is "helps"
    p_value: np.ndarray  # the gate's help p-value per study
    decision: np.ndarray  # index into DECISIONS per study (the gate's verdict)


def draw_differences(p_with, p_base, n_attempts: int, n_sims: int, rng: np.random.Generator) -> np.ndarray:
    """(n_sims, n_cases, n_attempts) paired differences of Bernoulli outcomes."""
    pw = np.asarray(p_with, float)[None, :, None]
    pb = np.asarray(p_base, float)[None, :, None]
    shape = (n_sims, pw.shape[1], n_attempts)
    return (rng.random(shape) < pw).astype(float) - (rng.random(shape) < pb)


def _verdict(values: np.ndarray, settings: GateSettings):
    return gate_verdict(GateCases(skill="simulated", positive=values.tolist()), settings, bound=False)


def fixed_verdicts(d: np.ndarray, settings: GateSettings) -> FixedResult:
    """The gate (``stats.gate.gate_verdict``) on every study's case means (all attempts)."""
    x = d.mean(2)
    verdicts = [_verdict(row, settings) for row in x]
    return FixedResult(passed=np.array([v.passed for v in verdicts], bool),
                       p_value=np.array([np.nan if v.p_value is None else v.p_value for v in verdicts]),
                       decision=np.array([_CODE[v.verdict] for v in verdicts], int))


def fixed_passes(d: np.ndarray, settings: GateSettings) -> np.ndarray:
    """Whether the gate passes each study of the fixed design."""
    return fixed_verdicts(d, settings).passed


def _log_paths(x: np.ndarray, null: float, *, above: bool) -> tuple[np.ndarray, np.ndarray]:
    """Per study and number of cases read: the gate's log e-value (``betting.log_evalue``)
    along the order, and per bet of ``MIX_BETS`` its weighted log capital (bets first)."""
    caps = np.stack([np.cumsum(log_factors(x, null, c, above=above), axis=1) + math.log(w) for c, w in MIX_BETS])
    return np.logaddexp.reduce(caps, axis=0), caps


def sequential_passes(design: SequentialDesign, d: np.ndarray, rng: np.random.Generator,
                      fixed: FixedResult | None = None) -> SimResult:
    """Run the sequential gate on every simulated study (``d``: (studies, cases, attempts)
    in case order; each study gets its own random case order from ``rng``). ``fixed``: the
    fixed design's verdicts of the same studies (``fixed_verdicts(d, design.gate)``), read
    at the last look."""
    n_sims, n, big_a = d.shape
    if n != design.n_cases or big_a != design.n_attempts:
        raise ValueError("the differences do not match the design's cases and attempts")
    order = np.argsort(rng.random((n_sims, n)), axis=1)
    x = np.take_along_axis(d.mean(2), order, axis=1)
    alpha, delta, s = design.alpha, design.threshold, design.gate
    bar = -math.log(alpha) - 1e-9  # screening only: the gate itself decides every stop
    log_e, caps = _log_paths(x, delta, above=True)
    log_harm, _ = _log_paths(x, 0.0, above=False)
    wins = np.cumsum(x > delta + 1e-9, axis=1)
    lift = np.cumsum(x, axis=1) / np.arange(1, n + 1)
    looks = design.looks()
    undecided = np.ones(n_sims, bool)
    decision = np.zeros(n_sims, int)
    stop_look = np.full(n_sims, len(looks) - 1)
    trials = np.full(n_sims, 2.0 * n * big_a)
    e_max = np.ones(n_sims)
    for look in looks:
        if not undecided.any():
            break
        t = look.n_cases
        e_max = np.where(undecided, np.maximum(e_max, np.exp(log_e[:, t - 1])), e_max)
        new = np.zeros(n_sims, int)
        if look.final:
            for i in np.flatnonzero(undecided):
                v = None if fixed is not None else _verdict(x[i], s)
                new[i] = int(fixed.decision[i]) if v is None else _CODE[v.verdict]
        else:
            could = undecided & (((log_e[:, t - 1] >= bar) & (wins[:, t - 1] >= s.min_cases))
                                 | ((log_harm[:, t - 1] >= bar) & (lift[:, t - 1] < 0)))
            for i in np.flatnonzero(could):
                v = _verdict(x[i, :t], s)
                if v.verdict in EARLY:
                    new[i] = _CODE[v.verdict]
            stops = np.zeros(n_sims, bool)
            if design.futility_power is not None:  # ``sequential.cannot_pass``: exact, at any look
                best = np.logaddexp.reduce(
                    [cap[:, t - 1] + (n - t) * float(log_factors([1.0], delta, c, above=True)[0])
                     for cap, (c, _) in zip(caps, MIX_BETS, strict=True)], axis=0)
                stops |= (wins[:, t - 1] + (n - t) < s.min_cases) | (best < -math.log(alpha))
            if design.futility_at(look) and t >= max(2, s.min_cases):
                f = np.stack([log_factors(x[:, :t], delta, c, above=True) for c, _ in MIX_BETS])
                stops |= chance_of_reaching(f, n - t, -math.log(alpha)) < design.futility_power
            if design.futility_power is not None and stops.any():  # "harms" still likely at the last look: wait
                g = np.stack([log_factors(x[:, :t], 0.0, c, above=False) for c, _ in MIX_BETS])
                stops &= chance_of_reaching(g, n - t, -math.log(alpha)) < design.futility_power
            for i in np.flatnonzero(undecided & (new == 0) & stops):
                v = _verdict(x[i, :t], s)
                if v.verdict not in EARLY and not harm_leaning(v):
                    new[i] = _CODE[futility_word(v.verdict)]
        stop = undecided & (new != 0)
        decision[stop] = new[stop]
        stop_look[stop] = look.index
        trials[stop] = 2.0 * big_a * t
        undecided &= ~stop
    return SimResult(passed=decision == _CODE["helps"], trials=trials, decision=decision, stop_look=stop_look,
                     e_max=e_max)
