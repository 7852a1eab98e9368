"""The tidy trials table: one row per trial, the input of every statistic and report.

Pairing key (with_skill vs baseline): ``PAIR_KEY``. A trial that failed, timed out or
could not be scored still has a row; its ``status`` and ``failure_cause`` say why and
its metric columns are empty (NaN), never 0.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from aces_bench.versioning import migrate

TABLE_SCHEMA_VERSION = "1"

METRICS = ("security", "skill_execution", "skill_efficiency", "accuracy", "goal_accuracy", "behavior_check")
DETERMINISTIC_METRICS = METRICS[:3]
OUTCOME_METRICS = ("accuracy", "goal_accuracy")
CONDITIONS = ("with_skill", "baseline")
CELL_KEY = ("skill", "harness", "model", "workspace_mode")
PAIR_KEY = ("skill", "case_id", "attempt", "harness", "model", "workspace_mode", "decoy_set")

Status = Literal["ok", "agent_error", "verifier_error", "timeout", "infra_error", "not_run", "skipped"]


def metric_column(metric: str) -> str:
    return f"metric_{metric}"


class TrialRow(BaseModel):
    model_config = ConfigDict(extra="forbid")

    schema_version: str = TABLE_SCHEMA_VERSION
    run_id: str
    skill: str
    case_id: str
    case_kind: str | None
    negative_control: bool
    harness: str
    model: str
    workspace_mode: Literal["isolation", "group"]
    decoy_set: str
    n_visible_skills: int
    condition: Literal["with_skill", "baseline"]
    attempt: int
    task_id: str
    trial_name: str | None
    status: Status
    failure_cause: str | None = None
    reward: float | None = None
    metric_security: float | None = None
    metric_skill_execution: float | None = None
    metric_skill_efficiency: float | None = None
    metric_accuracy: float | None = None
    metric_goal_accuracy: float | None = None
    metric_behavior_check: float | None = None
    composite: float | None = None
    first_attempt_pass: bool | None = None
    final_pass: bool | None = None
    author_score: float | None = None
    has_trajectory: bool = False
    n_steps: int | None = None
    n_tool_calls: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    cost_usd: float | None = None
    wall_sec: float | None = None
    agent_label: str
    judge_label: str | None = None
    backend: str
    trial_dir: str | None = None

    @model_validator(mode="before")
    @classmethod
    def _migrate(cls, data: Any) -> Any:
        # Only version 1 exists; a later version adds its migration from 1 here.
        return migrate(data, artifact="trials table", current=TABLE_SCHEMA_VERSION,
                       regenerate="re-grade the study (`aces-bench grade`)")


COLUMNS = tuple(TrialRow.model_fields)
