"""The gate, asked after every round: a group-sequential test of a skill's paired lift.

The question is the fixed gate's, one-sided: is the mean paired case difference (with
skill minus baseline, per case in [-1, 1]) above the threshold? A sequential study runs
a skill's positive cases in a seeded random order, **cases first**: pass 1 runs one
attempt of every case, in rounds of ``round_cases`` cases; pass a (a = 2..n_attempts)
then runs attempt a of every case as one round. After each round (a *look*) the gate
is tested, and the skill stops as soon as it is decided either way.

How looking after every round keeps the error rates (see docs/sequential.md):

- **Efficacy** ("helps") uses group-sequential boundaries from an alpha-spending
  function fixed in advance (``boundaries``: Lan-DeMets, Hwang-Shih-DeCani gamma = -4
  by default). The statistic is the t statistic of the case means against the
  threshold; a boundary c on the normal scale is used on the t scale with the same tail
  probability (df = cases - 1). The spending time of a look counts cases before attempts:
  pass 1 is worth ``rho + (1 - rho) / A`` of the study (A attempts, rho =
  ``design_icc``, the share of a paired difference's variance that lies between cases,
  0.5 by default), pass a ``(rho + (1 - rho)/A) / (rho + (1 - rho)/a)``.
- The joint law of the looks needs their information ratios. Within pass 1 they are
  exact (cases are exchangeable: I_j / I_k = n_j / n_k). A later pass adds attempts to the
  same cases; its information relative to the end of pass 1 is 1 / r_a with r_a =
  Var(case means over a attempts) / Var(first attempts). r_a is estimated from the
  cases and replaced by a one-sided 95% jackknife lower bound (never below 1 / a, the
  no-correlation case): a lower r means less correlated looks, which by Slepian's
  inequality can only raise the boundary (a conservative choice).
- An early (interim) stop for efficacy, harm or a credibly-below-threshold lift also
  needs an exact anytime-valid betting e-process (``betting``) to reject at level
  alpha. A t statistic rests on a normal approximation that can fail for bounded,
  skewed or tie-heavy differences (a run of identical wins has an infinite t); the
  e-process cannot be fooled that way. The last look uses the fixed design's own test
  (the t boundary, or for differences with no variation the exact bound below).
- **Futility** is non-binding (the efficacy boundaries ignore it, so it only lowers the
  type I error): a skill stops "below the threshold" when its repeated confidence
  interval lies below the threshold (with the e-process agreeing), or at the end of a
  pass that is not the last when its estimate is not above the threshold
  (t < ``futility_z``).
- **Harm**: the repeated interval lies wholly below 0 ("harms").
- Should-not-use cases are run whole (every attempt) in the first round; their check
  (the pass rate with the skill not credibly below the baseline, one-sided at alpha) is
  made once, on complete data, and vetoes "helps". The null arm, when run, must stay
  consistent with 0: its repeated interval at each look must contain 0.

The interval reported at a look is the repeated confidence interval (Jennison &
Turnbull 1989), estimate +- b se with the look's boundary b: all of a study's repeated
intervals hold their lift at once with probability at least 1 - alpha per side.

Differences with no variation (every case the same value d > threshold): the
probability that n cases all equal d when the true lift is at most the threshold is at
most ((1 + threshold) / (1 + d))^n (the extreme two-point law on {d, -1}); the final
look passes when that is at most its level.

Everything here is a pure function of per-case differences: where they come from
(outcome, failures as losses) is the pipeline's business (``aces_bench.sequential_study``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator
from scipy.stats import norm
from scipy.stats import t as student_t

from aces_bench.stats.betting import max_capital
from aces_bench.stats.boundaries import SPENDING_FUNCTIONS, next_boundary, spent

Decision = Literal["continue", "helps", "harms", "below_threshold", "not_shown", "harms_negatives", "null_arm"]
STOPPED = ("helps", "harms", "below_threshold", "not_shown", "harms_negatives", "null_arm")
DECISION_TEXT = {
    "continue": "undecided: continues",
    "helps": "helps: lift credibly above the threshold",
    "harms": "harms: lift credibly below 0",
    "below_threshold": "does not reach the threshold",
    "not_shown": "not shown: the lift was not credibly above the threshold when the planned trials ended",
    "harms_negatives": "fails: lowers the pass rate on should-not-use cases",
    "null_arm": "fails: the null arm shows an effect (the instrument is not trustworthy)",
}
R_CAP = 0.98  # information must grow from look to look; a pass that adds (almost) none is capped here
R_STEP = 0.01  # estimated ratios are rounded down to this step: conservative, and boundaries can be cached
JACKKNIFE_Z = 1.645


class Look(BaseModel):
    """One planned look: after a round of pass 1 (``n_cases`` cases seen once), or after pass a."""

    model_config = ConfigDict(frozen=True)

    index: int
    pass_: int
    n_cases: int
    spending_time: float
    pass_end: bool
    final: bool

    @property
    def label(self) -> str:
        if self.pass_ == 1:
            return f"pass 1 ({self.n_cases} case(s) once)"
        return f"pass {self.pass_} (attempt {self.pass_} of every case)"


class SequentialDesign(BaseModel):
    """A skill's sequential gate, fixed before its first trial."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    n_cases: int = Field(ge=1, description="positive cases of the skill")
    n_attempts: int = Field(default=1, ge=1)
    threshold: float = Field(default=0.05, gt=-1.0, lt=1.0)
    alpha: float = Field(default=0.05, gt=0.0, lt=0.5)
    round_cases: int | None = Field(default=None, ge=1, description="cases per round of pass 1 (None: automatic)")
    min_cases: int = Field(default=5, ge=1)
    spending: Literal["hsd", "obf", "pocock"] = "hsd"
    design_icc: float = Field(default=0.5, ge=0.0, le=1.0)
    futility_z: float | None = 0.0

    @model_validator(mode="after")
    def _known_spending(self):
        if self.spending not in SPENDING_FUNCTIONS:
            raise ValueError(f"spending must be one of {SPENDING_FUNCTIONS}")
        return self

    @property
    def per_round(self) -> int:
        """Cases per round of pass 1: ``round_cases``, else an eighth of the cases, at least ``min_cases``."""
        if self.round_cases is not None:
            return self.round_cases
        return max(self.min_cases, math.ceil(self.n_cases / 8))

    def pass_weight(self, a: int) -> float:
        """Spending time at the end of pass ``a`` (1 at the last pass)."""
        rho, big_a = self.design_icc, self.n_attempts
        return (rho + (1 - rho) / big_a) / (rho + (1 - rho) / a)

    def looks(self) -> list[Look]:
        """Every planned look, in order."""
        ends = list(range(self.per_round, self.n_cases, self.per_round)) + [self.n_cases]
        out: list[Look] = []
        s1 = self.pass_weight(1)
        for n_k in ends:
            last = n_k == self.n_cases
            out.append(Look(index=len(out), pass_=1, n_cases=n_k, spending_time=s1 * n_k / self.n_cases,
                            pass_end=last, final=last and self.n_attempts == 1))
        for a in range(2, self.n_attempts + 1):
            out.append(Look(index=len(out), pass_=a, n_cases=self.n_cases, spending_time=self.pass_weight(a),
                            pass_end=True, final=a == self.n_attempts))
        return out

    def spent(self, s: float) -> float:
        return float(spent(self.spending, s, self.alpha))

    def schedule(self) -> list[tuple[int, int, int, int]]:
        """Per look: (pass, first case index, last case index (exclusive), attempt)."""
        out, start = [], 0
        for look in self.looks():
            if look.pass_ == 1:
                out.append((1, start, look.n_cases, 1))
                start = look.n_cases
            else:
                out.append((look.pass_, 0, self.n_cases, look.pass_))
        return out


