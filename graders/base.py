"""Typed inputs and outputs shared by every grader.

A grader is a pure function ``grade(inp: GradingInput) -> MetricResult``. It never
raises for bad agent behaviour; it returns an unscored result with a reason when it
cannot decide (missing trajectory, no case spec, judge failure). Unscored is not 0.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from harbor.models.trajectories import Trajectory
from pydantic import BaseModel, ConfigDict, Field

from aces_bench.cases import EvalCase

GRADER_VERSION = "1"


class Evidence(BaseModel):
    """Why a check passed or failed: where in the trajectory, and what was seen."""

    model_config = ConfigDict(frozen=True)

    check: str
    passed: bool | None
    detail: str
    step_id: int | None = None
    pattern_id: str | None = None


class MetricResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    metric: str
    score: float | None = Field(description="0..1, or None when unscored")
    unscored_reason: str | None = None
    sub_scores: dict[str, float | None] = Field(default_factory=dict)
    evidence: list[Evidence] = Field(default_factory=list)
    grader: str = Field(description="'deterministic', or the judge label for judged metrics")
    grader_version: str = GRADER_VERSION
    details: dict[str, Any] = Field(
        default_factory=dict,
        description="structured, metric-specific record (findings, the self_correction section...); JSON-able",
    )

    @property
    def scored(self) -> bool:
        return self.score is not None


class GradingInput(BaseModel):
    """Everything a grader may read, all read-only, all produced by the trial."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    trajectory: Trajectory | None
    trajectory_error: str | None = None
    case: EvalCase | None
    condition: Literal["with_skill", "baseline"]
    target_skill: str
    allowed_skills: tuple[str, ...] = Field(description="skills the agent may read without a routing penalty")
    staged_skills: tuple[str, ...] = ()
    skills_dir: str = "/skills"
    workdir: str = "/workspace"
    final_answer: str | None = None
    artifacts_dir: Path | None = Field(default=None, description="retained workspace copy on the host")
