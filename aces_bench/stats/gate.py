"""The gate: one rule, over plain per-case data, that says whether a skill helps.

Every consumer calls ``gate_verdict``: ``aces-bench report --fail-under-lift`` (with and
without ``--lower-bound``), the report's verdict column, ``aces-bench ci`` and the
sequential runner. docs/gate.md states the rule with examples; in short, a skill passes
only when all of these hold:

(a) **It helps on the cases it is for.** Per distinct positive case, ``d`` is the mean
    paired difference of ``final_pass`` (with skill minus baseline; a trial that timed
    out, errored or left no answer is a failure of its arm, intention to treat). The
    one-sided test of "lift <= threshold" must reject at ``alpha``. At threshold 0 it is
    the exact sign-flip (randomization) test of no effect: the share of the 2^n sign
    patterns whose sum is at least the observed one (5 wins of 5 cases: 0.5^5 = 0.03125).
    Above 0 the null is "the mean difference is at most the threshold", a composite null
    a sign flip of ``d - threshold`` does not hold its level on (bounded, skewed data);
    there the p-value is the larger of the sign-flip one and the exact worst case over
    every distribution of per-case results in {-1, 0, +1} whose mean is the threshold
    (``worst_case_p``; fractional per-case results are first rounded down to that
    lattice, which can only lower the mean). Both are valid at any n; neither uses a
    variance, so zero variance is no special case.
(b) **Enough evidence.** At least ``min_cases`` distinct positive cases where the skill
    beat the baseline by more than the threshold (default 5; at alpha 0.05 no test can
    pass on fewer: 0.5^4 > 0.05). One pair never passes.
(c) **No harm where it should stay out.** On should-not-use (negative) cases, the
    with-skill pass rate is not credibly below the baseline: the one-sided sign-flip
    test of harm must not reject at ``harm_alpha`` (default 0.2: 3 of 3 negative cases
    broken gives p = 0.125 and fails). The false-activation rate is shown beside it.
(d) **A sane instrument.** When the null arm ran, its per-case differences (null minus
    baseline) are consistent with 0: the two-sided sign-flip test does not reject at
    ``null_alpha``.

Monotonic by construction: adding a case the skill fails (its difference is at most
the threshold) can never turn a fail into a pass. The sign-flip p-value cannot fall
(the subsets counted before are still counted), the worst-case p-value is the maximum over
every number of ties left out (``worst_case_p``), and the count in (b) cannot grow.
``tests/stats/test_stats_gate.py`` checks it on many random case sets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache
from typing import Literal

import numpy as np
import pandas as pd
from pydantic import BaseModel, ConfigDict, Field
from scipy.optimize import minimize_scalar

EXACT_MAX_N = 22
"""Up to this many cases the sign-flip p-value counts all 2^n patterns exactly; above it,
a dynamic programme over differences rounded down to ``DP_GRID`` (conservative)."""
DP_GRID = 1e-3
DP_MAX_BINS = 400_000
NUISANCE_GRID = 201
_TOL = 1e-9

Verdict = Literal["helps", "does not reach threshold", "harms", "harms should-not-use cases",
                  "null arm shows an effect", "not enough cases", "no data"]
PASSING: tuple[str, ...] = ("helps",)


class GateSettings(BaseModel):
    """The gate's parameters. ``family`` > 1 is a Bonferroni family (``--lower-bound``:
    each skill's help test at ``alpha / family``)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    threshold: float = Field(default=0.0, gt=-1, lt=1, description="lift the skill must credibly exceed")
    alpha: float = Field(default=0.05, gt=0, lt=1, description="one-sided level of the help test")
    min_cases: int = Field(default=5, ge=1, description="distinct positive cases won by more than the threshold")
    harm_alpha: float = Field(default=0.2, gt=0, lt=1, description="one-sided level of the harm tests")
    null_alpha: float = Field(default=0.05, gt=0, lt=1, description="two-sided level of the null-arm test")
    family: int = Field(default=1, ge=1, description="Bonferroni family size (skills gated together)")

    @property
    def level(self) -> float:
        return self.alpha / self.family


