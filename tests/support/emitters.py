"""Skill copies, custom environments and bring-your-own Harbor tasks for the emitter tests."""

from __future__ import annotations

import shutil
from pathlib import Path

SKILL = Path(__file__).resolve().parents[1] / "fixtures" / "skills" / "csv-column-sum"


def copy_skill(tmp_path: Path) -> Path:
    dest = tmp_path / "skills" / "csv-column-sum"
    shutil.copytree(SKILL, dest)
    return dest


def custom_env(skill: Path, dockerfile: str) -> Path:
    env = skill / "evals" / "environment"
    env.mkdir(parents=True)
    (env / "Dockerfile").write_text(dockerfile)
    (env / "requirements.txt").write_text("# nothing to install\n")
    return env


def native_task(skill: Path, name: str = "fix-total", *, dockerfile: bool = True, toml_extra: str = "") -> Path:
    task = skill / "evals" / "harbor" / name
    (task / "tests").mkdir(parents=True)
    (task / "environment").mkdir()
    (task / "instruction.md").write_text("Write the sum of 2 and 3 to /app/answer.txt.\n")
    (task / "task.toml").write_text(
        'schema_version = "1.4"\n[task]\nname = "author/fix-total"\ndescription = "an author task"\n'
        f"[verifier]\ntimeout_sec = 30.0\n[environment]\nworkdir = \"/app\"\n{toml_extra}"
    )
    if dockerfile:
        (task / "environment" / "Dockerfile").write_text("FROM python:3.12-slim\nWORKDIR /app\n")
    test = task / "tests" / "test.sh"
    test.write_text('#!/bin/sh\nmkdir -p /logs/verifier\nif [ "$(cat /app/answer.txt 2>/dev/null)" = "5" ]; '
                    "then echo 1 > /logs/verifier/reward.txt; else echo 0 > /logs/verifier/reward.txt; fi\n")
    test.chmod(0o755)
    (task / "tests" / "helper.py").write_text("print('author helper')\n")
    (task / "tests" / "helper.py").chmod(0o755)
    return task
