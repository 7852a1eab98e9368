"""EVAL.md convention: questions with sub-items, behaviors, notes (golden/valid/EVAL.md)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from support.datasets import GOLDEN

from aces_bench.cases.evalmd import intent_cases, parse_eval_md

PATH = GOLDEN / "valid" / "EVAL.md"


def test_golden_eval_md_parses():
    intent = parse_eval_md(PATH.read_text(), PATH)
    first, second, third = intent.questions
    assert first.prompt == "What is the total of the amount column in data/sales.csv?"
    assert (first.expected, first.files, first.behaviors) == (
        "total=141.75", ["evals/files/sales.csv"], ["runs scripts/stats.py on data/sales.csv"])
    assert (second.id, second.kind, third.negative) == ("larger-region", "implicit", True)
    assert intent.behaviors == ["reads csv-stats/SKILL.md before running any script"]
    assert intent.notes == ["Blank cells are skipped, never counted as zero."]


def test_intent_cases_carry_their_origin_and_directives():
    cases = intent_cases(parse_eval_md(PATH.read_text(), PATH), "csv-stats", PATH)
    assert [c.id for c in cases] == ["intent-1", "larger-region", "intent-3"]
    assert all(c.source == "eval_md" and c.note.startswith("from EVAL.md question") for c in cases)
    assert cases[2].is_negative_control and cases[2].expected_behavior == []  # directives skip negative controls
    assert cases[1].expected_behavior == ["reads csv-stats/SKILL.md before running any script"]


def test_questions_across_lists_are_numbered_in_order_and_headings_are_case_insensitive():
    text = "# T\n\n## questions\n1. First?\n\nsome prose\n\n- Second?\n  - Expected: 2\n\n## BEHAVIOURS\n- b\n"
    intent = parse_eval_md(text, Path("EVAL.md"))
    assert [q.prompt for q in intent.questions] == ["First?", "Second?"]
    assert intent.questions[1].expected == "2" and intent.behaviors == ["b"]


EVAL_MD_ONLY = """# Line count: what I expect

## Questions
- How many non-empty lines does data/list.txt have?
  - expected: 3
  - file: evals/files/list.txt
  - assertion: The answer is 3

## Must do
- runs scripts/lines.py on data/list.txt

## Must never do
- edits or deletes data/list.txt

## Should trigger
- count the non-empty lines of my notes file

## Negative Cases
- What is the capital of France?

## Background
Lines holding only spaces are empty.
"""


def _eval_md_only_skill(tmp_path: Path) -> Path:
    import shutil

    src = Path(__file__).resolve().parents[1] / "datasets" / "corpus" / "aces-bench" / "line-count"
    skill = tmp_path / "line-count"
    shutil.copytree(src, skill)
    (skill / "evals" / "evals.json").unlink()
    (skill / "eval.config").unlink()
    (skill / "evals" / "EVAL.md").write_text(EVAL_MD_ONLY)
    return skill


def test_a_skill_with_only_eval_md_has_cases_at_run_time(tmp_path):
    from aces_bench.cases.formats import load_assets

    assets = load_assets(_eval_md_only_skill(tmp_path), "line-count")
    cases = {c.id: c for c in assets.intent_cases}
    assert list(cases) == ["intent-1", "trigger-1", "no-trigger-1"]
    one = cases["intent-1"]
    assert one.expected_output == "3" and one.assertions == ["The answer is 3"]
    assert one.expected_behavior == ["runs scripts/lines.py on data/list.txt",
                                     "must never: edits or deletes data/list.txt"]
    assert cases["trigger-1"].expected_skill == "line-count"
    assert cases["no-trigger-1"].is_negative_control and cases["no-trigger-1"].expected_behavior == []
    assert [r.format for r in assets.readings] == ["EVAL.md"] * 3


def test_eval_md_outranks_its_stale_copy_and_leads_generated_cases(tmp_path):
    import json

    from aces_bench.cases.formats import load_suite

    skill = _eval_md_only_skill(tmp_path)
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "line-count", "evals": [
        {"id": "intent-1", "prompt": "an older copy", "source": "eval_md"},
        {"id": "tpl-explicit", "prompt": "Use the line-count skill.", "source": "template",
         "expected_behavior": ["answers from the skill's output"]},
    ]}))
    cases = {c.id: c for c in load_suite(skill, "line-count").evals}
    assert cases["intent-1"].prompt.startswith("How many non-empty lines")
    assert cases["tpl-explicit"].expected_behavior == [
        "runs scripts/lines.py on data/list.txt", "must never: edits or deletes data/list.txt",
        "answers from the skill's output"]


def test_misspelt_section_is_an_error_and_other_sections_are_notes():
    import pytest

    from aces_bench.core.errors import EvalsError

    intent = parse_eval_md(EVAL_MD_ONLY, Path("EVAL.md"))
    assert intent.notes == ["Background", "Lines holding only spaces are empty."]
    with pytest.raises(EvalsError, match=r"unknown section '## Questons' \(did you mean '## Questions'\?\)"):
        parse_eval_md("## Questons\n- a?\n", Path("EVAL.md"))


@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed; the local backend needs it")
def test_a_skill_with_only_eval_md_runs(tmp_path):
    import pandas as pd

    from aces_bench.config.compose import compose_spec
    from aces_bench.study.entry import run_study

    skill = _eval_md_only_skill(tmp_path)
    out = tmp_path / "out"
    spec = compose_spec(["skill=custom", f"skill.paths=[{skill}]", "skill.cases=[intent-1]",
                         f"+backend.kwargs.root_parent={tmp_path}", "report=false"], output_dir=out)
    run_study(spec)
    table = pd.read_parquet(out / "trials.parquet").set_index("condition")
    assert table.loc["with_skill", "status"] == "ok"
    assert table.loc["with_skill", "metric_skill_execution"] == 1.0


def test_eval_md_outranks_a_generated_case_with_its_id(tmp_path):
    import json

    from aces_bench.cases.formats import load_assets, suite_of

    skill = _eval_md_only_skill(tmp_path)
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "line-count", "evals": [
        # a template case that happens to carry the id of EVAL.md's first question
        {"id": "intent-1", "prompt": "Use the line-count skill on data/list.txt.", "source": "template",
         "expected_output": "a guess"},
        # and one whose renamed id would be taken: it is left out
        {"id": "trigger-1", "prompt": "count lines", "source": "llm"},
        {"id": "trigger-1-generated", "prompt": "count the lines please", "source": "llm"},
    ]}))
    assets = load_assets(skill, "line-count")
    cases = {c.id: c for c in suite_of(assets).evals}
    assert cases["intent-1"].source == "eval_md" and cases["intent-1"].expected_output == "3"
    assert cases["intent-1-generated"].expected_output == "a guess"  # renamed, kept
    assert cases["trigger-1"].source == "eval_md" and cases["trigger-1-generated"].prompt == "count the lines please"
    notes = {(r.file, r.case_id): r.notes for r in assets.readings}
    assert "renamed from 'intent-1': the evals/EVAL.md case with that id outranks a generated one" in \
        notes[("evals/evals.json", "intent-1-generated")]
    assert "outranks the generated case 'intent-1' of evals/evals.json, renamed 'intent-1-generated'" in \
        notes[("evals/EVAL.md", "intent-1")]
    assert "outranks the generated case 'trigger-1' of evals/evals.json, left out ('trigger-1-generated' is taken)" in \
        notes[("evals/EVAL.md", "trigger-1")]
