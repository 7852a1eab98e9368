"""Activation and contamination count only what the agent was shown (issue 27, point 4).

A read of SKILL.md or a harness activation call counts when it succeeded: exit status
(or error flag) and output checked. A baseline that tries to read the absent target
and fails keeps its pair; the attempt is recorded apart, on the trial.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from harbor.models.trial.result import TrialResult
from support.grading import EXAMPLES, SCRIPT, SKILL, bash, trajectory, trial_result, write_trial

from aces_bench.cases import EvalCase
from aces_bench.config.spec import GradingSpec
from aces_bench.grading.grade import GradingContext, grade_subject
from aces_bench.grading.subject import TrialSubject
from aces_bench.judges.heuristic import HeuristicJudge
from aces_bench.records.trials import GradedTrial, TrialFacts

CASE = EvalCase.model_validate({
    "id": "explicit-1", "kind": "explicit", "prompt": "Use the invoice-reconciler skill on data/march.csv.",
    "expected_skill": SKILL, "expected_script": SCRIPT,
    "assertions": [{"kind": "number", "value": 1400.07, "tolerance": 0.01}],
})
MISSING = f"cat: /skills/{SKILL}/SKILL.md: No such file or directory"
BODY = f"---\nname: {SKILL}\ndescription: Reconcile invoices.\n---\n# Reconcile\nRun {SCRIPT}."


def grade(tmp_path: Path, traj: dict, condition: str, reward: float = 0.0) -> GradedTrial:
    result = trial_result("aces/t", f"t__{condition}", reward)
    d = write_trial(tmp_path / "job", f"t__{condition}", traj, result, workspace={"answer.txt": "no idea"})
    staged = (SKILL,) if condition == "with_skill" else ()
    facts = TrialFacts(
        task_id="t", attempt=1, skill=SKILL, case_id=CASE.id, case_kind="explicit", negative_control=False,
        condition=condition, workspace_mode="isolation", decoy_set="none", n_visible_skills=len(staged),
        status="ok", failure_cause=None, trial_name=f"t__{condition}", trial_dir=str(d), reward=reward,
    )
    subject = TrialSubject(
        facts=facts, case=CASE, result=TrialResult.model_validate(result), target_skill=SKILL,
        allowed_skills=staged, staged_skills=staged, artifacts_dir=d / "artifacts" / "workspace",
        skill_dir=EXAMPLES / SKILL, verifier_checks=True,
        labels={"run_id": "job", "harness": "h", "model": "m", "agent_label": "h", "judge_label": "heuristic",
                "backend": "b"}, skills_dir="/skills", workdir="/workspace",
    )
    return asyncio.run(grade_subject(subject, GradingContext(grading=GradingSpec(mode="aces_default"), judge=HeuristicJudge())))


def _attempts(g: GradedTrial) -> list[str]:
    return [e.detail for e in g.metrics["skill_execution"].evidence if e.check == "activation.failed_attempt"]


def test_a_baseline_whose_read_of_the_target_failed_keeps_its_pair(tmp_path):
    # The LLM baseline is told to use a named skill and tries: the file is not there.
    g = grade(tmp_path, trajectory(bash(f"cat /skills/{SKILL}/SKILL.md", MISSING, code=1),
                                   bash("cat data/march.csv", "id,amount\n1,2")), "baseline")
    assert g.baseline_saw_target is False
    assert g.outcome == 0.0  # scored: the pair is kept
    assert g.activated is False
    assert any(n.startswith("baseline tried to read the target skill, which was not there: read of "
                            f"/skills/{SKILL}/SKILL.md via bash at step 2 failed (exit 1: {MISSING})") for n in g.notes)
    assert _attempts(g) == [f"attempt to activate {SKILL!r} at step 2 (read of /skills/{SKILL}/SKILL.md via bash) "
                            f"failed (exit 1: {MISSING}): not an activation"]


def test_a_terminal_screen_without_exit_status_is_read_for_the_failure(tmp_path):
    # terminus-2 keystrokes: no exit status, the screen shows the error.
    screen = bash(f"cat /skills/{SKILL}/SKILL.md", f"$ cat /skills/{SKILL}/SKILL.md\n{MISSING}\n$ ", code=None)
    g = grade(tmp_path, trajectory(screen), "baseline")
    assert g.baseline_saw_target is False and g.outcome == 0.0


def test_a_baseline_that_did_read_a_leaked_copy_counts_as_it_ran_flagged(tmp_path):
    # Issue 33: it was excluded with its pair; it now counts as it ran (behaviour change is the point).
    leaked = bash(f"cat ~/.claude/skills/{SKILL}/SKILL.md", BODY)
    g = grade(tmp_path, trajectory(leaked), "baseline")
    assert g.baseline_saw_target is True and g.outcome == 0.0 and g.trial_class == "finished"
    assert any("baseline saw the target skill: read of ~/.claude/skills/" in n for n in g.notes)


def test_a_read_that_showed_no_text_is_no_contamination(tmp_path):
    # A harness that recorded no output at all: nothing shows the agent saw the skill.
    g = grade(tmp_path, trajectory(bash(f"cat ~/.claude/skills/{SKILL}/SKILL.md", "", code=None)), "baseline")
    assert g.baseline_saw_target is False and g.outcome == 0.0


def test_with_skill_activation_needs_a_successful_read_or_call(tmp_path):
    failed_then_ok = trajectory(
        bash(f"cat /skills/{SKILL.replace('-', '_')}/SKILL.md",
             f"cat: /skills/{SKILL.replace('-', '_')}/SKILL.md: No such file or directory", code=1),
        bash(f"cat /skills/{SKILL}/SKILL.md", BODY),
    )
    g = grade(tmp_path, failed_then_ok, "with_skill")
    assert g.activated is True
    evidence = {e.check: e for e in g.metrics["skill_execution"].evidence}
    assert evidence["activation"].step_id == 3 and len(_attempts(g)) == 1
    refused = {"tool": "activate_skill", "args": {"name": SKILL},
               "out": f"Error: Skill '{SKILL}' not found. Available skills: none", "extra": None}
    g = grade(tmp_path / "b", trajectory(refused), "with_skill")
    assert g.activated is False and len(_attempts(g)) == 1


def test_one_call_reading_two_files_fails_only_for_the_one_its_error_names(tmp_path):
    other = "/skills/helper/SKILL.md"
    both = bash(f"cat {other} /skills/{SKILL}/SKILL.md", f"{BODY}\ncat: {other}: No such file or directory", code=1)
    g = grade(tmp_path, trajectory(both), "with_skill")
    assert g.activated is True
