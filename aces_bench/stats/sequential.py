"""The gate, asked after every round: when a sequential study may stop a skill, and with what verdict.

The rule is the gate's, one rule (``aces_bench.stats.gate.gate_verdict``, docs/gate.md):
the same per-case data (``GateCases``: per distinct case the mean paired difference of
``final_pass``, an arm's failures counted as not passed), the same verdicts, the same
conditions and the same test. What this module adds is *when* that rule may be read
before every trial ran.

**Case rounds.** A sequential study runs a skill's positive cases in a seeded random order,
``round_cases`` new cases per round, each with **every attempt of both arms** (and its
calibration arms). A round never adds attempts to a case already seen, so a case's mean
difference is final once it enters the gate: at the look after round k the gate reads the
first n_k cases of the order, exactly as the fixed design would read a study of those cases.

**Why a look needs no alpha spending.** The gate's help test is p = 1 / E with E the
betting e-value of ``betting.log_evalue``: a weighted sum of products of one factor per
case, with fixed bets. Under "mean lift <= threshold" over cases drawn at random, every
product is a nonnegative supermartingale as cases arrive in any order fixed in advance
(each new case's factor has expectation at most 1 whatever came before), so E is too; the
study's order is a seeded shuffle, fixed before any trial. By Ville's inequality
P(E_t >= 1 / level at some look t) <= level: reading the gate's own verdict at every look,
and stopping at the first "helps", keeps the help test's type I error at its level with no
correction. The same holds for "harms" (E against "lift >= 0") and for the interval beside
the verdict (every threshold E rejects), so the interval each look prints is anytime-valid.
The last look reads every case: its verdict *is* the fixed design's, so a skill the fixed
design passes is passed by the sequential one unless a futility stop ended it first.

- **"helps", "harms" and "harms should-not-use cases"** at any look are the gate's verdict
  on the data so far (should-not-use cases run whole in the first round: complete data).
- **Futility** (non-binding: it only ever stops a skill that has not passed, so it can only
  lower the chance of a false pass): a look that is not the last stops the skill when it
  can no longer pass whatever the cases still to run show (fewer than ``min_cases`` wins
  even if every one is won, or E below 1 / alpha even if every one is won outright:
  ``cannot_pass``), and, from ``futility_from`` of the cases on, when the chance that E
  reaches 1 / level by the last look, if the cases still to come look like the ones seen,
  is below ``futility_power`` (``conditional_power``). It waits while the last look could
  still read "harms" (the gate's harm test leans to harm, or the chance of "harms" at the
  last look on the trend so far is at least ``futility_power``), so a harmful skill reads
  "harms" as the fixed design would.
- A null arm that moves stops nothing early (its two-sided test is not anytime-valid); an
  early "helps" needs it consistent with 0 on the data so far, as the gate requires.

``futility_from`` 0.25 and ``futility_power`` 0.05 were chosen on SkillsBench simulations
with the tuning seed 1025 (docs/sequential.md); the bench reports the held-out seed 25.
Everything here is a pure function of per-case data: where it comes from is the pipeline's
business (``aces_bench.study.sequential``, through the gate's own ``gate.skill_cases``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from aces_bench.core.gate import CONTINUE, DECISION_TEXT, PASSING, Decision, interval_phrase
from aces_bench.records.gate import GateCases, GateVerdict
from aces_bench.records.sequential import LookRecord, SequentialDesign
from aces_bench.stats.betting import MIX_BETS, log_factors
from aces_bench.stats.gate import gate_verdict

EARLY = ("helps", "harms", "harms should-not-use cases")
"""The gate's verdicts a look before the last may stop with as they stand (anytime-valid)."""
INTERVAL = "anytime-valid: the gate's betting interval"