class GateCases(BaseModel):
    """What the gate reads about one skill: one value per distinct case, nothing else.

    ``positive``: per positive case, the mean paired difference of final_pass (with
    skill minus baseline, in [-1, 1]); ``negative``: the same on should-not-use cases;
    ``null``: per case, null arm minus baseline (None: the null arm did not run).
    The rest is shown with the verdict, never decides it.
    """

    model_config = ConfigDict(frozen=True)

    skill: str
    positive: list[float]
    negative: list[float] = Field(default_factory=list)
    null: list[float] | None = None
    negative_pass_with: float | None = None
    negative_pass_base: float | None = None
    false_activation: tuple[int, int] | None = Field(default=None, description="(activated, known) on negatives")
    n_excluded_pairs: int = Field(default=0, description="pairs left out: infrastructure failure after retries, "
                                  "never run, or a side with no pass decided")
    worst_case_lift: float | None = Field(default=None, description="the lift with every left-out side at its worst "
                                          "for the skill (``worst_case_lift``); None when nothing is left out")


class HarmCheck(BaseModel):
    n_cases: int
    lift: float | None
    p_value: float | None
    harms: bool
    pass_with: float | None = None
    pass_base: float | None = None
    false_activation: float | None = None
    false_activation_n: int | None = None


class NullCheck(BaseModel):
    run: bool
    n_cases: int = 0
    lift: float | None = None
    p_value: float | None = None
    consistent: bool | None = None


class GateVerdict(BaseModel):
    """One skill's verdict, with everything it rests on."""

    skill: str
    verdict: Verdict
    passed: bool
    reason: str
    test: str
    p_value: float | None
    p_harm: float | None = Field(default=None, description="one-sided sign-flip p that the skill hurts (positives)")
    lower_bound: float | None = Field(default=None, description="one-sided lower confidence bound of the lift from "
                                      "inverting the same test at the same level; None when not above 0")
    lift: float | None
    n_cases: int
    n_wins: int
    n_losses: int
    n_ties: int
    n_excluded_pairs: int
    settings: GateSettings
    negative: HarmCheck
    null: NullCheck


# --- the tests --------------------------------------------------------------------------


def _subset_sums(x: np.ndarray) -> np.ndarray:
    sums = np.zeros(1)
    for v in x:
        sums = np.concatenate([sums, sums + v])
    return sums


def share_at_most_zero(x: Sequence[float]) -> float:
    """The share of the 2^n subsets A of ``x`` whose sum is at most 0 (the empty one included).

    Equivalently the sign-flip p-value of the observed sum of ``x`` (flipping the signs
    of the elements of A lowers the sum by twice theirs), one-sided upward. Exact up to
    ``EXACT_MAX_N`` values (meet in the middle); above, a dynamic programme over the
    values rounded down to a grid, which can only count more subsets (conservative).
    """
    x = np.asarray(x, dtype=float)
    n = x.size
    if n == 0:
        return 1.0
    tol = _TOL * max(1.0, float(np.abs(x).sum()))
    if n <= EXACT_MAX_N:
        half = n // 2
        a, b = _subset_sums(x[:half]), np.sort(_subset_sums(x[half:]))
        return float(np.searchsorted(b, tol - a, side="right").sum()) / 2.0 ** n
    grid = _lattice(x) or max(DP_GRID, float(np.abs(x).sum()) / DP_MAX_BINS)
    steps = np.floor(x / grid + 1e-6).astype(np.int64)
    lo = int(steps[steps < 0].sum())
    hi = int(steps[steps > 0].sum())
    dist = np.zeros(hi - lo + 1)
    dist[-lo] = 1.0
    for k in steps:  # each element in A or not, with probability 1/2
        shifted = np.zeros_like(dist)
        if k >= 0:
            shifted[k:] = dist[: dist.size - k]
        else:
            shifted[: dist.size + k] = dist[-k:]
        dist = 0.5 * (dist + shifted)
    return float(dist[: -lo + 1].sum())


def _lattice(x: np.ndarray, max_denominator: int = 1000) -> float | None:
    """1/m for the smallest m <= ``max_denominator`` with every value a multiple of 1/m
    (means of a case's pass/fail pairs are), so the programme is exact; else None."""
    for m in range(1, max_denominator + 1):
        scaled = x * m
        if np.all(np.abs(scaled - np.round(scaled)) < 1e-6) and float(np.abs(scaled).sum()) < DP_MAX_BINS:
            return 1.0 / m
    return None


