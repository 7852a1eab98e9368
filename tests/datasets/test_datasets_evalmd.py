"""EVAL.md convention: questions with sub-items, behaviors, notes (golden/valid/EVAL.md)."""

from __future__ import annotations

from pathlib import Path

from datasets_support import GOLDEN

from aces_bench.datasets.evalmd import intent_cases, parse_eval_md

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