def cannot_pass(values: Sequence[float], wins: int, remaining: int, design: SequentialDesign) -> bool:
    """Whether the gate cannot read "helps" after ``remaining`` more cases, whatever they show:
    fewer than ``min_cases`` cases won even if every one is won, or the e-value below
    1 / alpha (the most any Holm level can rise to) even if every one is won outright (the
    largest factor each bet can give). Exact: a stop on it loses no pass."""
    if wins + remaining < design.min_cases:
        return True
    x = np.asarray(values, dtype=float)
    best = [math.log(w) + float(log_factors(x, design.threshold, c, above=True).sum())
            + remaining * float(log_factors([1.0], design.threshold, c, above=True)[0]) for c, w in MIX_BETS]
    return float(np.logaddexp.reduce(best)) < -math.log(design.alpha)


def conditional_power(values: Sequence[float], remaining: int, null: float, level: float, *,
                      above: bool = True) -> float:
    """The chance that the gate's e-value against "lift <= ``null``" (``above``; against
    "lift >= ``null``" otherwise, the harm test's at 0) reaches 1 / ``level`` once
    ``remaining`` more cases are read, if they look like ``values`` (the cases so far):
    stochastic curtailment under the current trend (Lan, Simon & Halperin 1982) on the
    gate's own statistic. Per bet of the gate's mixture, the log capital so far plus
    ``remaining`` cases' log factors, normal with the mean and variance of those seen; the
    bets move together (they bet on the same cases), so one standard normal drives them all
    (``chance_of_reaching``). With nothing left to read: whether E is there; with fewer than
    2 cases, no trend to read: 1."""
    x = np.asarray(values, dtype=float)
    f = np.stack([log_factors(x, null, c, above=above) for c, _ in MIX_BETS])[:, None, :]
    return float(chance_of_reaching(f, remaining, -math.log(level))[0])


def chance_of_reaching(f: np.ndarray, remaining: int, bar: float) -> np.ndarray:
    """``conditional_power`` of many studies at once: ``f`` (bets, studies, cases seen) the
    log factors of each bet of ``MIX_BETS`` on each study's cases so far; returns per study
    P(log E after ``remaining`` more cases >= ``bar``). With a_j = log w_j + the capital so
    far + remaining x mean and b_j = sqrt(remaining) x SD of bet j's log factors, the final
    log E is about logsumexp_j(a_j + b_j Z), increasing in Z; the chance is P(Z >= z*) at the
    z* where it meets the bar (bisection)."""
    weights = np.log([w for _, w in MIX_BETS])[:, None]
    now = weights + f.sum(2)
    if remaining <= 0:
        return (np.logaddexp.reduce(now, axis=0) >= bar).astype(float)
    if f.shape[2] < 2:
        return np.ones(f.shape[1])  # no trend to read yet
    a = now + remaining * f.mean(2)
    b = math.sqrt(remaining) * f.std(2, ddof=1)

    def final(z: np.ndarray) -> np.ndarray:
        return np.logaddexp.reduce(a + b * z[None, :], axis=0)

    lo, hi = np.full(f.shape[1], -40.0), np.full(f.shape[1], 40.0)
    for _ in range(60):
        mid = (lo + hi) / 2
        up = final(mid) >= bar
        hi, lo = np.where(up, mid, hi), np.where(up, lo, mid)
    from scipy.stats import norm  # here, not at import: a report that reads no statistic never loads scipy

    out = norm.sf(hi)
    out = np.where(final(lo) >= bar, 1.0, out)  # reached even at z = -40
    return np.where(final(np.full_like(hi, 40.0)) < bar, 0.0, out)


def harm_leaning(v: GateVerdict) -> bool:
    """The gate's harm test on the skill's own cases leans to harm (p at most ``harm_alpha``
    and a negative lift): a futility stop waits, so the last look or the e-value says "harms"."""
    return v.p_harm is not None and v.p_harm <= v.settings.harm_alpha and (v.lift or 0.0) < 0


