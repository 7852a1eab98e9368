"""The offline heuristic judge: decides from facts, abstains otherwise, deterministic."""

from __future__ import annotations

import asyncio
import json

import pytest
from harbor.models.trajectories import Trajectory
from support.judges import (
    INVOICE_CASE,
    bad_run,
    bash,
    good_run,
    grading_input,
    trajectory,
)

from aces_bench.cases import EvalCase
from aces_bench.graders.accuracy import grade_accuracy
from aces_bench.graders.behavior_check import SECURITY_BEHAVIOR, grade_behavior_check
from aces_bench.graders.goal_accuracy import grade_goal_accuracy
from aces_bench.graders.judge_context import build_facts
from aces_bench.graders.judged import grade_judged
from aces_bench.judges.heuristic import ABSTAIN, HeuristicJudge, behavior
from aces_bench.judges.prompts import YesNo

JUDGE = HeuristicJudge()


def run(coro):
    return asyncio.run(coro)


def test_good_run_never_counts_activation_as_accuracy_and_too_few_answers_leave_it_unscored():
    result = run(grade_accuracy(grading_input(good_run()), JUDGE))
    assert result.grader == "heuristic"
    # No right-skill question at all: activation is process, never accuracy.
    assert result.sub_scores == {
        "action_correct": None,
        "facts_consistent": 1.0,
        "task_addressed": None,
        "actionable": None,
    }
    # One of four questions answered: fewer than half, so the metric says so and is unscored.
    assert result.score is None
    assert result.unscored_reason == "judge heuristic answered 1 of 4 questions, fewer than 50%: too few to score"
    by_check = {e.check: e for e in result.evidence}
    assert "never counted as accuracy" in by_check["action_correct"].detail
    assert by_check["actionable"].passed is None and by_check["actionable"].detail.startswith(ABSTAIN)


def test_right_and_wrong_answers_are_judged_over_the_same_questions():
    # A pair's arms must be scored over the same questions: a right answer may not earn
    # a second "yes" (task addressed) that a wrong one cannot earn as a "no".
    good = run(grade_accuracy(grading_input(good_run()), JUDGE))
    bad = run(grade_accuracy(grading_input(bad_run()), JUDGE))
    decided = [{k for k, v in r.sub_scores.items() if v is not None} for r in (good, bad)]
    assert decided[0] == decided[1] == {"facts_consistent"}


def test_bad_run_answers_no_on_the_facts():
    result = run(grade_accuracy(grading_input(bad_run()), JUDGE))
    assert result.sub_scores["facts_consistent"] == 0.0 and "right_skill" not in result.sub_scores
    details = {e.check: e.detail for e in result.evidence}
    assert "1 of 1 answer check(s) failed: no number within 0.01 of 1234.5" in details["facts_consistent"]


def test_failed_script_run_is_not_a_correct_action():
    traj = trajectory(
        INVOICE_CASE.prompt,
        ("run", [bash("python3 scripts/reconcile.py data/march.csv", "Traceback (most recent call last):\n  boom")]),
        ("The total unmatched amount is 1234.50", None),
    )
    facts = build_facts(grading_input(traj), INVOICE_CASE, "last message")
    assert facts.script_runs and not any(r.ok for r in facts.script_runs)
    assert behavior(facts, "runs scripts/reconcile.py").answer == "no"


def test_checking_that_the_script_exists_is_not_running_it():
    # Regression: `test -f <script>` used to count as a clean run, so a skill whose
    # script always crashed was judged "action correct".
    script = "/skills/invoice-reconciler/scripts/reconcile.py"
    traj = trajectory(
        INVOICE_CASE.prompt,
        ("check", [bash(f"test -f {script}", "[exit code: 0]")]),
        ("run", [bash(f"python3 {script} data/march.csv", "Traceback (most recent call last):\n  boom\n[exit code: 1]")]),
        ("The total unmatched amount is 1234.50", None),
    )
    behaviors = run(grade_behavior_check(grading_input(traj), JUDGE))
    assert behaviors.sub_scores["behavior[0]"] == 0.0  # "runs scripts/reconcile.py on the staged file"


def test_no_final_answer_is_decided_no():
    traj = trajectory(INVOICE_CASE.prompt, ("", [bash("ls", "data")]))
    result = run(grade_accuracy(grading_input(traj), JUDGE))
    assert (
        result.sub_scores["task_addressed"] == 0.0
        and result.sub_scores["actionable"] == 0.0
    )
    assert result.sub_scores["facts_consistent"] == 0.0


