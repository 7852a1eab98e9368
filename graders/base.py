"""Typed inputs shared by every grader.

Every metric's grader has one signature, ``grade(inp: GradingInput, ctx: GraderContext)
-> MetricResult`` (a coroutine for judged metrics), and is registered once in
``aces_bench/core/metrics.py``. ``inp`` is what the trial produced; ``ctx`` is what the
grading layer prepared once per trial and shares with every grader (the normalised
tool-call view, the retained artifacts, the pattern set, the judge, the results of
the metrics graded before). A grader never raises for bad agent behaviour; it returns
an unscored result with a reason when it cannot decide (missing trajectory, no case
spec, judge failure). Unscored is not 0. ``MetricResult`` is a record
(``aces_bench.records.results``): the graded trial stores it, and its readers import no grader.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from harbor.models.trajectories import Trajectory
from pydantic import BaseModel, ConfigDict, Field

from aces_bench.cases import EvalCase
from aces_bench.records.results import MetricResult

if TYPE_CHECKING:
    from aces_bench.graders.artifacts import ArtifactText
    from aces_bench.graders.patterns import PatternSet
    from aces_bench.graders.tool_calls import TraceView
    from aces_bench.judges.base import Judge


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
    skills_dir: str = Field(description="where the skills were staged in the trial (workspace.skills_dir)")
    workdir: str = Field(description="the agent's working directory in the trial (workspace.workdir)")
    answer_file: str = Field(default="answer.txt", description="where the instruction asks for the answer, workdir-relative")
    final_answer: str | None = None
    artifacts_dir: Path | None = Field(default=None, description="retained workspace copy on the host")
    skill_digests: Mapping[str, str] = Field(
        default_factory=dict, description="text digest -> '<skill>/<path>' of the files of the skills staged in this "
        "arm (skill_execution.skill_file_digests): a copy run from elsewhere is recognised by its content")


@dataclass(frozen=True)
class GraderContext:
    """What the grading layer prepared once for one trial, shared by every grader.

    ``view`` is None without a trajectory; ``judge`` is None for deterministic
    grading; ``earlier`` holds the results of the metrics graded before this one,
    in registration order (deterministic metrics are graded before judged ones).
    """

    view: TraceView | None = None
    artifacts: Sequence[ArtifactText] = ()
    artifact_notes: Sequence[str] = ()
    patterns: PatternSet | None = None
    judge: Judge | None = None
    earlier: Mapping[str, MetricResult] = field(default_factory=dict)


def require_judge(ctx: GraderContext, metric: str) -> Judge:
    """The context's judge; a judged metric graded without one is a programming error."""
    if ctx.judge is None:
        raise ValueError(f"{metric} is a judged metric: grade it with a judge in GraderContext.judge")
    return ctx.judge