def sign_flip_p(d: Sequence[float], *, tail: Literal["greater", "less", "two-sided"] = "greater") -> float:
    """Exact sign-flip (randomization) p-value of "no effect" for per-case differences ``d``.

    ``greater``: the share of sign patterns whose sum is at least the observed one.
    """
    d = np.asarray(d, dtype=float)
    if tail == "greater":
        return share_at_most_zero(d)
    if tail == "less":
        return share_at_most_zero(-d)
    return min(1.0, 2.0 * min(share_at_most_zero(d), share_at_most_zero(-d)))


def ternary(d: Sequence[float]) -> tuple[int, int, int]:
    """(wins, ties, losses) after rounding each difference down to {-1, 0, +1}."""
    d = np.asarray(d, dtype=float)
    wins = int((d >= 1 - _TOL).sum())
    losses = int((d < -_TOL).sum())
    return wins, int(d.size) - wins - losses, losses


def _tail_table(wins: int, ties: int, losses: int, delta: float, p_minus: np.ndarray) -> np.ndarray:
    """P(S_n >= wins - losses) for n = wins + losses + t, t = 0 .. ``ties`` (rows), with the
    n results iid in {-1, 0, +1}, mean ``delta`` and P(-1) each value of ``p_minus``
    (columns): the distribution of the sum grown one result at a time."""
    p_minus = np.atleast_1d(np.asarray(p_minus, dtype=float))
    p_plus = np.clip(delta + p_minus, 0.0, 1.0)
    p_zero = np.clip(1.0 - p_plus - p_minus, 0.0, 1.0)
    base, total, s = wins + losses, wins + losses + ties, wins - losses
    dist = np.zeros((p_minus.size, 2 * total + 1))
    dist[:, total] = 1.0
    rows = []
    for n in range(1, total + 1):
        grown = dist * p_zero[:, None]
        grown[:, 1:] += dist[:, :-1] * p_plus[:, None]
        grown[:, :-1] += dist[:, 1:] * p_minus[:, None]
        dist = grown
        if n >= base:
            rows.append(dist[:, total + s:].sum(axis=1))
    if base == 0:
        rows.insert(0, np.full(p_minus.size, 1.0 if s <= 0 else 0.0))
    return np.clip(np.array(rows), 0.0, 1.0)


@lru_cache(maxsize=4096)
def _worst(wins: int, ties: int, losses: int, delta: float) -> float:
    """The sup over P(-1) of the tail, and over leaving out any number of the ties."""
    lo, hi = max(0.0, -delta), (1.0 - delta) / 2.0
    if hi < lo:
        return 1.0
    grid = np.linspace(lo, hi, NUISANCE_GRID)
    table = _tail_table(wins, ties, losses, delta, grid)
    best = float(table.max())
    # Refine the grid's best two (ties kept, P(-1)) between their neighbouring grid points.
    for flat in np.argsort(table, axis=None)[-2:]:
        t, i = np.unravel_index(flat, table.shape)
        a, b = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
        if b > a:
            r = minimize_scalar(lambda p, t=int(t): -float(_tail_table(wins, t, losses, delta, np.array([p]))[t, 0]),
                                bounds=(a, b), method="bounded", options={"xatol": 1e-9})
            best = max(best, -float(r.fun))
    return min(1.0, best)


def worst_case_p(d: Sequence[float], threshold: float) -> float:
    """Exact p-value of "mean difference <= threshold" over every distribution on {-1, 0, +1}.

    The sup, over per-case result distributions with that mean, of the probability of a
    sum at least the observed one (the nuisance, P(-1), on a grid refined around its
    maximum). Differences are rounded down to the lattice first (valid: it lowers the
    mean). The maximum over every number of ties left out, so a tie (a case both arms
    fail) never lowers it; a loss cannot (each result is at least -1).
    """
    wins, ties, losses = ternary(d)
    if wins + ties + losses == 0:
        return 1.0
    return _worst(wins, ties, losses, float(threshold))



def help_p(d: Sequence[float], threshold: float) -> tuple[float, str]:
    """The gate's one-sided p-value of "lift <= threshold", and the test's name."""
    if not len(d):
        return 1.0, "no cases"
    flip = sign_flip_p(d, tail="greater")
    if abs(threshold) < _TOL:
        return flip, "exact sign-flip test (one-sided)"
    worst = worst_case_p(d, threshold)
    if threshold > 0:
        return max(flip, worst), "exact sign-flip test and worst case over {-1, 0, +1} (one-sided)"
    return worst, "exact worst case over {-1, 0, +1} (one-sided)"


