"""Grade a committed real trajectory the way the study does (shared by the test and make_real_grades.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from aces_bench.cases import EvalCase
from aces_bench.graders.atif import load_trial_trajectory
from aces_bench.graders.base import GradingInput
from aces_bench.graders.deterministic import grade_deterministic


def grade_committed(root: Path, harness: str, inputs: dict[str, Any]) -> dict[str, Any]:
    """Every deterministic result (score, sub-scores, evidence) for ``root/harness``."""
    loaded = load_trial_trajectory(root / harness)
    assert loaded.trajectory is not None, f"{harness}: {loaded.error}"
    inp = GradingInput(
        trajectory=loaded.trajectory, case=EvalCase.model_validate(inputs["case"]), condition=inputs["condition"],
        target_skill=inputs["target_skill"], allowed_skills=tuple(inputs["allowed_skills"]),
        skills_dir=inputs["skills_dir"], workdir=inputs["workdir"],
    )
    results = grade_deterministic(inp)
    return {
        "harness": harness,
        "agent": loaded.trajectory.agent.name,
        "inputs": inputs,
        "n_steps": len(loaded.trajectory.steps),
        "metrics": {
            name: {
                "score": r.score,
                "unscored_reason": r.unscored_reason,
                "sub_scores": r.sub_scores,
                "evidence": [e.model_dump(mode="json", exclude_none=True) for e in r.evidence],
            }
            for name, r in results.items()
        },
    }
