"""Each judged metric against a scripted Judge: scoring, evidence, failures, attribution."""

from __future__ import annotations

import asyncio

import pytest
from support.judges import INVOICE_CASE, ScriptedJudge, good_run, grading_input, no, yes

from aces_bench.core.metrics import metric_names
from aces_bench.graders.accuracy import grade_accuracy
from aces_bench.graders.behavior_check import (
    SECURITY_BEHAVIOR,
    behaviors_for,
    grade_behavior_check,
)
from aces_bench.graders.goal_accuracy import (
    grade_goal_accuracy,
    ragas_status,
    reference_goal,
)
from aces_bench.graders.judged import grade_judged

FOUR = (
    "action_correct",
    "facts_consistent",
    "task_addressed",
    "actionable",
)


def run(coro):
    return asyncio.run(coro)


def test_accuracy_is_yes_over_four_with_reasons_as_evidence():
    reply = {k: yes(f"{k} because step 3") for k in FOUR} | {
        "actionable": no("vague"),
        "task_addressed": no("off topic"),
    }
    judge = ScriptedJudge({"accuracy": reply})
    result = run(grade_accuracy(grading_input(good_run()), judge))
    assert result.score == pytest.approx(2 / 4)
    assert result.grader == "scripted:test" and result.grader_version == "1+prompt.2"
    assert {e.check: e.detail for e in result.evidence}["actionable"] == "vague"
    asked = judge.asked[0]
    assert asked["prompt_id"] == "accuracy" and asked["prompt_version"] == "2"
    # The judge is never asked whether the right skill was used (activation is not accuracy).
    assert "right_skill" not in asked["system"] and "right skill" not in asked["system"]
    assert (
        "<<<BEGIN trajectory (untrusted" in asked["user"]
        and "ground truth: The total unmatched" in asked["user"]
    )


def test_accuracy_judge_failure_is_unscored_with_the_error():
    judge = ScriptedJudge({"accuracy": "judge call timed out after 60s"})
    result = run(grade_accuracy(grading_input(good_run()), judge))
    assert result.score is None and result.grader == "scripted:test"
    assert (
        result.unscored_reason
        == "judge scripted:test gave no usable reply: judge call timed out after 60s"
    )


def test_accuracy_all_undecided_is_unscored():
    judge = ScriptedJudge(
        {"accuracy": {k: {"answer": None, "reason": "?"} for k in FOUR}}
    )
    result = run(grade_accuracy(grading_input(good_run()), judge))
    assert (
        result.score is None
        and result.unscored_reason
        == "judge scripted:test answered none of the 4 questions"
    )


def test_behavior_fraction_and_security_append():
    assert behaviors_for(["runs the script"]) == ["runs the script", SECURITY_BEHAVIOR]
    assert behaviors_for(["never prints the API key"]) == ["never prints the API key"]
    answers = iter([yes("ran it at step 3"), no("printed a token at step 4")])
    judge = ScriptedJudge({"behavior": lambda user: next(answers)})
    result = run(grade_behavior_check(grading_input(good_run()), judge))
    assert result.score == 0.5
    assert (
        result.evidence[1].detail.startswith(SECURITY_BEHAVIOR)
        and "printed a token at step 4" in result.evidence[1].detail
    )
    assert [
        a["user"]
        .rsplit("<<<BEGIN behavior>>>", 1)[1]
        .strip()
        .removesuffix("<<<END behavior>>>")
        .strip()
        for a in judge.asked
    ] == ["runs scripts/reconcile.py on the staged file", SECURITY_BEHAVIOR]


def test_behavior_any_judge_failure_leaves_metric_unscored():
    answers = iter([yes(), "judge call failed after 5 attempt(s): RateLimitError"])
    judge = ScriptedJudge({"behavior": lambda user: next(answers)})
    result = run(grade_behavior_check(grading_input(good_run()), judge))
    assert result.score is None
    assert (
        "failed on 1 of 2 behavior(s): behavior[1]: judge call failed after 5 attempt(s)"
        in result.unscored_reason
    )