class LookRecord(BaseModel):
    """What one look saw and decided (one entry of the study's sequential ledger)."""

    # A look that may spend nothing has an infinite boundary, identical wins an infinite t:
    # written as JSON's Infinity so the ledger reads back exactly what was decided.
    model_config = ConfigDict(frozen=True, ser_json_inf_nan="constants")

    index: int
    label: str
    pass_: int
    n_cases: int
    n_scored: int
    estimate: float | None
    se: float | None
    statistic: float | None
    info: float
    spent: float
    boundary: float
    boundary_t: float | None
    ci_lo: float | None
    ci_hi: float | None
    r: float | None = None
    capital_above: float | None = None
    capital_harm: float | None = None
    capital_below: float | None = None
    negatives: str | None = None
    null: str | None = None
    decision: Decision
    reason: str

    @property
    def stopped(self) -> bool:
        return self.decision in STOPPED


@dataclass
class SkillData:
    """A skill's per-case paired differences so far.

    ``order``: its positive cases in schedule order. ``diffs``: per case, the difference
    (with skill minus baseline) of each attempt in attempt order, None where the pair was
    not scored. ``negatives``: per should-not-use case, its differences (all attempts).
    ``null``: per case (any kind), null minus baseline per attempt; None when no null arm ran.
    """

    order: list[str]
    diffs: Mapping[str, Sequence[float | None]]
    negatives: Mapping[str, Sequence[float | None]] = field(default_factory=dict)
    null: Mapping[str, Sequence[float | None]] | None = None