def lower_bound(d: Sequence[float], level: float) -> float | None:
    """The largest threshold >= 0 the help test still rejects at ``level`` (None: not even 0).

    ``help_p`` does not decrease as the threshold rises, so this is a one-sided lower
    confidence bound of the lift at 1 - ``level`` (to 5e-4)."""
    if not len(d) or sign_flip_p(d) > level:
        return None
    lo, hi = 0.0, 1.0 - 1e-6
    if worst_case_p(d, hi) <= level:
        return hi
    while hi - lo > 5e-4:
        mid = (lo + hi) / 2
        if worst_case_p(d, mid) <= level:  # above 0 the help p-value is max(sign flip, this)
            lo = mid
        else:
            hi = mid
    return lo


# --- the verdict ------------------------------------------------------------------------


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def _fmt(p: float | None) -> str:
    if p is None:
        return "n/a"
    return f"{p:.4g}" if p >= 1e-4 else f"{p:.2e}"


def gate_verdict(cases: GateCases, settings: GateSettings | None = None, *, bound: bool = True) -> GateVerdict:
    """The gate's verdict for one skill (module docstring; docs/gate.md). ``bound=False``
    leaves ``lower_bound`` unset (it is shown, never decides: the simulated studies of
    ``stats.sequential_sim`` skip its search)."""
    s = settings or GateSettings()
    d = [float(x) for x in cases.positive if x is not None and not math.isnan(x)]
    neg = [float(x) for x in cases.negative if x is not None and not math.isnan(x)]
    wins = sum(x > s.threshold + _TOL for x in d)
    losses = sum(x < -_TOL for x in d)
    ties = len(d) - sum(x > _TOL for x in d) - losses
    lift = _mean(d)
    p, test = help_p(d, s.threshold) if d else (None, "no cases")
    p_harm = sign_flip_p(d, tail="less") if d else None
    bound = lower_bound(d, s.level) if d and bound else None

    fa = cases.false_activation
    harm_p = sign_flip_p(neg, tail="less") if neg else None
    harm = HarmCheck(n_cases=len(neg), lift=_mean(neg), p_value=harm_p,
                     harms=harm_p is not None and harm_p <= s.harm_alpha and (_mean(neg) or 0.0) < 0,
                     pass_with=cases.negative_pass_with, pass_base=cases.negative_pass_base,
                     false_activation=(fa[0] / fa[1]) if fa and fa[1] else None,
                     false_activation_n=fa[1] if fa else None)
    null = NullCheck(run=cases.null is not None)
    if cases.null is not None:
        nd = [float(x) for x in cases.null if x is not None and not math.isnan(x)]
        null_p = sign_flip_p(nd, tail="two-sided") if nd else None
        null = NullCheck(run=True, n_cases=len(nd), lift=_mean(nd), p_value=null_p,
                         consistent=None if null_p is None else null_p > s.null_alpha)

    level = f"{s.alpha:g}" + (f"/{s.family} (Bonferroni over {s.family} skills)" if s.family > 1 else "")
    at = f"lift > {s.threshold:+.3f}"
    excluded = f"; {cases.n_excluded_pairs} pair(s) excluded" if cases.n_excluded_pairs else ""
    excluded += _worst_case_note(cases, s.threshold)
    counts = f"{len(d)} case(s): {wins} won by more than {s.threshold:+.3f}, {losses} lost, {len(d) - wins - losses} other"

    def verdict(v: Verdict, reason: str) -> GateVerdict:
        return GateVerdict(skill=cases.skill, verdict=v, passed=v in PASSING, reason=reason, test=test, p_value=p,
                           p_harm=p_harm, lower_bound=bound, lift=lift, n_cases=len(d), n_wins=wins, n_losses=losses,
                           n_ties=ties, n_excluded_pairs=cases.n_excluded_pairs, settings=s, negative=harm, null=null)

    if not d:
        return verdict("no data", f"no positive case has a pass decided in both arms{excluded}")
    if p_harm is not None and p_harm <= s.alpha and (lift or 0.0) < 0:
        return verdict("harms", f"pass-rate lift {lift:+.3f} over {counts}; the skill makes its own cases fail "
                                f"(one-sided p = {_fmt(p_harm)} <= {s.alpha:g}){excluded}")
    if harm.harms:
        rates = ""
        if harm.pass_with is not None and harm.pass_base is not None:
            rates = f" (pass rate {harm.pass_with:.0%} with the skill vs {harm.pass_base:.0%} without)"
        fa_text = f"; false activation {harm.false_activation:.0%}" if harm.false_activation is not None else ""
        return verdict("harms should-not-use cases",
                       f"on {harm.n_cases} should-not-use case(s) the skill lowers the pass rate by "
                       f"{-(harm.lift or 0.0):.3f}{rates}: one-sided p = {_fmt(harm_p)} <= {s.harm_alpha:g}{fa_text}")
    if null.run and null.consistent is False:
        return verdict("null arm shows an effect",
                       f"the null arm (baseline run twice) differs from the baseline: lift {null.lift:+.3f} over "
                       f"{null.n_cases} case(s), two-sided p = {_fmt(null.p_value)} <= {s.null_alpha:g}; this "
                       "instrument's verdicts are not trustworthy")
    if wins < s.min_cases:
        return verdict("not enough cases", f"{counts}: the gate needs {s.min_cases} distinct cases won by more than "
                                           f"{s.threshold:+.3f} (p = {_fmt(p)}){excluded}")
    if p is not None and p <= s.level:
        return verdict("helps", f"pass-rate lift {lift:+.3f} over {counts}; {at}: p = {_fmt(p)} <= {level}"
                                f"{excluded}")
    return verdict("does not reach threshold", f"pass-rate lift {lift:+.3f} over {counts}; {at}: p = {_fmt(p)} > "
                                               f"{level}{excluded}")


