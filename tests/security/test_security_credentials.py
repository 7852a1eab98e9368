"""Finding 4: operator credentials are refused by rule, unless the operator allows them.

The three names that passed the old list are refused; a skill's own service token is
not; the operator's explicit allowance works for look-alikes but never for process
settings, endpoints or the model's and judge's own variables. End to end, a study
whose case names one stops before anything is emitted, naming the case.
"""

from __future__ import annotations

import json
import shutil

import pytest
from support.security import HOSTILE_SKILL
from support.studies import run_cli, study_overrides

from aces_bench.cases import EvalCase
from aces_bench.cases.credentials import check_study_credentials, resolve_credentials
from aces_bench.core.errors import EvalsError

BYPASSED = ["ANTHROPIC_AUTH_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "OPENAI_ADMIN_KEY"]


def case(*names: str) -> EvalCase:
    return EvalCase.model_validate({"id": "c1", "prompt": "p", "expected_skill": "s", "required_credentials": list(names)})


@pytest.mark.parametrize("name", BYPASSED + ["ACME_API_KEY", "MY_CLIENT_SECRET", "AWS_PROFILE", "GEMINI_PROJECT"])
def test_operator_looking_names_are_refused_by_rule(name):
    with pytest.raises(EvalsError, match=rf"case c1: credential '{name}' names .*skill.allow_credentials=\[{name}\]"):
        check_study_credentials([case(name)])
    with pytest.raises(EvalsError):
        resolve_credentials(case(name), {name: "v"})


def test_the_operator_can_allow_a_look_alike_explicitly():
    assert resolve_credentials(case("ACME_API_KEY"), {"ACME_API_KEY": "v"}, allowed=["ACME_API_KEY"]) == {
        "ACME_API_KEY": "v"}
    assert resolve_credentials(case("WAREHOUSE_TOKEN"), {"WAREHOUSE_TOKEN": "t"}, allowed=["WAREHOUSE_TOKEN"]) == {
        "WAREHOUSE_TOKEN": "t"}


@pytest.mark.parametrize("name", ["GH_TOKEN", "PGPASSWORD", "WAREHOUSE_TOKEN"])
def test_a_name_the_operator_did_not_list_is_refused(name):
    """Issue 21: GH_TOKEN and PGPASSWORD look like nobody's model key and were passed in.
    Now a case receives only the names the operator lists in skill.allow_credentials."""
    with pytest.raises(EvalsError, match=rf"case c1: credential '{name}' is not listed in skill.allow_credentials"):
        check_study_credentials([case(name)])
    with pytest.raises(EvalsError, match=rf"skill.allow_credentials=\[{name}\]"):
        resolve_credentials(case(name), {name: "v"})
    with pytest.raises(EvalsError):
        check_study_credentials([case(name)], allowed=["SOME_OTHER_NAME"])


@pytest.mark.parametrize("name", ["OPENAI_BASE_URL", "PATH", "LD_PRELOAD", "HARBOR_TELEMETRY"])
def test_settings_and_endpoints_are_refused_when_parsed(name):
    with pytest.raises(ValueError, match="cannot name or override"):
        case(name)


def test_the_judges_variable_is_refused_even_when_allowed():
    with pytest.raises(EvalsError, match="configured by the operator"):
        check_study_credentials([case("JUDGE_KEY_VAR")], allowed=["JUDGE_KEY_VAR"], operator_names=["JUDGE_KEY_VAR"])


def test_a_study_naming_an_operator_credential_stops_before_emitting(tmp_path):
    skill = tmp_path / "hostile-colsum"
    shutil.copytree(HOSTILE_SKILL, skill)
    evals = json.loads((skill / "evals" / "evals.json").read_text())
    evals["evals"][0]["required_credentials"] = ["AWS_BEARER_TOKEN_BEDROCK"]
    (skill / "evals" / "evals.json").write_text(json.dumps(evals))
    out = tmp_path / "out"
    proc = run_cli(f"output_dir={out}", *study_overrides(skill=skill, root_parent=tmp_path), timeout=120)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "credential 'AWS_BEARER_TOKEN_BEDROCK' names a cloud credential" in proc.stderr
    assert "skill.allow_credentials=[AWS_BEARER_TOKEN_BEDROCK]" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (out / "tasks").exists()


VALUES = {"GH_TOKEN": "ghp_canary0123456789abcdefABCDEF012345", "PGPASSWORD": "pg-canary-Tr0ub4dor&3-horse"}


def test_every_spelling_of_a_passed_value_is_masked_inside_other_text():
    import base64
    from urllib.parse import quote

    from aces_bench.core.masking import mask_known

    pg = VALUES["PGPASSWORD"]
    printed = [f"postgres://app:{pg}@db:5432/x", f"postgres://app:{quote(pg, safe='')}@db/x",
               json.dumps({"password": pg}), base64.b64encode(pg.encode()).decode(),
               f"Authorization: token {VALUES['GH_TOKEN']}x"]
    for text in printed:
        masked = mask_known(text, VALUES)
        assert pg not in masked and VALUES["GH_TOKEN"] not in masked and "[REDACTED:credential " in masked, masked
        assert quote(pg, safe="") not in masked and base64.b64encode(pg.encode()).decode() not in masked


def test_the_graded_record_masks_the_values_it_was_passed(tmp_path, monkeypatch):
    """grades.jsonl: the answer, every metric's evidence and the notes."""
    import asyncio

    from harbor.models.trial.result import TrialResult
    from support import grading as gs

    from aces_bench.config.spec import GradingSpec
    from aces_bench.graders.redact import redact_value
    from aces_bench.grading.grade import GradingContext, grade_subject
    from aces_bench.grading.subject import TrialSubject
    from aces_bench.judges.heuristic import HeuristicJudge
    from aces_bench.records.trials import read_grades, write_grades

    for k, v in VALUES.items():
        monkeypatch.setenv(k, v)
    leak = f"psql postgres://app:{VALUES['PGPASSWORD']}@db/x; curl -H 'Authorization: token {VALUES['GH_TOKEN']}'"
    c = EvalCase.model_validate({"id": "explicit-1", "prompt": "Reconcile.", "expected_skill": gs.SKILL,
                                 "expected_output": "total", "required_credentials": sorted(VALUES)})
    traj = gs.trajectory(gs.bash(leak, leak), final=leak)
    d = gs.write_trial(tmp_path / "job", "t__1", traj, gs.trial_result("aces/t", "t__1", 1.0),
                       workspace={"answer.txt": leak})
    subject = TrialSubject.of(
        task_id="t", attempt=1, skill=gs.SKILL, case=c, case_id=c.id, condition="with_skill", status="ok",
        failure_cause=None, trial_name="t__1", trial_dir=d, result=TrialResult.model_validate(
            gs.trial_result("aces/t", "t__1", 1.0)), reward=1.0, target_skill=gs.SKILL, allowed_skills=(gs.SKILL,),
        artifacts_dir=d / "artifacts" / "workspace",
        labels={"run_id": "job", "harness": "h", "model": "m", "agent_label": "h", "judge_label": "x", "backend": "b"}, skills_dir="/skills", workdir="/workspace")
    graded = asyncio.run(grade_subject(subject, GradingContext(grading=GradingSpec(mode="aces_default"),
                                                               judge=HeuristicJudge())))
    path = tmp_path / "grades.jsonl"
    write_grades(path, [graded], mask=redact_value)
    text = path.read_text()
    assert not [v for v in VALUES.values() if v in text]
    assert read_grades(path)[0].final_answer.startswith("psql postgres://app:[REDACTED:credential PGPASSWORD]@db/x")
    assert read_grades(path)[0].credential_names == sorted(VALUES)
