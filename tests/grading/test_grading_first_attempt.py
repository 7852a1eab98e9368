"""First-attempt pass next to the final pass, from real trial dirs graded end to end."""

from __future__ import annotations

import asyncio
from pathlib import Path

from harbor.models.trial.result import TrialResult
from support.grading import SCRIPT, SKILL, bash, trajectory, trial_result, write_trial

from aces_bench.cases import EvalCase
from aces_bench.config.spec import GradingSpec
from aces_bench.grading.grade import GradingContext, grade_subject
from aces_bench.grading.subject import TrialSubject
from aces_bench.judges.heuristic import HeuristicJudge
from aces_bench.records.self_correction import SelfCorrection
from aces_bench.records.trials import GradedTrial, TrialFacts

CASE = EvalCase.model_validate({
    "id": "explicit-1", "kind": "explicit", "prompt": "Reconcile data/march.csv.", "expected_skill": SKILL,
    "expected_script": SCRIPT, "expected_output": "unmatched total 1400.07",
    "assertions": [{"kind": "number", "value": 1400.07, "tolerance": 0.01}],
})
READ = bash(f"cat /skills/{SKILL}/SKILL.md", f"---\nname: {SKILL}\n---\n# Reconcile\nRun {SCRIPT}.")
RUN = f"python3 /skills/{SKILL}/{SCRIPT} data/march.csv"


def grade(tmp_path: Path, traj: dict | None, reward: float | None, mode: str = "aces_default") -> GradedTrial:
    result = trial_result("aces/t", "t__1", reward)
    d = write_trial(tmp_path / "job", "t__1", traj, result, workspace={"answer.txt": "unmatched total 1400.07"})
    facts = TrialFacts(
        task_id="t", attempt=1, skill=SKILL, case_id=CASE.id, case_kind=None, negative_control=False,
        condition="with_skill", workspace_mode="isolation", decoy_set="none", n_visible_skills=1, status="ok",
        failure_cause=None, trial_name="t__1", trial_dir=str(d), reward=reward,
    )
    subject = TrialSubject(
        facts=facts, case=CASE, result=TrialResult.model_validate(result), target_skill=SKILL, allowed_skills=(SKILL,), artifacts_dir=d / "artifacts" / "workspace",
        labels={"run_id": "job", "harness": "h", "model": "m", "agent_label": "h", "judge_label": "heuristic",
                "backend": "b"}, skills_dir="/skills", workdir="/workspace",
    )
    return asyncio.run(grade_subject(subject, GradingContext(grading=GradingSpec(mode=mode), judge=HeuristicJudge())))


def test_patched_skill_passes_finally_but_fails_on_first_attempt(tmp_path):
    traj = trajectory(
        READ,
        bash(RUN, "Traceback (most recent call last):\nKeyError: 'amount'", code=1),
        bash(f"sed -i 's/amount/total/' /skills/{SKILL}/{SCRIPT}", ""),
        bash(RUN, "unmatched total 1400.07"),
        final="unmatched total 1400.07",
    )
    g = grade(tmp_path, traj, reward=1.0)
    assert g.final_pass is True and g.first_attempt_pass is False
    section = SelfCorrection.of(g.self_correction)
    assert section.patched is True and section.affected_checks == ["execution"]
    assert section.first_attempt_errors[0].exit_code == 1
    assert g.metrics["skill_execution"].score == 1.0 and g.self_correction.score < 1.0
    row = g.to_row()
    assert row.first_attempt_pass is False and row.final_pass is True


def test_clean_run_passes_on_first_attempt_and_fills_every_view(tmp_path):
    g = grade(tmp_path, trajectory(READ, bash(RUN, "unmatched total 1400.07"), final="unmatched total 1400.07"),
              reward=1.0)
    assert g.final_pass is True and g.first_attempt_pass is True
    assert SelfCorrection.of(g.self_correction).patched is False
    assert set(g.dimensions) == {"Security", "Correctness", "Discoverability", "Effectiveness", "Efficiency"}
    assert g.dimensions["Discoverability"] == 1.0 and g.outcome_only == 1.0
    assert g.grading_mode == "aces_default" and g.author_score is None


def test_failed_reward_fails_both_and_unknown_reward_leaves_both_unknown(tmp_path):
    traj = trajectory(READ, bash(RUN, "unmatched total 1400.07"))
    g = grade(tmp_path / "a", traj, reward=0.0)
    assert g.final_pass is False and g.first_attempt_pass is False
    g = grade(tmp_path / "b", traj, reward=None)
    assert g.final_pass is None and g.first_attempt_pass is None


def test_missing_trajectory_is_unscored_with_the_cause_not_zero(tmp_path):
    g = grade(tmp_path, None, reward=1.0)
    assert not g.has_trajectory and "no trajectory.json and no plain-text agent log" in g.trajectory_error
    for name in ("security", "skill_execution", "skill_efficiency"):
        assert g.metrics[name].score is None and "no trajectory" in g.metrics[name].unscored_reason
    assert g.first_attempt_pass is None  # whether the skill was patched is unknown
    assert g.final_pass is True  # the verifier's reward still stands