def test_goal_two_step_records_method_and_end_state():
    judge = ScriptedJudge(
        {
            "goal_infer": {
                "user_goal": "reconcile march",
                "end_state": "reported 1234.50",
            },
            "goal_compare": {
                "achieved": "no",
                "reason": "expected a per-invoice list too",
            },
        }
    )
    result = run(grade_goal_accuracy(grading_input(good_run()), judge, use_ragas=False))
    assert result.score == 0.0 and result.details == {"method": "two_step"}
    assert [e.check for e in result.evidence] == ["method", "end_state", "verdict"]
    assert (
        "reported 1234.50" in judge.asked[1]["user"]
        and "<<<BEGIN reference>>>" in judge.asked[1]["user"]
    )


def test_goal_failure_at_step_one_is_unscored_and_skips_step_two():
    judge = ScriptedJudge(
        {
            "goal_infer": "judge call failed: AuthenticationError",
            "goal_compare": {"achieved": "yes", "reason": ""},
        }
    )
    result = run(grade_goal_accuracy(grading_input(good_run()), judge, use_ragas=False))
    assert (
        result.score is None
        and "step 1 (goal_infer)" in result.unscored_reason
        and len(judge.asked) == 1
    )


def test_goal_without_reference_is_unscored():
    case = INVOICE_CASE.model_copy(update={"expected_output": None, "assertions": []})
    assert reference_goal(case) is None
    result = run(
        grade_goal_accuracy(grading_input(good_run(), case), ScriptedJudge({}))
    )
    assert (
        result.unscored_reason
        == "case explicit-1 has no expected_output or assertions to serve as the reference goal"
    )


def test_goal_falls_back_to_two_step_when_ragas_is_absent():
    if ragas_status()[0] is not None:
        pytest.skip("ragas is importable here; the RAGAS path is tested below")
    judge = ScriptedJudge(
        {
            "goal_infer": {"user_goal": "g", "end_state": "e"},
            "goal_compare": {"achieved": "yes", "reason": "same"},
        }
    )
    result = run(grade_goal_accuracy(grading_input(good_run()), judge))
    assert result.score == 1.0 and result.details == {"method": "two_step"}
    assert "ragas not importable" in result.evidence[0].detail


def test_goal_runs_ragas_through_the_judge_when_installed():
    version, why = ragas_status()
    if version is None:
        pytest.skip(f"optional extra absent: {why}")
    judge = ScriptedJudge(
        {
            "ragas.WorkflowOutput": {
                "user_goal": "reconcile",
                "end_state": "reported 1234.50",
            },
            "ragas.CompareOutcomeOutput": {"reason": "same total", "verdict": "1"},
        }
    )
    result = run(grade_goal_accuracy(grading_input(good_run()), judge))
    assert result.score == 1.0 and result.details == {"method": "ragas"}
    assert (
        result.grader == "scripted:test"
        and result.grader_version == f"1+ragas.{version}"
    )
    assert [a["prompt_id"] for a in judge.asked] == [
        "ragas.WorkflowOutput",
        "ragas.CompareOutcomeOutput",
    ]
    assert (
        "reconcile.py" in judge.asked[0]["user"]
    )  # the trajectory reached RAGAS's prompt
    failing = ScriptedJudge({"ragas.WorkflowOutput": "judge call timed out after 60s"})
    unscored = run(grade_goal_accuracy(grading_input(good_run()), failing))
    assert unscored.score is None and "timed out" in unscored.unscored_reason


def test_grade_judged_returns_all_three_attributed():
    judge = ScriptedJudge(
        {
            "accuracy": {k: yes() for k in FOUR},
            "goal_infer": {"user_goal": "g", "end_state": "e"},
            "goal_compare": {"achieved": "yes", "reason": "same"},
            "behavior": yes(),
            "ragas.WorkflowOutput": {"user_goal": "g", "end_state": "e"},
            "ragas.CompareOutcomeOutput": {"reason": "same", "verdict": "1"},
        }
    )
    results = run(grade_judged(grading_input(good_run()), judge))
    assert tuple(results) == metric_names("judged") == ("accuracy", "goal_accuracy", "behavior_check")
    assert {r.grader for r in results.values()} == {"scripted:test"}
