"""openai/skills' evaluations/*.json read as cases (issue 36): criteria judged, named scripts decided from the trace."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aces_bench.cases.formats import has_eval_assets, load_assets, load_suite
from aces_bench.core.errors import EvalsError
from aces_bench.inputs.skills import evaluation_asset

CASE = {
    "name": "Post a refund",
    "skills": ["ledger-tool"],
    "query": "Post a refund of 12.50 for order 7781.",
    "context": "The ledger server is already running locally.",
    "expected_behavior": [
        "Step 1: Read the skill instructions",
        "Step 2: Post the entry with `python3 scripts/post_entry.py --amount -12.50`",
        "Step 3: Report the entry id",
    ],
    "success_criteria": ["The refund is posted as a negative amount", "The entry id is reported to the user"],
}


def _skill(tmp_path: Path, *cases: tuple[str, object]) -> Path:
    d = tmp_path / "ledger-tool"
    (d / "scripts").mkdir(parents=True)
    (d / "SKILL.md").write_text("---\nname: ledger-tool\ndescription: Post ledger entries.\n---\n# Ledger\n")
    (d / "scripts" / "post_entry.py").write_text("print('ok')\n")
    (d / "evaluations").mkdir()
    for name, body in cases:
        (d / "evaluations" / name).write_text(json.dumps(body) if not isinstance(body, str) else body)
    return d


def test_an_evaluation_file_is_one_case_with_judged_criteria_and_a_decided_script_run(tmp_path):
    d = _skill(tmp_path, ("post-refund.json", CASE), ("other-skill.json", {**CASE, "skills": ["billing"]}))
    assert has_eval_assets(d)
    suite = load_suite(d, "ledger-tool")
    case, other = {c.id: c for c in suite.evals}["post-refund"], {c.id: c for c in suite.evals}["other-skill"]
    assert case.prompt == "The ledger server is already running locally.\n\nPost a refund of 12.50 for order 7781."
    assert case.assertions == CASE["success_criteria"] and not case.checks  # judged, never a guessed check
    assert case.expected_script == "scripts/post_entry.py" and case.expected_skill == "ledger-tool"
    assert case.expected_behavior == ["Read the skill instructions",
                                      "Post the entry with `python3 scripts/post_entry.py --amount -12.50`",
                                      "Report the entry id", "runs scripts/post_entry.py"]
    assert other.expected_skill == "billing"
    reading = next(r for r in load_assets(d, "ledger-tool").readings if r.case_id == "post-refund")
    assert reading.format == "openai/skills evaluation"
    assert "expected_behavior names scripts/post_entry.py: 'runs scripts/post_entry.py' is decided from the trace" \
        in reading.notes


def test_a_step_naming_no_skill_script_stays_judged(tmp_path):
    body = {**CASE, "expected_behavior": ["Run `conductor --version`", "Use curl.py from the internet"]}
    case = load_suite(_skill(tmp_path, ("a.json", body)), "ledger-tool").evals[0]
    assert case.expected_script is None and case.expected_behavior == body["expected_behavior"]


@pytest.mark.parametrize(("body", "message"), [
    ({**CASE, "succes_criteria": ["x"]}, "unknown field(s) 'succes_criteria' (did you mean 'success_criteria'?)"),
    ({k: v for k, v in CASE.items() if k != "query"}, "no query (the user's request)"),
    ([CASE], "an evaluation file holds one case as a JSON object, got list"),
    ({**CASE, "success_criteria": [1, 2]}, "success_criteria must be a list of strings, got list"),
    ("{not json", "not valid JSON"),
])
def test_a_malformed_evaluation_file_names_the_file_and_the_fix(tmp_path, body, message):
    d = _skill(tmp_path, ("bad.json", body))
    with pytest.raises(EvalsError) as err:
        load_suite(d, "ledger-tool")
    assert message in str(err.value) and "evaluations/bad.json" in str(err.value)
    assert "fix:" in str(err.value)


def test_evaluation_files_never_reach_a_sandbox():
    assert evaluation_asset("evaluations/post-refund.json") is not None
