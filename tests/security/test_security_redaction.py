"""Finding 6 and the long AWS key of finding 10: redaction masks values, never serialized
text, so what graders write always parses and no part of a secret survives."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from harbor.models.trial.result import TrialResult
from support import grading

from aces_bench.cases import EvalCase
from aces_bench.config.spec import GradingSpec
from aces_bench.graders.redact import redact, redact_value
from aces_bench.grading.grade import GradingContext, grade_subject
from aces_bench.grading.subject import TrialSubject
from aces_bench.judges.heuristic import HeuristicJudge
from aces_bench.records.trials import read_grades, write_grades

ROOT = Path(__file__).resolve().parents[2]

AWS_42 = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEYzq"  # 42 characters, 2 past the usual 40

# (payload as a script would print it, the secret part that must not survive)
PAYLOADS = [
    ('{"env": "MY_API_KEY=abcdefgh12"}', "abcdefgh12"),  # the reproduction
    ('MY_API_KEY=s3cr3tval\\"ij', "s3cr3tval"),  # an escaped quote right after the value
    ('{"cmd": "export AUTH_TOKEN=\\\\x41\\\\x42\\\\x43\\\\x44tok"}', "x44tok"),  # backslashes
    ('password="hunter2hunter2"', "hunter2hunter2"),
    ("MY_API_KEY=abcdefgh", "abcdefgh"),  # the shortest value masked (8 chars)
    ("MY_API_KEY=" + "Zq9" * 70, "Zq9Zq9Zq9"),  # a long value
    (f"aws_secret_access_key={AWS_42}", AWS_42[-2:]),
    (f'{{"aws_secret_access_key": "{AWS_42}"}}', AWS_42[-2:]),
    ("sk-proj-" + "A1b2C3d4" * 6 + '"}\\', "A1b2C3d4"),
]


@pytest.mark.parametrize("payload, secret", PAYLOADS)
def test_structured_redaction_masks_and_always_parses(payload, secret):
    value = {"out": payload, "nested": [payload, {payload: payload}], "n": 3}
    masked = redact_value(value)
    text = json.dumps(masked, ensure_ascii=False)
    assert secret not in text
    back = json.loads(text)  # always parses
    assert back["n"] == 3 and "[REDACTED:" in back["out"]
    assert redact(back["out"]) == back["out"]  # masking is idempotent


def test_the_whole_42_character_aws_secret_is_masked():
    text = redact(f"AWS_SECRET_ACCESS_KEY={AWS_42}\n")
    assert text == "AWS_SECRET_ACCESS_KEY=[REDACTED:secret.aws_secret_key]\n"


def test_grades_jsonl_parses_whatever_a_script_prints(tmp_path):
    """End to end: a trial whose tool output and answer hold every payload above."""
    gs = grading
    case = EvalCase.model_validate({"id": "explicit-1", "prompt": "Reconcile data/march.csv.",
                                    "expected_skill": gs.SKILL, "expected_script": gs.SCRIPT,
                                    "expected_output": "unmatched total 1400.07"})
    printed = "\n".join(p for p, _ in PAYLOADS)
    traj = gs.trajectory(gs.bash(f"cat /skills/{gs.SKILL}/SKILL.md", "# Reconcile"),
                         gs.bash(f"python3 /skills/{gs.SKILL}/{gs.SCRIPT} data/march.csv", printed),
                         final="unmatched total 1400.07\n" + printed)
    result = gs.trial_result("aces/t", "t__1", 1.0)
    d = gs.write_trial(tmp_path / "job", "t__1", traj, result, workspace={"answer.txt": printed})
    subject = TrialSubject.of(
        task_id="t", attempt=1, skill=gs.SKILL, case=case, case_id=case.id, condition="with_skill", status="ok",
        failure_cause=None, trial_name="t__1", trial_dir=d, result=TrialResult.model_validate(result), reward=1.0,
        target_skill=gs.SKILL, allowed_skills=(gs.SKILL,), artifacts_dir=d / "artifacts" / "workspace",
        labels={"run_id": "job", "harness": "h", "model": "m", "agent_label": "h", "judge_label": "x",
                "backend": "b"}, skills_dir="/skills", workdir="/workspace",
    )
    graded = asyncio.run(grade_subject(subject, GradingContext(grading=GradingSpec(mode="aces_default"),
                                                               judge=HeuristicJudge())))
    findings = graded.metrics["security"].details["findings"]
    assert findings, "the security grader found none of the secrets; the test would prove nothing"
    path = tmp_path / "grades.jsonl"
    write_grades(path, [graded], mask=redact_value)
    text = path.read_text()
    for line in text.splitlines():
        json.loads(line)
    assert "[REDACTED:secret.assignment]" in read_grades(path)[0].final_answer
    leaked = [secret for _, secret in PAYLOADS if secret in text]
    assert leaked == []
