"""Golden emitter artifacts: tasks.json entries and a task's [metadata.aces], through their real readers."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from harbor.models.trial.result import TrialResult

from aces_bench import __version__
from aces_bench.core.errors import EmitError
from aces_bench.emitters.emit import EmittedTask, read_task_metadata, read_tasks_index
from aces_bench.emitters.task_metadata import TaskMetadata
from aces_bench.grading.external import aces_metadata

GOLDEN = Path(__file__).resolve().parent
TASKS = GOLDEN / "task_metadata"
REEMIT_TASK = "re-emit the task (re-run the study)"


def _raw_table(task_dir: Path) -> dict:
    return tomllib.loads((task_dir / "task.toml").read_text())["metadata"]["aces"]


@pytest.mark.parametrize("name", ["tasks_v1.json", "tasks_unversioned.json"])
def test_tasks_index_reads_current_and_pre_version_files(name):
    tasks = read_tasks_index(GOLDEN / "tasks_index" / name)
    assert sorted(t.condition for t in tasks) == ["baseline", "with_skill"]
    assert all(isinstance(t, EmittedTask) and t.schema_version == "1" for t in tasks)


def test_tasks_index_future_version_is_refused_naming_the_entry():
    path = GOLDEN / "tasks_index" / "future_version.json"
    with pytest.raises(EmitError) as err:
        read_tasks_index(path)
    assert str(err.value) == (
        f"{path}: [1]: tasks index schema_version '9' is newer than this aces-bench ({__version__}) reads (1)\n"
        "  fix: upgrade aces-bench to the version that wrote this file, or re-emit the tasks (re-run the study)"
    )


def test_task_metadata_v2_reads_back_exactly_as_written():
    raw = _raw_table(TASKS / "v2")
    assert read_task_metadata(TASKS / "v2") == raw
    # Every key the emitter writes is a field of the model, and nothing else ("plugin" only for a plugin's task).
    assert set(TaskMetadata.model_fields) - {"plugin"} == set(raw)


def test_task_metadata_v1_is_migrated_to_v2():
    v1, v2 = read_task_metadata(TASKS / "v1"), read_task_metadata(TASKS / "v2")
    assert v1["schema_version"] == "2"
    assert v1["intervention"] == v1["skill"] and v1["intervention_kind"] == "skill"
    assert v1["intervention_members"] == [v1["skill"]] and v1["case_source"] == "author"
    assert (v1["decoy_size"], v1["decoy_seed"]) == (-1, -1)
    assert v1["environment"] == {"source": "default", "compose": False, "mcp_servers": []}
    # What version 1 recorded is kept as it was.
    assert {k: v for k, v in v1.items() if k in _raw_table(TASKS / "v1")} | {"schema_version": "2"} == {
        k: v for k, v in v2.items() if k in _raw_table(TASKS / "v1")} | {"schema_version": "2"}


def test_task_metadata_future_version_is_refused():
    with pytest.raises(EmitError) as err:
        read_task_metadata(TASKS / "future_version")
    assert str(err.value) == (
        f"{TASKS / 'future_version' / 'task.toml'}: metadata.aces: task metadata [metadata.aces] schema_version '9' "
        f"is newer than this aces-bench ({__version__}) reads (1, 2)\n"
        f"  fix: upgrade aces-bench to the version that wrote this file, or {REEMIT_TASK}"
    )


def test_task_metadata_bad_condition_is_refused_as_a_dotted_key():
    with pytest.raises(EmitError) as err:
        read_task_metadata(TASKS / "malformed_condition")
    assert str(err.value) == (
        f"{TASKS / 'malformed_condition' / 'task.toml'}: invalid values:\n"
        "    metadata.aces.condition: Input should be 'with_skill', 'baseline', 'null', 'placebo' or 'forced' "
        "(got 'with-skill')\n"
        f"  fix: {REEMIT_TASK}"
    )


def _result_for(task_dir: Path) -> TrialResult:
    """The real trial result of the golden task, pointed at a golden task dir."""
    result = TrialResult.model_validate(json.loads((TASKS / "trial_result.json").read_text()))
    task = result.config.task.model_copy(update={"path": task_dir})
    return result.model_copy(update={"config": result.config.model_copy(update={"task": task})})


def test_external_grading_reads_aces_metadata_through_the_model():
    assert aces_metadata(_result_for(TASKS / "v2")) == _raw_table(TASKS / "v2")
    assert aces_metadata(_result_for(TASKS / "v1"))["schema_version"] == "2"


def test_external_grading_refuses_newer_aces_metadata():
    with pytest.raises(EmitError, match=r"task metadata \[metadata.aces\] schema_version '9' is newer"):
        aces_metadata(_result_for(TASKS / "future_version"))
