"""``aces-bench plan``: before any trial, the fixed and the sequential design's trials and
cost, and the smallest lift each detects, from stored runs' variance when there are any."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from aces_bench.cli import main
from aces_bench.study.plan import Variance, plan_skill, variance_from_trials

ROOT_SKILL = "tests/fixtures/skills/csv-column-sum"


def _trials(rng, n_cases=30, attempts=3, tau=0.3, sigma=0.4) -> pd.DataFrame:
    rows = []
    for c in range(n_cases):
        u = rng.normal(0, tau)
        for a in range(1, attempts + 1):
            d = float(np.clip(0.1 + u + rng.normal(0, sigma), -1, 1))
            base = 0.5
            rows += [{"skill": "s", "case_id": f"c{c}", "attempt": a, "condition": "with_skill",
                      "outcome_failed": base + d / 2, "negative_control": False},
                     {"skill": "s", "case_id": f"c{c}", "attempt": a, "condition": "baseline",
                      "outcome_failed": base - d / 2, "negative_control": False}]
    return pd.DataFrame(rows)


def test_variance_and_intra_case_correlation_come_from_stored_trials():
    var = variance_from_trials(_trials(np.random.default_rng(0), n_cases=200))
    # tau^2 / (tau^2 + sigma^2) = 0.09 / 0.25 = 0.36; SD sqrt(0.25) = 0.5 (before clipping)
    assert var.icc == pytest.approx(0.36, abs=0.08) and var.sd == pytest.approx(0.5, abs=0.04)
    assert var.cases.shape == (200, 3) and var.source == "stored runs"
    assert var.design_effect(3) == pytest.approx(1 + 2 * var.icc)


def test_both_designs_detectable_lifts_come_from_the_gate_itself():
    # The fixed design's smallest detectable lift is found by asking the gate (its betting
    # test) of simulated studies, not by a normal formula: with 50 noisy cases it sits above
    # that formula at threshold 0 (an exact test for a bounded mean pays for assuming nothing
    # about the shape: docs/gate.md), and the sequential design's is no smaller.
    var = Variance(sd=0.6, icc=0.5, source="assumed")
    p = plan_skill("s", 50, 2, 2, 3, var, threshold=0.0, alpha=0.05, power=0.8, reusable=0, round_cases=None,
                   sims=200)
    normal = (1.6449 + 0.8416) * 0.6 * math.sqrt(0.5 + 0.5 / 3) / math.sqrt(50)
    assert normal < p.mde_fixed < normal + 0.16
    assert p.fixed_trials == 52 * 2 * 3
    assert p.seq_trials_null < p.fixed_trials and p.seq_trials_mde < p.fixed_trials
    assert p.mde_seq is not None and p.mde_fixed - 0.02 <= p.mde_seq < p.mde_fixed + 0.1


def test_fewer_than_five_cases_can_detect_nothing():
    p = plan_skill("s", 3, 1, 2, 1, Variance(0.6, 0.5, "assumed"), threshold=0.05, alpha=0.05, power=0.8,
                   reusable=0, round_cases=None)
    assert p.mde_fixed is None and p.seq_trials_null == p.fixed_trials


def test_the_command_prints_both_designs_before_any_trial(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    from pathlib import Path

    skill = Path(__file__).resolve().parents[2] / ROOT_SKILL
    rc = main(["plan", "--sims", "100", "skill=custom", f"skill.paths=[{skill}]", "study.n_attempts=3",
               "study.sequential=true"])
    out = capsys.readouterr().out
    assert rc == 0
    assert "variance: SD of an attempt's paired difference 0.600, intra-case correlation 0.50" in out
    assert "assumed (no stored runs)" in out
    assert "csv-column-sum: 1 case(s) + 1 should-not-use; fixed 12 trial(s)" in out
    assert "fewer than 5 cases: the gate cannot pass whatever the lift" in out
    assert out.count("12 trial(s) to run, $0 (reference agent (deterministic, non-LLM) uses no model)") == 3
    assert not list(tmp_path.rglob("jobs"))  # nothing ran


def test_a_bad_power_is_a_one_line_error(capsys):
    assert main(["plan", "--power", "1.5"]) == 2
    assert "--power must be in (0, 1)" in capsys.readouterr().err
