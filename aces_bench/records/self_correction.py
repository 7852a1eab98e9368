"""The ``self_correction`` section of a graded trial: what the agent changed after its
first answer, and what passed only after. ``graders/self_correction.py`` finds it in the
trajectory; the report's trial pages render it from here.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, Field

from aces_bench.records.results import MetricResult

METRIC = "self_correction"


class TraceEvent(BaseModel):
    """Where in the trajectory an event happened: call index, ATIF step id, and the human
    location (``step 4`` or ``subagent s1 step 2``)."""

    index: int
    step_id: int | None = None
    where: str | None = None


class SkillChange(TraceEvent):
    """A write to a skill file (or a harness skill config) during the trial."""

    tool: str
    path: str
    skill: str | None = None
    file: str
    target: bool


class FirstAttemptError(TraceEvent):
    tool: str
    action: str
    exit_code: int | None = None


class Retry(TraceEvent):
    of_step: int | None = None
    action: str
    succeeded: bool


class FirstAnswer(TraceEvent):
    """Where the first answer came from: the answer file's first write or the first final message."""

    source: Literal["answer_file", "final_message", "none"]
    how: str = ""
    content_known: bool = False


class LaterChange(TraceEvent):
    """A change to the answer or a workspace output after the first answer."""

    path: str
    how: str


class SelfCorrection(BaseModel):
    """The ``self_correction`` section: what the agent changed after its first answer, and what passed only after.

    Stored in the self_correction result's ``details["self_correction"]``; read it with
    ``SelfCorrection.of(result)``, never by key.
    """

    patched: bool
    first_answer: FirstAnswer | None = None
    later_changes: list[LaterChange] = Field(default_factory=list)
    self_corrected: bool = Field(default=False, description="the answer, an output or the target skill changed "
                                 "after the first answer (AEVAL)")
    patched_before_first_answer: bool = False
    first_attempt_checks: list[dict[str, Any]] = Field(default_factory=list)
    first_attempt_reward: float | None = Field(default=None, description="the case's checks on the first answer; "
                                               "None when they cannot be applied to it")
    first_attempt_unknown: str | None = Field(default=None, description="why the first answer cannot be graded")
    first_patch_index: int | None = None
    first_patch_step: int | None = None
    changes: list[SkillChange] = Field(default_factory=list)
    first_attempt_errors: list[FirstAttemptError] = Field(default_factory=list)
    retries: list[Retry] = Field(default_factory=list)
    affected_checks: list[str] = Field(default_factory=list)
    first_attempt: dict[str, float | None] = Field(default_factory=dict)
    final: dict[str, float | None] = Field(default_factory=dict)

    @classmethod
    def of(cls, result: MetricResult | None) -> SelfCorrection | None:
        """The section of a self_correction result; None when it has none (no trajectory)."""
        raw = result.details.get(METRIC) if result is not None else None
        return cls.model_validate(raw) if raw else None
