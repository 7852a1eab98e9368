"""The paper page's counterparts drawn from parts a synthetic study lacks: Fig. 1(b) when a
Tier 2 judge rated the skills, Table 5 from the skills' own categories, and the routing-
stress side-by-side matched by the configured level while naming what the agent saw."""

from __future__ import annotations

import pandas as pd
import pytest

from aces_bench.analysis.figure_data import FigureInputs, figure_data, paper_tables
from aces_bench.analysis.paper import UNCATEGORISED, _category, scan_for_paper
from aces_bench.analysis.side_by_side import _routing_rows
from aces_bench.records.summary import ScannedSkill, StaticLiveSection
from aces_bench.reports import style
from aces_bench.reports.paper import load_reported, paper_structural_vs_judge
from aces_bench.stats import build_pairs, study_stats
from aces_bench.stats.correlation import spearman_ci

SKILL = """---
name: {name}
description: Turn a CSV of invoices into a reconciliation report with totals per customer.
{extra}---

# {name}

## When to use
- A ledger and a bank export disagree.

## Usage
```bash
python3 scripts/run.py data/ledger.csv
```

## Limitations
- CSV only.
"""


def _skill(root, name: str, extra: str = ""):
    folder = root / name
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(SKILL.format(name=name, extra=extra))
    return folder


def _inputs(trials: pd.DataFrame, static: StaticLiveSection | None = None) -> FigureInputs:
    return FigureInputs(study_stats(trials), build_pairs(trials), trials, static)


def _drawn(trials: pd.DataFrame, static: StaticLiveSection):
    """What the paper page's figures draw from (the analysis's tables, no scan)."""
    inputs = _inputs(trials, static)
    return figure_data(inputs), paper_tables(inputs, None, load_reported())


def _trials(rows: list[dict]) -> pd.DataFrame:
    base = {"case_kind": "explicit", "negative_control": False, "attempt": 1, "harness": "reference", "model": "n/a",
            "workspace_mode": "group", "status": "ok", "agent_label": "reference agent (deterministic, non-LLM)",
            "judge_label": "heuristic (offline, deterministic)", "backend": "local", "run_id": "r", "has_trajectory": True}
    return pd.DataFrame([{**base, **r} for r in rows])


def test_categories_come_from_the_frontmatter(tmp_path):
    assert _category(str(_skill(tmp_path, "a", "category: Deployment\n"))) == "Deployment"
    assert _category(str(_skill(tmp_path, "b", "metadata:\n  category: Data Infra\n"))) == "Data Infra"
    assert _category(str(_skill(tmp_path, "c"))) == UNCATEGORISED
    assert _category(str(tmp_path / "gone")) == UNCATEGORISED


def test_table_5_and_the_scan_rows_come_from_one_scan_with_the_studys_profile(tmp_path):
    folders = [_skill(tmp_path, "a", "category: Deployment\n"), _skill(tmp_path, "b", "category: Deployment\n"),
               _skill(tmp_path, "c", "category: Platform\n")]
    skills = [ScannedSkill(skill=f.name, path=str(f), status="scanned", structural=80.0) for f in folders]
    static = StaticLiveSection(status="ran", outcome="outcome", skills=skills, tier2_status="not run",
                               profile="skillevaluator")
    scan = scan_for_paper(static, load_reported())
    assert scan.profile == "skillevaluator"
    cats = {c["category"]: c for c in scan.categories}
    assert cats["Deployment"]["n"] == 2 and cats["Platform"]["n"] == 1
    assert sorted(scan.scores) == sorted([cats["Deployment"]["mean"]] * 2 + [cats["Platform"]["mean"]])
    mean = next(r["ours"] for r in scan.comparison["score_rows"] if r["figure"] == "mean")
    assert mean == pytest.approx(sum(scan.scores) / 3)  # the table's mean is the histogram's scores' mean


