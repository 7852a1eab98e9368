"""The known-effect skills (helpful, useless, harmful) run twice with the reference agent:
once as a sequential study (``study.sequential=true``) and once as the fixed design,
the same cases and attempts. The sequential verdicts come from its ledger; the fixed
verdicts from the gate itself (``stats.gate.gate_table`` on the fixed run's trials table:
per case the mean difference of ``final_pass``, an arm's failures counted as not passed).
The verdicts compared are the gate's words ("helps", "harms", "does not reach
threshold", ...), not only pass or fail. Baseline reuse is off in both, so the trial
counts compare the designs.

Used by ``tests/bench/bench_sequential.py --live`` and ``tests/study/test_sequential_study.py``.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

import pandas as pd

from aces_bench.config.compose import compose_spec
from aces_bench.core.gate import GateSettings
from aces_bench.records.sequential import LEDGER, Ledger
from aces_bench.stats.gate import gate_table
from aces_bench.study.entry import run_study

HERE = Path(__file__).resolve().parents[1] / "known_effect"
SKILLS = [HERE / "skills" / name for name in ("ledger-verifier", "line-count-tips", "quick-line-count")]
EXPECTED = {"ledger-verifier": "helps", "line-count-tips": "not enough cases", "quick-line-count": "harms"}


@dataclass(frozen=True)
class Comparison:
    skill: str
    expected: str
    sequential: str
    fixed: str


def overrides(root_parent: Path, n_attempts: int, threshold: float, alpha: float) -> list[str]:
    return ["skill=custom", f"skill.paths=[{','.join(map(str, SKILLS))}]", f"study.n_attempts={n_attempts}",
            "study.n_concurrent=4", "report=false", "+study.reuse_baseline=false",
            f"study.gate.threshold={threshold}", f"study.gate.alpha={alpha}",
            # The suite's verdicts are per skill (each known effect alone): both designs run
            # unadjusted, labelled so; Holm across skills is tested in test_stats_sequential_family.
            "study.gate.family=none", f"+backend.kwargs.root_parent={root_parent}"]


def fixed_verdicts(trials: pd.DataFrame, threshold: float, alpha: float) -> dict[str, str]:
    """The gate's verdict per skill on the fixed design's trials, each skill at alpha as its
    sequential design decides it (both run with ``study.gate.family=none``)."""
    settings = GateSettings(threshold=threshold, alpha=alpha, family="none")
    return {v.skill: v.verdict for v in gate_table(trials, settings)}


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
    rows = [Comparison(skill=s, expected=EXPECTED[s], sequential=sp.decision, fixed=fixed.get(s, "no data"))
            for s, sp in sorted(ledger.skills.items())]
    ran_fixed = int((fixed_trials["status"] != "skipped").sum())
    lines = [f"live {r.skill}: sequential {r.sequential!r}, fixed {r.fixed!r}, by construction {r.expected!r}"
             for r in rows]
    agree = all(r.sequential == r.fixed for r in rows)
    lines.append(f"live: known-effect suite (reference agent, {n_attempts} attempts): sequential {ledger.trials_run} "
                 f"trials, fixed {ran_fixed} ({ledger.trials_run / ran_fixed:.0%}); verdicts "
                 f"{'agree' if agree else 'DISAGREE'}")
    ok = agree and all(r.fixed == r.expected for r in rows) and ledger.trials_run < ran_fixed
    return lines, ok
