"""An external judge never receives a raw secret; what graders write is masked."""

from __future__ import annotations

import asyncio
import json

import pytest
from harbor.models.trial.result import TrialResult
from support import judges
from support.grading import (
    SCRIPT,
    SKILL,
    bash,
    trajectory,
    trial_result,
    write_trial,
)

from aces_bench.cases import EvalCase
from aces_bench.config.spec import GradingSpec
from aces_bench.graders.judged import RedactingJudge, guarded
from aces_bench.graders.redact import redact_value
from aces_bench.grading.grade import GradingContext, grade_subject
from aces_bench.grading.subject import TrialSubject
from aces_bench.judges.factory import build_judge
from aces_bench.judges.heuristic import HeuristicJudge
from aces_bench.judges.spec import JudgeSpec
from aces_bench.records.trials import TrialFacts, read_grades, write_grades

AWS_KEY = "AKIAZ7QX3MPLE4KEY9QA"
CASE = EvalCase.model_validate({
    "id": "explicit-1", "prompt": "Reconcile data/march.csv.", "expected_skill": SKILL, "expected_script": SCRIPT,
    "expected_output": "unmatched total 1400.07", "expected_behavior": ["runs the reconciler"],
})


@pytest.fixture
def llm_server():
    support = judges
    state = support.ScriptedServer()
    state.responder = lambda body: support.Reply(json.dumps({"answer": "yes", "reason": "ok"}))
    server, url = support.start_server(state)
    try:
        yield state, url
    finally:
        server.timer.cancel()
        server.shutdown()
        server.server_close()


def subject(tmp_path):
    traj = trajectory(
        bash(f"cat /skills/{SKILL}/SKILL.md", f"---\nname: {SKILL}\n---\n# Reconcile\nRun {SCRIPT}."),
        bash("cat data/.env", f"AWS_ACCESS_KEY_ID={AWS_KEY}"),
        bash(f"python3 /skills/{SKILL}/{SCRIPT} data/march.csv", "unmatched total 1400.07"),
        final=f"unmatched total 1400.07 (used key {AWS_KEY})",
    )
    result = trial_result("aces/t", "t__1", 1.0)
    d = write_trial(tmp_path / "job", "t__1", traj, result,
                    workspace={"answer.txt": f"unmatched total 1400.07\nkey: {AWS_KEY}", "work/tmp.txt": AWS_KEY})
    facts = TrialFacts(
        task_id="t", attempt=1, skill=SKILL, case_id=CASE.id, case_kind=None, negative_control=False,
        condition="with_skill", workspace_mode="isolation", decoy_set="none", n_visible_skills=1, status="ok",
        failure_cause=None, trial_name="t__1", trial_dir=str(d), reward=1.0,
    )
    return TrialSubject(
        facts=facts, case=CASE, result=TrialResult.model_validate(result), target_skill=SKILL, allowed_skills=(SKILL,), artifacts_dir=d / "artifacts" / "workspace",
        labels={"run_id": "job", "harness": "h", "model": "m", "agent_label": "h", "judge_label": "x", "backend": "b"}, skills_dir="/skills", workdir="/workspace",
    )


def test_prompts_to_an_llm_judge_are_redacted(tmp_path, llm_server):
    state, url = llm_server
    judge = build_judge(JudgeSpec(kind="litellm", model="openai/test-judge", base_url=url, max_retries=0,
                                  timeout_sec=10))
    g = asyncio.run(grade_subject(subject(tmp_path), GradingContext(grading=GradingSpec(mode="aces_default"),
                                                                    judge=judge)))
    assert state.requests, "the judge was never called"
    sent = json.dumps(state.requests)
    assert AWS_KEY not in sent
    assert "[REDACTED:secret.aws_access_key]" in sent
    assert g.metrics["accuracy"].grader == "litellm:openai/test-judge"  # attribution unchanged by the wrapper
    # The security grader still sees the raw trajectory and finds the secret.
    assert "secret.aws_access_key" in {f["pattern_id"] for f in g.metrics["security"].details["findings"]}
    write_grades(tmp_path / "grades.jsonl", [g], mask=redact_value)
    text = (tmp_path / "grades.jsonl").read_text()
    assert AWS_KEY not in text and "[REDACTED:secret.aws_access_key]" in text
    assert read_grades(tmp_path / "grades.jsonl")[0].final_answer.startswith("unmatched total 1400.07")
    # The raw trajectory in the job dir is untouched.
    assert AWS_KEY in (tmp_path / "job" / "t__1" / "agent" / "trajectory.json").read_text()


def test_only_off_host_judges_are_wrapped():
    heuristic = HeuristicJudge()
    assert guarded(heuristic) is heuristic
    wrapped = guarded(build_judge(JudgeSpec(kind="litellm", model="openai/x", base_url="http://127.0.0.1:9")))
    assert isinstance(wrapped, RedactingJudge) and wrapped.label == "litellm:openai/x" and wrapped.kind == "llm"
    assert guarded(wrapped) is wrapped