def _clean(values: Sequence[float | None]) -> np.ndarray:
    a = np.array([np.nan if v is None else float(v) for v in values], dtype=float)
    return a[~np.isnan(a)]


def _case_means(diffs: Mapping[str, Sequence[float | None]], ids: Sequence[str], attempts: int) -> np.ndarray:
    """Per case the mean of its first ``attempts`` scored differences, in ``ids`` order (unscored cases left out)."""
    out = []
    for c in ids:
        v = _clean(list(diffs.get(c, ()))[:attempts])
        if v.size:
            out.append(v.mean())
    return np.array(out, dtype=float)


def _mean_se(x: np.ndarray) -> tuple[float | None, float | None]:
    if x.size == 0:
        return None, None
    if x.size == 1:
        return float(x[0]), None
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(x.size))


def variance_ratio_lower(first: np.ndarray, means: np.ndarray, floor: float) -> float:
    """One-sided 95% jackknife lower bound of Var(means) / Var(first), within [floor, R_CAP].

    ``first`` and ``means`` are the same cases' first-attempt differences and their
    means over more attempts. Too few cases or no variation give ``floor`` (the
    no-correlation value, the conservative one for the boundary)."""
    n = first.size
    if n < 3 or first.var(ddof=1) <= 0:
        return floor
    ratio = means.var(ddof=1) / first.var(ddof=1)
    keep = np.ones(n, bool)
    jack = []
    for i in range(n):
        keep[i] = False
        v1 = first[keep].var(ddof=1)
        jack.append(means[keep].var(ddof=1) / v1 if v1 > 0 else ratio)
        keep[i] = True
    jack = np.array(jack)
    se = math.sqrt((n - 1) / n * ((jack - jack.mean()) ** 2).sum())
    return round_ratio(ratio - JACKKNIFE_Z * se, floor)


def round_ratio(r: float, floor: float) -> float:
    """``r`` rounded down to ``R_STEP`` and kept within [floor, R_CAP]."""
    return float(min(R_CAP, max(floor, math.floor(r / R_STEP + 1e-9) * R_STEP)))


def t_boundary(c: float, n: int) -> float:
    """The t-scale boundary with the tail probability of the normal boundary ``c`` (df = n - 1)."""
    if n < 2 or c == math.inf:
        return math.inf
    if c <= -30:
        return -math.inf
    return float(student_t.isf(norm.sf(c), n - 1))


def _t_stat(est: float | None, se: float | None, null: float) -> float | None:
    if est is None or se is None:
        return None
    if se == 0:
        return math.inf if est > null else -math.inf if est < null else 0.0
    return (est - null) / se


def _constant_bound(values: np.ndarray, null: float, above: bool) -> float | None:
    """For values with no variation: the largest probability, under a mean at most (above) or
    at least (below) ``null``, of drawing them all; None when they vary or sit on the null side."""
    if values.size == 0 or values.min() != values.max():
        return None
    d = float(values[0])
    if above and d > null:
        return ((1 + null) / (1 + d)) ** values.size
    if not above and d < null:
        return ((1 - null) / (1 - d)) ** values.size
    return None


