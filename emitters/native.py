"""Bring-your-own Harbor tasks: ``<skill>/evals/harbor/<task>/`` paired automatically.

A skill author may ship complete Harbor tasks (instruction.md, task.toml,
environment/, tests/). Each becomes a case whose with-skill task is the same task
with the target skill staged into its skills dir and whose baseline is the task
without it. The author's verifier decides the reward; aces-bench adds only the
staged skills, a final ``COPY`` of them into the skills dir, and its metadata.
"""

from __future__ import annotations

import re
from pathlib import Path

from harbor.models.task.config import TaskConfig
from harbor.models.task.task import Task

from aces_bench.cases import EvalCase
from aces_bench.core.errors import EmitError
from aces_bench.inputs.skills import Skill, iter_files

NATIVE_DIR = "evals/harbor"
CASE_PREFIX = "harbor-"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")


def find_native_tasks(skill: Skill) -> list[Path]:
    """Task dirs (holding task.toml) under the skill's ``evals/harbor/``, by name."""
    root = skill.path / NATIVE_DIR
    if not root.is_dir():
        return []
    return sorted(p for p in root.iterdir() if p.is_dir() and (p / "task.toml").is_file())


def native_case_id(task_dir: Path) -> str:
    return (CASE_PREFIX + _UNSAFE.sub("-", task_dir.name).strip("-"))[:64]


def load_native(task_dir: Path) -> Task:
    """Harbor's own loader, with its error turned into one naming the task dir."""
    try:
        return Task(task_dir)
    except Exception as exc:  # Harbor raises many kinds; each means "this task does not load"
        raise EmitError(
            f"native Harbor task does not load: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}",
            where=task_dir,
            fix="a task needs task.toml, instruction.md, tests/test.sh and environment/ (or docker_image)",
        ) from None


def native_case(task_dir: Path, skill: Skill) -> EvalCase:
    """The case a native task stands for: its instruction, expecting the skill.

    It carries no deterministic checks: the task's own ``tests/`` decide the reward.
    """
    task = load_native(task_dir)
    if not task.instruction.strip():
        raise EmitError("instruction.md is empty", where=task_dir / "instruction.md",
                        fix="write the task's prompt in instruction.md")
    return EvalCase(
        id=native_case_id(task_dir),
        prompt=task.instruction,
        expected_skill=skill.name,
        note=f"native Harbor task {NATIVE_DIR}/{task_dir.name}",
    )


def native_files(task_dir: Path) -> dict[str, bytes]:
    """Every file of the native task but task.toml (re-rendered with aces metadata)."""
    out = {}
    for p in iter_files(task_dir):
        rel = p.relative_to(task_dir.resolve()).as_posix()
        if rel != "task.toml":
            out[rel] = p.read_bytes()
    if any(rel.startswith("environment/skills/") for rel in out):
        raise EmitError(
            "the task already has environment/skills/: aces-bench stages the skills there",
            where=task_dir / "environment" / "skills",
            fix="remove environment/skills/ from the task; skills are staged per condition",
        )
    return out


def native_config(task_dir: Path) -> TaskConfig:
    return TaskConfig.model_validate_toml((task_dir / "task.toml").read_text(encoding="utf-8"))


def native_dockerfile(files: dict[str, bytes], config: TaskConfig, skills_dir: str, task_dir: Path) -> bytes:
    """The task's Dockerfile with the staged skills copied in as the last layer.

    A task built from ``docker_image`` alone gets a Dockerfile ``FROM`` that image, so
    the skills can be staged the same way on every backend.
    """
    copy = f"COPY skills/ {skills_dir.rstrip('/')}/\n"
    existing = files.get("environment/Dockerfile")
    if existing is not None:
        text = existing.decode("utf-8")
        return (text if text.endswith("\n") else text + "\n").encode() + copy.encode()
    if config.environment.docker_image:
        return f"FROM {config.environment.docker_image}\n{copy}".encode()
    raise EmitError(
        "the task has neither environment/Dockerfile nor [environment].docker_image: "
        "there is nowhere to stage the skills",
        where=task_dir / "environment",
        fix="add environment/Dockerfile (or set docker_image in task.toml)",
    )
