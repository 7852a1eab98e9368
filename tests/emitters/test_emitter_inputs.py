"""The re-emit shortcut (``.aces-inputs.json``, input key -> task id): an unchanged
re-emit renders nothing, and a change to any input a task is rendered from gives the
id a fresh render gives (edits made with the same size and mtime included)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from support.emitters import custom_env, native_task

from aces_bench.config.compose import compose_spec
from aces_bench.emitters import emit, harbor_task, inputs
from aces_bench.emitters.emit import emit_study
from aces_bench.emitters.inputs import INPUTS_INDEX, code_roots, folder_digest

SKILL = Path("tests/fixtures/skills/csv-column-sum")
DECOYS = "decoys.paths=[tests/fixtures/decoys]"


@pytest.fixture
def skill(tmp_path) -> Path:
    dest = tmp_path / "skills" / "csv-column-sum"
    shutil.copytree(SKILL, dest)
    return dest


@pytest.fixture
def rendered(monkeypatch):
    """The plans rendered (not taken from the inputs index), by case id and condition."""
    seen = []
    real = emit.emit_task

    def spy(plan, *args, **kwargs):
        seen.append((plan.case.id, plan.condition))
        return real(plan, *args, **kwargs)

    monkeypatch.setattr(emit, "emit_task", spy)
    return seen


def _ids(skill: Path, out: Path, *extra: str) -> dict[tuple[str, str], str]:
    spec = compose_spec(["skill=custom", f"skill.paths=[{skill}]", *extra], output_dir=out)
    return {(t.case_id, t.condition): t.task_id for t in emit_study(spec, out / "tasks").tasks}


def _edit_same_size(path: Path, old: bytes, new: bytes) -> None:
    """Replace ``old`` by ``new`` (same length) and put the mtime back: a stamp of
    size and mtime alone cannot see this edit."""
    assert len(old) == len(new)
    st = path.stat()
    data = path.read_bytes()
    assert old in data, f"{old!r} not in {path}"
    path.write_bytes(data.replace(old, new, 1))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (path.stat().st_size, path.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)


def _assert_seen(before: dict, after: dict, fresh: dict) -> None:
    """The shortcut gave what rendering gives, and the change reached the ids."""
    assert after == fresh
    assert after != before


def test_an_unchanged_re_emit_renders_nothing(skill, tmp_path, rendered):
    first = _ids(skill, tmp_path / "a")
    assert len(rendered) == len(first)
    assert (tmp_path / "a" / "tasks" / INPUTS_INDEX).is_file()
    rendered.clear()
    assert _ids(skill, tmp_path / "a") == first
    assert rendered == []


def test_a_task_dir_gone_is_rendered_again(skill, tmp_path, rendered):
    first = _ids(skill, tmp_path / "a")
    gone = next(iter(first.values()))
    shutil.rmtree(tmp_path / "a" / "tasks" / gone)
    rendered.clear()
    assert _ids(skill, tmp_path / "a") == first
    assert len(rendered) == 1 and (tmp_path / "a" / "tasks" / gone / "task.toml").is_file()


def test_a_skill_whose_frontmatter_holds_binary_is_keyed_too(skill, tmp_path, rendered):
    skill_md = skill / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace(
        "version: 1.0.0", "version: 1.0.0\nicon: !!binary R0lGODlhAQABAIAAAP///wAAACwAAAAAAQABAAACAkQBADs="))
    first = _ids(skill, tmp_path / "a")
    rendered.clear()
    assert _ids(skill, tmp_path / "a") == first
    assert rendered == []


def test_an_unreadable_inputs_index_is_ignored(skill, tmp_path, rendered):
    first = _ids(skill, tmp_path / "a")
    (tmp_path / "a" / "tasks" / INPUTS_INDEX).write_text("{not json")
    rendered.clear()
    assert _ids(skill, tmp_path / "a") == first
    assert len(rendered) == len(first)


@pytest.mark.parametrize(("rel", "old", "new"), [
    ("SKILL.md", b"Prints", b"PRINTS"),  # staged
    ("scripts/colsum.py", b"one column", b"one COLUMN"),  # staged
    ("evals/files/sales.csv", b"10.50", b"10.51"),  # a case's fixture
    ("evals/evals.json", b"sum the amount", b"sum THE amount"),  # the case
])
def test_a_same_size_same_mtime_edit_of_a_skill_file_is_seen(skill, tmp_path, rel, old, new):
    before = _ids(skill, tmp_path / "a")
    _edit_same_size(skill / rel, old, new)
    _assert_seen(before, _ids(skill, tmp_path / "a"), _ids(skill, tmp_path / "fresh"))


def test_an_edit_of_the_skills_environment_is_seen(skill, tmp_path):
    env = custom_env(skill, "FROM python:3.12-slim\nRUN true\n")
    before = _ids(skill, tmp_path / "a")
    _edit_same_size(env / "Dockerfile", b"RUN true", b"RUN :   ")
    _assert_seen(before, _ids(skill, tmp_path / "a"), _ids(skill, tmp_path / "fresh"))


def test_an_edit_of_a_native_harbor_task_is_seen(skill, tmp_path):
    task = native_task(skill)
    before = _ids(skill, tmp_path / "a")
    _edit_same_size(task / "tests" / "helper.py", b"author", b"AUTHOR")
    after = _ids(skill, tmp_path / "a")
    _assert_seen(before, after, _ids(skill, tmp_path / "fresh"))
    assert {k for k in before if before[k] != after[k]} == {k for k in before if k[0] == "harbor-fix-total"}


@pytest.mark.parametrize("override", [
    "workspace.workdir=/work",
    "workspace.skills_dir=/opt/skills",
    "workspace.answer_file=out.txt",
    "workspace.cpus=2",
    "workspace.memory_mb=4096",
    "workspace.storage_mb=1024",
    "workspace.agent_timeout_sec=100",
    "workspace.verifier_timeout_sec=30",
    "workspace.network=public",
    "workspace.base_image=debian:12-slim",
    "workspace.custom_environment=false",
    "study.controls=[null,placebo,forced]",
])
def test_a_spec_field_that_reaches_the_task_is_seen(skill, tmp_path, override):
    if override == "workspace.custom_environment=false":
        custom_env(skill, "FROM python:3.12-slim\n")
    before = _ids(skill, tmp_path / "a")
    after = _ids(skill, tmp_path / "a", override)
    fresh = _ids(skill, tmp_path / "fresh", override)
    _assert_seen(before, after, fresh)


def test_the_decoy_draw_is_seen(skill, tmp_path):
    group = ("workspace=group", DECOYS, "decoys.size=1")
    before = _ids(skill, tmp_path / "a", *group, "decoys.seed=0")
    for seed in range(1, 20):  # a seed that draws another decoy
        fresh = _ids(skill, tmp_path / f"fresh-{seed}", *group, f"decoys.seed={seed}")
        if fresh != before:
            break
    assert _ids(skill, tmp_path / "a", *group, f"decoys.seed={seed}") == fresh != before


def test_an_edit_of_a_decoy_is_seen(skill, tmp_path):
    decoys = tmp_path / "decoys"
    shutil.copytree("tests/fixtures/decoys", decoys)
    group = ("workspace=group", f"decoys.paths=[{decoys}]")
    before = _ids(skill, tmp_path / "a", *group)
    _edit_same_size(decoys / "text-stats" / "SKILL.md", b"Count words", b"Count WORDS")
    _assert_seen(before, _ids(skill, tmp_path / "a", *group), _ids(skill, tmp_path / "fresh", *group))


def test_the_aces_bench_version_is_seen(skill, tmp_path, monkeypatch):
    before = _ids(skill, tmp_path / "a")
    monkeypatch.setattr(harbor_task, "__version__", "99.0.0")
    monkeypatch.setattr(inputs, "__version__", "99.0.0")
    inputs.code_fingerprint.cache_clear()
    try:
        _assert_seen(before, _ids(skill, tmp_path / "a"), _ids(skill, tmp_path / "fresh"))
    finally:
        inputs.code_fingerprint.cache_clear()


def test_an_index_written_by_other_code_is_not_used(skill, tmp_path, rendered, monkeypatch):
    first = _ids(skill, tmp_path / "a")
    monkeypatch.setattr(inputs, "code_fingerprint", lambda: "other code")
    rendered.clear()
    assert _ids(skill, tmp_path / "a") == first
    assert len(rendered) == len(first)


def test_the_code_fingerprint_covers_the_templates_and_the_checker():
    import aces_bench.verifier

    hashed = code_roots()
    for module in (harbor_task, emit, inputs):
        assert Path(module.__file__).parent in hashed
    checker = Path(aces_bench.verifier.__file__).parent / "check_answer.py"
    assert checker.is_file() and any(checker.is_relative_to(r) for r in hashed)


def test_folder_digest_sees_content_not_stamps(tmp_path):
    (tmp_path / "d" / "sub").mkdir(parents=True)
    f = tmp_path / "d" / "sub" / "x.txt"
    f.write_text("abc\n")
    before = folder_digest(tmp_path / "d")
    _edit_same_size(f, b"abc", b"abd")
    assert folder_digest(tmp_path / "d") != before
    (tmp_path / "d" / "sub" / "y.txt").write_text("")  # an added empty file
    assert folder_digest(tmp_path / "d") != before
