"""Golden malformed assets: one file (or folder) per variant under golden/malformed/, exact error text.

Each variant is placed into a copy of golden/skill/ by its suffix (.json -> evals/evals.json,
.jsonl, .yaml, .config -> eval.config, .md -> EVAL.md; a folder mirrors the skill layout).
"""

from __future__ import annotations

import os

import pytest
from support.datasets import GOLDEN, load_error, place, skill_copy

MALFORMED = GOLDEN / "malformed"

EXPECTED = {
    'absolute_script.json': (
        "<skill>/evals/evals.json: invalid values:\n"
        "    evals[0].expected_script: expected_script must be relative and stay inside its folder (no '..') (got '/usr/bin/python3')\n"
        "  fix: correct the listed keys in evals.json"
    ),
    'bad_json.json': (
        "<skill>/evals/evals.json: not valid JSON: Expecting property name enclosed in double quotes at line 1 column 24\n"
        "  fix: fix the JSON syntax"
    ),
    'bad_jsonl.jsonl': (
        "<skill>/evals/evals.jsonl: line 2: not valid JSON: Expecting value at column 23\n"
        "  fix: fix the JSON syntax"
    ),
    'bad_regex_check.json': (
        "<skill>/evals/evals.json: invalid values:\n"
        "    evals[0].assertions[0].check: regex does not compile: missing ), unterminated subpattern at position 0\n"
        "  fix: correct the listed keys in evals.json"
    ),
    'bad_yaml.yaml': (
        "<skill>/evals/evals.yaml: not valid YAML at line 4: found unexpected end of stream\n"
        "  fix: fix the YAML syntax (quote values that contain ':' or start with a special character)"
    ),
    'base_url_credential.config': (
        "<skill>/eval.config: invalid values:\n"
        "    evals[0].credentials[0]: names a model endpoint (*_BASE_URL / *_API_BASE), which a skill cannot name or override; the operator configures model keys and endpoints (got 'OPENAI_BASE_URL')\n"
        "  fix: correct the listed keys in eval.config ({evals: [{prompt, expected, credentials}]})"
    ),
    'binary.json': (
        "<skill>/evals/evals.json: file is binary (contains NUL bytes)\n"
        "  fix: use a UTF-8 text file"
    ),
    'both_json_and_yaml': (
        "<skill>: more than one evaluation file: evals/evals.json and evals/evals.yaml\n"
        "  fix: keep exactly one of evals/evals.json, evals/evals.jsonl, evals/evals.yaml"
    ),
    'colliding_fixtures.json': (
        "<skill>/evals/evals.json: invalid values:\n"
        "    evals[0]: fixtures 'evals/files/sales.csv' and 'evals/files/regions.csv' would both be staged at 'data/sales.csv'\n"
        "  fix: correct the listed keys in evals.json"
    ),
    'config_bad_json.config': (
        "<skill>/eval.config: not valid JSON: Expecting property name enclosed in double quotes at line 1 column 27\n"
        "  fix: fix the JSON syntax"
    ),
    'config_dup_prompt.config': (
        "<skill>/eval.config: invalid values:\n"
        "    evals[1].id: case id 'case-0967115f28' is used twice\n"
        "  fix: correct the listed keys in eval.config"
    ),
    'config_missing_prompt.config': (
        "<skill>/eval.config: invalid values:\n"
        "    evals[0].prompt: Field required\n"
        "  fix: correct the listed keys in eval.config ({evals: [{prompt, expected, credentials}]})"
    ),
    'config_unknown_key.config': (
        "<skill>/eval.config: invalid values:\n"
        "    evals[0].expect: Extra inputs are not permitted (got 'ok')\n"
        "  fix: correct the listed keys in eval.config ({evals: [{prompt, expected, credentials}]})"
    ),
    'dup_across_files': (
        "<skill>/eval.config: case id 'shared' is used in both evals/evals.json and eval.config\n"
        "  fix: give one of the cases another id, or describe the case in one file only"
    ),
    'dup_id.json': (
        "<skill>/evals/evals.json: invalid values:\n"
        "    evals[1].id: case id 'a' is used twice\n"
        "  fix: correct the listed keys in evals.json"
    ),
    'escaping_fixture.json': (
        "<skill>/evals/evals.json: invalid values:\n"
        "    evals[0].files[0].src: path must be relative and stay inside its folder (no '..') (got '../../etc/passwd')\n"
        "  fix: correct the listed keys in evals.json"
    ),
    'eval_md_unknown_key.md': (
        "<skill>/EVAL.md:3: question 1: sub-item 'expcted: 141.75' is not 'key: value' with a known key\n"
        "  fix: use one of: id, kind, expected, file, behavior, assertion, credential, skill"
    ),
    'eval_md_unknown_kind.md': (
        "<skill>/EVAL.md:2: question 1: unknown kind 'sideways'\n"
        "  fix: use one of: explicit, implicit, contextual, negative, error_path, security, conflict, upgrade"
    ),
    'eval_md_unknown_section.md': (
        "<skill>/EVAL.md:9: unknown section '## Behavoirs' (did you mean '## Behaviors'?)\n"
        "  fix: use the sections '## Questions', '## Behaviors', '## Must never do', '## Should trigger', "
        "'## Should not trigger' and '## Notes'"
    ),
    'eval_md_unsafe_id.md': (
        "<skill>/EVAL.md:2: invalid values:\n"
        "    question 1.id: case id is not a safe identifier (letters, digits, '_', '-', '.'; at most 64) (got '../up')\n"
        "  fix: correct the question's sub-items"
    ),
    'future_version.json': (
        "<skill>/evals/evals.json: invalid values:\n"
        "    schema_version '9' is not one this aces-bench reads (1, 2)\n"
        "  fix: correct the listed keys in evals.json"
    ),
    'harbor_credential.config': (
        "<skill>/eval.config: invalid values:\n"
        "    evals[0].credentials[0]: names an operator setting (HARBOR_*), which a skill cannot name or override; the operator configures model keys and endpoints (got 'HARBOR_TELEMETRY')\n"
        "  fix: correct the listed keys in eval.config ({evals: [{prompt, expected, credentials}]})"
    ),
    'missing_fixture.json': (
        "<skill>/evals/evals.json: case 'a': fixture 'evals/files/nope.csv' does not exist\n"
        "  fix: add the file at <skill>/evals/files/nope.csv or fix the path"
    ),
    'misspelled_key.json': (
        "<skill>/evals/evals.json: evals[0]: unknown field(s) 'promt' (did you mean 'prompt'?) in case 'a'\n"
        "  fix: fix the spelling or remove the field; fields read: acceptable_alternates, acceptable_skills, "
        "assertions, credentials, expectations, expected_behavior, expected_output, expected_script, "
        "expected_skill, files, ground_truth, id, judged_only, kind, note, prompt, proposed, query, question, "
        "required_credentials, should_trigger, source, status"
    ),
    'no_cases.json': (
        "<skill>/evals/evals.json: invalid values:\n"
        "    evals: no cases (add at least one case)\n"
        "  fix: correct the listed keys in evals.json"
    ),
    'not_utf8.json': (
        "<skill>/evals/evals.json: file is not UTF-8 (byte 37)\n"
        "  fix: re-save the file as UTF-8"
    ),
    'operator_credential.config': (
        "<skill>/eval.config: invalid values:\n"
        "    evals[0].credentials[1]: names a model endpoint (*_BASE_URL / *_API_BASE), which a skill cannot name or override; the operator configures model keys and endpoints (got 'OPENAI_API_BASE')\n"
        "  fix: correct the listed keys in eval.config ({evals: [{prompt, expected, credentials}]})"
    ),
    'operator_credential.json': (
        "<skill>/evals/evals.json: invalid values:\n"
        "    evals[0].required_credentials[0]: names a process setting, which a skill cannot name or override; the operator configures model keys and endpoints (got 'LD_PRELOAD')\n"
        "  fix: correct the listed keys in evals.json"
    ),
    'prompt_and_question.json': (
        "<skill>/evals/evals.json: evals[0]: give either 'prompt' or 'question' (the same field), not both\n"
        "  fix: keep one of 'prompt' and 'question'"
    ),
    'skill_name_mismatch.json': (
        "<skill>/evals/evals.json:skill_name: skill_name 'other-skill' does not match the skill's name 'csv-stats' in SKILL.md\n"
        "  fix: set skill_name to 'csv-stats' (or leave it out)"
    ),
    'unsafe_id.json': (
        "<skill>/evals/evals.json: invalid values:\n"
        "    evals[0].id: case id is not a safe identifier (letters, digits, '_', '-', '.'; at most 64) (got '../a b')\n"
        "  fix: correct the listed keys in evals.json"
    ),
}


