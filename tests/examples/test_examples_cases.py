"""Every target's eval cases hold against its real script, and only against it.

For each non-negative case: the documented Usage command, run on the staged fixtures
with the sandbox's python3, satisfies every deterministic check, while the reference
agent's no-skill fallback (line counts), the prompt itself and the skill's own docs do
not. Negative controls are the reverse: the fallback answers them and routing picks no
skill.
"""

from __future__ import annotations

import pytest
from support.examples import (
    all_cards,
    card_for,
    failed_checks,
    fallback_answer,
    run_usage,
    stage,
    target_suites,
)

from aces_bench.agents.routing import route
from aces_bench.agents.usage import build_invocation, usage_line

SUITES = target_suites()
REQUIRED_KINDS = {"explicit", "implicit", "contextual", "negative"}
POSITIVE = [(s, c) for s, suite in SUITES for c in suite.evals if not c.is_negative_control]
NEGATIVE = [(s, c) for s, suite in SUITES for c in suite.evals if c.is_negative_control]


def _id(pair):
    skill, case = pair
    return f"{skill.name}:{case.id}"


@pytest.mark.parametrize("skill,suite", SUITES, ids=[s.name for s, _ in SUITES])
def test_suite_shape(skill, suite):
    assert suite.skill_name == skill.name
    assert REQUIRED_KINDS <= {c.kind for c in suite.evals}
    documented = usage_line(skill.body)
    for case in suite.evals:
        assert case.checks, f"{case.id}: no deterministic check"
        assert 2 <= len(case.expected_behavior) <= 3, case.id
        assert case.files, f"{case.id}: no input files"
        assert all(f.src.startswith("evals/files/") and f.dest.startswith("data/") for f in case.files)
        if case.kind == "negative":
            assert case.is_negative_control and case.expected_script is None, case.id
            continue
        assert case.expected_skill == skill.name and case.expected_output, case.id
        # The expected script is the one the Usage line calls, with one file per placeholder.
        inv = build_invocation(documented, str(skill.path), [f.dest for f in case.files])
        assert inv.script == str(skill.path / case.expected_script), case.id
        assert all(f.dest in inv.argv for f in case.files), f"{case.id}: a fixture is not consumed by Usage"


@pytest.mark.parametrize("skill,case", POSITIVE, ids=[_id(p) for p in POSITIVE])
def test_script_answer_passes_every_check(skill, case, tmp_path):
    proc = run_usage(skill, case, tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip(), "script printed nothing"
    assert failed_checks(case, proc.stdout.strip()) == []


@pytest.mark.parametrize("skill,case", POSITIVE, ids=[_id(p) for p in POSITIVE])
def test_fallback_prompt_and_docs_do_not_pass(skill, case, tmp_path):
    inputs = stage(skill, case, tmp_path)
    assert failed_checks(case, fallback_answer(tmp_path, inputs)), "line counts alone pass the case"
    assert failed_checks(case, case.prompt), "the prompt states the answer"
    docs = "\n".join(p.read_text(encoding="utf-8") for p in [skill.path / "SKILL.md", *sorted((skill.path / "references").glob("*"))])
    assert failed_checks(case, docs), "SKILL.md or references/ state the answer"


@pytest.mark.parametrize("skill,case", NEGATIVE, ids=[_id(p) for p in NEGATIVE])
def test_negative_control_is_answered_by_the_fallback(skill, case, tmp_path):
    inputs = stage(skill, case, tmp_path)
    assert failed_checks(case, fallback_answer(tmp_path, inputs)) == []


@pytest.mark.parametrize("skill,case", POSITIVE, ids=[_id(p) for p in POSITIVE])
def test_routing_picks_the_target_alone_and_among_decoys(skill, case):
    assert route(case.prompt, [card_for(skill)]).chosen == skill.path.name
    decision = route(case.prompt, all_cards())
    assert decision.chosen == skill.path.name, decision.reason


@pytest.mark.parametrize("skill,case", NEGATIVE, ids=[_id(p) for p in NEGATIVE])
def test_negative_control_routes_nowhere(skill, case):
    assert route(case.prompt, [card_for(skill)]).chosen is None
    decision = route(case.prompt, all_cards())
    assert decision.chosen is None, decision.reason
