"""A real Harbor job (``Job.create``) running the reference agent by import path on the
local bubblewrap backend: one with-skill and one baseline trial of the same task."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("HARBOR_TELEMETRY", "0")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from harbor.models.task.config import EnvironmentConfig as TaskEnvironmentConfig
from harbor.models.task.config import PackageInfo, TaskConfig
from harbor.models.trajectories import Trajectory

LOCAL_BACKEND = "aces_bench.backends.local:LocalSandboxEnvironment"
AGENT = "aces_bench.agents.reference:ReferenceAgent"

pytestmark = pytest.mark.sandbox


def _require_local_backend() -> None:
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap (bwrap) is not installed; the local backend needs it")
    module, _, cls = LOCAL_BACKEND.partition(":")
    try:
        getattr(importlib.import_module(module), cls)
    except (ImportError, AttributeError) as exc:
        pytest.skip(f"local backend {LOCAL_BACKEND} not available yet ({exc})")


SKILL_MD = """---
name: word-counter
description: Count the words and distinct vocabulary of a plain text document.
---
# Word counter

## Usage
```bash
python3 scripts/count.py <document.txt>
```
"""
COUNT_PY = 'import sys\nw = open(sys.argv[1]).read().split()\nprint(f"{len(w)} words, {len(set(x.lower() for x in w))} distinct")\n'
TEST_SH = """#!/bin/sh
mkdir -p /logs/verifier
if grep -q '^7 words, 5 distinct$' /workspace/answer.txt 2>/dev/null; then r=1; else r=0; fi
printf '{"reward": %s}\\n' "$r" > /logs/verifier/reward.json
"""


def write_task(root: Path, name: str, *, with_skill: bool) -> Path:
    task = root / name
    env = task / "environment"
    (env / "skills").mkdir(parents=True)
    if with_skill:
        skill = env / "skills" / "word-counter"
        (skill / "scripts").mkdir(parents=True)
        (skill / "SKILL.md").write_text(SKILL_MD)
        (skill / "scripts" / "count.py").write_text(COUNT_PY)
    (env / "workspace" / "data").mkdir(parents=True)
    (env / "workspace" / "data" / "essay.txt").write_text("The cat saw the dog\nthe end\n")
    (env / "Dockerfile").write_text(
        "FROM python:3.12-slim\nWORKDIR /workspace\nCOPY skills/ /skills/\nCOPY workspace/ /workspace/\n"
    )
    (task / "tests").mkdir()
    (task / "tests" / "test.sh").write_text(TEST_SH)
    (task / "instruction.md").write_text(
        "How many words are in the essay document, and how many distinct ones?\n\n---\n"
        "Working directory: /workspace\nInput files:\n- data/essay.txt\n"
        "Write your final answer to /workspace/answer.txt.\n"
    )
    config = TaskConfig(
        task=PackageInfo(name=f"aces/{name}"),
        environment=TaskEnvironmentConfig(skills_dir="/skills", workdir="/workspace", network_mode="no-network"),
    )
    (task / "task.toml").write_text(config.model_dump_toml())
    return task


def test_reference_agent_in_a_real_harbor_job(tmp_path):
    _require_local_backend()
    from harbor.job import Job
    from harbor.models.job.config import DatasetConfig, JobConfig
    from harbor.models.trial.config import AgentConfig, EnvironmentConfig

    dataset = tmp_path / "dataset"
    write_task(dataset, "with-skill", with_skill=True)
    write_task(dataset, "baseline", with_skill=False)
    config = JobConfig(
        job_name="ref-agent",
        jobs_dir=tmp_path / "jobs",
        n_concurrent_trials=2,
        quiet=True,
        datasets=[DatasetConfig(path=dataset)],
        agents=[AgentConfig(import_path=AGENT, kwargs={"deterministic": True})],
        environment=EnvironmentConfig(import_path=LOCAL_BACKEND),
    )

    async def go():
        job = await Job.create(config)
        return await job.run()

    asyncio.run(go())
    results = {}
    for result_file in (tmp_path / "jobs" / "ref-agent").glob("*/result.json"):
        data = json.loads(result_file.read_text())
        results[data["task_name"]] = (result_file.parent, data)
    assert set(results) == {"aces/with-skill", "aces/baseline"}, results.keys()

    for name, expected_reward, outcome in (("aces/with-skill", 1.0, "skill"), ("aces/baseline", 0.0, "fallback")):
        trial_dir, data = results[name]
        assert data.get("exception_info") is None, (trial_dir / "exception.txt").read_text() if (trial_dir / "exception.txt").exists() else data
        assert data["agent_info"]["name"] == "aces-reference"
        assert data["agent_info"]["version"].endswith("+deterministic.non-llm")
        assert data["verifier_result"]["rewards"] == {"reward": expected_reward}
        agent_result = data["agent_result"]
        assert (agent_result["n_input_tokens"], agent_result["n_output_tokens"], agent_result["cost_usd"]) == (0, 0, 0.0)
        assert agent_result["metadata"]["aces_reference"]["outcome"] == outcome
        traj = Trajectory.model_validate_json((trial_dir / "agent" / "trajectory.json").read_text())
        commands = [s.tool_calls[0].arguments["command"] for s in traj.steps if s.tool_calls]
        assert commands[0] == "ls -1 -- /skills"
        if outcome == "skill":
            assert "cat /skills/word-counter/SKILL.md" in commands
            assert "python3 /skills/word-counter/scripts/count.py data/essay.txt" in commands
            assert traj.steps[-1].message == "7 words, 5 distinct"
        else:
            assert not any("SKILL.md" in c for c in commands)
            assert traj.steps[-1].message == "data/essay.txt: 2 lines"
