"""Emit a whole study and prove Harbor can load every task it wrote."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import ClassVar

from harbor.models.task.task import Task
from pydantic import BaseModel, ConfigDict

from aces_bench.config.spec import RunSpec
from aces_bench.core.errors import EmitError
from aces_bench.core.io import write_json
from aces_bench.core.versioning import VersionedRecord, load_model
from aces_bench.emitters.accepted import AcceptedIds
from aces_bench.emitters.harbor_task import RenderCache, emit_task, finished_task
from aces_bench.emitters.inputs import InputKeys, read_inputs_index, write_inputs_index
from aces_bench.emitters.interventions import forget_loaded
from aces_bench.emitters.plan import StudyPlan, TaskPlan, plan_study
from aces_bench.emitters.shape import dir_shape
from aces_bench.records.study import KINDS

# Task ids Harbor's loader accepted, written after validation. Ids are content
# addresses, so a re-emit of unchanged dirs needs no second validation.
VALIDATED_INDEX = ".aces-validated.json"
TASKS_INDEX = KINDS["plan"].file
TASKS_INDEX_VERSION = "1"
_TASKS_REGENERATE = "re-emit the tasks (re-run the study)"

# Task ids Harbor's loader accepted, in this process or (through the shared record)
# in another. An id is the content address of every file and setting of its dir, so a
# dir written here under an id already accepted (the same task in another sweep
# member's tasks dir: the harness does not change a task) holds the same bytes and
# needs no second check. Dirs found on disk are not covered: they are checked unless
# their own folder's index lists them.
_ACCEPTED = AcceptedIds()

# Shapes (emitters/shape.py) of dirs Harbor's check accepted in this process: a dir of
# one of these shapes gets the same verdict without running the check again. Only
# accepted shapes are kept, so every dir Harbor refuses is checked and named itself.
_ACCEPTED_SHAPES: set[str] = set()


def forget_accepted() -> None:
    """Forget which task ids and dir shapes this process validated and which skill
    folders it loaded (benchmarks time a cold emit; they also point ``$ACES_EMIT_CACHE``
    at a new folder)."""
    _ACCEPTED.forget()
    _ACCEPTED_SHAPES.clear()
    forget_loaded()


class EmittedTask(VersionedRecord):
    """One entry of ``tasks.json`` (a JSON array of these, each carrying its schema_version)."""

    model_config = ConfigDict(frozen=True)
    # Entries written before schema_version existed have the version-1 shape.
    SCHEMA_ARTIFACT: ClassVar[str] = "tasks index"
    SCHEMA_VERSION: ClassVar[str] = TASKS_INDEX_VERSION
    SCHEMA_REGENERATE: ClassVar[str] = _TASKS_REGENERATE

    task_id: str
    path: Path
    skill: str
    case_id: str
    condition: str


class EmitResult(BaseModel):
    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    tasks_dir: Path
    tasks: tuple[EmittedTask, ...]
    written: int
    reused: int
    plan: StudyPlan


def task_dir_problem(path: Path, known_config: tuple[bytes, str] | None = None) -> str | None:
    """None when Harbor's local dataset would load ``path``, else why not.

    ``Task.is_valid_dir`` is the gate Harbor uses to silently drop a task; for a dir
    that fails it, Harbor's Task loader says why. It runs once per dir shape: a dir
    shaped like one it accepted (everything it reads is the same) is accepted as that one.
    ``known_config``: what the emitter wrote as task.toml and its shape (``dir_shape``).
    """
    shape = dir_shape(path, known_config)
    if shape is not None and shape in _ACCEPTED_SHAPES:
        return None
    if Task.is_valid_dir(path):
        if shape is not None:
            _ACCEPTED_SHAPES.add(shape)
        return None
    try:
        Task(path)
        reason = "Task.is_valid_dir() is false"
    except Exception as exc:  # Harbor raises many kinds; all mean "would be skipped"
        reason = f"{type(exc).__name__}: {exc}"
    return f"{path.name}: {reason}"


def _raise_problems(problems: list[str], where: Path) -> None:
    if problems:
        raise EmitError(
            f"{len(problems)} emitted task dir(s) do not load in Harbor:\n    " + "\n    ".join(problems),
            where=where,
            fix="this is an aces-bench bug or an unusual skill file; report it with the listed error",
        )


def validate_task_dirs(paths: list[Path]) -> None:
    """Check every dir as Harbor's local dataset would; raise naming each that fails."""
    if paths:
        _raise_problems([p for p in map(task_dir_problem, paths) if p], paths[0].parent)


