"""The metric registry is the only list of metrics: a toy metric added there alone
shows up in the config, the grades, the trials table, the dimensions, the summary
and the report."""

from __future__ import annotations

import asyncio
import importlib
import json
from pathlib import Path

import pytest
from harbor.models.trial.result import TrialResult
from support.grading import SCRIPT, SKILL, bash, trajectory, trial_result, write_trial

from aces_bench.cases import EvalCase
from aces_bench.config.schema import GROUP_SCHEMAS
from aces_bench.config.spec import GradingSpec
from aces_bench.core.io import write_frame
from aces_bench.core.metrics import Metric, dimensions, metric_names, metrics, register, unregister
from aces_bench.core.outcomes import OUTCOMES
from aces_bench.graders.base import GraderContext, GradingInput
from aces_bench.graders.redact import redact_value
from aces_bench.grading.grade import GradingContext, grade_subject
from aces_bench.grading.subject import TrialSubject
from aces_bench.grading.summary import summary_markdown
from aces_bench.judges.heuristic import HeuristicJudge
from aces_bench.records.results import Evidence, MetricResult
from aces_bench.records.trials import (
    TABLE_PARQUET,
    read_grades,
    read_table_file,
    rows_to_frame,
    table_columns,
    write_grades,
)

CASE = EvalCase.model_validate({
    "id": "explicit-1", "kind": "explicit", "prompt": "Reconcile data/march.csv.", "expected_skill": SKILL,
    "expected_script": SCRIPT, "expected_output": "unmatched total 1400.07",
})
LABELS = {"run_id": "toy-run", "harness": "h", "model": "m", "agent_label": "h", "judge_label": "heuristic",
          "backend": "b"}


def count_calls(inp: GradingInput, ctx: GraderContext) -> MetricResult:
    """Toy metric: 1 when the agent made at most two tool calls, else 0; reads the shared view."""
    if ctx.view is None:
        return MetricResult(metric="few_calls", score=None, unscored_reason="no trajectory", grader="deterministic")
    n = len(ctx.view.calls)
    seen = "security" in ctx.earlier  # graded before it, in registration order
    return MetricResult(metric="few_calls", score=1.0 if n <= 2 else 0.0, grader="deterministic",
                        sub_scores={"calls": float(n)},
                        evidence=[Evidence(check="few_calls.count", passed=n <= 2, detail=f"{n} calls; security first: {seen}")])


@pytest.fixture
def toy():
    register(Metric("few_calls", "deterministic", count_calls, short="few",
                    dimensions={"Efficiency": (None,)}, description="at most two tool calls"))
    yield
    unregister("few_calls")


def graded(tmp_path: Path, name: str, condition: str, calls: list[dict]):
    result = trial_result(f"aces/{name}", f"{name}__1", 1.0)
    d = write_trial(tmp_path / "job", f"{name}__1", trajectory(*calls), result, workspace={"answer.txt": "done"})
    subject = TrialSubject.of(
        task_id=name, attempt=1, skill=SKILL, case_id=CASE.id, condition=condition, status="ok",
        failure_cause=None, trial_name=f"{name}__1", trial_dir=d, reward=1.0, case=CASE,
        result=TrialResult.model_validate(result), target_skill=SKILL, allowed_skills=(SKILL,),
        artifacts_dir=d / "artifacts" / "workspace", labels=LABELS, skills_dir="/skills", workdir="/workspace",
    )
    spec = GradingSpec(mode="aces_default")  # default metrics: every registered one, the toy included
    return asyncio.run(grade_subject(subject, GradingContext(grading=spec, judge=HeuristicJudge())))


def test_the_builtin_registry_is_the_six_metrics_in_table_order():
    assert metric_names() == ("security", "skill_execution", "skill_efficiency", "accuracy", "goal_accuracy",
                              "behavior_check")
    assert metric_names("deterministic") == ("security", "skill_execution", "skill_efficiency")
    assert all(callable(m.load_grader()) for m in metrics())  # every path names a real function
    for m in metrics():  # a dimension's sub-score is one its grader declares (SUB_CHECKS)
        declared = getattr(importlib.import_module(m.load_grader().__module__), "SUB_CHECKS", ())
        assert {s for subs in m.dimensions.values() for s in subs if s is not None} <= set(declared), m.name