def test_fig_1b_is_drawn_when_a_judge_rated_the_skills_and_says_why_not_otherwise(tmp_path):
    trials = _trials([{"skill": s, "case_id": "c1", "condition": c, "decoy_set": "none", "n_visible_skills": 1,
                       "outcome": 1.0 if c == "with_skill" else 0.0, "composite": 0.5}
                      for s in ("a", "b", "c", "d") for c in ("with_skill", "baseline")])
    rated = [ScannedSkill(skill=s, path=str(tmp_path / s), status="scanned", structural=x, rubric=y)
             for s, x, y in (("a", 70.0, 60.0), ("b", 80.0, 75.0), ("c", 90.0, 70.0), ("d", 85.0, 90.0))]
    ran = StaticLiveSection(status="ran", outcome="outcome", skills=rated, tier2_status="ran (judge openai/x)",
                            profile="aces")
    problems = []
    style.INSPECTORS.append(lambda fig, stem: problems.extend(style.figure_problems(fig)))
    try:
        fig = paper_structural_vs_judge(*_drawn(trials, ran), load_reported(), tmp_path)
    finally:
        style.INSPECTORS.pop()
    assert fig.skipped is None and (tmp_path / "paper_structural_vs_judge_column.pdf").is_file() and not problems
    rho = spearman_ci([70, 80, 90, 85], [60, 75, 70, 90]).rho
    assert f"Spearman rho {rho:+.2f}, n = 4" in (tmp_path / "paper_structural_vs_judge.svg").read_text()
    unrated = ran.model_copy(update={"skills": [s.model_copy(update={"rubric": None}) for s in rated],
                                     "tier2_status": "not run: the study's judge is the offline heuristic judge"})
    skipped = paper_structural_vs_judge(*_drawn(trials, unrated), load_reported(), tmp_path / "no")
    assert skipped.skipped == "no Tier 2 (LLM-judge) score: not run: the study's judge is the offline heuristic judge"


def test_routing_stress_rows_match_the_configured_level_and_name_what_the_agent_saw():
    rows = []
    for size, seen in ((1, 2), (20, 21), (50, 51)):
        for s in ("a", "b"):
            for c in ("with_skill", "baseline"):
                rows.append({"skill": s, "case_id": "c1", "condition": c, "decoy_set": f"pool-n{size}-s0",
                             "n_visible_skills": seen if c == "with_skill" else seen - 1,
                             "outcome": 1.0 if c == "with_skill" else 0.0, "composite": 0.6 if c == "with_skill" else 0.1,
                             "reward": 1.0 if c == "with_skill" else 0.0, "wall_sec": 10.0 * size,
                             "final_pass": c == "with_skill"})
    trials = _trials(rows)
    out = {r.quantity: r for r in _routing_rows(_inputs(trials), load_reported()["routing_stress"])}
    for k in (1, 20, 50):
        row = out[f"mean wall seconds at {k} skills"]
        assert row.study == pytest.approx(10.0 * k) and row.n == 2  # every cell that ran is filled
        assert f"{k} decoys: the agent saw {k + 1} skills" in row.note
    assert out["composite lift, 1-20 skills: min"].study == pytest.approx(0.5)
    assert out["with-skill pass rate at 50 skills"].study == 1.0


def test_side_by_side_numbers_read_alike_in_a_row():
    """A row's two numbers share their format: a score of 1 beside the paper's 0.746 reads
    1.0000 (not 1), a count stays an integer even when one side is 0, and 0-100 scores or
    seconds get one decimal, not four."""
    from aces_bench.reports.latex import value_cells

    assert value_cells("composite with skill", "headline", [0.746, 1.0]) == ["0.7460", "1.0000"]
    assert value_cells("baseline-only case keys", "missingness", [40.0, 0.0]) == ["40", "0"]
    assert value_cells("Other: skills", "corpus by category", [1.0, None]) == ["1", None]
    assert value_cells("tool calls", "evidence inventory", [11642, 3948]) == ["11642", "3948"]
    assert value_cells("mean", "static scan", [79.2, 85.1]) == ["79.2", "85.1"]
    assert value_cells("mean wall seconds at 1 skills", "routing stress", [258, 6.79671]) == ["258.0", "6.8"]
    assert value_cells("outcome-only lift", "headline", [None, None]) == [None, None]


