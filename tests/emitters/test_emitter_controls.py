"""Calibration arms (study.controls): each arm's task dir differs from baseline / with_skill
only where it should, on the project's fixture skill and on a real public skill."""

from __future__ import annotations

import filecmp
import json
import shutil
from pathlib import Path

import pytest

from aces_bench.agents.footer import parse_instruction
from aces_bench.config.compose import compose_spec
from aces_bench.core.errors import ConfigError
from aces_bench.emitters import emit_study
from aces_bench.emitters.emit import read_task_metadata

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures"
SKILL = FIXTURES / "skills" / "csv-column-sum"
DECOY = FIXTURES / "decoys" / "text-stats"
PUBLIC = Path(__file__).resolve().parents[2].parent / "shared" / "data" / "public-skills"
ARMS = "study.controls=[null,placebo,forced]"


def _files(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _differing(a: Path, b: Path) -> set[str]:
    fa, fb = _files(a), _files(b)
    return {k for k in fa.keys() | fb.keys() if fa.get(k) != fb.get(k)}


def _emit(tmp_path: Path, skill: Path, *extra: str):
    spec = compose_spec(["skill=custom", f"skill.paths=[{skill}]", ARMS, *extra], output_dir=tmp_path)
    result = emit_study(spec, tmp_path / "tasks")
    return spec, {(t.case_id, t.condition): t for t in result.tasks}


def _meta_without(task, *keys: str) -> dict:
    return {k: v for k, v in read_task_metadata(task.path).items() if k not in keys}


def test_each_arm_differs_only_where_it_should(tmp_path):
    decoy = f"skill.support=[{{path:{DECOY},role:decoy}}]"
    _, tasks = _emit(tmp_path, SKILL, decoy)
    case = "explicit-1"
    base, skill = tasks[(case, "baseline")], tasks[(case, "with_skill")]
    null, placebo, forced = (tasks[(case, c)] for c in ("null", "placebo", "forced"))
    assert len({t.path.name for t in (base, skill, null, placebo, forced)}) == 5  # own task dir each
    assert null.path.name.startswith("csv-column-sum.explicit-1.isolation.null-")

    # null: the baseline's files byte for byte; task.toml differs in the condition only.
    assert _differing(base.path, null.path) == {"task.toml"}
    assert _meta_without(null, "condition") == _meta_without(base, "condition")
    assert read_task_metadata(null.path)["condition"] == "null"

    # placebo: the baseline plus a SKILL.md-only sham where the target would be.
    sham = "environment/skills/csv-column-sum/SKILL.md"
    assert _differing(base.path, placebo.path) == {"task.toml", sham}
    assert not (placebo.path / "environment/skills/csv-column-sum/scripts").exists()
    text = (placebo.path / sham).read_text()
    target_md = (SKILL / "SKILL.md").read_text()
    front = text.split("---\n")[1]
    assert "name: csv-column-sum\n" in front
    description = next(line for line in target_md.splitlines() if line.startswith("description:"))
    assert description in front
    assert "colsum" not in text and "scripts/" not in text  # teaches nothing the target does
    pm = read_task_metadata(placebo.path)
    staged = {s["name"]: s for s in pm["staged_skills"]}
    assert staged["csv-column-sum"]["role"] == "placebo" and staged["text-stats"]["role"] == "decoy"
    assert staged["csv-column-sum"]["content_hash"] != read_task_metadata(skill.path)["skill_hash"]
    assert pm["skill_hash"] == "" and "csv-column-sum" in pm["allowed_skills"]

    # forced: with_skill's staged files; the instruction starts with the target's SKILL.md.
    assert _differing(skill.path, forced.path) == {"task.toml", "instruction.md"}
    base_instr = (base.path / "instruction.md").read_text()
    forced_instr = (forced.path / "instruction.md").read_text()
    assert forced_instr.endswith(base_instr)
    assert target_md.strip() in forced_instr
    # The footer the agents parse is unchanged by the SKILL.md's own '---' lines.
    assert parse_instruction(forced_instr).answer_path == parse_instruction(base_instr).answer_path
    assert parse_instruction(forced_instr).input_files == parse_instruction(base_instr).input_files
    assert _meta_without(forced, "condition") == _meta_without(skill, "condition")

    # with_skill and baseline are the tasks a study without controls emits, byte for byte.
    _, plain = _emit(tmp_path / "plain", SKILL, decoy, "study.controls=[]")
    assert set(plain) == {(c, s) for c in ("explicit-1", "negative-1") for s in ("with_skill", "baseline")}
    assert plain[(case, "with_skill")].path.name == skill.path.name
    assert plain[(case, "baseline")].path.name == base.path.name


def test_a_real_skills_placebo_has_no_scripts_or_references(tmp_path):
    real = PUBLIC / "anthropics__skills" / "mcp-builder"
    if not real.is_dir():
        pytest.skip(f"../shared is absent ({real}): this test needs the public skills")
    skill = tmp_path / "src" / "mcp-builder"
    shutil.copytree(real, skill)
    (skill / "evals").mkdir()
    (skill / "evals" / "evals.json").write_text(json.dumps({"skill_name": "mcp-builder", "evals": [
        {"id": "build-1", "prompt": "Plan an MCP server for a weather API.", "assertions": [
            {"kind": "contains", "value": "tool"}]}]}))
    _, tasks = _emit(tmp_path / "out", skill)
    staged = lambda c: tasks[("build-1", c)].path / "environment" / "skills" / "mcp-builder"  # noqa: E731
    assert (staged("with_skill") / "reference").is_dir() and (staged("with_skill") / "scripts").is_dir()
    assert sorted(p.name for p in staged("placebo").iterdir()) == ["SKILL.md"]
    assert filecmp.cmp(staged("forced") / "reference" / "evaluation.md", real / "reference" / "evaluation.md",
                       shallow=False)
    body = (real / "SKILL.md").read_text()
    assert body.strip() in (tasks[("build-1", "forced")].path / "instruction.md").read_text()
    sham = (staged("placebo") / "SKILL.md").read_text()
    assert "license" not in sham and len(sham) < 600  # name and description only, no body worth reading


def test_bundle_placebo_is_a_sham_of_every_member(tmp_path):
    other = tmp_path / "src" / "csv-other"
    shutil.copytree(SKILL, other)
    md = other / "SKILL.md"
    md.write_text(md.read_text().replace("name: csv-column-sum", "name: csv-other"))
    evals = other / "evals" / "evals.json"
    evals.write_text(evals.read_text().replace('"csv-column-sum"', '"csv-other"'))
    spec = compose_spec(["skill=custom", f"skill.paths=[{SKILL},{other}]", "skill.intervention=bundle",
                         "skill.intervention_name=csv-kit", "study.controls=[placebo]"], output_dir=tmp_path)
    result = emit_study(spec, tmp_path / "tasks")
    placebo = [t for t in result.tasks if t.condition == "placebo"]
    assert placebo and {t.condition for t in result.tasks} == {"with_skill", "baseline", "placebo"}
    for t in placebo:
        roles = {s["name"]: s["role"] for s in read_task_metadata(t.path)["staged_skills"]}
        assert roles == {"csv-column-sum": "placebo", "csv-other": "placebo"}
        assert not list((t.path / "environment" / "skills").rglob("scripts"))


@pytest.mark.parametrize("value, message", [
    ("[nul]", "study.controls: unknown calibration arm 'nul'; allowed values: null, placebo, forced"),
    ("[null,null]", "study.controls: calibration arm null listed twice"),
])
def test_bad_controls_name_the_key_and_the_allowed_values(tmp_path, value, message):
    with pytest.raises(ConfigError) as err:
        compose_spec([f"study.controls={value}"], output_dir=tmp_path)
    assert message in str(err.value)


def test_a_native_harbor_task_gets_every_arm(tmp_path):
    from support.emitters import copy_skill, native_task

    skill = copy_skill(tmp_path)
    native_task(skill)
    _, tasks = _emit(tmp_path / "out", skill, "skill.cases=[harbor-fix-total]")
    native = {c: t for (case, c), t in tasks.items() if case == "harbor-fix-total"}
    assert sorted(native) == ["baseline", "forced", "null", "placebo", "with_skill"]
    author = "Write the sum of 2 and 3 to /app/answer.txt.\n"
    assert _differing(native["baseline"].path, native["null"].path) == {"task.toml"}
    assert (native["null"].path / "instruction.md").read_text() == author
    forced = (native["forced"].path / "instruction.md").read_text()
    assert forced.endswith(author) and (SKILL / "SKILL.md").read_text().strip() in forced
    assert _differing(native["with_skill"].path, native["forced"].path) == {"task.toml", "instruction.md"}
    assert _differing(native["baseline"].path, native["placebo"].path) == {
        "task.toml", "environment/skills/csv-column-sum/SKILL.md"}
