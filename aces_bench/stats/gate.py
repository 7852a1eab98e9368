"""The gate: one rule, over plain per-case data, that says whether a skill helps.

Every consumer calls ``gate_family`` on all of a study's skills at once (the report's
verdict column and summary.json, ``aces-bench report --fail-under-lift``, ``aces-bench ci``);
``gate_verdict`` is one skill's verdict at the levels the family gave it. docs/gate.md
states the rule with examples; in short, a skill passes only when all of these hold:

(a) **It helps on the cases it is for.** Per distinct positive case, ``d`` is the mean
    paired difference of ``final_pass`` over the case's attempts (with skill minus
    baseline, in [-1, 1]; a trial that timed out, errored or left no answer is a failure
    of its arm, intention to treat). The betting e-value against "mean lift <= threshold"
    (``betting.log_evalue``: a mixture of two fixed bets, valid for cases drawn at random
    at any n, every attempt counted) must reach 1 / level, p = 1 / e. The level is alpha
    adjusted by Holm over the study's skills (``gate_family``), or alpha itself when the
    family is "none". The interval beside the verdict is the same test's: its lower end is
    the largest threshold it rejects at that level.
(b) **Enough evidence.** At least ``min_cases`` distinct positive cases where the skill
    beat the baseline by more than the threshold (default 5). One pair never passes.
(c) **No harm where it should stay out.** No should-not-use case that the baseline passed
    in every attempt is failed with the skill in every attempt, or failed by a with-skill
    trial that activated the skill (a regression, named by case id); and the with-skill
    pass rate there is not credibly below the baseline (the one-sided sign-flip test of
    harm at ``harm_alpha``).
(d) **A sane instrument.** When the null arm ran, its per-case differences (null minus
    baseline) are consistent with 0: the two-sided sign-flip test does not reject at
    ``null_alpha``.

Monotone by construction: the e-value is a symmetric function of the cases that rises with
each case's value, so adding a case lost (d <= threshold) never turns a fail into a pass
and adding one won never turns a pass into a fail; the case count in (b) grows only with
wins. ``tests/stats/test_stats_gate.py`` checks both on random case sets.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
import pandas as pd

from aces_bench.core.gate import PASSING, GateSettings, Verdict
from aces_bench.records.gate import GateCases, GateVerdict, HarmCheck, NegativeCase, NullCheck
from aces_bench.stats.betting import evalue_bound, evalue_p

EXACT_MAX_N = 22
"""Up to this many cases the sign-flip p-value counts all 2^n patterns exactly; above it,
a dynamic programme over differences rounded down to ``DP_GRID`` (conservative)."""
DP_GRID = 1e-3
DP_MAX_BINS = 400_000
_TOL = 1e-9

TEST_NAME = "betting e-value for a bounded mean (one-sided, p = 1/e)"


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
    return _share_of_steps(np.floor(x / grid + 1e-6).astype(np.int64))


def _share_of_steps(steps: np.ndarray) -> float:
    """The share of subsets of the integers ``steps`` whose sum is at most 0.

    A subset's sum is ``T - neg``, where ``neg`` is the negatives' total size and ``T``
    sums ``|k|`` over a fair coin per element (a negative element is counted when it is
    left out). The elements of one size ``g`` contribute ``g`` times a Binomial(count, 1/2),
    so the distribution of ``T`` is one binomial per distinct size, convolved: linear in
    the number of values where one element at a time was quadratic (a plan simulates
    thousands of 10,000-case studies). One size (pass/fail of one attempt) is the exact
    binomial CDF; several are convolved in floating point (error far below 1e-9).
    """
    from scipy.signal import fftconvolve
    from scipy.special import bdtr
    from scipy.stats import binom

    neg = int(-steps[steps < 0].sum())
    sizes, counts = np.unique(np.abs(steps[steps != 0]), return_counts=True)
    if sizes.size == 0:
        return 1.0
    if sizes.size == 1:
        return float(bdtr(neg // int(sizes[0]), int(counts[0]), 0.5))
    dist = np.ones(1)
    for g, c in zip(sizes.tolist(), counts.tolist(), strict=True):
        kernel = np.zeros(g * c + 1)
        kernel[::g] = binom.pmf(np.arange(c + 1), c, 0.5)
        small = dist.size * kernel.size <= 4_000_000
        dist = np.convolve(dist, kernel) if small else np.clip(fftconvolve(dist, kernel), 0.0, None)
    return float(min(1.0, dist[: neg + 1].sum()))


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

    ``greater``: the share of sign patterns whose sum is at least the observed one. Exact
    for the sharp null (the two arms of a case exchangeable): the gate uses it where that
    is the question (the null arm, harm on should-not-use cases), never for "lift <= t".
    """
    d = np.asarray(d, dtype=float)
    if tail == "greater":
        return share_at_most_zero(d)
    if tail == "less":
        return share_at_most_zero(-d)
    return min(1.0, 2.0 * min(share_at_most_zero(d), share_at_most_zero(-d)))


