"""The known-effect skills (helpful, useless, harmful) run twice with the reference agent:
once as a sequential study (``study.sequential=true``) and once as the fixed design,
the same cases and attempts. The sequential verdicts come from its ledger; the fixed
verdicts from ``stats.sequential.fixed_gate`` on the fixed run's case means (failures
counted as losses). Baseline reuse is off in both, so the trial counts compare the designs.

Used by ``tests/bench/bench_sequential.py --live`` and ``tests/sequential/``.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from aces_bench.config.compose import compose_spec
from aces_bench.pipeline import run_study
from aces_bench.stats.sequential import fixed_gate
from aces_bench.stats.sequential_ledger import LEDGER, Ledger

HERE = Path(__file__).resolve().parent
SKILLS = [HERE / "skills" / name for name in ("ledger-verifier", "line-count-tips", "quick-line-count")]
EXPECTED = {"ledger-verifier": True, "line-count-tips": False, "quick-line-count": False}


@dataclass(frozen=True)
class Comparison:
    skill: str
    expected_pass: bool
    sequential: str
    sequential_pass: bool
    fixed_pass: bool


def overrides(root_parent: Path, n_attempts: int, threshold: float, alpha: float) -> list[str]:
    return ["skill=custom", f"skill.paths=[{','.join(map(str, SKILLS))}]", f"study.n_attempts={n_attempts}",
            "study.n_concurrent=4", "report=false", "+study.reuse_baseline=false",
            f"study.gate_threshold={threshold}", f"study.gate_alpha={alpha}",
            f"+backend.kwargs.root_parent={root_parent}"]


def fixed_verdicts(trials: pd.DataFrame, threshold: float, alpha: float) -> dict[str, bool]:
    """The fixed gate per skill: positive cases' mean paired difference over attempts."""
    pos = trials.loc[~trials["negative_control"].astype(bool) & trials["condition"].isin(["with_skill", "baseline"])]
    wide = pos.pivot_table(index=["skill", "case_id", "attempt"], columns="condition", values="outcome_failed",
                           aggfunc="first")
    diff = (wide["with_skill"] - wide["baseline"]).groupby(level=["skill", "case_id"]).mean()
    return {str(s): fixed_gate(v.to_numpy(float), threshold, alpha) for s, v in diff.groupby(level="skill")}


def compare_designs(out: Path, *, n_attempts: int = 3, threshold: float = 0.05,
                    alpha: float = 0.05) -> tuple[list[str], bool]:
    """Run both designs under ``out``; returns the lines to print and whether every verdict agrees."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    base = overrides(out, n_attempts, threshold, alpha)
    seq_dir, fixed_dir = out / "sequential", out / "fixed"
    run_study(compose_spec([*base, "study.sequential=true"], output_dir=seq_dir))
    run_study(compose_spec(base, output_dir=fixed_dir))
    ledger = Ledger.model_validate_json((seq_dir / LEDGER).read_text())
    fixed_trials = pd.read_parquet(fixed_dir / "trials.parquet")
    fixed = fixed_verdicts(fixed_trials, threshold, alpha)
    rows = [Comparison(skill=s, expected_pass=EXPECTED[s], sequential=sp.decision,
                       sequential_pass=sp.decision == "helps", fixed_pass=fixed.get(s, False))
            for s, sp in sorted(ledger.skills.items())]
    ran_fixed = int((fixed_trials["status"] != "skipped").sum())
    lines = [f"live {r.skill}: sequential {r.sequential} ({'pass' if r.sequential_pass else 'fail'}), fixed "
             f"{'pass' if r.fixed_pass else 'fail'}, known effect: {'pass' if r.expected_pass else 'fail'}"
             for r in rows]
    lines.append(f"live: known-effect suite (reference agent, {n_attempts} attempts): sequential {ledger.trials_run} "
                 f"trials, fixed {ran_fixed} ({ledger.trials_run / ran_fixed:.0%}); verdicts "
                 f"{'agree' if all(r.sequential_pass == r.fixed_pass for r in rows) else 'DISAGREE'}")
    ok = all(r.sequential_pass == r.fixed_pass == r.expected_pass for r in rows) and ledger.trials_run < ran_fixed
    return lines, ok
