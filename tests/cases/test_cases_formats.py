"""Every asset format reads into the one model and writes one canonical form (golden files)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.datasets import GOLDEN, SKILL_NAME, skill_copy

from aces_bench.cases import EvalCase as ReExportedCase
from aces_bench.cases import load_suite as reexported_load_suite
from aces_bench.cases.credentials import resolve_credentials
from aces_bench.cases.formats import derived_id, load_suite, render_suite, write_suite
from aces_bench.cases.model import EvalCase, EvalSuite
from aces_bench.core.errors import EvalsError

VALID = GOLDEN / "valid"
CANONICAL = GOLDEN / "canonical"
# golden input -> (where it goes in the skill, canonical golden)
FORMATS = {
    "reference_style.json": ("evals/evals.json", "reference_style.json"),
    "paper_style.yaml": ("evals/evals.yaml", "paper_style.json"),
    "cases.jsonl": ("evals/evals.jsonl", "cases.json"),
    "same_cases.evals.json": ("evals/evals.json", "same_cases.evals.json"),
    "same_cases.eval.config": ("eval.config", "same_cases.config.json"),
    "eval_config.yaml.config": ("eval.config", "eval_config_yaml.json"),
}


def _load(tmp_path: Path, name: str) -> EvalSuite:
    skill = skill_copy(tmp_path)
    dest = skill / FORMATS[name][0]
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(VALID / name, dest)
    return load_suite(skill, SKILL_NAME)


@pytest.mark.parametrize("name", sorted(FORMATS))
def test_format_reads_to_the_canonical_golden(name, tmp_path):
    suite = _load(tmp_path, name)
    assert render_suite(suite) == (CANONICAL / FORMATS[name][1]).read_text()


@pytest.mark.parametrize("name", sorted(FORMATS))
@pytest.mark.parametrize("suffix", [".json", ".jsonl", ".yaml"])
def test_written_suite_reads_back_identical(name, suffix, tmp_path):
    suite = _load(tmp_path / "in", name)
    skill = skill_copy(tmp_path / "out")
    written = write_suite(skill / "evals" / f"evals{suffix}", suite)
    again = load_suite(skill, SKILL_NAME)
    assert again == suite
    assert [c.content_hash() for c in again.evals] == [c.content_hash() for c in suite.evals]
    assert written.read_text() == render_suite(again, suffix), "canonical form is a fixed point"


def test_reference_style_spellings_and_defaults(tmp_path):
    suite = _load(tmp_path, "reference_style.json")
    first, second, third = suite.evals
    assert [c.id for c in suite.evals] == ["1", "2", "3"]  # integer ids of the reference implementation
    assert first.assertions[0] == "The answer gives the total 141.75"  # 'expectations' read as assertions
    assert first.checks[0].value == 141.75
    assert first.expected_skill == SKILL_NAME and not first.is_negative_control  # absent: the suite's skill
    assert third.expected_skill is None and third.is_negative_control  # null: a negative control
    assert second.acceptable_skills == ["spreadsheet-helper"]
    assert all(c.source == "author" for c in suite.evals)


def test_paper_spelling_migrates_from_version_1(tmp_path):
    suite = _load(tmp_path, "paper_style.yaml")
    assert suite.schema_version == "2"
    case = suite.evals[0]
    assert case.prompt.startswith("Use the csv-stats skill") and case.expected_output == "total=141.75"
    assert suite.evals[1].expected_behavior == ["does not load the csv-stats skill"]  # a string becomes a list


def test_jsonl_header_custom_destination_and_credentials(tmp_path):
    suite = _load(tmp_path, "cases.jsonl")
    assert suite.evals[0].files[0].dest == "inputs/sales.csv"
    assert suite.evals[1].required_credentials == ["WAREHOUSE_TOKEN"]


def test_eval_config_and_evals_json_describe_the_same_cases(tmp_path):
    """Round trip: modulo the fields only evals.json has, both formats give the same EvalCases."""
    from_json = _load(tmp_path / "a", "same_cases.evals.json").evals
    from_config = _load(tmp_path / "b", "same_cases.eval.config").evals
    only_in_evals_json = {"expected_script": None, "assertions": []}
    assert [c.model_copy(update=only_in_evals_json) for c in from_json] == from_config


def test_eval_config_ids_are_derived_from_the_prompt(tmp_path):
    cases = _load(tmp_path, "eval_config.yaml.config").evals
    assert [c.id for c in cases] == [derived_id(c.prompt) for c in cases]
    assert derived_id("Average  the amount\ncolumn") == derived_id("Average the amount column")
    assert cases[0].required_credentials == ["WAREHOUSE_TOKEN", "STRIPE_API_KEY"]


def test_evals_file_and_eval_config_combine_in_order(tmp_path):
    skill = skill_copy(tmp_path)
    (skill / "evals" / "evals.json").write_text((VALID / "reference_style.json").read_text())
    shutil.copyfile(VALID / "eval_config.yaml.config", skill / "eval.config")
    suite = load_suite(skill, SKILL_NAME)
    assert [c.id for c in suite.evals][:3] == ["1", "2", "3"] and len(suite.evals) == 5


def test_no_assets_is_a_clear_error(tmp_path):
    skill = skill_copy(tmp_path)
    with pytest.raises(EvalsError, match="no evaluation cases: none of evals/evals.json"):
        load_suite(skill, SKILL_NAME)


def test_cases_module_reexports_the_same_objects():
    assert ReExportedCase is EvalCase and reexported_load_suite is load_suite


def test_content_hash_ignores_schema_2_fields_at_their_defaults():
    base = {"id": "a", "prompt": "x", "expected_skill": "s"}
    case = EvalCase.model_validate(base)
    # The hash of a schema-1 case, computed the way version 1 did (all fields, sorted keys).
    v1 = {k: v for k, v in case.model_dump(mode="json").items()
          if k not in ("required_credentials", "source", "note", "proposed", "status", "judged_only")}
    import hashlib

    assert case.content_hash() == hashlib.sha256(json.dumps(v1, sort_keys=True).encode()).hexdigest()
    assert EvalCase.model_validate({**base, "source": "template"}).content_hash() != case.content_hash()


def test_resolve_credentials_reads_names_from_the_environment(tmp_path):
    case = _load(tmp_path, "cases.jsonl").evals[1]
    # Issue 21: a case receives only the names the operator lists in skill.allow_credentials.
    allowed = ["WAREHOUSE_TOKEN"]
    assert resolve_credentials(case, {"WAREHOUSE_TOKEN": "t0k", "OTHER": "x"}, allowed=allowed) == {"WAREHOUSE_TOKEN": "t0k"}
    with pytest.raises(EvalsError, match="is not listed in skill.allow_credentials"):
        resolve_credentials(case, {"WAREHOUSE_TOKEN": "t0k"})
    with pytest.raises(EvalsError) as missing:
        resolve_credentials(case, {}, allowed=allowed)
    assert str(missing.value) == (
        "case contextual-1: case needs credential WAREHOUSE_TOKEN, which is not set in the host environment\n"
        "  fix: export WAREHOUSE_TOKEN=<value> before running (it is passed to the trial only at run time), "
        "or leave this case out with skill.cases"
    )
    with pytest.raises(EvalsError, match="which is empty in the host environment"):
        resolve_credentials(case, {"WAREHOUSE_TOKEN": ""}, allowed=allowed)
    with pytest.raises(EvalsError, match="configured by the operator for the model or judge"):
        resolve_credentials(case, {"WAREHOUSE_TOKEN": "t"}, operator_names=["WAREHOUSE_TOKEN"])


def test_credential_values_never_reach_the_written_suite(tmp_path):
    suite = _load(tmp_path, "cases.jsonl")
    resolve_credentials(suite.evals[1], {"WAREHOUSE_TOKEN": "s3cr3t-value"}, allowed=["WAREHOUSE_TOKEN"])
    assert "s3cr3t-value" not in render_suite(suite) and "WAREHOUSE_TOKEN" in render_suite(suite)


@pytest.mark.parametrize("name", [
    "OPENAI_API_KEY", "ANTHROPIC_API_KEY", "GEMINI_API_KEY", "GOOGLE_API_KEY", "AZURE_OPENAI_API_KEY",
    "OPENAI_BASE_URL", "OPENAI_API_BASE", "MY_SERVICE_BASE_URL", "HARBOR_TELEMETRY", "LITELLM_LOCAL_MODEL_COST_MAP",
    "HF_TOKEN", "AWS_SECRET_ACCESS_KEY", "PATH", "LD_PRELOAD", "openai_api_key",
    # Found past the old name list (issue 12): refused by rule now.
    "ANTHROPIC_AUTH_TOKEN", "AWS_BEARER_TOKEN_BEDROCK", "OPENAI_ADMIN_KEY", "STRIPE_API_KEY", "GOOGLE_MAPS_API_KEY",
    "MY_CLIENT_SECRET", "SECRET_SAUCE", "ACME_AUTH_TOKEN",
])
def test_operator_credentials_are_refused(name):
    from aces_bench.cases.credentials import operator_reason

    assert operator_reason(name) is not None


@pytest.mark.parametrize("name", ["WAREHOUSE_TOKEN", "GITHUB_TOKEN", "DB_PASSWORD", "STRIPE_TOKEN", "WEATHER_TOKEN"])
def test_skill_service_credentials_are_allowed(name):
    """When the operator lists them (issue 21: never by default)."""
    from aces_bench.cases.credentials import check_credential_name

    assert check_credential_name(name, allowed=[name]) == name
    with pytest.raises(ValueError, match="is not listed in skill.allow_credentials"):
        check_credential_name(name)