def test_metrics_and_grading_modes_are_registries_whose_unknown_names_say_where_and_list_the_valid_ones():
    from aces_bench.core.errors import ConfigError
    from aces_bench.core.metrics import METRICS, metric
    from aces_bench.core.modes import MODES, mode
    from aces_bench.core.registry import Registry

    assert isinstance(METRICS, Registry) and isinstance(MODES, Registry)
    with pytest.raises(ConfigError) as err:
        metric("secrity")
    assert err.value.where == "grading.metrics" and "security" in str(err.value)
    with pytest.raises(ConfigError) as err:
        mode("aces_defualt")
    assert err.value.where == "grading.mode" and "aces_default, aces_plus_custom, custom_only" in str(err.value)
    with pytest.raises(ValueError, match="registered already"):
        register(metric("security"))


def test_a_toy_metric_registered_once_is_graded_tabled_and_reported(tmp_path, toy):
    # Config: the default metric list and the name check both come from the registry.
    assert "few_calls" in GROUP_SCHEMAS["grading"]().metrics and "few_calls" in GradingSpec(mode="aces_default").metrics
    with pytest.raises(ValueError, match="unknown metric\\(s\\) 'secrity'; registered: security, skill_execution"):
        GradingSpec(mode="aces_default", metrics=["security", "secrity"])
    # Grades: scored by its grader, with its evidence, after the built-in deterministic ones.
    read = bash(f"cat /skills/{SKILL}/SKILL.md", f"---\nname: {SKILL}\n---\nRun {SCRIPT}.")
    run = bash(f"python3 /skills/{SKILL}/{SCRIPT} data/march.csv", "unmatched total 1400.07")
    with_skill = graded(tmp_path, "t1", "with_skill", [read, run])
    baseline = graded(tmp_path, "t2", "baseline", [bash("ls"), bash("ls data"), bash("cat data/march.csv")])
    assert with_skill.metrics["few_calls"].score == 1.0 and baseline.metrics["few_calls"].score == 0.0
    assert with_skill.metrics["few_calls"].evidence[0].detail == "2 calls; security first: True"
    # Dimensions: the toy feeds Efficiency next to skill_efficiency.tool_efficiency.
    assert [s.label for s in dimensions()["Efficiency"]] == ["skill_efficiency.tool_efficiency", "few_calls"]
    # Grades file and table: the column metric_few_calls, read back through the real readers.
    write_grades(tmp_path / "grades.jsonl", [with_skill, baseline], mask=redact_value)
    back = read_grades(tmp_path / "grades.jsonl")
    rows = [g.to_row() for g in back]
    assert [r.metric("few_calls") for r in rows] == [1.0, 0.0]
    frame = rows_to_frame(rows)
    assert "metric_few_calls" in table_columns() and list(frame.columns) == list(table_columns())
    frame.to_csv(tmp_path / "trials.csv", index=False)
    assert list(read_table_file(tmp_path / "trials.csv")["metric_few_calls"]) == [1.0, 0.0]
    # Summary and stats: its short name in the per-trial table; an outcome of the stats layer.
    md = summary_markdown(back, title="toy", facts=[])
    assert "| few |" in md or " few |" in md
    assert "few_calls" in OUTCOMES


def test_the_report_shows_a_toy_metric(tmp_path, toy):
    from aces_bench.analysis import build_report

    read = bash(f"cat /skills/{SKILL}/SKILL.md", f"---\nname: {SKILL}\n---\nRun {SCRIPT}.")
    trials = [graded(tmp_path, "t1", "with_skill", [read]), graded(tmp_path, "t2", "baseline", [bash("ls")] * 3)]
    out = tmp_path / "study"
    write_grades(out / "grades.jsonl", trials, mask=redact_value)
    frame = rows_to_frame([g.to_row() for g in trials])
    write_frame(out / TABLE_PARQUET, frame)
    index = build_report(out, static=False)
    summary = json.loads((index.parent / "summary.json").read_text())
    pooled = {r["outcome"]: r for r in summary["pooled"]}
    assert pooled["few_calls"]["lift"] == pytest.approx(1.0)
    assert "few_calls" in index.read_text()