def help_p(d: Sequence[float], threshold: float) -> float:
    """The gate's one-sided p-value of "mean lift <= threshold" (1 with no case)."""
    return evalue_p(d, threshold, above=True) if len(d) else 1.0


def harm_p(d: Sequence[float]) -> float:
    """The gate's one-sided p-value of "mean lift >= 0" on a skill's own cases (1 with no case)."""
    return evalue_p(d, 0.0, above=False) if len(d) else 1.0


# --- the family ---------------------------------------------------------------------------


def holm_levels(p_values: Sequence[float], alpha: float) -> list[float]:
    """Per hypothesis, the level Holm's step-down procedure decides it at: p <= level
    exactly for the hypotheses Holm rejects (family-wise error <= alpha for any dependence).

    Sorted p(1) <= ... <= p(k), step j is tested at alpha / (k - j + 1) until the first step
    that fails; that step's level is also every later hypothesis's (their p-values are at
    least the failing one, so none is rejected), which makes each skill's interval, read at
    its own level, agree with its verdict."""
    k = len(p_values)
    order = sorted(range(k), key=lambda i: p_values[i])
    levels = [0.0] * k
    stopped: float | None = None
    for j, i in enumerate(order):
        step = alpha / (k - j)
        if stopped is None and p_values[i] > step:
            stopped = step
        levels[i] = stopped if stopped is not None else step
    return levels


def _positive(cases: GateCases) -> list[float]:
    return [float(x) for x in cases.positive if x is not None and not math.isnan(x)]


def gate_family(cases: Sequence[GateCases], settings: GateSettings | None = None, *,
                bound: bool = True) -> list[GateVerdict]:
    """Every skill's verdict, "helps" and "harms" adjusted together across ``cases`` (one
    study's skills): Holm over the k skills with a positive case by default, or each at
    ``alpha`` with ``settings.family`` "none". The order of ``cases`` is kept."""
    s = settings or GateSettings()
    data = [_positive(c) for c in cases]
    tested = [i for i, d in enumerate(data) if d]
    k = len(tested)
    if s.family == "holm" and k > 1:
        help_levels = holm_levels([help_p(data[i], s.threshold) for i in tested], s.alpha)
        harm_levels = holm_levels([harm_p(data[i]) for i in tested], s.alpha)
        family = f"Holm over {k} skills"
    else:
        help_levels = harm_levels = [s.alpha] * k
        family = "1 skill" if k <= 1 else f"none: each of {k} skills at {s.alpha:g}, unadjusted"
    levels = dict(zip(tested, zip(help_levels, harm_levels, strict=True), strict=True))
    out = []
    for i, c in enumerate(cases):
        help_level, harm_level = levels.get(i, (s.alpha, s.alpha))  # a skill with no data: "no data" either way
        out.append(gate_verdict(c, s, level=help_level, harm_level=harm_level, family=family, bound=bound))
    return out


# --- the verdict ------------------------------------------------------------------------


def _mean(values: Sequence[float]) -> float | None:
    return float(np.mean(values)) if len(values) else None


def _fmt(p: float | None) -> str:
    if p is None:
        return "n/a"
    return f"{p:.4g}" if p >= 1e-4 else f"{p:.2e}"


def _harm_check(cases: GateCases, s: GateSettings) -> HarmCheck:
    neg = [float(x) for x in cases.negative if x is not None and not math.isnan(x)]
    fa = cases.false_activation
    p = sign_flip_p(neg, tail="less") if neg else None
    return HarmCheck(n_cases=len(neg), lift=_mean(neg), p_value=p,
                     harms=p is not None and p <= s.harm_alpha and (_mean(neg) or 0.0) < 0,
                     regressions=[r for r in (c.regression() for c in cases.negative_cases) if r],
                     pass_with=cases.negative_pass_with, pass_base=cases.negative_pass_base,
                     false_activation=(fa[0] / fa[1]) if fa and fa[1] else None,
                     false_activation_n=fa[1] if fa else None)


