"""The calibration arms through the real pipeline: the demo study (example skills, the
reference agent, the local bubblewrap backend) with study.controls=[null,placebo,forced],
one case per skill, graded and reported."""

from __future__ import annotations

import json
import re
from pathlib import Path

from harbor.models.trajectories import Trajectory
from support.studies import needs_bwrap, read_table, wait_until_gone

from aces_bench.analysis.cli import main as report_main
from aces_bench.config.compose import compose_spec
from aces_bench.records.summary import read_summary
from aces_bench.records.trials import PAIR_KEY
from aces_bench.study.entry import run_study

CONDITIONS = ["baseline", "forced", "null", "placebo", "with_skill"]


def _commands(trial_dir: str) -> list[str]:
    trajectory = Trajectory.model_validate_json(Path(trial_dir, "agent", "trajectory.json").read_text())
    return [call.arguments["command"] for step in trajectory.steps for call in (step.tool_calls or [])]


def _observations(trial_dir: str) -> str:
    trajectory = Trajectory.model_validate_json(Path(trial_dir, "agent", "trajectory.json").read_text())
    return "\n".join(r.content or "" for s in trajectory.steps if s.observation for r in s.observation.results
                     if isinstance(r.content, str))


@needs_bwrap
def test_demo_with_every_arm_runs_grades_and_reports_them(tmp_path, capsys):
    out = tmp_path / "demo"
    spec = compose_spec(["study=demo", "skill.cases=[explicit-1]", "study.controls=[null,placebo,forced]",
                         f"+backend.kwargs.root_parent={tmp_path}"], output_dir=out)
    assert run_study(spec) == out

    table = read_table(out)
    assert sorted(table["condition"].unique()) == CONDITIONS
    assert len(table) == 4 * 5 and (table["status"] == "ok").all()
    assert table["trial_name"].nunique() == len(table) and table["task_id"].nunique() == len(table)
    for skill, rows in table.groupby("skill"):
        by = rows.set_index("condition")
        # Every arm is one more condition of the same pairing key.
        assert len({tuple(by.loc[c, k] for k in PAIR_KEY) for c in CONDITIONS}) == 1, skill
        # The deterministic agent answers the baseline task alike both times: the instrument adds nothing.
        assert by.loc["null", "reward"] == by.loc["baseline", "reward"] == 0.0
        assert by.loc["with_skill", "reward"] == by.loc["forced", "reward"] == 1.0
        # The placebo is read where the target would be, and teaches nothing to run.
        placebo = _commands(by.loc["placebo", "trial_dir"])
        assert f"cat /skills/{skill}/SKILL.md" in placebo
        assert "This skill has no further content." in _observations(by.loc["placebo", "trial_dir"])
        assert not any("/scripts/" in c for c in placebo)
        assert by.loc["placebo", "reward"] == 0.0
        assert not any("SKILL.md" in c for c in _commands(by.loc["null", "trial_dir"]))
    grades = [json.loads(line) for line in (out / "grades.jsonl").read_text().splitlines()]
    assert sorted({g["condition"] for g in grades}) == CONDITIONS
    null = [g for g in grades if g["condition"] == "null"]
    assert all(g["baseline_saw_target"] is False for g in null)

    summary = read_summary(out / "report" / "summary.json")
    head = next(r for r in summary.pooled if r.outcome == "outcome")
    assert head.lift == 1.0 and head.n == 4  # the headline: with skill vs baseline only
    assert summary.controls_run == ["null", "placebo", "forced"]
    assert summary.counts.n_by_condition == dict.fromkeys(CONDITIONS, 4)
    null_row = summary.control("null", "outcome")
    # "The null arm's interval contains 0 on the demo": exactly 0 on every pair, no flipped verdict.
    assert (null_row.lift, null_row.n, null_row.no_variation) == (0.0, 4, True)
    assert (null_row.n_flipped, null_row.n_flip_known, null_row.flip_share) == (0, 4, 0.0)
    assert summary.control("placebo", "outcome").lift == 1.0
    assert summary.control("forced", "outcome").lift == 0.0
    assert {r.group["skill"] for r in summary.controls_by_skill if r.arm == "null"} == set(table["skill"])

    html = (out / "report" / "index.html").read_text()
    panel = html[html.index('id="calibration-arms"'):html.index("the same lift, other ways")]
    text = re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", panel))
    assert "null lift (A/A) : +0.000" in text and "0% of 4 verdicts flipped" in text
    assert "null check: consistent with 0" in text  # the gate's exact test (issue 22), not the interval
    assert "lift over placebo : +1.000" in text and "discovery gap : +0.000" in text
    assert html.count('data-arm="null"') == 1 + 4  # the panel and one verdict-table cell per skill
    # The calibration arms have a LaTeX table of their own (one row per arm and skill), beside the verdict's.
    assert "Null lift" in (out / "report" / "tables" / "calibration.tex").read_text()

    capsys.readouterr()
    # One case per skill: the gate (issue 22) fails each as not enough cases; the null arm's
    # line is still printed, now from the gate's exact test over the cases.
    assert report_main([str(out), "--fail-under-lift", "0.5"]) == 1
    captured = capsys.readouterr()
    printed = captured.out + captured.err
    assert "FAIL semver-bump: not enough cases" in printed
    assert "gate: null arm: null lift +0.000 over 4 case(s), 0 differing; two-sided sign-flip p = 1 " \
           "(consistent with 0)" in printed
    procs, roots = wait_until_gone(tmp_path)
    assert procs == [] and roots == []
