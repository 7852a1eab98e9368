"""A metric's result and the evidence behind it: what every grader returns and what a
graded trial (``trials.GradedTrial``) stores per metric.

Kept with the records rather than the graders so that reading ``grades.jsonl`` (the
report, CI, ``aces_bench.load``) needs no grader; graders import these models from here.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from aces_bench.core.metrics import GRADER_VERSION

PER_JUDGE = "per_judge"
"""The key of a judged result's ``details`` holding each panel member's own result, by judge label."""


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
