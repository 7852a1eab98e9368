"""The task outcome (graders/outcome.py) and the rules around it, on hand-built trial dirs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from harbor.models.trial.result import TrialResult
from support.grading import SKILL, bash, trajectory, trial_result, write_trial

from aces_bench.cases import EvalCase
from aces_bench.config.compose import compose_spec
from aces_bench.graders.outcome import NO_CHECK, trial_outcome
from aces_bench.grading.grade import GradingContext, grade_subject
from aces_bench.grading.labels import spec_labels
from aces_bench.grading.subject import TrialSubject
from aces_bench.judges.heuristic import HeuristicJudge

WITH_CHECK = {"id": "c1", "prompt": "Total?", "expected_skill": SKILL, "expected_output": "Total 1400.07",
              "assertions": [{"kind": "number", "value": 1400.07, "tolerance": 0.01}]}
NO_CHECKS = {"id": "c2", "prompt": "Total?", "expected_skill": SKILL, "expected_output": "Total 1400.07"}


def _grade(tmp_path: Path, case: dict, *, reward: float, answer: str, status: str = "ok",
           checks: bool | None = None, calls: tuple = (), skill_dir: Path | None = None,
           listed: bool | None = None) -> object:
    traj = trajectory(bash("cat data/march.csv", "a,b"), *calls, final=answer)
    name = f"t-{case['id']}-{status}"
    result = trial_result("task", name, reward)
    d = write_trial(tmp_path, name, traj, result, {"answer.txt": answer})
    c = EvalCase.model_validate(case)
    spec = compose_spec([], output_dir=Path("/tmp/unused"))
    subject = TrialSubject.of(
        task_id="task", attempt=0, skill=SKILL, case=c, case_id=c.id, condition="baseline", status=status,
        failure_cause=None if status == "ok" else "AgentTimeoutError", trial_name=name, trial_dir=d,
        result=TrialResult.model_validate(result), reward=reward, target_skill=SKILL, allowed_skills=(SKILL,),
        artifacts_dir=d / "artifacts" / "workspace", skill_dir=skill_dir,
        verifier_checks=bool(c.checks) if checks is None else checks, target_listed=listed, labels=spec_labels(spec), skills_dir="/skills", workdir="/workspace",
    )
    ctx = GradingContext(grading=spec.grading, judge=HeuristicJudge())
    return asyncio.run(grade_subject(subject, ctx))


def test_a_baseline_whose_model_was_shown_the_target_counts_as_it_ran_flagged(tmp_path):
    # Proof of load: the harness listed the target to the baseline's model. It used to be a
    # setup error that dropped the pair; it now counts as it ran (issue 33), flagged.
    g = _grade(tmp_path, WITH_CHECK, reward=1.0, answer="Total 1400.07", listed=True)
    assert g.baseline_saw_target and g.trial_class == "finished" and g.outcome == 1.0 and g.final_pass is True
    assert any("was shown the target skill" in n and "counted as it ran, flagged" in n for n in g.notes)
    clean = _grade(tmp_path / "n", WITH_CHECK, reward=1.0, answer="Total 1400.07", listed=False)
    assert not clean.baseline_saw_target


def test_a_case_with_checks_takes_the_verifier_reward(tmp_path):
    g = _grade(tmp_path, WITH_CHECK, reward=0.0, answer="Total 1400.07")
    # The verifier's word stands even where the judged metrics would say otherwise.
    assert g.reward == 0.0 and g.outcome == 0.0 and g.outcome_source == "verifier"


def test_no_check_no_reward_the_outcome_is_judged(tmp_path):
    right = _grade(tmp_path, NO_CHECKS, reward=1.0, answer="The total is 1400.07")
    # Pass is decided once, from the outcome: here the judged one (before issue 22, None).
    assert right.reward is None and right.final_pass is True
    assert any(NO_CHECK in n for n in right.notes)
    # The heuristic judge gives no accuracy credit for reading the skill: the judged outcome is the answer's.
    assert right.outcome_source == "judged" and right.outcome == 1.0
    wrong = _grade(tmp_path / "w", NO_CHECKS, reward=1.0, answer="The total is 1400.70")
    assert wrong.reward is None and wrong.outcome_source == "judged" and wrong.outcome == 0.0


def test_a_timed_out_trial_is_a_failure_of_its_arm_and_left_out_only_per_protocol(tmp_path):
    # Intention to treat (issue 22): the headline outcome scores it 0 and not passed; the
    # per-protocol view (finished trials only) leaves it out.
    g = _grade(tmp_path, WITH_CHECK, reward=1.0, answer="Total 1400.07", status="timeout")
    assert g.outcome == 0.0 and g.outcome_per_protocol is None and g.final_pass is False
    assert g.trial_class == "arm_failure"
    assert any("failure of its arm, scored 0" in n for n in g.notes)
    row = g.to_row()
    assert row.outcome == 0.0 and row.outcome_per_protocol is None and row.final_pass is False


@pytest.mark.parametrize(("status", "outcome", "passed"), [("agent_error", 0.0, False), ("verifier_error", 0.0, False),
                                                           ("timeout", 0.0, False), ("infra_error", None, None),
                                                           ("not_run", None, None)])
def test_only_infrastructure_and_trials_never_run_are_left_out(status, outcome, passed):
    o = trial_outcome(status=status, reward=None, verifier_checks=True, metrics={}, grading_mode="aces_default",
                      pass_threshold=1.0)
    assert o.outcome == outcome and o.final_pass is passed and o.per_protocol is None


def test_a_baseline_that_read_the_target_skill_counts_as_it_ran_flagged(tmp_path):
    # As when an image bakes skills into the agent's home: gemini-cli reads its own copy.
    # Issue 33: such a baseline was excluded with its pair; it now counts as it ran, flagged
    # (behaviour change is the point: dropping it dropped the pair from the headline and gate).
    home = bash(f"cat /root/.gemini/skills/{SKILL}/SKILL.md", "---\nname: x\n---\nbody")
    g = _grade(tmp_path, WITH_CHECK, reward=1.0, answer="Total 1400.07", calls=(home,))
    assert g.baseline_saw_target and g.outcome == 1.0 and g.final_pass is True and g.trial_class == "finished"
    assert any("baseline saw the target skill" in n for n in g.notes)
    assert any("counted as it ran, flagged" in n for n in g.notes)
    # By content: the body shows up in an output under another name.
    skill = tmp_path / "skill"
    skill.mkdir()
    body = "Reconcile the ledger against the bank statement line by line, matching on amount and date first."
    (skill / "SKILL.md").write_text(f"---\nname: {SKILL}\ndescription: d\n---\n{body}\n")
    copy = bash("cat /tmp/notes/guide.md", f"# guide\n{body}\n")
    g = _grade(tmp_path / "c", WITH_CHECK, reward=1.0, answer="Total 1400.07", calls=(copy,), skill_dir=skill)
    assert g.baseline_saw_target and "output contains its SKILL.md text" in " ".join(g.notes)
    clean = _grade(tmp_path / "n", WITH_CHECK, reward=1.0, answer="Total 1400.07", skill_dir=skill)
    assert not clean.baseline_saw_target and clean.outcome == 1.0