def _null_check(cases: GateCases, s: GateSettings) -> NullCheck:
    if cases.null is None:
        return NullCheck(run=False)
    nd = [float(x) for x in cases.null if x is not None and not math.isnan(x)]
    p = sign_flip_p(nd, tail="two-sided") if nd else None
    return NullCheck(run=True, n_cases=len(nd), lift=_mean(nd), p_value=p,
                     consistent=None if p is None else p > s.null_alpha)


def _negative_reason(harm: HarmCheck, s: GateSettings) -> str:
    rates = ""
    if harm.pass_with is not None and harm.pass_base is not None:
        rates = f" (pass rate {harm.pass_with:.0%} with the skill vs {harm.pass_base:.0%} without)"
    fa = f"; false activation {harm.false_activation:.0%}" if harm.false_activation is not None else ""
    broken = f"the baseline passed every time: {'; '.join(harm.regressions)}"
    if not harm.harms:
        return f"the skill breaks should-not-use case(s) {broken}{rates}{fa}"
    named = f"; broken where {broken}" if harm.regressions else ""
    return (f"on {harm.n_cases} should-not-use case(s) the skill lowers the pass rate by {-(harm.lift or 0.0):.3f}"
            f"{rates}: one-sided p = {_fmt(harm.p_value)} <= {s.harm_alpha:g}{fa}{named}")


def gate_verdict(cases: GateCases, settings: GateSettings | None = None, *, level: float | None = None,
                 harm_level: float | None = None, family: str = "1 skill", bound: bool = True) -> GateVerdict:
    """One skill's verdict (module docstring; docs/gate.md) at the one-sided ``level`` of
    its help test and ``harm_level`` of its own-case harm test (default ``alpha``: a skill
    alone; ``gate_family`` passes each skill's Holm levels). ``bound=False`` leaves the
    interval unset (the simulated studies of ``stats.sequential_sim`` skip its search)."""
    s = settings or GateSettings()
    level = s.alpha if level is None else level
    harm_level = s.alpha if harm_level is None else harm_level
    d = _positive(cases)
    wins = sum(x > s.threshold + _TOL for x in d)
    losses = sum(x < -_TOL for x in d)
    ties = len(d) - sum(x > _TOL for x in d) - losses
    lift = _mean(d)
    p = help_p(d, s.threshold) if d else None
    p_harm = harm_p(d) if d else None
    lo = evalue_bound(d, level, lower=True) if d and bound else None
    hi = evalue_bound(d, level, lower=False) if d and bound else None
    harm = _harm_check(cases, s)
    null = _null_check(cases, s)

    at = f"lift > {s.threshold:+.3f}"
    where = f"{level:.4g}" + (f" ({family})" if family != "1 skill" else "")
    excluded = f"; {cases.n_excluded_pairs} pair(s) excluded" if cases.n_excluded_pairs else ""
    excluded += _worst_case_note(cases, s.threshold)
    counts = f"{len(d)} case(s): {wins} won by more than {s.threshold:+.3f}, {losses} lost, {len(d) - wins - losses} other"

    def verdict(v: Verdict, reason: str) -> GateVerdict:
        return GateVerdict(skill=cases.skill, verdict=v, passed=v in PASSING, reason=reason, test=TEST_NAME,
                           p_value=p, p_harm=p_harm, level=level, harm_level=harm_level, family=family,
                           lower_bound=lo, upper_bound=hi, lift=lift, n_cases=len(d), n_wins=wins,
                           n_losses=losses, n_ties=ties, n_excluded_pairs=cases.n_excluded_pairs, settings=s,
                           negative=harm, null=null)

    if not d:
        return verdict("no data", f"no positive case has a pass decided in both arms{excluded}")
    if p_harm is not None and p_harm <= harm_level and (lift or 0.0) < 0:
        return verdict("harms", f"pass-rate lift {lift:+.3f} over {counts}; the skill makes its own cases fail "
                                f"(one-sided p = {_fmt(p_harm)} <= {harm_level:.4g}){excluded}")
    if harm.harms or harm.regressions:
        return verdict("harms should-not-use cases", _negative_reason(harm, s))
    if null.run and null.consistent is False:
        return verdict("null arm shows an effect",
                       f"the null arm (baseline run twice) differs from the baseline: lift {null.lift:+.3f} over "
                       f"{null.n_cases} case(s), two-sided p = {_fmt(null.p_value)} <= {s.null_alpha:g}; this "
                       "instrument's verdicts are not trustworthy")
    if wins < s.min_cases:
        return verdict("not enough cases", f"{counts}: the gate needs {s.min_cases} distinct cases won by more than "
                                           f"{s.threshold:+.3f} (p = {_fmt(p)}){excluded}")
    if p is not None and p <= level:
        return verdict("helps", f"pass-rate lift {lift:+.3f} over {counts}; {at}: p = {_fmt(p)} <= {where}"
                                f"{excluded}")
    return verdict("does not reach threshold", f"pass-rate lift {lift:+.3f} over {counts}; {at}: p = {_fmt(p)} > "
                                               f"{where}{excluded}")


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
    from aces_bench.records.trials import is_negative_control

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
    from aces_bench.records.trials import is_negative_control

    positive = trials.loc[~is_negative_control(trials)]
    pairs = _pairs(positive, "with_skill", "baseline")
    if not len(pairs):
        return None
    worst = pairs.assign(diff=pairs["t"].fillna(0.0) - pairs["c"].fillna(1.0))
    return float(worst.groupby(list(CASE))["diff"].mean().mean())


