"""Simulated studies of the fixed and the sequential gate, vectorised over studies where the rule allows.

Used by ``make bench-sequential`` (SkillsBench's per-task success rates) and by
``aces-bench plan`` (expected trials). Each simulated study draws, per case and
attempt, a with-skill and a baseline outcome as Bernoulli(p) from the case's two
success probabilities (a pass is a pass, a failure of either kind a failure: the
gate's data), and then:

- the **fixed design** runs every case with every attempt and asks the gate itself,
  ``stats.gate.gate_verdict``, on the case means (``fixed_verdicts``);
- the **sequential design** runs cases in a fresh random order per study, cases first,
  and makes at each look the decision of ``sequential.analyse``: the arithmetic of the
  boundaries, intervals and e-processes vectorised, the gate's verdict asked by calling
  ``gate_verdict`` for every study whose guard could let it stop (an early "helps" or
  "harms" needs its e-process at 1 / alpha first) and, at the last look, reading the
  fixed design's verdict of the same study (the same data: every case, every attempt).
  ``tests/stats/test_stats_sequential.py`` checks it decision for decision against
  ``analyse``.

Should-not-use cases and the null arm are not simulated (SkillsBench has neither).
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass

import numpy as np

from aces_bench.stats.boundaries import next_boundary
from aces_bench.stats.gate import GateCases, GateSettings, gate_verdict
from aces_bench.stats.sequential import CONTINUE, JACKKNIFE_Z, R_CAP, R_STEP, SequentialDesign, futility_word
from aces_bench.stats.sequential_evidence import merged_interval, merged_path

DECISIONS = (CONTINUE, "helps", "harms", "does not reach threshold", "not enough cases", "no data",
             "harms should-not-use cases", "null arm shows an effect")
_CODE = {name: i for i, name in enumerate(DECISIONS)}


@dataclass(frozen=True)
class SimResult:
    passed: np.ndarray  # bool per study
    trials: np.ndarray  # trials used per study (both arms)
    decision: np.ndarray  # index into DECISIONS per study
    stop_look: np.ndarray  # look index at which it stopped
    e_max: np.ndarray  # the largest value the study's one e-process for "lift > threshold" reached until it stopped

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


def _t_boundary(c: float, n: int) -> float:
    from scipy.stats import norm
    from scipy.stats import t as student_t

    if n < 2 or c == math.inf:
        return math.inf
    if c <= -30:
        return -math.inf
    return float(student_t.isf(norm.sf(c), n - 1))


def _mean_se(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    n = x.shape[1]
    m = x.mean(1)
    se = x.std(1, ddof=1) / math.sqrt(n) if n > 1 else np.full(x.shape[0], np.nan)
    return m, se


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


def _ratio_lower(first: np.ndarray, means: np.ndarray, floor: float) -> np.ndarray:
    """``sequential.variance_ratio_lower`` per study (jackknife lower bound, rounded down)."""
    n = first.shape[1]
    if n < 3:
        return np.full(first.shape[0], floor)
    v1 = first.var(1, ddof=1)
    va = means.var(1, ddof=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = va / v1
    s1, q1 = first.sum(1, keepdims=True), (first ** 2).sum(1, keepdims=True)
    sa, qa = means.sum(1, keepdims=True), (means ** 2).sum(1, keepdims=True)
    m1 = (s1 - first) / (n - 1)
    v1j = ((q1 - first ** 2) - (n - 1) * m1 ** 2) / (n - 2)
    ma = (sa - means) / (n - 1)
    vaj = ((qa - means ** 2) - (n - 1) * ma ** 2) / (n - 2)
    with np.errstate(divide="ignore", invalid="ignore"):
        jack = np.where(v1j > 0, vaj / v1j, ratio[:, None])
        se = np.sqrt((n - 1) / n * ((jack - jack.mean(1, keepdims=True)) ** 2).sum(1))
    r = np.floor((ratio - JACKKNIFE_Z * se) / R_STEP + 1e-9) * R_STEP
    r = np.clip(np.nan_to_num(r, nan=floor), floor, R_CAP)
    return np.where(v1 > 0, r, floor)


class _Boundaries:
    """Boundaries of one design, the later passes' cached by their (rounded) ratios."""

    def __init__(self, design: SequentialDesign):
        self.design = design
        self.looks = design.looks()
        self.p1 = [lk for lk in self.looks if lk.pass_ == 1]
        self.info1 = [lk.n_cases / design.n_cases for lk in self.p1]
        self.spent = [design.spent(lk.spending_time) for lk in self.looks]
        c: list[float] = []
        for k in range(len(self.p1)):
            c.append(next_boundary(self.info1[: k + 1], self.spent[: k + 1], c))
        self.c1 = c

    @functools.cache  # noqa: B019 (one instance per design, for the run)
    def later(self, ratios: tuple[float, ...]) -> float:
        """The boundary of pass ``1 + len(ratios)``, given the ratios of passes 2.. (rounded)."""
        prev = list(self.c1) + [self.later(ratios[:j]) for j in range(1, len(ratios))]
        infos = self.info1 + [1.0 / r for r in ratios]
        return next_boundary(infos, self.spent[: len(infos)], prev)