def test_a_title_running_under_a_legend_is_a_print_problem():
    """The check every figure passes (style.figure_problems) sees a title that runs under a
    legend placed beside the axes, as the static-vs-live figure's did at text width."""
    from matplotlib.lines import Line2D

    def draw(title: str):
        with style.paper_style():
            fig = style.new_figure(6.8, 2.6)
            ax = fig.subplots()
            ax.plot([1, 2], [1, 2])
            ax.set_title(title, loc="left")
            fig.legend([Line2D([], [])] * 2, ["1  access-log-latency (88.2, +1.000)", "2  semver-bump (83.2, +1.0)"],
                       loc="outside right upper")
            return style.figure_problems(fig)

    assert any("under the legend" in p for p in draw("Spearman rho undefined (a series is constant: rank correlation "
                                                      "undefined), n = 4 " * 2))
    assert not draw("Spearman rho = +0.40, n = 4")


def test_routing_stress_wall_time_and_pass_rate_leave_negative_controls_out():
    """The routing-stress rows and the wall-time panel name their set as the stress arm's
    positive cases, so a should-not-use case's with-skill trial (slow and failed here) must
    not move the wall time, the pass rate or their n: the set a number names is the set it uses."""
    from aces_bench.analysis.figure_data import stress_wall
    from aces_bench.analysis.sets import AnalysisSet

    rows = []
    for size, seen in ((1, 2), (20, 21)):
        for s in ("a", "b"):
            for case, negative in (("c1", False), ("neg", True)):
                for c in ("with_skill", "baseline"):
                    win = c == "with_skill" and not negative
                    rows.append({"skill": s, "case_id": case, "condition": c, "decoy_set": f"pool-n{size}-s0",
                                 "case_kind": "negative" if negative else "explicit", "negative_control": negative,
                                 "n_visible_skills": seen if c == "with_skill" else seen - 1,
                                 "outcome": 1.0 if win or (negative and c == "baseline") else 0.0,
                                 "composite": 0.6 if win else 0.1, "reward": 1.0 if win else 0.0,
                                 "wall_sec": 1000.0 if negative else 10.0 * size,
                                 "final_pass": win or (negative and c == "baseline")})
    trials = _trials(rows)
    out = {r.quantity: r for r in _routing_rows(_inputs(trials), load_reported()["routing_stress"])}
    for k in (1, 20):
        wall = out[f"mean wall seconds at {k} skills"]
        assert "positive cases" in wall.analysis_set
        assert wall.study == pytest.approx(10.0 * k) and wall.n == 2
    rate = out["with-skill pass rate at 1 skills"]
    assert rate.study == 1.0 and rate.n == 2
    panel = stress_wall(AnalysisSet("routing_stress", "routing stress", trials))
    assert panel.to_dict() == {2: pytest.approx(10.0), 21: pytest.approx(200.0)}


def test_side_by_side_csv_writes_counts_as_integers(tmp_path):
    """side_by_side.csv carries counts as integers (145 skills scanned, not 145.0000), as
    the LaTeX table does, and every other value to 4 decimals; it still reads as numbers
    with pandas."""
    from aces_bench.core.io import write_frame
    from aces_bench.records.summary import SideBySide
    from aces_bench.reports.paper import side_by_side_csv_frame

    rows = [SideBySide(section="static scan", quantity="skills scanned", reported=145.0, study=4.0),
            SideBySide(section="corpus by category", quantity="System Access: skills", reported=49.0, study=None),
            SideBySide(section="headline", quantity="composite with skill", reported=0.746, study=1.0, n=12),
            SideBySide(section="static scan", quantity="mean", reported=79.2, study=85.14)]
    path = write_frame(tmp_path / "side_by_side.csv", side_by_side_csv_frame(rows))
    lines = path.read_text().splitlines()
    assert lines[1].startswith("static scan,skills scanned,145,4,")
    assert lines[2].startswith("corpus by category,System Access: skills,49,,")
    assert lines[3].startswith("headline,composite with skill,0.7460,1.0000,12,")
    assert lines[4].startswith("static scan,mean,79.2000,85.1400,")
    table = pd.read_csv(path)
    assert table["reported"].tolist() == [145, 49, 0.746, 79.2] and table["n"].dropna().tolist() == [12]
