"""Emit a whole study and prove Harbor can load every task it wrote."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from harbor.models.task.task import Task
from pydantic import BaseModel, ConfigDict

from aces_bench.config.spec import RunSpec
from aces_bench.emitters.harbor_task import emit_task
from aces_bench.emitters.plan import StudyPlan, TaskPlan, plan_study
from aces_bench.errors import EmitError
from aces_bench.io import write_json


class EmittedTask(BaseModel):
    model_config = ConfigDict(frozen=True)

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


def validate_task_dirs(paths: list[Path]) -> None:
    """Load each dir with Harbor's own Task loader; Harbor would silently skip a bad one."""
    problems = []
    for path in paths:
        try:
            Task(path)
            if not Task.is_valid_dir(path):
                raise ValueError("Task.is_valid_dir() is false")
        except Exception as exc:  # Harbor raises many kinds; all mean "would be skipped"
            problems.append(f"{path.name}: {type(exc).__name__}: {exc}")
    if problems:
        raise EmitError(
            f"{len(problems)} emitted task dir(s) do not load in Harbor:\n    " + "\n    ".join(problems),
            where=paths[0].parent,
            fix="this is an aces-bench bug or an unusual skill file; report it with the listed error",
        )


def emit_study(spec: RunSpec, tasks_dir: Path, plan: StudyPlan | None = None) -> EmitResult:
    """Emit every task of the spec into ``tasks_dir`` and validate them with Harbor.

    The folder ends up holding exactly this study's tasks (stale ones from an earlier,
    different spec are removed) so it can be handed to Harbor as a local dataset.
    """
    plan = plan or plan_study(spec)
    tasks_dir = Path(tasks_dir).resolve()
    emitted: list[EmittedTask] = []
    written = 0
    for tp in plan.tasks:
        task_id, path, was_written = emit_task(tp, spec, tasks_dir)
        written += was_written
        emitted.append(_record(tp, task_id, path))
    keep = {t.task_id for t in emitted}
    if tasks_dir.is_dir():
        for stale in tasks_dir.iterdir():
            if stale.is_dir() and stale.name not in keep and not stale.name.startswith("."):
                shutil.rmtree(stale)
    validate_task_dirs([t.path for t in emitted])
    write_json(
        tasks_dir.parent / "tasks.json",
        [t.model_dump(mode="json") for t in emitted],
    )
    return EmitResult(
        tasks_dir=tasks_dir,
        tasks=tuple(emitted),
        written=written,
        reused=len(emitted) - written,
        plan=plan,
    )


def _record(tp: TaskPlan, task_id: str, path: Path) -> EmittedTask:
    return EmittedTask(task_id=task_id, path=path, skill=tp.target.name, case_id=tp.case.id, condition=tp.condition)


def read_task_metadata(task_dir: Path) -> dict:
    """The ``[metadata.aces]`` table of an emitted task."""
    from aces_bench.emitters.harbor_task import TASK_METADATA_KEY

    task = Task(task_dir, disable_verification=True)
    meta = task.config.metadata.get(TASK_METADATA_KEY)
    if not isinstance(meta, dict):
        raise EmitError("task.toml has no [metadata.aces] table", where=task_dir / "task.toml",
                        fix="grade it with `aces-bench grade` instead, which does not need aces metadata")
    return json.loads(json.dumps(meta))