def sequential_passes(design: SequentialDesign, d: np.ndarray, rng: np.random.Generator,
                      cache: _Boundaries | None = None, fixed: FixedResult | None = None) -> SimResult:
    """Run the sequential gate on every simulated study (``d`` in case order; each study
    gets its own random case order from ``rng``). ``fixed``: the fixed design's verdicts of
    the same studies (``fixed_verdicts(d, design.gate)``), read at the last look."""
    from scipy.stats import norm

    bnd = cache or _Boundaries(design)
    n_sims, n, big_a = d.shape
    if n != design.n_cases or big_a != design.n_attempts:
        raise ValueError("the differences do not match the design's cases and attempts")
    order = np.argsort(rng.random((n_sims, n)), axis=1)
    d = np.take_along_axis(d, order[:, :, None], axis=1)
    alpha, delta, bar = design.alpha, design.threshold, 1.0 / design.alpha
    undecided = np.ones(n_sims, bool)
    decision = np.zeros(n_sims, int)
    stop_look = np.full(n_sims, len(bnd.looks) - 1)
    trials = np.full(n_sims, 2.0 * n * big_a)
    e_max = np.ones(n_sims)
    first = d[:, :, 0]
    kw = {"alpha": alpha, "n_attempts": big_a, "horizon": n}
    directions = (("above", delta, True), ("below", delta, False), ("harm", 0.0, False))
    # The study's one e-process per direction (``sequential_evidence``): pass 1's part
    # along the scheduled order, as running maxima; a later pass adds its own process.
    path = {name: np.maximum.accumulate(merged_path([first], null, above=above, **kw), axis=1)
            for name, null, above in directions}
    ratios = np.zeros((n_sims, 0))
    for look in bnd.looks:
        if not undecided.any():
            break
        if look.pass_ == 1:
            x = first[:, : look.n_cases]
            passes = [x]
            c = np.full(n_sims, bnd.c1[look.index])
            caps = {k: np.maximum(v[:, look.n_cases - 1], 1.0) for k, v in path.items()}
        else:
            x = d[:, :, : look.pass_].mean(2)
            passes = [d[:, :, :b].mean(2) for b in range(1, look.pass_ + 1)]
            prev = ratios[:, -1] if ratios.shape[1] else np.ones(n_sims)
            cap_r = np.floor(R_CAP * prev / R_STEP + 1e-9) * R_STEP
            r = np.minimum(_ratio_lower(first, x, 1.0 / look.pass_), cap_r)
            ratios = np.column_stack([ratios, r])
            keys = [tuple(float(v) for v in row) for row in np.round(ratios, 6)]
            c = np.array([bnd.later(k) for k in keys])
            caps = {name: np.maximum(merged_path(passes, null, above=above, **kw).max(1), 1.0)
                    for name, null, above in directions}

        def av(i: int, passes=passes) -> tuple[float, float]:
            return merged_interval([p[i] for p in passes], include=(delta, 0.0), **kw)
        e_max = np.where(undecided, np.maximum(e_max, caps["above"]), e_max)
        nominal = norm.sf(c)
        n_k = x.shape[1]
        new = np.zeros(n_sims, int)
        if look.final:
            f = fixed if fixed is not None else None
            for i in np.flatnonzero(undecided):
                if f is not None:
                    code, p = int(f.decision[i]), float(f.p_value[i])
                else:
                    v = _verdict(x[i], design.gate)
                    code, p = _CODE[v.verdict], (np.nan if v.p_value is None else v.p_value)
                if code == _CODE["helps"] and not p <= nominal[i]:
                    code = _CODE["does not reach threshold"]
                new[i] = code
        else:
            m, se = _mean_se(x)
            b = np.array([_t_boundary(float(ci), n_k) for ci in c]) if look.pass_ > 1 else \
                np.full(n_sims, _t_boundary(float(c[0]), n_k))
            with np.errstate(divide="ignore", invalid="ignore"):
                stat = np.where(se == 0, np.where(m > delta, np.inf, np.where(m < delta, -np.inf, 0.0)),
                                (m - delta) / se)
                wide = ~np.isfinite(b) | (se * b > 2)
                hi = np.where(wide, 1.0, np.minimum(1.0, m + b * se))
            if n_k < 2:
                hi = np.full(n_sims, np.nan)  # one case: no interval (as ``analyse``)
            # The gate is asked where a guard lets it stop the study: helps / harms.
            for i in np.flatnonzero(undecided & ((caps["above"] >= bar) | (caps["harm"] >= bar))):
                v = _verdict(x[i], design.gate)
                if v.verdict == "helps" and v.p_value is not None and v.p_value <= nominal[i] \
                        and caps["above"][i] >= bar and av(i)[0] > delta:
                    new[i] = _CODE["helps"]
                elif v.verdict == "harms" and caps["harm"][i] >= bar and av(i)[1] < 0.0:
                    new[i] = _CODE["harms"]
            if n_k >= design.min_cases:
                below = (new == 0) & (hi < delta) & (caps["below"] >= bar)
                fb = design.futility_bound(look)
                futile = (new == 0) & ~below & (stat < fb) if fb is not None else np.zeros(n_sims, bool)
                for i in np.flatnonzero((below | futile) & undecided):  # the word is the gate's (``futility_word``)
                    v = _verdict(x[i], design.gate)
                    if futile[i] and not look.pass_end and v.p_harm is not None and v.p_harm <= design.gate.harm_alpha:
                        continue  # a sign of harm mid-pass: wait for the pass's end (``interim_decision``)
                    if v.verdict == "harms":
                        continue  # harm the e-process has not shown: the last look decides (``interim_decision``)
                    new[i] = _CODE[futility_word(v.verdict)]
        stop = undecided & (new != 0)
        decision[stop] = new[stop]
        stop_look[stop] = look.index
        used = 2.0 * (look.n_cases if look.pass_ == 1 else n * look.pass_)
        trials[stop] = used
        undecided &= ~stop
    return SimResult(passed=decision == _CODE["helps"], trials=trials, decision=decision, stop_look=stop_look,
                     e_max=e_max)


def boundaries_for(design: SequentialDesign) -> _Boundaries:
    """A reusable boundary cache for many calls of ``sequential_passes`` with one design."""
    return _Boundaries(design)
