"""Real small studies, in-process: emit -> Harbor job on the local backend -> grade -> table."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
from support.grading import EXAMPLES, SKILL, skill_with_graders

from aces_bench.config.compose import compose_spec
from aces_bench.core.metrics import metric_column, metric_names
from aces_bench.grading import cli as grade_cli
from aces_bench.records.self_correction import SelfCorrection
from aces_bench.records.trials import read_grades
from aces_bench.study.entry import run_study

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is absent: the local backend needs it"),
]

CASES = "skill.cases=[explicit-1,negative-1]"
# The author's contract: the reconciled difference is in the answer and the staged input was kept.
AUTHOR = """
import json, os, pathlib
ws = pathlib.Path(os.environ["ACES_WORKSPACE"])
answer = pathlib.Path(os.environ["ACES_FINAL_ANSWER"]).read_text()
kept = (ws / "data" / "march-ledger.csv").is_file()
case = json.loads(pathlib.Path(os.environ["ACES_CASE"]).read_text())
if case["expected_skill"] is None:
    print(json.dumps({"score": 1.0, "passed": True, "details": "negative control"}))
else:
    ok = "1400.07" in answer.replace(",", "") and kept
    print(json.dumps({"score": 1.0 if ok else 0.0, "passed": ok, "details": {"kept_input": kept}}))
"""


@pytest.fixture(scope="module")
def study(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("study")
    return run_study(compose_spec([CASES, "report=false"], output_dir=out))


@pytest.fixture(scope="module")
def custom_study(tmp_path_factory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("custom")
    skill = skill_with_graders(root / "skills", {"reconciled.py": AUTHOR})
    spec = compose_spec(["skill=custom", f"skill.paths=[{skill}]", CASES, "grading=aces_plus_custom", "report=false"],
                        output_dir=root / "out")
    return run_study(spec), skill


def test_table_has_every_metric_labels_and_views(study):
    table = pd.read_parquet(study / "trials.parquet")
    assert len(table) == 16 and set(table["status"]) == {"ok"}
    graded = {(g.skill, g.case_id, g.condition): g for g in read_grades(study / "grades.jsonl")}
    for _, row in table.iterrows():
        g = graded[(row["skill"], row["case_id"], row["condition"])]
        for metric in metric_names():
            value = row[metric_column(metric)]
            if pd.isna(value):
                # only where the heuristic judge cannot decide, and then with the reason
                assert metric in ("behavior_check", "accuracy"), (row["task_id"], metric)
                assert "none" in g.metrics[metric].unscored_reason or "too few" in g.metrics[metric].unscored_reason
        # Every case here has checks: the task outcome is the verifier's reward.
        assert g.outcome_source == "verifier" and row["outcome"] == row["reward"]
        for label in ("agent_label", "judge_label", "backend"):
            assert isinstance(row[label], str) and row[label]
        assert row["final_pass"] is not None and row["first_attempt_pass"] is not None
        assert g.outcome_only is not None and set(g.dimensions) >= {"Security", "Efficiency"}
        assert g.self_correction is not None and SelfCorrection.of(g.self_correction) is not None
        assert g.grading_mode == "aces_default" and g.judge_label == row["judge_label"]


def test_with_skill_beats_baseline_on_explicit_cases(study):
    table = pd.read_parquet(study / "trials.parquet")
    explicit = table[table["case_id"] == "explicit-1"].pivot(index="skill", columns="condition", values="composite")
    assert len(explicit) == 4
    assert (explicit["with_skill"] > explicit["baseline"]).all(), explicit
    outcome = table[table["case_id"] == "explicit-1"].pivot(index="skill", columns="condition", values="outcome")
    assert (outcome["with_skill"] >= outcome["baseline"]).all() and outcome["with_skill"].sum() > outcome["baseline"].sum()


def test_negative_controls_are_not_penalised_for_frontmatter_peeks(study):
    graded = [g for g in read_grades(study / "grades.jsonl") if g.negative_control and g.condition == "with_skill"]
    assert len(graded) == 4
    peeked = 0
    for g in graded:
        steps = json.loads((Path(g.trial_dir) / "agent" / "trajectory.json").read_text())["steps"]
        commands = [c["arguments"].get("command", "") for s in steps for c in s.get("tool_calls") or []]
        peeked += any("SKILL.md" in c for c in commands)
        assert g.metrics["skill_execution"].sub_scores["activation"] == 1.0
        assert g.metrics["skill_efficiency"].sub_scores["routing"] == 1.0
        assert "right_skill" not in g.metrics["accuracy"].sub_scores  # process, never accuracy
        assert g.dimensions["Discoverability"] == 1.0
    assert peeked == 4, "the reference agent should peek at the skill's frontmatter in every with-skill trial"


def test_aces_plus_custom_reports_author_metrics_apart(custom_study):
    out, _ = custom_study
    graded = read_grades(out / "grades.jsonl")
    assert len(graded) == 4
    table = pd.read_parquet(out / "trials.parquet")
    for g in graded:
        author = g.metrics["author:reconciled"]
        assert author.scored and g.author_score == author.score
        # default dimensions and composite are unchanged by the author metric
        six = [g.metrics[m].score for m in metric_names() if g.metrics[m].score is not None]
        assert g.composite == pytest.approx(sum(six) / len(six))
    by = {(g.case_id, g.condition): g for g in graded}
    assert by[("explicit-1", "with_skill")].author_score == 1.0
    assert by[("explicit-1", "baseline")].author_score == 0.0
    assert by[("explicit-1", "with_skill")].metrics["author:reconciled"].details["details"] == {"kept_input": True}
    assert table["author_score"].notna().all()


def test_grade_cli_regrades_a_study_in_custom_only(custom_study, tmp_path, capsys):
    out, skill = custom_study
    rc = grade_cli.main([str(out / "jobs"), "--cases", str(skill), "--mode", "custom_only", "--out", str(tmp_path)])
    assert rc == 0
    graded = read_grades(tmp_path / "grades.jsonl")
    assert len(graded) == 4
    for g in graded:
        assert g.composite == g.author_score is not None
        assert g.final_pass == g.metrics["author:reconciled"].details["passed"]
        assert g.first_attempt_pass == g.final_pass  # the agent never patched the skill
    by = {(g.case_id, g.condition): g for g in graded}
    assert by[("explicit-1", "with_skill")].composite == 1.0 and by[("explicit-1", "baseline")].composite == 0.0
    assert "mode: custom_only" in capsys.readouterr().out


def test_grade_cli_on_a_study_reproduces_the_pipeline_scores(study, tmp_path):
    rc = grade_cli.main([str(study / "jobs"), "--cases", str(EXAMPLES / SKILL), "--out", str(tmp_path)])
    assert rc == 0
    pipeline = {(g.case_id, g.condition): g for g in read_grades(study / "grades.jsonl") if g.skill == SKILL}
    regraded = {(g.case_id, g.condition): g for g in read_grades(tmp_path / "grades.jsonl") if g.skill == SKILL}
    assert set(pipeline) == set(regraded) and len(pipeline) == 4
    for key, g in pipeline.items():
        r = regraded[key]
        assert {m: v.score for m, v in r.metrics.items()} == {m: v.score for m, v in g.metrics.items()}, key
        assert (r.composite, r.final_pass, r.first_attempt_pass) == (g.composite, g.final_pass, g.first_attempt_pass)
        assert "matched by the task's aces metadata" in " ".join(r.notes)
    others = [g for g in read_grades(tmp_path / "grades.jsonl") if g.skill != SKILL]
    assert len(others) == 12 and all(g.metrics["skill_execution"].score is None for g in others)