def _worst_case_note(cases: GateCases, threshold: float) -> str:
    """What a verdict's reason says when the excluded pairs, each at its worst for the skill,
    would put the lift at or below the threshold."""
    w = cases.worst_case_lift
    if not cases.n_excluded_pairs or w is None or w > threshold + _TOL:
        return ""
    return (f" (were every excluded side the worst for the skill the lift would be {w:+.3f}, not above "
            f"{threshold:+.3f})")


# --- from a trials table ------------------------------------------------------------------

CASE = ("skill", "case_id")
PASS = "final_pass"


def _pass_values(frame: pd.DataFrame) -> pd.Series:
    if PASS not in frame.columns:
        return pd.Series(np.nan, index=frame.index)
    return frame[PASS].map(lambda v: np.nan if v is None or (isinstance(v, float) and math.isnan(v)) else float(bool(v)))


def _finished(frame: pd.DataFrame) -> pd.Series:
    """Trials that ran to the end (``trial_class`` finished; where it is not set: status ok)."""
    ok = frame["status"].astype(str).eq("ok") if "status" in frame.columns else pd.Series(False, index=frame.index)
    if "trial_class" not in frame.columns:
        return ok
    cls = frame["trial_class"]
    return cls.astype(str).eq("finished").where(cls.notna(), ok)


def _skill_reachable(frame: pd.DataFrame) -> pd.Series:
    """Excluded trials whose failure came while the agent ran: a model provider's error
    still failing after the retries (``aces_bench.run.collect.provider_failure``)."""
    from aces_bench.run.collect import provider_failure

    if "status" not in frame.columns:
        return pd.Series(False, index=frame.index)
    causes = frame["failure_cause"] if "failure_cause" in frame.columns else pd.Series(None, index=frame.index)
    return pd.Series([provider_failure(str(s), None if pd.isna(c) else str(c))
                      for s, c in zip(frame["status"], causes, strict=True)], index=frame.index, dtype=bool)


def _gate_pass_values(frame: pd.DataFrame, *, treated: bool) -> pd.Series:
    """The pass the gate reads for one side. On the treated (with-skill) side, a side the
    skill could have reached counts as not passed instead of leaving its case: a trial that
    finished with no pass decided (a judge that abstained, say on a flood of candidates), and
    one excluded for a model provider's error after its agent started (a skill in the sandbox
    can fake one). What the skill made its trial look like must not take its case out of the
    gate. A with-skill trial not shown its target is already its arm's failure (not passed)
    and a baseline that saw the target already counts as it ran (graders/outcome.py). Other
    excluded trials (infrastructure before the agent started, never run) stay out, as in the
    headline."""
    v = _pass_values(frame)
    if treated:
        v = v.mask(v.isna() & (_finished(frame) | _skill_reachable(frame)), 0.0)
    return v


