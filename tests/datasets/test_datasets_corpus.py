"""The test corpus: one skill per format other tools write, read unchanged, emitted and run.

Counts are taken from the files themselves (json/yaml, not aces-bench), so a case the
reader dropped or invented fails the test.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pandas as pd
import pytest
import yaml

from aces_bench.cases.formats import load_assets
from aces_bench.config.compose import compose_spec
from aces_bench.emitters import emit_study
from aces_bench.inputs.skills import load_skill

CORPUS = Path(__file__).resolve().parent / "corpus"
SKILLS = sorted(p.parent for p in CORPUS.glob("*/*/SKILL.md"))


SKILLEVALUATOR_ORDER = ("evals.json", "evals.jsonl", "evals.yaml", "evals.yml", "dataset.json", "dataset.jsonl")


def _file_counts(skill: Path) -> int:
    """Cases in the skill's case files, counted from the raw files.

    A folder whose first file (SkillEvaluator's order) is a top-level list is laid out
    for SkillEvaluator, which reads that file only; other folders merge every evals* file.
    """
    n = 0
    files = sorted((skill / "evals").glob("evals*"))
    first = next((skill / "evals" / name for name in SKILLEVALUATOR_ORDER if (skill / "evals" / name).is_file()), None)
    if first is not None and first.suffix == ".json" and isinstance(json.loads(first.read_text()), list):
        files = [first]
    for f in files:
        raw = json.loads(f.read_text()) if f.suffix == ".json" else yaml.safe_load(f.read_text())
        n += len(raw if isinstance(raw, list) else raw["evals"])
    if (skill / "eval.config").is_file():
        n += len(json.loads((skill / "eval.config").read_text())["evals"])
    return n


def test_corpus_has_every_format():
    assert {p.parent.name for p in SKILLS} == {"skillevaluator", "skill-creator", "paper", "aces-bench"}


@pytest.mark.parametrize("skill", SKILLS, ids=lambda p: p.parent.name)
def test_every_case_in_the_files_is_read(skill):
    assets = load_assets(skill, load_skill(skill).name)
    assert len(assets.readings) == _file_counts(skill) > 0
    assert [r.case_id for r in assets.readings] == [c.id for cases, _ in assets.sources() for c in cases]


def test_skillevaluator_list_form_and_second_file():
    """SkillEvaluator reads the first of its files only: evals2.json is listed as not read,
    with how to select it, and read when selected (skill.evals_file)."""
    skill = CORPUS / "skillevaluator" / "calc-lines"
    first = load_assets(skill, "calc-lines")
    assert first.rule == "SkillEvaluator"
    assert {c.id for cases, _ in first.sources() for c in cases} == {"calc-001", "calc-002", "calc-neg-001"}
    assert [(p.name, why) for p, why in first.unread] == [(
        "evals2.json", "not read: SkillEvaluator reads only the first of evals.json, evals.jsonl, evals.yaml, "
        "evals.yml, dataset.json, dataset.jsonl (here evals/evals.json); select it with "
        "skill.evals_file=evals/evals2.json")]
    second = load_assets(skill, "calc-lines", "evals/evals2.json")
    assert [c.id for cases, _ in second.sources() for c in cases] == ["calc-003"]
    assert [p.name for p, _ in second.unread] == ["evals.json"]
    cases = {c.id: c for a in (first, second) for cases, _ in a.sources() for c in cases}
    assert set(cases) == {"calc-001", "calc-002", "calc-neg-001", "calc-003"}
    assert cases["calc-001"].expected_script == "scripts/calc.py"  # bare "calc.py" resolved in the skill
    assert cases["calc-001"].prompt.startswith("Evaluate every expression")
    assert cases["calc-001"].expected_output == "Result: 14 and Result: 25"
    assert len(cases["calc-001"].expected_behavior) == 3
    assert cases["calc-002"].expected_behavior == ["Agent used the calc-lines skill"]
    assert cases["calc-002"].expected_skill == "calc-lines"
    assert cases["calc-neg-001"].is_negative_control  # should_trigger: false
    # Legacy list cases without files get all of evals/files/, as SkillEvaluator stages them.
    assert [f.src for f in cases["calc-002"].files] == ["evals/files/expr.txt"]
    assert [f.src for f in cases["calc-003"].files] == ["evals/files/expr.txt"]  # relative to evals/
    assert cases["calc-003"].assertions == ["Read calc-lines/SKILL.md", "Returned 25 as the second result"]
    reading = {r.case_id: r for a in (first, second) for r in a.readings}
    assert reading["calc-003"].file == "evals/evals2.json"
    assert reading["calc-003"].ignored == ["cross_component: SkillEvaluator plugin signal (advisory there too)"]
    assert "expected_script 'calc.py' resolved inside the skill to scripts/calc.py" in reading["calc-001"].notes


def test_skill_creator_ids_expectations_and_paths():
    skill = CORPUS / "skill-creator" / "orders-total"
    assets = load_assets(skill, "orders-total")
    one, two = assets.evals_cases
    assert (one.id, two.id) == ("1", "2")
    assert one.assertions == ["The answer gives the total 60.50", "The answer says there are 3 orders"]
    assert two.assertions == ["The answer says exactly one order was refunded"]
    assert "data/orders.csv" in one.prompt and "evals/files/" not in one.prompt
    assert [(f.src, f.dest) for f in one.files] == [("evals/files/orders.csv", "data/orders.csv")]


def test_corpus_emits(tmp_path):
    spec = compose_spec(["skill=custom", f"skill.paths=[{','.join(map(str, SKILLS))}]", "report=false"],
                        output_dir=tmp_path / "out")
    result = emit_study(spec, tmp_path / "tasks")
    per_skill: dict[str, set[str]] = {}
    for task in result.tasks:
        instruction = (task.path / "instruction.md").read_text()
        assert "evals/files/" not in instruction, task.path
        toml = (task.path / "task.toml").read_text()
        for skill in SKILLS:
            if f'skill = "{skill.name}"' in toml:
                per_skill.setdefault(skill.name, set()).add(task.path.name)
    # Every case of every format became a with-skill and a baseline task.
    assert {name: len(ids) for name, ids in per_skill.items()} == {s.name: 2 * _file_counts(s) for s in SKILLS}


@pytest.mark.sandbox
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed; the local backend needs it")
def test_skill_creator_case_runs_and_its_expectations_are_judged(tmp_path):
    from aces_bench.study.entry import run_study

    skill = CORPUS / "skill-creator" / "orders-total"
    out = tmp_path / "out"
    spec = compose_spec(["skill=custom", f"skill.paths=[{skill}]", "skill.cases=[1]",
                         f"+backend.kwargs.root_parent={tmp_path}", "report=false"], output_dir=out)
    run_study(spec)
    table = pd.read_parquet(out / "trials.parquet").set_index("condition")
    assert table.loc["with_skill", "status"] == "ok"
    grades = [json.loads(line) for line in (out / "grades.jsonl").read_text().splitlines()]
    with_skill = next(g for g in grades if g["condition"] == "with_skill")
    behavior = with_skill["metrics"]["behavior_check"]
    checks = [e["check"] for e in behavior["evidence"]]
    assert "expectation[0]" in checks and "expectation[1]" in checks
    trial = Path(table.loc["with_skill", "trial_dir"])
    answers = [trial / ws / "answer.txt" for ws in ("artifacts/workspace", "artifacts/logs/artifacts/workspace")]
    assert any(a.is_file() and "total=60.50" in a.read_text() for a in answers)
