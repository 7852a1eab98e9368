"""One staging rule (issue 27, point 1): nothing that holds expected answers reaches any arm's sandbox.

Skills are built here with a distinctive expected value in every place an author may put
one (EVAL.md at the root and in evals/, eval.config, evals files, an unused fixture, an
author grader, a root trigger-evals file); every task of every arm (with_skill, baseline,
null, placebo, forced) in isolation and in a group workspace with decoys and support
skills that carry their own answer keys, and a bundle, is emitted, and every staged tree
(what the sandbox is built from: ``environment/`` and the instruction) is searched for
every value.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from aces_bench.config.compose import compose_spec
from aces_bench.emitters import emit_study
from aces_bench.inputs.skills import evaluation_asset, staged_files

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "skills" / "csv-column-sum"
# One value per place an answer can hide; none of them may reach a sandbox.
HIDDEN = {
    "EVAL.md": "ZEBRA-7731-QUOKKA", "evals/evals.json": "MARMOT-4410-LYNX", "eval.config": "OCELOT-9902-IBIS",
    "evals/files/answers.csv": "WOMBAT-1234-KOALA", "evals/graders/check.py": "TAPIR-5150-EGRET",
    "trigger-evals.json": "NARWHAL-3030-HERON", "evals/evals2.json": "BISON-6060-CRANE",
}


def _skill_with_answer_keys(root: Path, name: str, tag: str) -> tuple[Path, set[str]]:
    skill = root / name
    shutil.copytree(FIXTURE, skill)
    md = (skill / "SKILL.md").read_text().replace("name: csv-column-sum", f"name: {name}")
    (skill / "SKILL.md").write_text(md)
    v = {k: f"{val}-{tag}" for k, val in HIDDEN.items()}
    (skill / "EVAL.md").write_text(
        "# Intent\n\n## Questions\n- What is the total of data/sales.csv's amount column?\n"
        f"  - id: intent-total\n  - expected: {v['EVAL.md']}\n  - file: evals/files/sales.csv\n"
        f"  - assertion: says {v['EVAL.md']}\n\n## Should trigger\n- total the amounts\n")
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": name, "evals": [
        {"id": "explicit-1", "prompt": f"Use the {name} skill to sum the amount column.",
         "expected_output": v["evals/evals.json"], "files": ["evals/files/sales.csv"],
         "assertions": [{"kind": "contains", "value": v["evals/evals.json"]}]}]}))
    (skill / "evals" / "evals2.json").write_text(json.dumps({"skill_name": name, "evals": [
        {"id": "extra-1", "prompt": "Sum it again.", "expected_output": v["evals/evals2.json"]}]}))
    (skill / "eval.config").write_text(json.dumps({"evals": [
        {"id": "config-1", "prompt": "Sum the amounts once more.", "expected": v["eval.config"]}]}))
    (skill / "evals" / "files" / "answers.csv").write_text(f"case,answer\nexplicit-1,{v['evals/files/answers.csv']}\n")
    (skill / "evals" / "graders").mkdir()
    (skill / "evals" / "graders" / "check.py").write_text(f"print({{'score': 1.0}})  # {v['evals/graders/check.py']}\n")
    (skill / "trigger-evals.json").write_text(json.dumps([{"query": v["trigger-evals.json"], "should_trigger": True}]))
    return skill, set(v.values())


def _staged_tree(task: Path) -> dict[str, bytes]:
    """What a sandbox is built from: the environment folder (skills, workspace, Dockerfile context) and
    the instruction. ``tests/`` is uploaded only after the agent has finished."""
    files = {p.relative_to(task).as_posix(): p.read_bytes() for p in (task / "environment").rglob("*") if p.is_file()}
    files["instruction.md"] = (task / "instruction.md").read_bytes()
    return files


def _leaks(tasks, values: set[str]) -> list[str]:
    out = []
    for t in tasks:
        for rel, data in _staged_tree(t.path).items():
            out += [f"{t.condition} {t.case_id}: {rel} holds {v}" for v in values if v.encode() in data]
    return out


def test_no_expected_value_reaches_any_arm_in_isolation_or_group(tmp_path):
    target, hidden = _skill_with_answer_keys(tmp_path / "targets", "ledger-sum", "T")
    decoy, decoy_hidden = _skill_with_answer_keys(tmp_path / "decoys", "ledger-decoy", "D")
    helper, helper_hidden = _skill_with_answer_keys(tmp_path / "support", "ledger-helper", "H")
    every = hidden | decoy_hidden | helper_hidden
    for mode in ("isolation", "group"):
        spec = compose_spec(["skill=custom", f"skill.paths=[{target}]", "study.controls=[null,placebo,forced]",
                             f"workspace={mode}", f"decoys.paths=[{decoy}]", "decoys.name=planted",
                             f"skill.support=[{{path:{helper},role:helper}}]"], output_dir=tmp_path / mode)
        result = emit_study(spec, tmp_path / mode / "tasks")
        conditions = {t.condition for t in result.tasks}
        assert conditions == {"with_skill", "baseline", "null", "placebo", "forced"}
        cases = {t.case_id for t in result.tasks}
        assert {"intent-total", "explicit-1", "extra-1", "config-1", "trigger-1"} <= cases
        assert _leaks(result.tasks, every) == []
        with_skill = next(t for t in result.tasks if t.condition == "with_skill" and t.case_id == "explicit-1")
        staged = {p for p in _staged_tree(with_skill.path)}
        # the skills are there (scripts included), their answer keys are not
        assert "environment/skills/ledger-sum/scripts/colsum.py" in staged
        assert "environment/skills/ledger-helper/SKILL.md" in staged
        assert ("environment/skills/ledger-decoy/SKILL.md" in staged) == (mode == "group")
        assert not any(p.endswith(("EVAL.md", "eval.config", "trigger-evals.json")) or "/evals/" in p for p in staged)
        # the case's own declared fixture is in its workspace, nothing else of evals/files
        assert [p for p in staged if p.startswith("environment/workspace/")] == ["environment/workspace/data/sales.csv"]


def test_a_bundle_stages_no_member_answer_key(tmp_path):
    one, h1 = _skill_with_answer_keys(tmp_path / "members", "ledger-one", "1")
    two, h2 = _skill_with_answer_keys(tmp_path / "members", "ledger-two", "2")
    spec = compose_spec(["skill=custom", f"skill.paths=[{tmp_path / 'members'}]", "skill.intervention=bundle",
                         "skill.intervention_name=ledgers", "study.controls=[null,placebo,forced]"],
                        output_dir=tmp_path / "b")
    result = emit_study(spec, tmp_path / "b" / "tasks")
    assert len({t.case_id for t in result.tasks}) == 10
    assert _leaks(result.tasks, h1 | h2) == []


def test_the_rule_is_one_function_every_copy_asks():
    assert evaluation_asset("EVAL.md") and evaluation_asset("eval.md") and evaluation_asset("eval.config")
    assert evaluation_asset("evals/EVAL.md") and evaluation_asset("evals/graders/g.py")
    assert evaluation_asset("evals.yaml") and evaluation_asset("trigger_evals.json")
    # a skill's own material is staged, even when its name starts like an evaluation asset
    for rel in ("references/evaluation.md", "evaluation.md", "scripts/evals.py", "SKILL.md", "references/EVAL.md"):
        assert evaluation_asset(rel) is None, rel
    names = {p.relative_to(FIXTURE).as_posix() for p in staged_files(FIXTURE)}
    assert names == {"SKILL.md", "scripts/colsum.py"}