def _pairs(trials: pd.DataFrame, treatment: str, control: str) -> pd.DataFrame:
    """Every pair key of the two conditions with the pass each side reads (``t``, ``c``; NaN
    where a side is excluded, undecided or missing)."""
    from aces_bench.records.trials import PAIR_KEY

    key = list(PAIR_KEY)
    sides = []
    for condition, name in ((treatment, "t"), (control, "c")):
        part = trials.loc[trials["condition"] == condition]
        values = _gate_pass_values(part, treated=condition == "with_skill")
        sides.append(part[key].assign(**{name: values.to_numpy()}))
    return sides[0].merge(sides[1], on=key, how="outer")


def case_differences(trials: pd.DataFrame, treatment: str = "with_skill", control: str = "baseline",
                     ) -> tuple[pd.DataFrame, int]:
    """Per distinct (skill, case): the mean paired difference of final_pass, treatment minus
    control, over the case's pairs (attempts, harnesses, models, modes) decided on both
    sides; and how many pairs were left out (a side excluded, undecided or missing). A
    with-skill side the skill could have reached counts as not passed (``_gate_pass_values``).

    Columns: skill, case_id, negative_control, d, n_pairs.
    """
    from aces_bench.stats.controls import is_negative_control

    pairs = _pairs(trials, treatment, control)
    neg = trials.loc[is_negative_control(trials), list(CASE)].drop_duplicates()
    neg_keys = set(map(tuple, neg.to_numpy().tolist()))
    decided = pairs.dropna(subset=["t", "c"])
    excluded = len(pairs) - len(decided)
    out = (decided.assign(diff=decided["t"] - decided["c"]).groupby(list(CASE), sort=True)
           .agg(d=("diff", "mean"), n_pairs=("diff", "size")).reset_index())
    out["negative_control"] = [tuple(k) in neg_keys for k in out[list(CASE)].to_numpy().tolist()]
    return out, excluded


def worst_case_lift(trials: pd.DataFrame) -> float | None:
    """The mean over positive cases of the per-case paired difference with every pair's
    missing side at its worst for the skill (a with-skill side not passed, a baseline side
    passed); None without pairs. Equal to the gate's lift when nothing is left out."""
    from aces_bench.stats.controls import is_negative_control

    positive = trials.loc[~is_negative_control(trials)]
    pairs = _pairs(positive, "with_skill", "baseline")
    if not len(pairs):
        return None
    worst = pairs.assign(diff=pairs["t"].fillna(0.0) - pairs["c"].fillna(1.0))
    return float(worst.groupby(list(CASE))["diff"].mean().mean())


def skill_cases(trials: pd.DataFrame, skill: str, *, activations: pd.DataFrame | None = None) -> GateCases:
    """The gate's input for ``skill`` from a trials table (its calibration arms included)."""
    from aces_bench.stats.controls import is_negative_control

    rows = trials.loc[trials["skill"].astype(str) == str(skill)]
    paired = rows.loc[rows["condition"].isin(("with_skill", "baseline"))]
    diffs, excluded = case_differences(paired)
    positive = diffs.loc[~diffs["negative_control"], "d"].tolist()
    negative = diffs.loc[diffs["negative_control"], "d"].tolist()
    null = None
    if (rows["condition"] == "null").any():
        nd, _ = case_differences(rows.loc[rows["condition"].isin(("null", "baseline"))], "null", "baseline")
        null = nd.loc[~nd["negative_control"], "d"].tolist()
    neg_rows = paired.loc[is_negative_control(paired)]
    rates = {}
    for condition in ("with_skill", "baseline"):
        v = _gate_pass_values(neg_rows.loc[neg_rows["condition"] == condition],
                              treated=condition == "with_skill").dropna()
        rates[condition] = float(v.mean()) if len(v) else None
    fa = None
    if activations is not None and len(activations):
        a = activations.loc[activations["skill"].astype(str) == str(skill), "activated"].dropna()
        if len(a):
            fa = (int(a.astype(bool).sum()), int(len(a)))
    return GateCases(skill=str(skill), positive=positive, negative=negative, null=null,
                     negative_pass_with=rates["with_skill"], negative_pass_base=rates["baseline"],
                     false_activation=fa, n_excluded_pairs=excluded,
                     worst_case_lift=worst_case_lift(paired) if excluded else None)


def gate_table(trials: pd.DataFrame, settings: GateSettings | None = None, *,
               activations: pd.DataFrame | None = None) -> list[GateVerdict]:
    """Every skill's verdict, in skill order."""
    skills = sorted(trials["skill"].astype(str).unique()) if len(trials) else []
    return [gate_verdict(skill_cases(trials, s, activations=activations), settings) for s in skills]