def emit_study(spec: RunSpec, tasks_dir: Path, plan: StudyPlan | None = None) -> EmitResult:
    """Emit every task of the spec into ``tasks_dir`` and validate them with Harbor.

    The folder ends up holding exactly this study's tasks (stale ones from an earlier,
    different spec are removed) so it can be handed to Harbor as a local dataset.
    Every check that can refuse the study (the credentials a case may name among them)
    ran before, once, in ``study/preflight.py``: every path that emits (a study, trigger,
    ci through the study) runs it first.
    """
    plan = plan or plan_study(spec)
    tasks_dir = Path(tasks_dir).resolve()
    validated = _read_index(tasks_dir)
    cache = RenderCache()
    keys, known = InputKeys(spec), read_inputs_index(tasks_dir)
    inputs: dict[str, str] = {}
    emitted: list[EmittedTask] = []
    written = 0
    problems: list[str] = []
    # Each dir is checked right after it is written, in this thread: writing it is
    # CPU time in the kernel (creating inodes), not a wait a second thread could
    # fill, and a checker thread only traded the GIL back and forth on every call.
    for tp in plan.tasks:
        key = keys.key(tp)
        task_id = known.get(key)
        # Rendering these inputs gave this id before: if its dir is still there,
        # the task is not rendered again.
        if task_id is not None and (done := finished_task(tasks_dir, task_id)) is not None:
            path, was_written = done, False
        else:
            task_id, path, was_written = emit_task(tp, spec, tasks_dir, cache)
        inputs[key] = task_id
        written += was_written
        written_config = cache.config_shapes.pop(task_id, None)
        if task_id not in (_ACCEPTED if was_written else validated):
            if (problem := task_dir_problem(path, written_config)) is None:
                _ACCEPTED.add(task_id)
            else:
                problems.append(problem)
        emitted.append(_record(tp, task_id, path))
    keep = {t.task_id for t in emitted}
    if tasks_dir.is_dir():
        for stale in tasks_dir.iterdir():
            if stale.is_dir() and stale.name not in keep and not stale.name.startswith("."):
                shutil.rmtree(stale)
        cache.store(tasks_dir).prune()
    _raise_problems(problems, tasks_dir)
    write_json(tasks_dir / VALIDATED_INDEX, sorted(keep))
    write_inputs_index(tasks_dir, inputs)
    if spec.backend.is_local:
        preflight_local(plan.tasks, emitted)
    write_json(
        tasks_dir.parent / TASKS_INDEX,
        [t.model_dump(mode="json") for t in emitted],
    )
    return EmitResult(
        tasks_dir=tasks_dir,
        tasks=tuple(emitted),
        written=written,
        reused=len(emitted) - written,
        plan=plan,
    )


def read_tasks_index(path: Path) -> list[EmittedTask]:
    """The entries of a ``tasks.json``, migrated; a bad file is an EmitError naming the entry."""
    path = Path(path)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise EmitError(f"cannot read the tasks index: {exc}", where=path, fix=_TASKS_REGENERATE) from None
    if not isinstance(data, list):
        raise EmitError(f"expected a JSON array of tasks, got {type(data).__name__}", where=path,
                        fix=_TASKS_REGENERATE)
    return [load_model(EmittedTask, entry, where=path, cls=EmitError, fix=_TASKS_REGENERATE, prefix=f"[{i}]")
            for i, entry in enumerate(data)]


def _read_index(tasks_dir: Path) -> set[str]:
    try:
        data = json.loads((tasks_dir / VALIDATED_INDEX).read_text())
    except (OSError, ValueError):
        return set()
    return {str(x) for x in data} if isinstance(data, list) else set()


def preflight_local(plans: tuple[TaskPlan, ...], emitted: list[EmittedTask]) -> None:
    """Refuse, before any trial, a task environment backend=local cannot build.

    The generated default environment is the local backend's own subset; a skill's
    custom environment (Dockerfile, Compose) or a native task is checked once per
    source, so an unsupported instruction or a Compose sidecar stops the study with
    the file and line instead of failing every trial.
    """
    from aces_bench.backends.local import preflight

    seen: set[tuple[Path, Path | None]] = set()
    for tp, task in zip(plans, emitted, strict=True):
        key = (tp.target.path, tp.native_task)
        if key in seen:
            continue
        seen.add(key)
        custom = tp.native_task is not None or (tp.target.path / "evals" / "environment").is_dir()
        if custom:
            preflight(task.path)


def _record(tp: TaskPlan, task_id: str, path: Path) -> EmittedTask:
    return EmittedTask(task_id=task_id, path=path, skill=tp.target.name, case_id=tp.case.id, condition=tp.condition)


def read_task_metadata(task_dir: Path) -> dict:
    """The ``[metadata.aces]`` table of an emitted task, validated (and migrated) by ``TaskMetadata``."""
    from aces_bench.emitters.task_metadata import TASK_METADATA_KEY, TASK_METADATA_REGENERATE, TaskMetadata

    task = Task(task_dir, disable_verification=True)
    meta = task.config.metadata.get(TASK_METADATA_KEY)
    if not isinstance(meta, dict):
        raise EmitError("task.toml has no [metadata.aces] table", where=task_dir / "task.toml",
                        fix="grade it with `aces-bench grade` instead, which does not need aces metadata")
    where = Path(task_dir) / "task.toml"
    return load_model(TaskMetadata, meta, where=where, cls=EmitError, prefix="metadata.aces",
                      fix=TASK_METADATA_REGENERATE).as_table()
