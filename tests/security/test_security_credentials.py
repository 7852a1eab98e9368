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
from security_support import HOSTILE_SKILL

from aces_bench.cases import EvalCase
from aces_bench.datasets.credentials import check_study_credentials, resolve_credentials
from aces_bench.errors import EvalsError

from harness_support import run_cli, study_overrides  # isort: skip

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