def test_every_variant_has_an_expected_error_and_every_expectation_a_file():
    assert sorted(p.name for p in MALFORMED.iterdir()) == sorted(EXPECTED)


@pytest.mark.parametrize("variant", sorted(EXPECTED))
def test_malformed_variant_gives_exact_error(variant, tmp_path):
    skill = skill_copy(tmp_path)
    place(MALFORMED / variant, skill)
    assert load_error(skill) == EXPECTED[variant]


def test_symlinked_fixture_pointing_outside_is_refused(tmp_path):
    outside = tmp_path / "secret.csv"
    outside.write_text("token,1\n")
    skill = skill_copy(tmp_path)
    os.symlink(outside, skill / "evals" / "files" / "link.csv")
    (skill / "evals" / "evals.json").write_text('{"evals": [{"id": "a", "prompt": "x", "files": ["evals/files/link.csv"]}]}')
    assert load_error(skill).replace(str(tmp_path), "<tmp>") == (
        "<skill>/evals/evals.json: case 'a': fixture 'evals/files/link.csv' goes through a symlink pointing "
        "outside the skill folder (evals/files/link.csv -> <tmp>/secret.csv)\n"
        "  fix: copy the file into the skill folder (for example under evals/files/) instead of linking it"
    )


def test_symlinked_folder_pointing_outside_is_refused(tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (tmp_path / "elsewhere" / "data.csv").write_text("a\n1\n")
    skill = skill_copy(tmp_path)
    os.symlink(tmp_path / "elsewhere", skill / "evals" / "files" / "linked")
    (skill / "evals" / "evals.json").write_text('{"evals": [{"id": "a", "prompt": "x", "files": ["evals/files/linked/data.csv"]}]}')
    assert "goes through a symlink pointing outside the skill folder (evals/files/linked ->" in load_error(skill)


def test_symlink_inside_the_skill_is_allowed(tmp_path):
    skill = skill_copy(tmp_path)
    os.symlink(skill / "evals" / "files" / "sales.csv", skill / "evals" / "files" / "alias.csv")
    (skill / "evals" / "evals.json").write_text('{"evals": [{"id": "a", "prompt": "x", "files": ["evals/files/alias.csv"]}]}')
    from aces_bench.cases import load_suite

    assert load_suite(skill, "csv-stats").evals[0].files[0].dest == "data/alias.csv"


def test_symlinked_evals_file_pointing_outside_is_refused(tmp_path):
    outside = tmp_path / "evals.json"
    outside.write_text('{"evals": [{"id": "a", "prompt": "x"}]}')
    skill = skill_copy(tmp_path)
    (skill / "evals").mkdir(exist_ok=True)
    os.symlink(outside, skill / "evals" / "evals.json")
    assert load_error(skill).replace(str(tmp_path), "<tmp>") == (
        "<skill>/evals/evals.json: is a symlink pointing outside the skill folder (to <tmp>/evals.json)\n"
        "  fix: replace the symlink with a regular file inside the skill folder"
    )


def test_oversized_evals_file_is_refused(tmp_path, monkeypatch):
    from aces_bench.cases import safety

    monkeypatch.setattr(safety, "MAX_ASSET_BYTES", 100)
    skill = skill_copy(tmp_path)
    (skill / "evals" / "evals.json").write_text('{"evals": [{"id": "a", "prompt": "' + "x" * 200 + '"}]}')
    assert load_error(skill) == (
        "<skill>/evals/evals.json: file is 238 bytes, above the 100-byte limit\n"
        "  fix: keep evaluation assets small; put large inputs in fixture files under evals/files/"
    )


def test_oversized_fixture_is_refused(tmp_path, monkeypatch):
    from aces_bench.cases import safety

    monkeypatch.setattr(safety, "MAX_FIXTURE_BYTES", 10)
    skill = skill_copy(tmp_path)
    (skill / "evals" / "evals.json").write_text('{"evals": [{"id": "a", "prompt": "x", "files": ["evals/files/sales.csv"]}]}')
    assert load_error(skill) == (
        "<skill>/evals/evals.json: case 'a': fixture 'evals/files/sales.csv' is 35 bytes, above the 10-byte limit\n"
        "  fix: use a smaller sample of the input; fixtures are copied into every task directory"
    )


@pytest.mark.parametrize(("key", "value"), [("id", "case-1\n"), ("id", "case\x1b1"), ("expected_script", "scripts/a\x1b.py")])
def test_a_control_character_in_an_id_or_path_is_refused(tmp_path, key, value):
    """A case id ending in a newline passed the old ``$`` anchor; an ESC would reach
    task.toml, whose writer mangles it: both are refused with the case's key."""
    import json

    skill = skill_copy(tmp_path)
    case = {"id": "case-1", "prompt": "Sum the column.", "expected_output": "6", "expected_skill": "csv-stats"}
    case[key] = value
    (skill / "evals").mkdir(exist_ok=True)
    (skill / "evals" / "evals.json").write_text(json.dumps({"evals": [case]}))
    error = load_error(skill)
    assert error is not None and f"evals[0].{key}" in error, error
    assert "Traceback" not in error and "\n  fix: " in error
