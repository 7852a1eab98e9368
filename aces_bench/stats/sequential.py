"""The gate, asked after every round: when a sequential study may stop a skill, and with what verdict.

The rule is the gate's, one rule (``aces_bench.stats.gate.gate_verdict``, docs/gate.md):
the same per-case data (``GateCases``: per distinct case the mean paired difference of
``final_pass``, an arm's failures counted as not passed), the same verdicts and the same
conditions (lift credibly above the threshold by the gate's exact one-sided test, at
least ``min_cases`` cases won, no harm on should-not-use cases, the null arm consistent
with 0). What this module adds is *when* that rule may be read before every trial ran.

A sequential study runs a skill's positive cases in a seeded random order, **cases
first**: pass 1 runs one attempt of every case, in rounds of ``round_cases`` cases;
pass a (a = 2..n_attempts) then runs attempt a of every case as one round. After each
round (a *look*) the gate is asked on the data so far:

- **The last look** (every planned trial ran: the fixed design's data) gives the gate's
  verdict on it, except that "helps" needs the help test's p-value at most the last
  look's nominal level instead of alpha (the rest of alpha was spent at earlier looks);
  with HSD spending that level is close to alpha.
- **"helps" early** needs the gate's verdict on the data so far to be "helps" with its
  p-value at most the look's nominal level (a group-sequential boundary from an
  alpha-spending function fixed in advance: Lan-DeMets, Hwang-Shih-DeCani gamma = -4 by
  default, ``boundaries``), **and** the study's one betting e-process against "lift <=
  threshold" (``sequential_evidence``: the passes' processes averaged) to have reached
  1 / alpha, **and** the look's anytime-valid interval (the same e-processes') to lie above
  the threshold. The boundaries make the looks share alpha (under the normal
  approximation of the joint law of the looks); the e-process is anytime-valid with no
  approximation (Ville's inequality) over every look of every pass at once, so an early
  pass is never made on evidence a bounded, skewed or tie-heavy sample only seems to give.
- **"harms" early**: the gate's verdict on the data so far is "harms", the study's
  e-process against "lift >= 0" reached 1 / alpha and the interval lies below 0. While
  the gate reads "harms" without that, no futility stop is made (it would print "harms"
  beside an interval holding 0): the e-process or the last look decides.
- **"harms should-not-use cases"**: should-not-use cases run whole (every attempt) in
  the skill's first round, so the gate's check of them is made on complete data at the
  first look, exactly as the fixed design makes it.
- **"does not reach threshold" early** (futility, non-binding: the efficacy boundaries
  ignore it, so it only lowers the error of passing): the repeated confidence interval
  lies below the threshold with the e-process against "lift >= threshold" agreeing, or, at
  the end of a pass that is not the last and at every look of pass 1 once
  ``futility_from`` of the cases ran, t is below the futility boundary
  (``SequentialDesign.futility_bound``): the larger of ``futility_z`` (0: the estimate is
  not above the threshold) and the conditional-power boundary, where the chance of
  passing at the end if the trend so far continues is below ``futility_power``; it rises
  with information. ``futility_from`` 0.5 and ``futility_power`` 0.02 were chosen on
  SkillsBench simulations with the tuning seed 1025; the bench reports the held-out seed 25.
- A null arm that moves stops nothing early; the gate reads it at the last look (an
  early "helps" needs it consistent with 0 on the data so far, as the gate does).

The joint law of the looks needs their information ratios. Within pass 1 they are exact
(cases are exchangeable: I_j / I_k = n_j / n_k). A later pass adds attempts to the same
cases; its information relative to the end of pass 1 is 1 / r_a with r_a =
Var(case means over a attempts) / Var(first attempts), estimated and replaced by a
one-sided 95% jackknife lower bound (never below 1 / a): a lower r means less correlated
looks, which by Slepian's inequality can only raise the boundary (conservative). The
spending time of a look counts cases before attempts: pass 1 is worth
``rho + (1 - rho) / A`` of the study (A attempts, rho = ``design_icc``).

**The interval a look reports** is the one its decision was read from
(``decided_interval``): the anytime-valid interval of the study's e-processes
(``sequential_evidence.merged_interval``: every lift neither merged process rejects at
level alpha, over the cases in their scheduled order; it holds the lift at every look at
once with probability at least 1 - 2 alpha, however the study stopped), except for a
"helps" at the last look, decided by the gate's own test at the look's nominal level and
shown with that test inverted at that level ("lift > x"). The repeated confidence
interval of the boundaries (estimate +- b se; Jennison & Turnbull) is kept beside it; the
futility rule reads it.

Everything here is a pure function of per-case data: where it comes from is the
pipeline's business (``aces_bench.study.sequential``, through the gate's own extraction,
``gate.case_differences`` and ``gate.skill_cases``).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field, model_validator

from aces_bench.stats.boundaries import SPENDING_FUNCTIONS, next_boundary, spent
from aces_bench.stats.gate import PASSING, GateCases, GateSettings, GateVerdict, Verdict, gate_verdict
from aces_bench.stats.sequential_evidence import merged_interval, merged_max

CONTINUE = "continue"
Decision = Verdict | Literal["continue"]
"""A look's decision: the gate's verdict vocabulary, or "continue" (undecided)."""
DECISION_TEXT = {
    "continue": "undecided: continues",
    "helps": "helps",
    "harms": "harms",
    "harms should-not-use cases": "harms should-not-use cases",
    "null arm shows an effect": "null arm shows an effect",
    "not enough cases": "not enough cases",
    "does not reach threshold": "does not reach threshold",
    "no data": "no data",
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
    gate: GateSettings = Field(default_factory=GateSettings, description="the gate's settings (study.gate)")
    round_cases: int | None = Field(default=None, ge=1, description="cases per round of pass 1 (None: automatic)")
    spending: Literal["hsd", "obf", "pocock"] = "hsd"
    design_icc: float = Field(default=0.5, ge=0.0, le=1.0)
    futility_z: float | None = 0.0
    futility_power: float | None = Field(
        default=0.02, gt=0.0, lt=1.0,
        description="a look that may stop for futility stops when the conditional power under the current trend "
                    "is below this (``futility_bound``; None: only t < ``futility_z``); 0.02 was chosen on seed 1025 "
                    "(the largest of 0.02, 0.03, 0.05, 0.075, 0.1 keeping the published-effect power at least 96% "
                    "of the fixed design's), not on the reported seed 25")
    futility_from: float = Field(default=0.5, gt=0.0, le=1.0, description="pass 1's looks from this share of the "
                                 "cases on may stop for futility too (1: only the ends of passes); 0.5 was chosen "
                                 "on SkillsBench simulations under another seed than the one reported")

    def futility_at(self, look: Look) -> bool:
        """Whether ``look`` (not the last) may stop for futility."""
        if (self.futility_z is None and self.futility_power is None) or look.final:
            return False
        return look.pass_end or (look.pass_ == 1 and look.n_cases >= self.futility_from * self.n_cases)

    def futility_bound(self, look: Look) -> float | None:
        """The futility boundary of ``look`` on the t scale (stop when t < it), None where none.

        The larger of ``futility_z`` and, with ``futility_power``, the conditional-power
        boundary under the current trend (stochastic curtailment, Lan, Simon & Halperin 1982;
        Jennison & Turnbull 2000, ch. 10): with B-values, s the look's spending time and
        c = z_{1 - alpha} the final boundary, the conditional power of a study at z(s) if
        the drift it shows so far continues is Phi((z / sqrt(s) - c) / sqrt(1 - s)); it is
        below ``futility_power`` exactly when z < sqrt(s) (c + sqrt(1 - s) z_gamma), a
        boundary that rises with information."""
        from scipy.stats import norm

        if not self.futility_at(look):
            return None
        bounds = [] if self.futility_z is None else [self.futility_z]
        if self.futility_power is not None:
            s = min(look.spending_time, 1.0)
            c = float(norm.isf(self.alpha))
            bounds.append(math.sqrt(s) * (c + math.sqrt(1.0 - s) * float(norm.ppf(self.futility_power))))
        return max(bounds)

    @model_validator(mode="after")
    def _known_spending(self):
        if self.spending not in SPENDING_FUNCTIONS:
            raise ValueError(f"spending must be one of {SPENDING_FUNCTIONS}")
        if self.gate.alpha >= 0.5:
            raise ValueError("the gate's alpha must be below 0.5 for a sequential design")
        return self

    @property
    def threshold(self) -> float:
        return self.gate.threshold

    @property
    def alpha(self) -> float:
        return self.gate.level

    @property
    def min_cases(self) -> int:
        return self.gate.min_cases

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
    nominal: float = Field(description="the look's one-sided nominal level: norm.sf(boundary)")
    boundary_t: float | None
    ci_lo: float | None = Field(description="repeated confidence interval (boundaries), lower end")
    ci_hi: float | None
    av_lo: float | None = Field(default=None, description="anytime-valid interval (the study's one betting "
                                "e-process, ``sequential_evidence``), lower end")
    av_hi: float | None = None
    decided_lo: float | None = Field(default=None, description="the interval the decision was read from, lower end "
                                     "(``decided_by`` says which)")
    decided_hi: float | None = None
    decided_by: str | None = Field(default=None, description="which interval decided: the anytime-valid one, or "
                                   "the last look's test at its nominal level")
    r: float | None = None
    capital_above: float | None = None
    capital_harm: float | None = None
    capital_below: float | None = None
    level: float | None = Field(default=None, description="the skill's one-sided level at this look: alpha, or "
                                "its Holm level in the study's family (``sequential_family``)")
    family: str = Field(default="1 skill", description="the family the level was adjusted over, in words")
    gate: GateVerdict | None = Field(default=None, description="the gate's verdict on the data so far")
    decision: Decision
    reason: str

    @property
    def stopped(self) -> bool:
        return self.decision != CONTINUE

    @property
    def passed(self) -> bool:
        return self.decision in PASSING


@dataclass
class LookData:
    """A skill's data at a look, all of it from the gate's own extraction.

    ``cases``: what the gate reads (``gate.skill_cases`` over the trials graded so far).
    ``means`` and ``firsts``: the same positive cases' values in scheduled order, for the
    cases in play at this look: the case's mean difference so far, and its first attempt's
    (None: not scored in both arms). ``by_pass``: per pass so far (1..the look's pass),
    the same cases' mean difference over attempts 1..that pass; None reads it from
    ``firsts`` and ``means`` (enough up to pass 2).
    """

    cases: GateCases
    means: Sequence[float | None]
    firsts: Sequence[float | None]
    by_pass: Sequence[Sequence[float | None]] | None = None

    def passes(self, pass_: int) -> list[np.ndarray]:
        """Per pass 1..``pass_``, the case values in scheduled order (NaN: not scored)."""
        rows = self.by_pass if self.by_pass is not None else (
            [self.means] if pass_ == 1 else [self.firsts, self.means] if pass_ == 2 else None)
        if rows is None or len(rows) != pass_:
            raise ValueError(f"pass {pass_} needs the case means of every pass so far (by_pass), got "
                             f"{'none' if rows is None else len(rows)}")
        return [np.array([np.nan if v is None else float(v) for v in row], dtype=float) for row in rows]


def _clean(values: Sequence[float | None]) -> np.ndarray:
    a = np.array([np.nan if v is None else float(v) for v in values], dtype=float)
    return a[~np.isnan(a)]


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
    from scipy.stats import norm
    from scipy.stats import t as student_t

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


def at_level(design: SequentialDesign, level: float | None) -> SequentialDesign:
    """``design`` with its spending function run at ``level`` (a Holm level) instead of alpha."""
    if level is None or abs(level - design.alpha) <= 1e-15:
        return design
    return design.model_copy(update={"gate": design.gate.model_copy(update={"alpha": level})})


def look_boundary(design: SequentialDesign, index: int, r: float | None,
                  history: Sequence[LookRecord]) -> tuple[float, float, float]:
    """(information, alpha spent by this look, normal-scale boundary) of look ``index``.

    The earlier looks' boundaries are those of ``design``'s own level: when it differs from
    the level they were used at (a Holm level that rose as other skills of the family were
    decided "helps"), the whole path is recomputed at it, as if the design had run at that
    level from its first look (Maurer & Bretz 2013; earlier looks are not re-tested)."""
    look = design.looks()[index]
    info = look.n_cases / design.n_cases if look.pass_ == 1 else 1.0 / float(r)
    infos = [h.info for h in history] + [info]
    spents = [design.spent(lk.spending_time) for lk in design.looks()[: index + 1]]
    same = all(abs(h.spent - s) <= 1e-15 for h, s in zip(history, spents, strict=False))
    previous = [h.boundary for h in history] if same else []
    if not same:
        for j in range(index):
            previous.append(next_boundary(infos[: j + 1], spents[: j + 1], previous))
    c = next_boundary(infos, spents, previous)
    return info, spents[-1], c


def final_verdict(v: GateVerdict, nominal: float) -> tuple[Decision, str]:
    """The last look's decision: the gate's verdict, its help test at the look's nominal level."""
    if v.verdict == "helps" and (v.p_value is None or v.p_value > nominal):
        return "does not reach threshold", (f"{v.reason}; but the sequential design's last look passes only at "
                                            f"p <= {nominal:.4g} (the rest of alpha was spent at earlier looks)")
    return v.verdict, v.reason


def interim_decision(v: GateVerdict, nominal: float, caps: dict[str, float], bar: float | dict[str, float], *, hi: float | None,
                     threshold: float, stat: float | None, futility_z: float | None,
                     pass_end: bool = True, av: tuple[float, float] = (-1.0, 1.0)) -> Decision:
    """An earlier look's decision from the gate's verdict on the data so far and the guards
    (module docstring); ``futility_z``: set when this look may stop for futility. ``caps``:
    the maxima of the study's merged e-processes (``sequential_evidence``), ``av`` their
    interval: an early "helps" needs its lower end above the threshold and an early
    "harms" its upper end below 0, so the interval shown beside an early verdict is the
    one it was decided from. ``bar``: the value each e-process must reach, 1 / level (per
    direction, "above", "harm", "below", when a family's Holm levels differ from alpha). Before the end of a pass, a futility stop waits while the
    gate's harm test leans to harm (p at most ``harm_alpha``), so a harmful skill reads
    "harms" as the fixed design would say."""
    bars = bar if isinstance(bar, dict) else dict.fromkeys(("above", "harm", "below"), bar)
    if v.verdict == "harms should-not-use cases":
        return v.verdict  # should-not-use cases all ran in the first round: complete data
    if v.verdict == "helps" and v.p_value is not None and v.p_value <= nominal and caps["above"] >= bars["above"] \
            and av[0] > threshold:
        return "helps"
    if v.verdict == "harms" and caps["harm"] >= bars["harm"] and av[1] < 0.0:
        return "harms"
    if v.n_cases < v.settings.min_cases:
        return CONTINUE  # too few cases scored to stop for futility
    if v.verdict == "harms" or (v.p_harm is not None and v.p_harm <= v.settings.alpha and (v.lift or 0.0) < 0):
        # The gate reads harm on the data so far (at alpha: in a family, the skill's Holm
        # level may not show it yet) but the e-process has not shown it (above): a futility
        # stop would print "harms" beside an interval that holds 0, or a milder failing word
        # than the data will give. The last look (every planned trial, the fixed design's
        # data) or the e-process decides it.
        return CONTINUE
    if hi is not None and hi < threshold and caps["below"] >= bars["below"]:
        return futility_word(v.verdict)
    if futility_z is not None and stat is not None and stat < futility_z:
        if not pass_end and v.p_harm is not None and v.p_harm <= v.settings.harm_alpha:
            return CONTINUE  # a sign of harm mid-pass: the pass's end says which failure it is
        return futility_word(v.verdict)
    return CONTINUE


def decided_interval(decision: Decision, final: bool, cases: GateCases, design: SequentialDesign, nominal: float,
                     av: tuple[float, float] | None) -> tuple[float | None, float | None, str]:
    """The interval a look's decision was read from, and its name.

    Early decisions and an undecided look read the anytime-valid interval (the study's
    one e-process). The last look decides "helps" by the gate's own test at the look's
    nominal level, so its interval is that test inverted at that level: the gate's
    one-sided lower bound (``GateVerdict.lower_bound``) computed at ``nominal``, never below
    the threshold the test rejected; any other last-look verdict is shown with the
    anytime-valid interval, which cannot contradict a failure to pass."""
    if final and decision == "helps":
        at = gate_verdict(cases, design.gate, level=min(nominal, 0.5))
        lo = max(design.threshold, at.lower_bound if at.lower_bound is not None else design.threshold)
        return lo, 1.0, f"one-sided: the last look's test at p <= {nominal:.4g}"
    if av is None:
        return None, None, "no case scored"
    return av[0], av[1], "anytime-valid (one betting e-process over the passes)"


def futility_word(verdict: str) -> Decision:
    """The verdict a futility stop reports: the gate's own on the data so far when it is a
    failing one ("not enough cases", say), else "does not reach threshold". (A futility stop
    is never made while the gate reads "harms": ``interim_decision`` waits for the e-process
    or the last look, so "harms" is never printed beside an interval that holds 0.)"""
    return "does not reach threshold" if verdict in PASSING else verdict  # type: ignore[return-value]


def analyse(design: SequentialDesign, index: int, data: LookData, history: Sequence[LookRecord], *,
            level: float | None = None, harm_level: float | None = None, family: str = "1 skill") -> LookRecord:
    """Ask the gate at look ``index`` with the data so far; ``history`` holds this skill's earlier looks.

    ``level`` and ``harm_level``: the skill's one-sided levels for "helps" and "harms" at
    this look (default alpha; in a family of skills their Holm levels, ``sequential_family``),
    at which the boundaries are spent, the gate is read and the e-process must reach
    1 / level; ``family`` names the family in the verdict."""
    from scipy.stats import norm

    level = design.alpha if level is None else level
    harm_level = design.alpha if harm_level is None else harm_level
    run_at = at_level(design, level)
    look = design.looks()[index]
    if len(history) != index:
        raise ValueError(f"look {index} needs the {index} earlier look(s) of this skill, got {len(history)}")
    passes = data.passes(look.pass_)
    values = _clean(data.means)
    r = None
    if look.pass_ > 1:
        # The cases whose first attempt was scored: their first attempts and their means so far.
        both = ~np.isnan(passes[0]) & ~np.isnan(passes[-1])
        previous_r = history[-1].r if history and history[-1].r is not None else 1.0
        r = min(variance_ratio_lower(passes[0][both], passes[-1][both], 1.0 / look.pass_),
                round_ratio(R_CAP * previous_r, 0.0))
    info, spent_now, c = look_boundary(run_at, index, r, history)
    nominal = float(norm.sf(c))
    est, se = _mean_se(values)
    n = int(values.size)
    b = t_boundary(c, n)
    stat = _t_stat(est, se, design.threshold)
    lo = hi = None
    if est is not None and se is not None:
        lo = -1.0 if not math.isfinite(b) or se * b > 2 else max(-1.0, est - b * se)
        hi = 1.0 if not math.isfinite(b) or se * b > 2 else min(1.0, est + b * se)
    # The study's one e-process per direction (the passes' processes averaged, over the
    # cases in their scheduled order) and its interval: ``sequential_evidence``.
    alpha = design.alpha
    kw = {"alpha": alpha, "n_attempts": design.n_attempts, "horizon": design.n_cases}
    caps = {name: merged_max(passes, null, above=above, **kw)
            for name, null, above in (("above", design.threshold, True), ("below", design.threshold, False),
                                      ("harm", 0.0, False))}
    av = merged_interval(passes, include=(design.threshold, 0.0), **kw) if n else None
    v = gate_verdict(data.cases, design.gate, level=level, harm_level=harm_level, family=family)
    if look.final:
        decision, reason = final_verdict(v, nominal)
    else:
        decision = interim_decision(v, nominal, caps, {"above": 1.0 / level, "harm": 1.0 / harm_level,
                                                       "below": 1.0 / alpha}, hi=hi, threshold=design.threshold, stat=stat,
                                    futility_z=design.futility_bound(look), pass_end=look.pass_end,
                                    av=av or (-1.0, 1.0))
        reason = v.reason
        if decision == CONTINUE:
            reason = f"{v.verdict} on the data so far ({v.reason}); undecided"
        elif decision not in ("helps", "harms", "harms should-not-use cases"):
            reason = (f"futility stop: lift {est:+.3f} is not credibly above the threshold {design.threshold:+.3f} "
                      f"and more trials are unlikely to change that (the gate on the data so far: {v.reason})")
    d_lo, d_hi, d_by = decided_interval(decision, look.final, data.cases, design, nominal, av)
    where = f"after {look.label}"
    interval_text = f"; {interval_phrase(d_lo, d_hi, d_by)}" if d_lo is not None else ""
    return LookRecord(index=index, label=look.label, pass_=look.pass_, n_cases=look.n_cases, n_scored=n,
                      estimate=est, se=se, statistic=stat, info=info, spent=spent_now, boundary=c, nominal=nominal,
                      boundary_t=b if math.isfinite(b) else None, ci_lo=lo, ci_hi=hi,
                      av_lo=av[0] if av else None, av_hi=av[1] if av else None, r=r,
                      decided_lo=d_lo, decided_hi=d_hi, decided_by=d_by,
                      capital_above=caps["above"], capital_harm=caps["harm"], capital_below=caps["below"],
                      level=level, family=family, gate=v, decision=decision, reason=f"{where}: {reason}{interval_text}")


def interval_phrase(lo: float, hi: float, by: str) -> str:
    """How a decided interval reads: a one-sided bound as "lift > x", else "[lo, hi]"."""
    if by.startswith("one-sided"):
        return f"lift > {lo:+.3f} ({by})"
    return f"{by.split(' (')[0]} interval [{lo:+.3f}, {hi:+.3f}]"


def summary_line(records: Sequence[LookRecord], design: SequentialDesign) -> str:
    """One line for a skill: when and why it stopped."""
    if not records:
        return "not analysed"
    last = records[-1]
    return f"{DECISION_TEXT[last.decision]} ({last.reason}; look {last.index + 1} of {len(design.looks())})"
