"""The emitter: golden output, determinism, staging per condition/mode, Harbor loading."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from dockerfile_parse import DockerfileParser
from harbor.models.task.task import Task

from aces_bench.config.compose import compose_spec
from aces_bench.core.errors import EmitError
from aces_bench.emitters import emit_study, validate_task_dirs
from aces_bench.emitters.emit import read_task_metadata

GOLDEN = Path(__file__).parent / "golden"
SKILLS = "skill.paths=[tests/fixtures/skills]"
DECOYS = "decoys.paths=[tests/fixtures/decoys]"


def _tree(root: Path) -> dict[str, str]:
    return {p.relative_to(root).as_posix(): p.read_text() for p in sorted(root.rglob("*")) if p.is_file()}


def _emit(tmp_path, *extra):
    spec = compose_spec(["skill=custom", SKILLS, *extra], output_dir=tmp_path)
    return spec, emit_study(spec, tmp_path / "tasks")


def test_golden_output_for_one_skill(tmp_path):
    _, result = _emit(tmp_path)
    actual = {t.task_id: _tree(t.path) for t in result.tasks}
    golden_file = GOLDEN / "csv-column-sum.isolation.json"
    if os.environ.get("ACES_UPDATE_GOLDEN"):
        golden_file.parent.mkdir(exist_ok=True)
        golden_file.write_text(json.dumps(actual, indent=1, sort_keys=True) + "\n")
    expected = json.loads(golden_file.read_text())
    assert sorted(actual) == sorted(expected)
    for task_id in expected:
        assert actual[task_id] == expected[task_id], f"{task_id} differs from the golden file"


def test_emission_is_deterministic_and_content_addressed(tmp_path):
    _, first = _emit(tmp_path / "a")
    _, second = _emit(tmp_path / "b")
    assert [t.task_id for t in first.tasks] == [t.task_id for t in second.tasks]
    for a, b in zip(first.tasks, second.tasks, strict=True):
        assert _tree(a.path) == _tree(b.path)
    # Re-emitting into the same folder rewrites nothing.
    spec, again = _emit(tmp_path / "a")
    assert again.written == 0 and again.reused == len(first.tasks)


def test_changing_a_skill_changes_the_task_id(tmp_path):
    skill = tmp_path / "skills" / "csv-column-sum"
    shutil.copytree("tests/fixtures/skills/csv-column-sum", skill)
    spec = compose_spec(["skill=custom", f"skill.paths=[{skill}]"], output_dir=tmp_path)
    before = {t.task_id for t in emit_study(spec, tmp_path / "t1").tasks}
    (skill / "SKILL.md").write_text((skill / "SKILL.md").read_text() + "\nOne more line.\n")
    spec = compose_spec(["skill=custom", f"skill.paths=[{skill}]"], output_dir=tmp_path)
    after = {t.task_id for t in emit_study(spec, tmp_path / "t2").tasks}
    with_skill_before = {t for t in before if ".skill-" in t}
    assert with_skill_before.isdisjoint(after)
    # The baseline never sees the target, so its tasks are unchanged.
    assert {t for t in before if ".base-" in t} == {t for t in after if ".base-" in t}


def test_sweep_members_share_loaded_skills_until_a_file_changes(tmp_path):
    """Plans in one process read a skill folder once; an edit that keeps every size
    (a changed case prompt) or adds a file is still seen by the next plan."""
    from aces_bench.emitters.plan import plan_study

    skill = tmp_path / "skills" / "csv-column-sum"
    shutil.copytree("tests/fixtures/skills/csv-column-sum", skill)
    spec = compose_spec(["skill=custom", f"skill.paths=[{skill}]"], output_dir=tmp_path)
    first, second = plan_study(spec), plan_study(spec)
    assert first.targets[0] is second.targets[0]
    evals = skill / "evals" / "evals.json"
    text = evals.read_text()
    prompt = json.loads(text)["evals"][0]["prompt"]
    evals.write_text(text.replace(prompt, prompt[::-1], 1))
    third = plan_study(spec)
    assert prompt[::-1] in {t.case.prompt for t in third.tasks}
    (skill / "references").mkdir(exist_ok=True)
    (skill / "references" / "extra.md").write_text("more\n")
    assert plan_study(spec).targets[0].content_hash != first.targets[0].content_hash


def test_every_task_toml_setting_is_in_the_task_id(tmp_path):
    """workspace.network once reused task dirs that kept the old network_mode."""
    _, base = _emit(tmp_path / "a")
    ids = {t.task_id for t in base.tasks}
    for i, override in enumerate(["workspace.network=public", "workspace.cpus=2", "workspace.memory_mb=1024",
                                  "workspace.agent_timeout_sec=99", "workspace.verifier_timeout_sec=7"]):
        _, changed = _emit(tmp_path / f"c{i}", override)
        assert ids.isdisjoint(t.task_id for t in changed.tasks), override
    _, public = _emit(tmp_path / "a", "workspace.network=public")
    assert public.written == len(public.tasks)
    for task in public.tasks:
        assert 'network_mode = "public"' in (task.path / "task.toml").read_text()


def test_isolation_stages_only_the_target_and_never_evals(tmp_path):
    _, result = _emit(tmp_path)
    for t in result.tasks:
        staged = sorted(p.name for p in (t.path / "environment" / "skills").iterdir())
        assert staged == (["csv-column-sum"] if t.condition == "with_skill" else [])
        assert not list(t.path.rglob("evals.json")), "evaluation assets must not reach the agent"
        meta = read_task_metadata(t.path)
        assert meta["n_visible_skills"] == len(staged)


def test_group_mode_adds_decoys_in_both_conditions(tmp_path):
    _, result = _emit(tmp_path, "workspace=group", DECOYS, "decoys.name=fixture")
    for t in result.tasks:
        staged = sorted(p.name for p in (t.path / "environment" / "skills").iterdir())
        expected = ["csv-column-sum", "text-stats"] if t.condition == "with_skill" else ["text-stats"]
        assert staged == expected
        meta = read_task_metadata(t.path)
        roles = {s["name"]: s["role"] for s in meta["staged_skills"]}
        assert roles.get("text-stats") == "decoy"
        assert meta["decoy_set"] == "fixture"
        assert meta["allowed_skills"] == (["csv-column-sum"] if t.condition == "with_skill" else [])


def test_every_emitted_dir_loads_in_harbor(tmp_path):
    _, result = _emit(tmp_path, "workspace=group", DECOYS)
    for t in result.tasks:
        task = Task(t.path)
        assert Task.is_valid_dir(t.path)
        assert task.config.environment.skills_dir == "/skills"
        assert task.instruction.endswith("Write your final answer to /workspace/answer.txt.\n")


def test_dockerfile_is_the_lean_subset(tmp_path):
    _, result = _emit(tmp_path, "workspace.base_image=debian:12-slim")
    parser = DockerfileParser(path=str(result.tasks[0].path / "environment" / "Dockerfile"))
    assert [(i["instruction"], i["value"]) for i in parser.structure] == [
        ("FROM", "debian:12-slim"),
        ("WORKDIR", "/workspace"),
        ("COPY", "skills/ /skills/"),
        ("COPY", "workspace/ /workspace/"),
    ]


def test_a_dir_harbor_cannot_load_fails_loudly(tmp_path):
    _, result = _emit(tmp_path)
    broken = result.tasks[0].path
    (broken / "tests" / "test.sh").unlink()
    with pytest.raises(EmitError) as err:
        validate_task_dirs([t.path for t in result.tasks])
    assert broken.name in str(err.value)
    assert "do not load in Harbor" in str(err.value)


def test_verifier_files_are_not_visible_in_the_environment(tmp_path):
    _, result = _emit(tmp_path)
    for t in result.tasks:
        env_files = {p.name for p in (t.path / "environment").rglob("*") if p.is_file()}
        assert "case.json" not in env_files and "check_answer.py" not in env_files