def test_answer_file_wins_over_last_message():
    result = run(
        grade_accuracy(grading_input(bad_run(), final_answer="Total: 1,234.50"), JUDGE)
    )
    assert result.sub_scores["facts_consistent"] == 1.0


@pytest.mark.parametrize(("expected", "answer", "verdict"), [
    ("Unmatched total 1234.50", "The unmatched total is about 1.2k.", "no"),
    ("Mean ratio 0.68885", "The mean ratio is 0.68986", "no"),
    ("Total 34648.04", "The total is 34.648", "no"),
    ("Total 34648.04", "The total is 34,648.04", "yes"),
    ("Total 34648.04", "The total is 34,648", "yes"),
    ("Total 34648.04", "The total is 34.648 thousand", "yes"),
    ("Share 0.68885", "The share is 68.885%", "yes"),
    ("Mean ratio 0.68885", "The mean ratio is 0.7", "no"),
])
def test_numbers_are_compared_with_the_ground_truth_and_answered_yes_or_no(expected, answer, verdict):
    case = INVOICE_CASE.model_copy(update={"assertions": [], "expected_output": expected})
    traj = trajectory(case.prompt, (answer, None))
    result = run(grade_accuracy(grading_input(traj, case), JUDGE))
    assert result.sub_scores["facts_consistent"] == (1.0 if verdict == "yes" else 0.0)


def test_behaviours_decide_only_what_the_trace_decides():
    traj = good_run()
    facts = build_facts(grading_input(traj), INVOICE_CASE, "last message")
    # Naming "skill" no longer decides a behaviour by activation.
    assert behavior(facts, "reads SKILL.md only after the final report is written").answer is None
    assert behavior(facts, "uses the skill").answer is None
    assert behavior(facts, "never runs scripts/reconcile.py").answer == "no"
    assert behavior(facts, "reads SKILL.md before running scripts/reconcile.py").answer == "yes"
    assert behavior(facts, "runs scripts/reconcile.py with --strict").answer is None
    none = build_facts(grading_input(trajectory(INVOICE_CASE.prompt, ("1234.50", None))), INVOICE_CASE, "x")
    assert behavior(none, "never runs scripts/reconcile.py").answer == "yes"
    assert behavior(none, "reads SKILL.md before running scripts/reconcile.py").answer == "no"


@pytest.mark.parametrize(
    "call",
    [
        ("activate_skill", {"name": "invoice-reconciler"}, "ok"),
        ("Skill", {"skill": "invoice-reconciler"}, "ok"),
        (
            "read_file",
            {"absolute_path": "/root/.gemini/skills/invoice-reconciler/SKILL.md"},
            "ok",
        ),
        ("Read", {"file_path": "/skills/invoice-reconciler/SKILL.md"}, "ok"),
    ],
)
def test_harness_specific_activations_are_recognised(call):
    traj = trajectory(INVOICE_CASE.prompt, ("", [call]), ("1234.50", None))
    facts = build_facts(grading_input(traj), INVOICE_CASE, "last message")
    assert [a.skill for a in facts.activations] == ["invoice-reconciler"]


def test_behaviors_decided_or_abstained_with_security_appended():
    result = run(grade_behavior_check(grading_input(good_run()), JUDGE))
    assert [e.check for e in result.evidence] == ["behavior[0]", "behavior[1]"]
    own, security = result.evidence
    assert (
        own.passed is True
        and "scripts/reconcile.py ran cleanly at step 3" in own.detail
    )
    assert (
        security.passed is None
        and security.detail.startswith(SECURITY_BEHAVIOR)
        and ABSTAIN in security.detail
    )
    assert result.score == 1.0 and result.sub_scores == {
        "behavior[0]": 1.0,
        "behavior[1]": None,
    }
    bad = run(grade_behavior_check(grading_input(bad_run()), JUDGE))
    assert bad.score == 0.0 and "was never run" in bad.evidence[0].detail


def test_undecidable_behaviors_leave_the_metric_unscored():
    case = INVOICE_CASE.model_copy(
        update={"expected_behavior": ["explains the discrepancies politely"]}
    )
    result = run(grade_behavior_check(grading_input(good_run(), case), JUDGE))
    assert result.score is None
    assert result.unscored_reason == "judge heuristic decided none of the 2 behavior(s)"


