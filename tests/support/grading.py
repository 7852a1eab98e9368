"""Test support for grading: hand-built Harbor trial dirs (ATIF trajectory, TrialResult,
retained workspace) and author-grader skills."""

from __future__ import annotations

import json
import textwrap
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SHARED = ROOT / ".." / "shared"
SKILLSBENCH = SHARED / "data" / "skillsbench" / "trials"
EXAMPLES = ROOT / "aces_bench" / "examples" / "skills"
SKILL = "invoice-reconciler"
SCRIPT = "scripts/reconcile.py"


def bash(cmd: str, out: str = "", code: int | None = 0) -> dict[str, Any]:
    return {"tool": "bash", "args": {"command": cmd}, "out": out + (f"\n[exit code: {code}]" if code is not None else ""),
            "extra": {"exit_code": code} if code is not None else None}


def trajectory(*calls: dict[str, Any], prompt: str = "Reconcile data/march.csv.", final: str = "Done.") -> dict:
    steps: list[dict[str, Any]] = [{"step_id": 1, "source": "user", "message": prompt}]
    for c in calls:
        n = len(steps) + 1
        cid = f"call-{n}"
        result: dict[str, Any] = {"source_call_id": cid, "content": c["out"]}
        if c.get("extra"):
            result["extra"] = c["extra"]
        steps.append({"step_id": n, "source": "agent", "message": "",
                      "tool_calls": [{"tool_call_id": cid, "function_name": c["tool"], "arguments": c["args"]}],
                      "observation": {"results": [result]}})
    steps.append({"step_id": len(steps) + 1, "source": "agent", "message": final})
    return {"schema_version": "ATIF-v1.2", "session_id": "s-1",
            "agent": {"name": "test-agent", "version": "1", "model_name": "test-model"}, "steps": steps}


def trial_result(task: str, trial: str, reward: float | None, *, agent: str = "test-agent",
                 task_path: str | None = None, started: int = 0) -> dict:
    t0 = datetime(2026, 1, 1, tzinfo=UTC) + timedelta(minutes=started)
    return {
        "task_name": task, "trial_name": trial, "trial_uri": f"file:///jobs/{trial}",
        "task_id": {"path": task_path or f"/nonexistent/tasks/{task}"},
        "task_checksum": "0" * 64,
        "config": {"task": {"path": task_path or f"/nonexistent/tasks/{task}"}, "trial_name": trial,
                   "agent": {"name": agent, "model_name": "test/test-model"},
                   "environment": {"type": "docker"}},
        "agent_info": {"name": agent, "version": "1", "model_info": {"name": "test-model", "provider": "test"}},
        "agent_result": {"n_input_tokens": 100, "n_output_tokens": 20},
        "verifier_result": {"rewards": {"reward": reward}} if reward is not None else None,
        "started_at": t0.isoformat(), "finished_at": (t0 + timedelta(seconds=30)).isoformat(),
    }


def write_trial(job_dir: Path, name: str, traj: dict | None, result: dict,
                workspace: dict[str, str] | None = None) -> Path:
    """A Harbor trial dir: result.json, config.json, agent/trajectory.json, artifacts/workspace/..."""
    d = job_dir / name
    (d / "agent").mkdir(parents=True)
    (d / "result.json").write_text(json.dumps(result))
    (d / "config.json").write_text(json.dumps(result["config"]))
    if traj is not None:
        (d / "agent" / "trajectory.json").write_text(json.dumps(traj))
    for rel, text in (workspace or {}).items():
        p = d / "artifacts" / "workspace" / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(text)
    return d


def skill_with_graders(root: Path, graders: dict[str, str], *, name: str = SKILL) -> Path:
    """A copy of an example skill with ``evals/graders/<file>`` = text for each entry."""
    import shutil

    dst = root / name
    shutil.copytree(EXAMPLES / name, dst)
    gdir = dst / "evals" / "graders"
    gdir.mkdir(parents=True, exist_ok=True)
    for fname, text in graders.items():
        (gdir / fname).write_text(textwrap.dedent(text).lstrip())
    return dst