def fixed_gate(values, threshold: float, alpha: float, min_cases: int = 5) -> bool:
    """The fixed design's gate on per-case differences (all cases, all attempts averaged):
    one-sided t test of mean > threshold at ``alpha``; with no variation, the exact bound;
    never with fewer than ``min_cases`` cases. (The sequential design's last look is this
    test at its own boundary.)"""
    x = _clean(list(values))
    if x.size < min_cases:
        return False
    exact = _constant_bound(x, threshold, above=True)
    if exact is not None:
        return exact <= alpha
    est, se = _mean_se(x)
    if se is None or se == 0:
        return False
    return (est - threshold) / se >= float(student_t.isf(alpha, x.size - 1))


def negatives_check(negatives: Mapping[str, Sequence[float | None]], alpha: float) -> tuple[bool, str]:
    """Should-not-use cases: is the pass rate with the skill credibly below the baseline?

    One-sided at ``alpha``: the t upper bound of the mean difference below 0, or, with no
    variation, the exact bound. Returns (harmed, what was seen)."""
    means = _case_means(negatives, sorted(negatives), 10**9)
    if means.size == 0:
        return False, "no should-not-use case scored: not checked"
    est, se = _mean_se(means)
    text = f"{means.size} should-not-use case(s), mean difference {est:+.3f}"
    exact = _constant_bound(means, 0.0, above=False)
    if exact is not None:
        return exact <= alpha, f"{text}, every case {est:+.3f} (exact p <= {exact:.3g})"
    if se is None or se == 0:
        return False, text
    hi = est + float(student_t.isf(alpha, means.size - 1)) * se
    return hi < 0, f"{text}, one-sided {1 - alpha:.0%} upper bound {hi:+.3f}"


def _null_check(null: Mapping[str, Sequence[float | None]], ids: Sequence[str], attempts: int, c: float,
                tail: float) -> tuple[bool, str]:
    """Is the null arm (null minus baseline) consistent with 0 at this look? Returns (ok, text)."""
    means = _case_means(null, ids, attempts)
    if means.size == 0:
        return True, "null arm: no pair scored yet"
    est, se = _mean_se(means)
    exact = _constant_bound(means, 0.0, above=est > 0) if est != 0 else None
    if se is None or se == 0:
        ok = exact is None or exact > tail
        return ok, f"null lift {est:+.3f} in every one of {means.size} case(s)"
    b = t_boundary(c, means.size)
    lo, hi = est - b * se, est + b * se
    return lo <= 0 <= hi, f"null lift {est:+.3f}, repeated interval [{max(-1, lo):+.3f}, {min(1, hi):+.3f}]"