def test_goal_accuracy_two_step_with_heuristic():
    good = run(grade_goal_accuracy(grading_input(good_run()), JUDGE))
    assert good.score == 1.0 and good.details == {"method": "two_step"}
    assert "ragas needs an LLM judge, not heuristic" in good.evidence[0].detail
    assert run(grade_goal_accuracy(grading_input(bad_run()), JUDGE)).score == 0.0
    vague = INVOICE_CASE.model_copy(
        update={"assertions": [], "expected_output": "A clear reconciliation summary"}
    )
    undecided = run(grade_goal_accuracy(grading_input(good_run(), vague), JUDGE))
    assert undecided.score is None and "could not decide" in undecided.unscored_reason


def test_unknown_prompt_abstains_and_replies_are_deterministic():
    out = run(
        JUDGE.ask(
            prompt_id="static_rubric",
            prompt_version="1",
            system="s",
            user="u",
            schema=YesNo,
        )
    )
    assert (
        out.value is None
        and out.error == f"{ABSTAIN}: no offline rule for prompt 'static_rubric'"
    )
    first = run(grade_judged(grading_input(good_run()), HeuristicJudge()))
    second = run(grade_judged(grading_input(good_run()), HeuristicJudge()))
    assert first == second
    assert {r.grader for r in first.values()} == {"heuristic"}


def test_missing_trajectory_and_case_are_unscored_not_zero():
    no_traj = run(
        grade_judged(
            grading_input(None, trajectory_error="trajectory.json is not valid JSON"),
            JUDGE,
        )
    )
    assert all(r.score is None for r in no_traj.values())
    assert (
        no_traj["accuracy"].unscored_reason
        == "no usable trajectory: trajectory.json is not valid JSON"
    )
    no_case = run(grade_judged(grading_input(good_run(), case=None), JUDGE))
    assert {r.unscored_reason for r in no_case.values()} == {
        "no case spec for this trial: the judged metrics need one"
    }


def test_real_skillsbench_trajectories_grade_without_error(shared_dir):
    trials = sorted(
        (shared_dir / "data" / "skillsbench" / "trials").glob(
            "*/*/agent/trajectory.json"
        )
    )
    if not trials:
        pytest.skip("no SkillsBench trials under ../shared/data/skillsbench/trials")
    activated = 0
    for path in trials:
        traj = Trajectory.model_validate(json.loads(path.read_text()))
        skills = [
            c.arguments.get("name")
            for s in traj.steps
            for c in s.tool_calls or []
            if c.function_name == "activate_skill"
        ]
        case = EvalCase.model_validate(
            {
                "id": "t",
                "prompt": "task",
                "expected_skill": skills[0] if skills else "none-used",
                "expected_output": "done",
            }
        )
        results = run(grade_judged(grading_input(traj, case), JUDGE))
        assert set(results) == {"accuracy", "goal_accuracy", "behavior_check"}
        acc = results["accuracy"]
        assert "right_skill" not in acc.sub_scores  # activation is never accuracy
        facts = build_facts(grading_input(traj, case), case, "last message")
        assert bool(facts.activations) == bool(skills)
        activated += bool(skills)
    assert activated >= 1


def test_embedded_subagent_work_counts_and_is_rendered():
    parent = trajectory(
        INVOICE_CASE.prompt,
        ("Delegating.", [("task", {"prompt": "reconcile"}, "done: 1234.50")]),
        ("The total unmatched amount is 1234.50", None),
    ).model_dump(mode="json", exclude_none=True)
    sub = trajectory(
        "reconcile",
        ("", [bash("cat /skills/invoice-reconciler/SKILL.md", "doc")]),
        ("", [bash("python3 scripts/reconcile.py data/march.csv", "1234.50")]),
    ).model_dump(mode="json", exclude_none=True)
    sub["trajectory_id"] = "sub-1"
    parent["subagent_trajectories"] = [sub]
    traj = Trajectory.model_validate(parent)
    facts = build_facts(grading_input(traj), INVOICE_CASE, "last message")
    assert facts.activations and any(r.ok for r in facts.script_runs)
    from aces_bench.graders.judge_context import render_trajectory

    assert "[sub-1/step 2] agent:" in render_trajectory(traj)
