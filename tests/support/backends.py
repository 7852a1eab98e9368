"""Helpers for the local-backend tests: hand-made task dirs and started environments."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
from pathlib import Path

import pytest
from harbor.models.task.config import EnvironmentConfig as TaskEnvConfig
from harbor.models.trial.paths import TrialPaths

from aces_bench.backends.local import LocalSandboxEnvironment

# Runs bubblewrap: marker ``sandbox``, skipped without it (tests/conftest.py).
needs_bwrap = pytest.mark.sandbox

DOCKERFILE = "FROM ubuntu:24.04\nWORKDIR /workspace\nCOPY skills/ /skills/\nCOPY workspace/ /workspace/\n"

TASK_TOML = """schema_version = "1.4"

[task]
name = "aces/{name}"

[agent]
timeout_sec = 60

[verifier]
timeout_sec = 60

[environment]
skills_dir = "/skills"
workdir = "/workspace"
network_mode = "no-network"
"""

TEST_SH = """#!/bin/bash
if [ "$(cat /workspace/answer.txt 2>/dev/null)" = "42" ] && [ -f /skills/demo/SKILL.md ]; then
  echo 1 > /logs/verifier/reward.txt
else
  echo 0 > /logs/verifier/reward.txt
fi
"""


def sync(fn):
    """Run an async test body in a fresh event loop (no pytest-asyncio needed)."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return asyncio.run(fn(*args, **kwargs))

    return wrapper


def write_environment(env_dir: Path, dockerfile: str = DOCKERFILE) -> Path:
    """An environment/ dir with a Dockerfile, one skill and one staged input file."""
    (env_dir / "skills" / "demo").mkdir(parents=True, exist_ok=True)
    (env_dir / "skills" / "demo" / "SKILL.md").write_text("---\nname: demo\ndescription: demo skill\n---\n")
    (env_dir / "workspace" / "data").mkdir(parents=True, exist_ok=True)
    (env_dir / "workspace" / "data" / "input.csv").write_text("a,b\n1,2\n")
    (env_dir / "Dockerfile").write_text(dockerfile)
    return env_dir


def write_task(dataset: Path, name: str, *, answer: str) -> Path:
    """A Harbor task whose oracle writes ``answer``; the verifier wants 42."""
    task = dataset / name
    write_environment(task / "environment")
    (task / "task.toml").write_text(TASK_TOML.format(name=name))
    (task / "instruction.md").write_text("Write the answer to /workspace/answer.txt.\n")
    (task / "tests").mkdir(parents=True)
    (task / "tests" / "test.sh").write_text(TEST_SH)
    (task / "solution").mkdir()
    (task / "solution" / "solve.sh").write_text(f"#!/bin/bash\necho {answer} > /workspace/answer.txt\n")
    for script in (task / "tests" / "test.sh", task / "solution" / "solve.sh"):
        os.chmod(script, 0o755)
    return task


def make_env(
    tmp_path: Path,
    *,
    dockerfile: str = DOCKERFILE,
    network_mode: str | None = "no-network",
    root_parent: str | None = "",
    **kwargs,
) -> LocalSandboxEnvironment:
    """A LocalSandboxEnvironment over a fresh environment dir and trial dir in tmp_path.

    Private roots go under tmp_path unless ``root_parent`` says otherwise (None: the
    backend's own default).
    """
    env_dir = write_environment(tmp_path / "task" / "environment", dockerfile)
    trial = TrialPaths(trial_dir=tmp_path / "trial")
    trial.mkdir()
    fields = {"workdir": "/workspace", "skills_dir": "/skills"}
    if network_mode is not None:
        fields["network_mode"] = network_mode
    config = TaskEnvConfig(**fields)
    return LocalSandboxEnvironment(
        environment_dir=env_dir,
        environment_name="demo",
        session_id="demo__test__env",
        trial_paths=trial,
        task_env_config=config,
        network_policy=config.resolve_baseline(),
        root_parent=str(tmp_path) if root_parent == "" else root_parent,
        **kwargs,
    )


@contextlib.asynccontextmanager
async def started(env: LocalSandboxEnvironment):
    await env.start(force_build=False)
    try:
        yield env
    finally:
        await env.stop(delete=True)


def processes_in_namespace(pid_namespace: int) -> list[int]:
    """Host pids of every process in the given PID namespace (by its inode)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            if os.stat(f"/proc/{entry}/ns/pid").st_ino == pid_namespace:
                found.append(int(entry))
        except OSError:
            continue
    return found


def processes_matching(text: str) -> list[int]:
    """Host pids whose command line contains ``text``."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        try:
            cmdline = Path(f"/proc/{entry}/cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if text in cmdline:
            found.append(int(entry))
    return found
