"""Hand-built ATIF trajectories for grader tests.

A call spec is a dict ``{"tool", "args", "out", "extra"}``; ``bash`` and ``tool``
make them. ``traj`` puts each call in its own agent step after a user step and
ends with a final agent message, the shape the reference agent writes.
"""

from __future__ import annotations

from typing import Any

from harbor.models.trajectories import Trajectory

from aces_bench.cases import EvalCase
from aces_bench.graders.base import GradingInput

SKILL = "invoice-reconciler"
SCRIPT = "scripts/reconcile.py"
SKILL_MD = f"/skills/{SKILL}/SKILL.md"
RUN = f"python3 /skills/{SKILL}/{SCRIPT} data/march.csv"
AWS_KEY = "AKIAZ7QX3MPLE4KEY9QA"


def bash(cmd: str, out: str = "", code: int | None = 0) -> dict[str, Any]:
    extra = {"exit_code": code} if code is not None else None
    return {"tool": "bash", "args": {"command": cmd}, "out": out, "extra": extra}


def tool(name: str, args: dict[str, Any], out: str = "", extra: dict | None = None) -> dict[str, Any]:
    return {"tool": name, "args": args, "out": out, "extra": extra}


def traj_dict(*calls: dict[str, Any], version: str = "ATIF-v1.6", final: str = "Done.", per_step: int = 1,
              extra: dict | None = None) -> dict[str, Any]:
    steps: list[dict[str, Any]] = [{"step_id": 1, "source": "user", "message": "Reconcile data/march.csv."}]
    for i in range(0, len(calls), per_step):
        group = calls[i : i + per_step]
        n = len(steps) + 1
        tcs, results = [], []
        for k, c in enumerate(group):
            cid = f"call-{n}-{k}"
            tcs.append({"tool_call_id": cid, "function_name": c["tool"], "arguments": c["args"]})
            r: dict[str, Any] = {"source_call_id": cid, "content": c["out"]}
            if c.get("extra"):
                r["extra"] = c["extra"]
            results.append(r)
        steps.append({"step_id": n, "source": "agent", "message": "", "tool_calls": tcs,
                      "observation": {"results": results}})
    steps.append({"step_id": len(steps) + 1, "source": "agent", "message": final})
    out = {"schema_version": version, "session_id": "s-1", "agent": {"name": "aces-reference", "version": "1"},
           "steps": steps}
    if extra:
        out["extra"] = extra
    return out


def traj(*calls: dict[str, Any], **kw: Any) -> Trajectory:
    return Trajectory.model_validate(traj_dict(*calls, **kw))


def case(**kw: Any) -> EvalCase:
    base = {"id": "explicit-1", "prompt": "Reconcile data/march.csv", "expected_skill": SKILL,
            "expected_script": SCRIPT}
    base.update(kw)
    return EvalCase.model_validate(base)


NEGATIVE = {"id": "negative-1", "kind": "negative", "expected_skill": None, "expected_script": None}


def inp(trajectory: Trajectory | None, *, case_: EvalCase | None = None, condition: str = "with_skill",
        allowed: tuple[str, ...] = (SKILL,), **kw: Any) -> GradingInput:
    return GradingInput(trajectory=trajectory, case=case_ if case_ is not None else case(), condition=condition,
                        target_skill=SKILL, allowed_skills=allowed, **{"skills_dir": "/skills", "workdir": "/workspace", **kw})


def good_run() -> Trajectory:
    """Reads the skill, runs its script, writes the answer: should score high everywhere."""
    return traj(
        bash(f"cat {SKILL_MD}", "---\nname: invoice-reconciler\n---\nRun scripts/reconcile.py on the CSV."),
        bash(RUN, "total: 1234.50\nmatched 41 of 41 rows"),
        bash("echo 1234.50 > /workspace/answer.txt"),
        final="The reconciled total is 1234.50.",
    )