def analyse(design: SequentialDesign, index: int, data: SkillData, history: Sequence[LookRecord]) -> LookRecord:
    """Test the gate at look ``index`` with the data so far; ``history`` holds this skill's earlier looks."""
    look = design.looks()[index]
    if len(history) != index:
        raise ValueError(f"look {index} needs the {index} earlier look(s) of this skill, got {len(history)}")
    attempts = look.pass_
    in_play = data.order[:look.n_cases]
    values = _case_means(data.diffs, in_play, attempts)
    if look.pass_ == 1:
        info = look.n_cases / design.n_cases
        r = None
    else:
        # The cases whose first attempt was scored: their first attempts and their means so far.
        both = [c for c in in_play if _clean(list(data.diffs.get(c, ()))[:1]).size]
        previous_r = history[-1].r if history and history[-1].r is not None else 1.0
        r = min(variance_ratio_lower(_case_means(data.diffs, both, 1), _case_means(data.diffs, both, attempts),
                                     1.0 / attempts), round_ratio(R_CAP * previous_r, 0.0))
        info = 1.0 / r
    spent_now = design.spent(look.spending_time)
    infos = [h.info for h in history] + [info]
    c = next_boundary(infos, [h.spent for h in history] + [spent_now], [h.boundary for h in history])
    est, se = _mean_se(values)
    n = int(values.size)
    b = t_boundary(c, n)
    stat = _t_stat(est, se, design.threshold)
    lo = hi = None
    if est is not None and se is not None:
        lo = -1.0 if not math.isfinite(b) or se * b > 2 else max(-1.0, est - b * se)
        hi = 1.0 if not math.isfinite(b) or se * b > 2 else min(1.0, est + b * se)

    # The exact betting guards, over the cases in the order they were scheduled (in pass 1
    # an e-process over the cases; at a later pass a test over the case means so far).
    caps = {name: max_capital(values, null, above=above, alpha=design.alpha, horizon=design.n_cases)
            for name, null, above in (("above", design.threshold, True), ("below", design.threshold, False),
                                      ("harm", 0.0, False))}
    cap_above, cap_below, cap_harm = caps["above"], caps["below"], caps["harm"]
    bar = 1.0 / design.alpha

    neg_harmed, neg_text = (False, None)
    if data.negatives:
        neg_harmed, neg_text = negatives_check(data.negatives, design.alpha)
    null_ok, null_text = True, None
    if data.null is not None:
        null_ok, null_text = _null_check(data.null, [*in_play, *sorted(data.negatives)], attempts, c, norm.sf(c))

    def record(decision: Decision, reason: str) -> LookRecord:
        return LookRecord(index=index, label=look.label, pass_=look.pass_, n_cases=look.n_cases, n_scored=n,
                          estimate=est, se=se, statistic=stat, info=info, spent=spent_now, boundary=c,
                          boundary_t=b if math.isfinite(b) else None, ci_lo=lo, ci_hi=hi, r=r,
                          capital_above=cap_above, capital_harm=cap_harm, capital_below=cap_below,
                          negatives=neg_text, null=null_text, decision=decision, reason=reason)

    where = f"after {look.label}"
    if neg_harmed:
        return record("harms_negatives", f"{where}: {neg_text}")
    if not null_ok:
        return record("null_arm", f"{where}: {null_text}, which excludes 0")
    if n < design.min_cases:
        if look.final:
            return record("not_shown", f"{where}: {n} scored case(s), fewer than the {design.min_cases} the gate needs")
        return record("continue", f"{where}: {n} scored case(s) so far, the gate needs {design.min_cases}")

    lift = f"lift {est:+.3f}"
    interval = f"repeated interval [{lo:+.3f}, {hi:+.3f}]" if lo is not None else "no interval (one case)"
    # Efficacy.
    exact = _constant_bound(values, design.threshold, above=True)
    if exact is not None:
        crossed = exact <= norm.sf(c)
        basis = f"every case {est:+.3f}: exact p <= {exact:.3g} against level {norm.sf(c):.3g}"
    else:
        crossed = stat is not None and stat >= b
        basis = f"t = {stat:+.2f} >= boundary {b:.2f}" if crossed else ""
    if crossed and (look.final or cap_above >= bar):
        return record("helps", f"{where}: {lift} above the threshold {design.threshold:+.3f} ({basis}; {interval})")
    # Harm and a credibly-below-threshold lift.
    if hi is not None and hi < 0 and (look.final or cap_harm >= bar):
        return record("harms", f"{where}: {lift}, {interval} lies below 0")
    if hi is not None and hi < design.threshold and (look.final or cap_below >= bar):
        return record("below_threshold", f"{where}: {lift}, {interval} lies below the threshold "
                                         f"{design.threshold:+.3f}")
    if look.final:
        return record("not_shown", f"{where} (the last planned look): {lift}, {interval} does not clear the threshold "
                                   f"{design.threshold:+.3f}")
    if look.pass_end and design.futility_z is not None and stat is not None and stat < design.futility_z:
        return record("below_threshold", f"{where}: {lift} is not above the threshold {design.threshold:+.3f} "
                                         f"(t = {stat:+.2f} < {design.futility_z:+.2f}); more attempts are unlikely "
                                         "to change that (futility stop)")
    return record("continue", f"{where}: {lift}, {interval}")


def summary_line(records: Sequence[LookRecord], design: SequentialDesign) -> str:
    """One line for a skill: when and why it stopped."""
    if not records:
        return "not analysed"
    last = records[-1]
    return f"{DECISION_TEXT[last.decision]} ({last.reason}; look {last.index + 1} of {len(design.looks())})"
