"""Harbor's check once per dir shape: a dir that differs from an accepted one in any way
Harbor's ``Task.is_valid_dir`` reads is still checked and refused, one condition of
Harbor's check at a time; one that differs only in what it never reads is not checked again."""

from __future__ import annotations

import os
import shutil

import pytest
from harbor.models.task.task import Task

from aces_bench.config.compose import compose_spec
from aces_bench.core.errors import EmitError
from aces_bench.emitters import emit
from aces_bench.emitters.accepted import CACHE_ENV
from aces_bench.emitters.emit import emit_study, forget_accepted, task_dir_problem
from aces_bench.emitters.plan import plan_study
from aces_bench.emitters.shape import dir_shape

SKILLS = "skill.paths=[tests/fixtures/skills]"


@pytest.fixture
def harbor_calls(tmp_path, monkeypatch):
    """Names of the dirs Harbor's own check ran on, in a process that has checked nothing."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "record"))
    forget_accepted()
    seen: list[str] = []
    real = Task.is_valid_dir

    def spy(path, *args, **kwargs):
        seen.append(os.path.basename(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(emit.Task, "is_valid_dir", staticmethod(spy))
    yield seen
    forget_accepted()


@pytest.fixture
def good(tmp_path, harbor_calls):
    """An emitted with-skill task dir whose shape Harbor has accepted."""
    spec = compose_spec(["skill=custom", SKILLS], output_dir=tmp_path / "out")
    task = next(t for t in emit_study(spec, tmp_path / "out" / "tasks").tasks if t.condition == "with_skill")
    assert task_dir_problem(task.path) is None
    harbor_calls.clear()
    return task.path


def _copy(good, tmp_path, name="copy"):
    dest = tmp_path / "copies" / name
    shutil.copytree(good, dest, symlinks=True)
    return dest


def _edit_toml(task_dir, old, new):
    toml = task_dir / "task.toml"
    text = toml.read_text()
    assert old in text, old
    toml.write_text(text.replace(old, new, 1))


def _remove(rel):
    def go(d):
        target = d / rel
        shutil.rmtree(target) if target.is_dir() else target.unlink()
    return go


def _toml(old, new):
    return lambda d: _edit_toml(d, old, new)


def _ignore_test_sh(d):
    (d / "tests" / ".harborignore").write_text("test.sh\n")


def _link_outside(d):
    (d / "tests" / "data").symlink_to("/etc")


def _link_cycle(d):
    (d / "solution").mkdir()
    (d / "solution" / "loop").symlink_to(d / "solution")


# Each makes Harbor's check fail for a reason of its own (the branches of
# Task.is_valid_dir, TaskConfig validation, the input-tree walk and the test-script rule).
BREAKS = {
    "no task.toml": _remove("task.toml"),
    "task.toml not TOML (inside [metadata])": _toml('case_source = "author"', 'case_source = "unterminated'),
    "task.toml not a TaskConfig": _toml("cpus = 1", 'cpus = "many"'),
    "a [task] name Harbor refuses": _toml('name = "aces/', 'name = "no-org-'),
    "no environment/ and no docker_image": _remove("environment"),
    "no instruction.md": _remove("instruction.md"),
    "no tests/test.sh": _remove("tests/test.sh"),
    "a Windows task without test.bat": _toml('os = "linux"', 'os = "windows"'),
    "steps declared, no steps dir": lambda d: (d / "task.toml").write_text(
        (d / "task.toml").read_text() + '\n[[steps]]\nname = "one"\n'),
    "test.sh excluded by .harborignore": _ignore_test_sh,
    "a tests/ link leaving the task": _link_outside,
    "a solution/ link cycle": _link_cycle,
}


@pytest.mark.parametrize("why", list(BREAKS))
def test_a_dir_harbor_refuses_is_refused_though_a_near_twin_was_accepted(why, good, tmp_path, harbor_calls):
    bad = _copy(good, tmp_path)
    BREAKS[why](bad)
    harbor_calls.clear()
    problem = task_dir_problem(bad)
    assert problem is not None and problem.startswith(bad.name), why
    assert harbor_calls[:1] == [bad.name], "the shape must not stand in for Harbor's check here"


def test_each_break_really_is_one_harbor_refuses(good, tmp_path):
    # The test above is only worth something if Harbor itself refuses each broken copy.
    for i, (why, breaks) in enumerate(BREAKS.items()):
        bad = _copy(good, tmp_path, f"bad-{i}")
        breaks(bad)
        assert not Task.is_valid_dir(bad), why


def test_the_ignore_file_is_read_not_just_named(good, tmp_path, harbor_calls):
    harmless = _copy(good, tmp_path, "harmless")
    (harmless / "tests" / ".harborignore").write_text("*.tmp\n")
    assert task_dir_problem(harmless) is None and harbor_calls == ["harmless"]
    bad = _copy(harmless, tmp_path, "bad")
    _ignore_test_sh(bad)  # the same file names, other rules
    harbor_calls.clear()
    assert task_dir_problem(bad) is not None and harbor_calls[:1] == ["bad"]


def test_what_harbor_never_reads_does_not_cost_a_check(good, tmp_path, harbor_calls):
    twin = _copy(good, tmp_path, "twin")
    _edit_toml(twin, 'name = "aces/', 'name = "other-org/')
    _edit_toml(twin, "description = ", 'description = "another task" #')
    _edit_toml(twin, 'case_source = "author"', 'case_source = "someone else"\nextra = [1, 2]')
    (twin / "instruction.md").write_text("Something else entirely.\n")
    (twin / "tests" / "case.json").write_text("{}\n")
    assert task_dir_problem(twin) is None and harbor_calls == []
    assert Task.is_valid_dir(twin)  # and Harbor agrees


def test_a_changed_setting_is_another_shape(good, tmp_path, harbor_calls):
    other = _copy(good, tmp_path, "other")
    _edit_toml(other, "memory_mb = 2048", "memory_mb = 4096")
    assert dir_shape(other) != dir_shape(good)
    assert task_dir_problem(other) is None and harbor_calls == ["other"]


def test_links_and_special_files_have_no_shape(good, tmp_path):
    linked = _copy(good, tmp_path, "linked")
    (linked / "environment" / "workspace" / "in.csv").symlink_to(linked / "instruction.md")
    fifo = _copy(good, tmp_path, "fifo")
    os.mkfifo(fifo / "environment" / "workspace" / "pipe")
    assert dir_shape(good) is not None
    assert dir_shape(linked) is None and dir_shape(fifo) is None


def test_a_study_runs_harbors_check_once_per_shape(tmp_path, harbor_calls):
    spec = compose_spec(["skill=custom", SKILLS], output_dir=tmp_path / "out")
    result = emit_study(spec, tmp_path / "out" / "tasks")
    shapes = {dir_shape(t.path) for t in result.tasks}
    assert None not in shapes and len(harbor_calls) == len(shapes) < len(result.tasks)


def test_an_emit_that_writes_a_broken_dir_still_stops(tmp_path, harbor_calls, monkeypatch):
    # The last task written loses test.sh; the siblings written before it have the
    # shape it would have had, and Harbor accepted that shape already.
    from aces_bench.emitters import harbor_task

    spec = compose_spec(["skill=custom", SKILLS], output_dir=tmp_path / "out")
    n = len(plan_study(spec).tasks)
    real, written = harbor_task.write_task_dir, []

    def break_the_last(final, *args, **kwargs):
        real(final, *args, **kwargs)
        written.append(final)
        if len(written) == n:
            (final / "tests" / "test.sh").unlink()

    monkeypatch.setattr(harbor_task, "write_task_dir", break_the_last)
    with pytest.raises(EmitError) as err:
        emit_study(spec, tmp_path / "out" / "tasks")
    assert len(written) == n > 2
    assert written[-1].name in str(err.value) and "do not load in Harbor" in str(err.value)


def test_the_written_text_is_trusted_only_while_the_file_holds_it(good, tmp_path, harbor_calls):
    """The emitter passes the task.toml it wrote with that text's shape; a file changed
    after the write is parsed again, so a setting changed on disk is another shape."""
    from aces_bench.emitters.shape import config_shape

    raw = (good / "task.toml").read_bytes()
    known = (raw, config_shape(raw.decode()))
    assert dir_shape(good, known) == dir_shape(good)
    changed = _copy(good, tmp_path)
    _edit_toml(changed, "memory_mb = 2048", "memory_mb = 4096")
    assert dir_shape(changed, known) == dir_shape(changed) != dir_shape(good)
    broken = _copy(good, tmp_path, "broken")
    _edit_toml(broken, "[verifier]", "[verifier")
    assert dir_shape(broken, known) is None