def skill_cases(trials: pd.DataFrame, skill: str, *, activations: pd.DataFrame | None = None) -> GateCases:
    """The gate's input for ``skill`` from a trials table (its calibration arms included)."""
    from aces_bench.records.trials import is_negative_control

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
    return GateCases(skill=str(skill), positive=positive, negative=negative,
                     negative_cases=negative_cases(neg_rows, activations), null=null,
                     negative_pass_with=rates["with_skill"], negative_pass_base=rates["baseline"],
                     false_activation=fa, n_excluded_pairs=excluded,
                     worst_case_lift=worst_case_lift(paired) if excluded else None)


def negative_cases(rows: pd.DataFrame, activations: pd.DataFrame | None = None) -> list[NegativeCase]:
    """Per should-not-use case of ``rows`` (one skill's with-skill and baseline trials on
    them): every decided pass of each arm, as the gate reads them (``_gate_pass_values``),
    and how many with-skill trials activated the skill and did not pass. ``activations``
    (``reports.build.negative_control_activations``) is matched on the pair key where it
    has one, else on the case."""
    from aces_bench.records.trials import PAIR_KEY

    if not len(rows):
        return []
    with_rows = rows.loc[rows["condition"] == "with_skill"]
    base_rows = rows.loc[rows["condition"] == "baseline"]
    with_pass = with_rows.assign(_pass=_gate_pass_values(with_rows, treated=True).to_numpy())
    base_pass = _gate_pass_values(base_rows, treated=False)
    failed = with_pass.loc[with_pass["_pass"] == 0.0]
    if activations is not None and len(activations) and len(failed):
        key = [k for k in PAIR_KEY if k in activations.columns]
        act = activations.loc[activations["activated"].fillna(False).astype(bool), key].drop_duplicates()
        failed = failed[key].astype(str).merge(act.astype(str), how="inner", on=key)
    else:
        failed = failed.iloc[0:0]
    out = []
    for case in sorted(rows["case_id"].astype(str).unique()):
        w = with_pass.loc[with_pass["case_id"].astype(str) == case, "_pass"].dropna()
        b = base_pass.loc[base_rows["case_id"].astype(str) == case].dropna()
        out.append(NegativeCase(case_id=case, with_skill=w.tolist(), baseline=b.tolist(),
                                activated_failures=int((failed["case_id"].astype(str) == case).sum())))
    return out


def gate_table(trials: pd.DataFrame, settings: GateSettings | None = None, *,
               activations: pd.DataFrame | None = None) -> list[GateVerdict]:
    """Every skill's verdict, in skill order, adjusted as one family (``gate_family``)."""
    skills = sorted(trials["skill"].astype(str).unique()) if len(trials) else []
    return gate_family([skill_cases(trials, s, activations=activations) for s in skills], settings)
