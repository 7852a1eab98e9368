"""First-attempt vs final pass rate: summary.json, index.html, LaTeX, against a direct count."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from aces_bench.records.summary import ReportSummary
from aces_bench.records.trials import read_trials_table
from aces_bench.reports.pass_rates import NOT_RECORDED, pass_rates


def _trials(study_dir: Path) -> pd.DataFrame:
    return pd.concat([pd.read_parquet(p) for p in sorted(study_dir.glob("*/trials.parquet"))], ignore_index=True)


def _summary(report_dir: Path) -> ReportSummary:
    return ReportSummary.model_validate_json((report_dir / "summary.json").read_text())


def _direct(part: pd.DataFrame, column: str) -> tuple[int, int]:
    known = [bool(v) for v in part[column] if pd.notna(v)]
    return sum(known), len(known)


def test_pooled_and_per_skill_rates_match_a_direct_count(report_dir, study_dir):
    s, trials = _summary(report_dir), _trials(study_dir)
    assert [(r.group, r.condition) for r in s.pass_rates] == [({}, "with_skill"), ({}, "baseline")]
    # Pass rates are on positive cases, like the lift: negative controls pass by not using the skill.
    positive = trials.loc[~(trials["negative_control"].astype(bool) | (trials["case_kind"] == "negative"))]
    assert len(positive) < len(trials)
    for r in [*s.pass_rates, *s.pass_rates_by_skill]:
        part = positive.loc[positive["condition"] == r.condition]
        if r.group:
            part = part.loc[part["skill"] == r.group["skill"]]
        assert r.n_trials == len(part)
        assert (r.n_final_pass, r.n_final_known) == _direct(part, "final_pass")
        assert (r.n_first_pass, r.n_first_known) == _direct(part, "first_attempt_pass")
        assert r.final_rate == pytest.approx(r.n_final_pass / r.n_final_known)
        assert r.first_rate == pytest.approx(r.n_first_pass / r.n_first_known)
        assert r.final_source == "final_pass (recorded by grading)"
    with_skill = s.pass_rates[0]
    # The one planted trial that passed only after the agent patched the skill.
    assert with_skill.n_passed_after_patch == 1
    patched = {r.group["skill"]: r.n_passed_after_patch for r in s.pass_rates_by_skill if r.condition == "with_skill"}
    assert patched == {"access-log-latency": 1, "invoice-reconciler": 0, "semver-bump": 0}
    # Unknowns are counted, not scored as failures: failed trials have no final pass.
    assert with_skill.n_final_known < with_skill.n_trials


def test_index_and_latex_show_both_rates(report_dir):
    s = _summary(report_dir)
    w = s.pass_rates[0]
    index = (report_dir / "index.html").read_text()
    assert '<h3 id="pass-rates">First-attempt vs final pass rate</h3>' in index
    final = f'{100 * w.final_rate:.0f}% <span class="muted">({w.n_final_pass}/{w.n_final_known})</span>'
    first = f'{100 * w.first_rate:.0f}% <span class="muted">({w.n_first_pass}/{w.n_first_known})</span>'
    assert final in index and first in index
    assert '<td class="num">1</td>' in index[index.index('id="pass-rates"'):]  # passed only after patching
    tex = (report_dir / "tables" / "pass_rates.tex").read_text()
    # Decimal-aligned: each rate is its k/n and its percentage, in columns of their own.
    assert "\\multicolumn{2}{c}{Final pass}" in tex and "\\multicolumn{2}{c}{First attempt}" in tex
    assert "{Self-corrected} & {Unknown}" in tex
    # Each skill (all skills first) is a subheading, so a long skill name never wraps in a narrow column.
    assert "{\\itshape all skills}" in tex
    row = (f"with skill & {w.n_trials} & {w.n_final_pass}/{w.n_final_known} & {100 * w.final_rate:.0f} & "
           f"{w.n_first_pass}/{w.n_first_known} & {100 * w.first_rate:.0f} & 1 & {w.n_trials - w.n_final_known}")
    assert row in tex
    assert "\\input{pass_rates}" in (report_dir / "tables" / "tables.tex").read_text()


def test_skipped_attempts_unknowns_and_the_reward_fallback():
    rows = [
        # condition, status, reward, final_pass, first_attempt_pass
        ("with_skill", "ok", 1.0, True, True),
        ("with_skill", "ok", 1.0, True, False),  # passed only after patching the skill
        ("with_skill", "ok", 0.0, False, False),
        ("with_skill", "agent_error", None, None, None),
        ("with_skill", "skipped", None, None, None),  # stop-on-pass: never run
        ("baseline", "ok", 0.0, False, None),  # no trajectory: first attempt unknown
    ]
    frame = pd.DataFrame(rows, columns=["condition", "status", "reward", "final_pass", "first_attempt_pass"])
    frame["skill"] = "s"
    w, b = pass_rates(frame)
    assert (w.n_trials, w.n_skipped, w.n_final_known, w.n_final_pass, w.n_first_known, w.n_first_pass) == (5, 1, 3, 2, 3, 1)
    assert w.final_rate == pytest.approx(2 / 3) and w.first_rate == pytest.approx(1 / 3)
    assert w.n_passed_after_patch == 1
    assert (b.n_final_known, b.final_rate, b.n_first_known, b.first_rate) == (1, 0.0, 0, None)
    # A table written before final_pass existed: its final pass is unknown (no threshold of the
    # report's own re-decides it from the reward), and the label says why and how to fix it.
    old = frame.drop(columns=["final_pass"])
    w_old, b_old = pass_rates(old)
    assert (w_old.n_final_known, w_old.n_final_pass, w_old.final_rate, b_old.n_final_known) == (0, 0, None, 0)
    assert (w_old.n_first_known, w_old.n_first_pass) == (3, 1)  # the first-attempt pass is still read
    assert w_old.final_source == NOT_RECORDED == (
        "unknown: no trial records final_pass (a table written before grading recorded the pass); "
        "re-grade the study (`aces-bench grade`) to decide it")


def test_a_stored_table_without_final_pass_reads_with_the_final_pass_unknown(study_dir, tmp_path):
    # The reader rebuilds an older table in the current shape (final_pass empty): the rates
    # then say unknown, as for a frame without the column, instead of thresholding the reward.
    member = sorted(study_dir.glob("*/trials.parquet"))[0]
    stored = pd.read_parquet(member)
    assert stored["final_pass"].notna().any() and stored["reward"].notna().any()
    (tmp_path / "old").mkdir()
    stored.drop(columns=["final_pass"]).to_parquet(tmp_path / "old" / "trials.parquet")
    table = read_trials_table(tmp_path / "old")
    assert table["final_pass"].isna().all()
    rows = pass_rates(table)
    assert [r.final_source for r in rows] == [NOT_RECORDED] * len(rows) and rows
    assert all(r.n_final_known == 0 and r.final_rate is None for r in rows)
    assert pass_rates(stored)[0].final_source == "final_pass (recorded by grading)"
