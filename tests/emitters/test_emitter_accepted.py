"""The shared record of task ids Harbor accepted: which dirs it spares a second check,
and which it never does (a dir Harbor refuses, a dir found on disk, another Harbor)."""

from __future__ import annotations

import errno
import os

import pytest

from aces_bench.config.compose import compose_spec
from aces_bench.core.errors import EmitError
from aces_bench.emitters import accepted, emit, harbor_task
from aces_bench.emitters.accepted import CACHE_ENV, record_dir
from aces_bench.emitters.emit import VALIDATED_INDEX, emit_study, forget_accepted

SKILLS = "skill.paths=[tests/fixtures/skills]"


@pytest.fixture
def record(tmp_path, monkeypatch):
    """An empty record and a process that has checked nothing yet."""
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "record"))
    forget_accepted()
    yield tmp_path / "record"
    forget_accepted()


@pytest.fixture
def checked(monkeypatch):
    """The dirs Harbor's check ran on, in order."""
    seen = []
    real = emit.task_dir_problem

    def spy(path, *known):
        seen.append(path.name)
        return real(path, *known)

    monkeypatch.setattr(emit, "task_dir_problem", spy)
    return seen


def _recorded():
    return sorted(p.name for p in record_dir().iterdir() if not p.name.startswith("."))


def _emit(out):
    spec = compose_spec(["skill=custom", SKILLS], output_dir=out)
    return emit_study(spec, out / "tasks")


def test_each_distinct_task_is_checked_once_on_the_machine(tmp_path, record, checked):
    first = _emit(tmp_path / "member-a")
    ids = sorted(t.task_id for t in first.tasks)
    assert sorted(checked) == ids
    assert _recorded() == ids
    # every marker is a link to the one anchor: recording costs no inode per task
    assert {(record_dir() / i).stat().st_ino for i in ids} == {(record_dir() / ".anchor").stat().st_ino}
    # Another sweep member in a fresh process: it writes the same tasks into its own
    # folder, and Harbor's verdict on those bytes is already recorded.
    forget_accepted()
    checked.clear()
    second = _emit(tmp_path / "member-b")
    assert second.written == len(ids) and checked == []


def test_without_the_record_a_fresh_process_checks_again(tmp_path, record, checked, monkeypatch):
    _emit(tmp_path / "member-a")
    forget_accepted()
    checked.clear()
    monkeypatch.setenv(CACHE_ENV, str(tmp_path / "another-record"))
    second = _emit(tmp_path / "member-b")
    assert sorted(checked) == sorted(t.task_id for t in second.tasks)


def test_a_record_from_another_harbor_version_is_not_used(tmp_path, record, checked, monkeypatch):
    _emit(tmp_path / "member-a")
    forget_accepted()
    checked.clear()
    monkeypatch.setattr(accepted, "_harbor_version", lambda: "0.0.0-other")
    second = _emit(tmp_path / "member-b")
    assert sorted(checked) == sorted(t.task_id for t in second.tasks)


def test_a_written_dir_harbor_refuses_is_refused_and_not_recorded(tmp_path, record, monkeypatch):
    real = harbor_task.write_task_dir

    def without_test_sh(final, *args, **kwargs):
        real(final, *args, **kwargs)
        (final / "tests" / "test.sh").unlink()

    monkeypatch.setattr(harbor_task, "write_task_dir", without_test_sh)
    with pytest.raises(EmitError) as err:
        _emit(tmp_path / "member-a")
    assert "do not load in Harbor" in str(err.value)
    assert not record_dir().exists() or not any(record_dir().iterdir())


def test_a_dir_found_on_disk_is_checked_though_its_id_is_recorded(tmp_path, record, checked):
    first = _emit(tmp_path / "member-a")
    broken = first.tasks[0].path
    (broken / "tests" / "test.sh").unlink()
    (tmp_path / "member-a" / "tasks" / VALIDATED_INDEX).unlink()
    forget_accepted()
    checked.clear()
    with pytest.raises(EmitError) as err:
        _emit(tmp_path / "member-a")
    assert broken.name in str(err.value) and "do not load in Harbor" in str(err.value)
    assert sorted(checked) == sorted(t.task_id for t in first.tasks)


def test_an_anchor_full_of_links_is_replaced_and_the_id_still_recorded(tmp_path, record, monkeypatch):
    real, refused = os.link, []

    def link(src, dst, *args, **kwargs):
        if not refused:  # the first link: the anchor already holds the most links allowed
            refused.append(dst)
            raise OSError(errno.EMLINK, "Too many links")
        return real(src, dst, *args, **kwargs)

    ids = accepted.AcceptedIds()
    ids.add("a-task")  # no anchor yet: one is made
    first = (record_dir() / ".anchor").stat().st_ino
    monkeypatch.setattr(accepted.os, "link", link)
    ids.add("b-task")
    assert refused and _recorded() == ["a-task", "b-task"]
    assert (record_dir() / "b-task").stat().st_ino == (record_dir() / ".anchor").stat().st_ino != first
    assert (record_dir() / "a-task").stat().st_ino == first