def interim_decision(v: GateVerdict, design: SequentialDesign, cp: float | None, impossible: bool,
                     harm_cp: float | None = None) -> Decision:
    """A look's decision before the last, from the gate's verdict on the data so far, whether
    it ``cannot_pass`` any more (``impossible``), where the look may stop on the trend so far
    the conditional power ``cp``, and ``harm_cp``, the chance that the last look reads
    "harms" on the trend so far (module docstring)."""
    if v.verdict in EARLY:
        return v.verdict
    if harm_leaning(v) or (harm_cp is not None and harm_cp >= (design.futility_power or 0.0)):
        return CONTINUE  # "harms" may still be the last look's word: a futility stop would print a milder one
    if impossible:
        return futility_word(v.verdict)
    if cp is None or v.n_cases < design.min_cases:
        return CONTINUE
    return futility_word(v.verdict) if cp < (design.futility_power or 0.0) else CONTINUE


def futility_word(verdict: str) -> Decision:
    """The verdict a futility stop reports: the gate's own on the data so far when it is a
    failing one ("not enough cases", say), else "does not reach threshold"."""
    return "does not reach threshold" if verdict in PASSING else verdict  # type: ignore[return-value]


def analyse(design: SequentialDesign, index: int, cases: GateCases, history: Sequence[LookRecord], *,
            level: float | None = None, harm_level: float | None = None, family: str = "1 skill") -> LookRecord:
    """Ask the gate at look ``index`` on ``cases`` (the gate's data from the trials so far);
    ``history`` holds this skill's earlier looks.

    ``level`` and ``harm_level``: the skill's one-sided levels for "helps" and "harms" at
    this look (default alpha; in a family of skills their Holm levels, ``sequential_family``);
    ``family`` names the family in the verdict."""
    level = design.alpha if level is None else level
    harm_level = design.alpha if harm_level is None else harm_level
    look = design.looks()[index]
    if len(history) != index:
        raise ValueError(f"look {index} needs the {index} earlier look(s) of this skill, got {len(history)}")
    v = gate_verdict(cases, design.gate, level=level, harm_level=harm_level, family=family)
    values = [x for x in cases.positive if not math.isnan(x)]
    remaining = design.n_cases - look.n_cases
    cp = conditional_power(values, remaining, design.threshold, level) if design.futility_at(look) else None
    stops = design.futility_power is not None and not look.final
    impossible = stops and cannot_pass(values, v.n_wins, remaining, design)
    harm_cp = conditional_power(values, remaining, 0.0, harm_level, above=False) if stops else None
    if look.final:
        decision, reason = v.verdict, v.reason
    else:
        decision = interim_decision(v, design, cp, impossible, harm_cp)
        reason = v.reason
        if decision == CONTINUE:
            reason = f"{v.verdict} on the data so far ({v.reason}); undecided"
        elif decision not in EARLY:
            why = (f"no outcome of the {remaining} case(s) still to run could pass the gate" if impossible else
                   f"the chance of passing after all {design.n_cases} cases on the trend so far is {cp:.1%} < "
                   f"{design.futility_power:.0%}")
            reason = f"futility stop: {why} (the gate on the data so far: {v.reason})"
    lo, hi = (v.lower_bound, v.upper_bound) if v.n_cases else (None, None)
    if decision == "helps" and lo is not None:
        lo = max(lo, design.threshold)  # the test rejected the threshold; the bisection's last step may not show it
    by = f"{INTERVAL} at {level:.4g}" if lo is not None else None
    text = f"; {interval_phrase(lo, hi, by)}" if lo is not None else ""
    return LookRecord(index=index, label=look.label, n_cases=look.n_cases, n_scored=v.n_cases, estimate=v.lift,
                      p_value=v.p_value, conditional_power=cp, decided_lo=lo, decided_hi=hi, decided_by=by,
                      level=level, family=family, gate=v, decision=decision,
                      reason=f"after {look.label}: {reason}{text}")


def summary_line(records: Sequence[LookRecord], design: SequentialDesign) -> str:
    """One line for a skill: when and why it stopped."""
    if not records:
        return "not analysed"
    last = records[-1]
    return f"{DECISION_TEXT[last.decision]} ({last.reason}; look {last.index + 1} of {len(design.looks())})"
