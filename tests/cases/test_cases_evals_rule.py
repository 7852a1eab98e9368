"""Which evals files a study reads: SkillEvaluator's rule for its folders, aces-bench's
merge for its own, and skill.evals_file to pick one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from aces_bench.cases.formats import is_skillevaluator_folder, load_assets, select_evals_files
from aces_bench.config.compose import compose_spec
from aces_bench.core.errors import EvalsError
from aces_bench.emitters.plan import plan_study

CORPUS = Path(__file__).resolve().parents[1] / "datasets" / "corpus"


def _skill(tmp_path: Path, files: dict[str, object]) -> Path:
    skill = tmp_path / "tally"
    (skill / "evals").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tally\ndescription: Count the words of a text file.\n---\n# Tally\n")
    for name, payload in files.items():
        path = skill / name
        path.write_text(payload if isinstance(payload, str) else json.dumps(payload))
    return skill


def _se_case(i: int) -> dict:
    return {"id": f"tally-{i:03d}", "question": f"How many words are in sentence {i}?", "expected_skill": "tally",
            "ground_truth": "It counted the words."}


def test_skillevaluator_reads_only_its_first_file_in_its_order(tmp_path):
    skill = _skill(tmp_path, {"evals/evals.yaml": "- id: tally-001\n  question: Count the words.\n",
                              "evals/dataset.json": [_se_case(2)], "evals/evals-more.json": [_se_case(3)]})
    assert is_skillevaluator_folder(skill)  # dataset.json is SkillEvaluator's own name
    chosen = select_evals_files(skill)
    assert (chosen.rule, chosen.primary.name, chosen.extra) == ("SkillEvaluator", "evals.yaml", [])
    assert sorted(p.name for p, _ in chosen.unread) == ["dataset.json", "evals-more.json"]
    assert {c.id for c in load_assets(skill, "tally").evals_cases} == {"tally-001"}


def test_a_dataset_file_alone_is_read(tmp_path):
    skill = _skill(tmp_path, {"evals/dataset.jsonl": json.dumps(_se_case(1)) + "\n" + json.dumps(_se_case(2)) + "\n"})
    assert [c.id for c in load_assets(skill, "tally").evals_cases] == ["tally-001", "tally-002"]


def test_aces_bench_folders_keep_merging(tmp_path):
    own = {"skill_name": "tally", "evals": [{"id": "a", "prompt": "Count the words."}]}
    more = {"skill_name": "tally", "evals": [{"id": "b", "prompt": "Count them again."}]}
    skill = _skill(tmp_path, {"evals/evals.json": own, "evals/evals2.json": more})
    assert not is_skillevaluator_folder(skill)
    assets = load_assets(skill, "tally")
    assert [c.id for cases, _ in assets.sources() for c in cases] == ["a", "b"] and assets.unread == []


def test_evals_file_selects_one_file_and_a_wrong_one_is_named(tmp_path):
    skill = _skill(tmp_path, {"evals/evals.json": [_se_case(1)], "evals/evals2.json": [_se_case(1), _se_case(2)]})
    assets = load_assets(skill, "tally", "evals/evals2.json")
    assert [c.id for c in assets.evals_cases] == ["tally-001", "tally-002"]
    assert [(p.name, why) for p, why in assets.unread] == [
        ("evals.json", "not read: skill.evals_file=evals/evals2.json selects one file")]
    for bad in ("evals/evals3.json", "../tally/evals/evals.json"):
        with pytest.raises(EvalsError) as err:
            load_assets(skill, "tally", bad)
        assert f"skill.evals_file={bad} is not a file in this skill (evals files here: evals/evals.json, " \
               "evals/evals2.json)" in str(err.value)


def test_a_study_runs_every_case_of_the_first_file_and_says_what_it_left_out(tmp_path, caplog):
    """The project's SkillEvaluator-shaped skill (evals.json and evals2.json): a study plans
    every case of evals.json, logs evals2.json as not read, and reads it when selected."""
    skill = tmp_path / "calc-lines"
    shutil.copytree(CORPUS / "skillevaluator" / "calc-lines", skill)
    first = json.loads((skill / "evals" / "evals.json").read_text())
    caplog.set_level("INFO", logger="aces_bench.plan")
    plan = plan_study(compose_spec(["skill=custom", f"skill.paths=[{skill}]"], output_dir=tmp_path / "o"))
    assert {t.case.id for t in plan.tasks} == {c["id"] for c in first}
    assert "calc-lines: evals/evals2.json not read: SkillEvaluator reads only the first of" in caplog.text
    plan = plan_study(compose_spec(["skill=custom", f"skill.paths=[{skill}]", "skill.evals_file=evals/evals2.json"],
                                   output_dir=tmp_path / "o2"))
    assert {t.case.id for t in plan.tasks} == {"calc-003"}
