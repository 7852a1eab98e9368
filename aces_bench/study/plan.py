"""``aces-bench plan [overrides...]``: what a study will cost and what it can detect, before any trial.

The overrides are a study's (``skill=custom 'skill.paths=[...]' harness=... study.n_attempts=3``).
The study is planned and the ids of its baseline and null tasks rendered in memory
(the baseline-reuse store is keyed by them); nothing is written and nothing runs. Printed per skill and in total:

- the **fixed design**: every case, every attempt, every arm; trials to run after the
  stored baseline trials that would be reused; its cost at litellm's price for the
  model (``cost.estimate``, the price function every estimate uses);
- the **sequential design** (``study.sequential=true``): the expected trials and cost,
  from simulated studies of the design (``stats.sequential_sim``) when the skill has
  no effect and when its lift is the fixed design's smallest detectable lift;
- the **smallest detectable lift**: the true lift that passes the gate (one-sided
  ``study.gate.alpha`` against ``study.gate.threshold``) with probability ``--power``,
  for each design, found by simulated studies that ask the gate itself
  (``stats.gate.gate_verdict``: its exact tests, at least 5 cases won) of the fixed
  design's data and at the sequential design's looks; the attempts' design effect is in
  the simulated data (case effects plus attempt noise, each trial pair's difference -1,
  0 or +1).

Variance: from stored runs when there are any (the study's own output folder, or
``--runs DIR``: the per-case paired differences of their trials table give the
standard deviation of an attempt's difference and the share of it between cases, the
intra-case correlation behind the design effect), else assumed (SD 0.6, correlation
0.5) and labelled so. Simulated studies resample the stored cases when there are
enough of them, else draw from a normal model with that SD and correlation.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from aces_bench.core.errors import AcesError, ConfigError

MIN_CASES = 5  # the gate's minimum of distinct cases
DEFAULT_SD = 0.6
DEFAULT_ICC = 0.5
PLAN_SIMS = 400
SEED = 2025
# Simulated studies have at most this many cases. Past it the gate's tests are normal to
# a good approximation: a design of n cases at lift L behaves as one of SIM_MAX_CASES cases
# at threshold + (L - threshold) * sqrt(n / SIM_MAX_CASES) (the same z), and the
# sequential design's share of the fixed trials is the same. Without it the plan of a
# 10,000-case skill asked the gate 15,000 times on 10,000 values each.
SIM_MAX_CASES = 200


@dataclass(frozen=True)
class Variance:
    sd: float  # SD of one attempt's paired difference
    icc: float  # share of that variance between cases
    source: str
    cases: np.ndarray | None = None  # stored per-case attempt differences (n_cases, attempts), NaN padded

    def case_sd(self, attempts: int) -> float:
        """SD of a case mean over ``attempts`` attempts."""
        return self.sd * math.sqrt(self.icc + (1 - self.icc) / attempts)

    def design_effect(self, attempts: int) -> float:
        """Variance of the mean over cases x attempts relative to independent pairs."""
        return 1 + (attempts - 1) * self.icc


def variance_from_trials(trials, outcome: str = "outcome_failed") -> Variance | None:
    """SD and intra-case correlation of paired differences in a stored trials table."""
    import pandas as pd

    if trials is None or len(trials) == 0 or outcome not in trials:
        return None
    t = trials.loc[trials["condition"].isin(["with_skill", "baseline"]) & ~trials["negative_control"].astype(bool)]
    wide = t.pivot_table(index=["skill", "case_id", "attempt"], columns="condition", values=outcome, aggfunc="first")
    if not {"with_skill", "baseline"} <= set(wide.columns):
        return None
    d = (wide["with_skill"] - wide["baseline"]).dropna()
    if d.size < 4:
        return None
    by_case = d.groupby(level=["skill", "case_id"])
    within = by_case.var(ddof=1).dropna()
    total = float(d.var(ddof=1))
    if total <= 0:
        return None
    sw = float(within.mean()) if len(within) else None
    icc = DEFAULT_ICC if sw is None else float(min(1.0, max(0.0, 1 - sw / total)))
    rows = [g.to_numpy(float) for _, g in by_case]
    width = max(len(r) for r in rows)
    cases = np.full((len(rows), width), np.nan)
    for i, r in enumerate(rows):
        cases[i, : len(r)] = r
    how = "stored runs" + ("" if sw is not None else " (one attempt per case: correlation assumed 0.5)")
    del pd
    return Variance(sd=math.sqrt(total), icc=icc, source=how, cases=cases)


def _simulated(n: int, attempts: int, var: Variance, lift: float, sims: int, rng: np.random.Generator) -> np.ndarray:
    """(sims, n, attempts) attempt differences with mean ``lift``, clipped to [-1, 1]."""
    if var.cases is not None and var.cases.shape[0] >= 5:
        pick = rng.integers(0, var.cases.shape[0], size=(sims, n))
        pool = var.cases[pick]  # (sims, n, stored attempts)
        counts = (~np.isnan(pool)).sum(2)
        idx = (rng.random((sims, n, attempts)) * np.maximum(counts, 1)[:, :, None]).astype(int)
        ordered = np.sort(np.nan_to_num(pool, nan=np.inf), axis=2)  # stored values first
        d = np.take_along_axis(ordered, idx, axis=2)
        d = np.where(np.isfinite(d), d, 0.0)
        d = d - np.nanmean(var.cases) + lift
    else:
        tau, sw = var.sd * math.sqrt(var.icc), var.sd * math.sqrt(1 - var.icc)
        d = lift + rng.normal(0, tau, (sims, n, 1)) + rng.normal(0, sw, (sims, n, attempts))
    d = np.clip(d, -1.0, 1.0)
    # A trial pair's difference of pass/fail is -1, 0 or +1 (what the gate reads): each value
    # is rounded at random to its neighbours on that lattice, which keeps its mean.
    return np.where(rng.random(d.shape) < np.abs(d), np.sign(d), 0.0)


@dataclass(frozen=True)
class SkillPlan:
    skill: str
    n_cases: int
    n_negatives: int
    arms: int
    fixed_trials: int
    reusable: int
    mde_fixed: float | None
    seq_trials_null: float | None
    seq_trials_mde: float | None
    seq_power_at_mde: float | None
    mde_seq: float | None
    simulated_cases: int | None = None  # the cases of the simulated studies when fewer than n_cases


def plan_skill(skill: str, n: int, negatives: int, arms: int, attempts: int, var: Variance, *, threshold: float,
               alpha: float, power: float, reusable: int, round_cases: int | None,
               sims: int = PLAN_SIMS) -> SkillPlan:
    from aces_bench.records.sequential import SequentialDesign
    from aces_bench.stats.sequential_sim import sequential_passes

    fixed = (n + negatives) * arms * attempts
    if n < MIN_CASES:  # the gate never passes on fewer cases: nothing to detect, nothing to stop early
        return SkillPlan(skill, n, negatives, arms, fixed, reusable, None, float(fixed), float(fixed), None, None)
    from aces_bench.core.gate import GateSettings
    from aces_bench.stats.sequential_sim import fixed_verdicts

    gate = GateSettings(threshold=threshold, alpha=alpha)
    n_sim = min(n, SIM_MAX_CASES)
    scale = math.sqrt(n / n_sim)
    if round_cases is not None and n_sim < n:  # the same looks, on the smaller study
        round_cases = max(MIN_CASES, round(round_cases * n_sim / n))
    design = SequentialDesign(n_cases=n_sim, n_attempts=attempts, gate=gate, round_cases=round_cases)
    # Both arms of every positive case per look; calibration arms and negatives added in proportion.
    per_pair = arms / 2

    def run(lift: float) -> tuple[float, float, float]:
        """(sequential expected trials, sequential pass rate, fixed pass rate) at ``lift``: both
        designs asked through the gate itself on the same simulated studies (of ``n_sim``
        cases at the lift with the same z, see SIM_MAX_CASES)."""
        rng = np.random.default_rng([SEED, round(lift * 1e6)])
        d = _simulated(n_sim, attempts, var, threshold + (lift - threshold) * scale, sims, rng)
        f = fixed_verdicts(d, gate)
        res = sequential_passes(design, d, rng, f)
        return (float(res.trials.mean() * (n / n_sim) * per_pair + negatives * arms * attempts),
                float(res.passed.mean()), float(f.passed.mean()))

    def smallest(which: int) -> float | None:
        """The lift at which the design passes with probability ``power`` (bisection)."""
        lo, hi = max(threshold, 0.0), 0.99
        if run(hi)[which] < power:
            return None
        for _ in range(7):
            mid = (lo + hi) / 2
            if run(mid)[which] >= power:
                hi = mid
            else:
                lo = mid
        return hi

    mde = smallest(2)
    t0, _, _ = run(0.0)
    t1, p1, _ = run(mde) if mde is not None else (float(fixed), 0.0, 0.0)
    return SkillPlan(skill, n, negatives, arms, fixed, reusable, mde, t0, t1, p1, smallest(1),
                     n_sim if n_sim < n else None)


def _anything_stored(root: Path) -> bool:
    from aces_bench.run.reuse import LAYOUT

    try:
        return any(os.scandir(root / LAYOUT))
    except OSError:
        return False


def _stored_variance(paths: list[Path]) -> Variance | None:
    import pandas as pd

    from aces_bench.records.trials import read_trials_table

    frames = []
    for p in paths:
        if (p / "trials.parquet").is_file():
            try:
                frames.append(read_trials_table(p))
            except Exception:  # noqa: BLE001 - an unreadable stored run is skipped, and said so
                print(f"plan: {p}: trials table unreadable, not used", file=sys.stderr)
    return variance_from_trials(pd.concat(frames, ignore_index=True)) if frames else None


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(prog="aces-bench plan", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter,
                                epilog="example: aces-bench plan skill=custom 'skill.paths=[my-skill]' "
                                       "harness=claude-code model=claude-sonnet study.n_attempts=3")
    p.add_argument("--power", type=float, default=0.8, help="power for the smallest detectable lift (default 0.8)")
    p.add_argument("--runs", type=Path, action="append", default=[], metavar="DIR",
                   help="stored study folders to take the variance from (default: the study's own output folder)")
    p.add_argument("--sims", type=int, default=PLAN_SIMS, help=f"simulated studies per scenario (default {PLAN_SIMS})")
    p.add_argument("overrides", nargs="*", help="study overrides, as for a study")
    args = p.parse_args(argv)
    if not 0 < args.power < 1:
        raise ConfigError(f"--power must be in (0, 1), got {args.power}", where="aces-bench plan",
                          fix="e.g. --power 0.8")
    from aces_bench.config.compose import compose_spec
    from aces_bench.emitters.harbor_task import RenderCache, task_id_of
    from aces_bench.emitters.plan import plan_study
    from aces_bench.run.cost import estimate
    from aces_bench.run.reuse import ReuseKeys, read_entry, store_root
    from aces_bench.run.runner import agent_config, environment_config

    with tempfile.TemporaryDirectory(prefix="aces-plan-") as tmp:
        spec = compose_spec(args.overrides, output_dir=Path(tmp) / "study")
        s = spec.study
        own = Path("outputs") / s.name
        var = _stored_variance(args.runs or [own]) or Variance(DEFAULT_SD, DEFAULT_ICC, "assumed (no stored runs)")
        plan = plan_study(spec)
        root = store_root()
        try:
            # An empty store holds nothing to reuse: no task needs rendering for its id.
            keys = ReuseKeys(spec, agent_config(spec), environment_config(spec)) if s.reuse_baseline and _anything_stored(root) else None
        except AcesError as exc:  # an agent CLI not installed yet: nothing is stored for it either
            keys = None
            print(f"plan: stored baselines not looked up ({exc.message})", file=sys.stderr)
        arms = 2 + len(s.controls)
        per_skill: dict[str, dict] = {}
        cache = RenderCache()
        for tp in plan.tasks:
            d = per_skill.setdefault(tp.intervention_name, {"pos": set(), "neg": set(), "reusable": 0})
            (d["neg"] if tp.case.is_negative_control else d["pos"]).add(tp.case.id)
            if keys is not None and tp.condition in ("baseline", "null"):
                # The store is keyed by task id, a content address: rendered, never written.
                task_id = task_id_of(tp, spec, cache)
                d["reusable"] += sum(read_entry(root, keys.key(task_id, a)) is not None
                                     for a in range(1, s.n_attempts + 1))
    rows = [plan_skill(k, len(v["pos"]), len(v["neg"]), arms, s.n_attempts, var, threshold=s.gate.threshold,
                       alpha=s.gate.alpha, power=args.power, reusable=v["reusable"],
                       round_cases=s.sequential_round_cases, sims=args.sims)
            for k, v in sorted(per_skill.items())]
    print(f"plan: {len(rows)} skill(s), {s.n_attempts} attempt(s), {arms} arm(s) per case; gate: lift above "
          f"{s.gate.threshold:+.3f}, one-sided alpha {s.gate.alpha}, power {args.power:.0%}")
    print(f"variance: SD of an attempt's paired difference {var.sd:.3f}, intra-case correlation {var.icc:.2f} "
          f"(design effect {var.design_effect(s.n_attempts):.2f} for {s.n_attempts} attempt(s)); {var.source}")
    total_fixed = total_reuse = 0
    total_null = total_mde = 0.0
    for r in rows:
        total_fixed += r.fixed_trials
        total_reuse += r.reusable
        total_null += r.seq_trials_null
        total_mde += r.seq_trials_mde
        head = (f"  {r.skill}: {r.n_cases} case(s) + {r.n_negatives} should-not-use; fixed {r.fixed_trials} trial(s)"
                f" ({r.reusable} stored baseline/null trial(s) reusable)")
        if r.n_cases < MIN_CASES:
            print(f"{head}; fewer than {MIN_CASES} cases: the gate cannot pass whatever the lift (no lift is "
                  "detectable; add cases)")
            continue
        seq_mde = f"{r.mde_seq:+.3f}" if r.mde_seq is not None else "none below 1"
        if r.mde_fixed is None:
            print(f"{head}; sequential expected {r.seq_trials_null:.0f} (no effect); no lift below 1 passes the "
                  f"gate with probability {args.power:.0%} at this size (add cases or attempts)")
            continue
        scaled = (f" (simulated on {r.simulated_cases} cases at the lift with the same z, scaled by "
                  f"sqrt({r.n_cases}/{r.simulated_cases}))" if r.simulated_cases else "")
        print(f"{head}; sequential expected {r.seq_trials_null:.0f} (no effect), {r.seq_trials_mde:.0f} (lift at "
              f"the fixed design's detectable lift, where it passes {r.seq_power_at_mde:.0%}); smallest detectable "
              f"lift: fixed {r.mde_fixed:+.3f}, sequential {seq_mde}{scaled}")
    # Reuse applies to the sequential design's baseline trials in the same proportion.
    kept = 1 - (total_reuse / total_fixed if total_fixed else 0.0)
    for name, trials in (("fixed design", total_fixed * kept), ("sequential design, no effect", total_null * kept),
                         ("sequential design, lift at the fixed detectable lift", total_mde * kept)):
        print(f"{name}: {trials:,.0f} trial(s) to run, {_cost(spec, trials, estimate)}")
    if total_reuse:
        print(f"baseline reuse: {total_reuse} of {total_fixed} trial(s) are stored baseline/null trials with the same "
              f"inputs ({root}): not run (study.reuse_baseline=false runs them)")
    return 0


def _cost(spec, trials: float, estimate) -> str:
    if not spec.harness.requires_model:
        return f"$0 ({spec.harness.display} uses no model)"
    est = estimate(spec, int(round(trials)))
    if est.usd is None:
        return f"cost unknown ({spec.model.display} has no price in litellm's cost map)"
    return f"${est.usd:,.4f} at litellm's price for {est.price.model}"
