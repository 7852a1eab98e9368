"""``[metadata.aces]`` of an emitted task.toml: the model it is read back through.

``emitters/harbor_task.py task_metadata`` writes the table as a plain dict (task ids
are content addresses over exactly those bytes); readers (``emit.read_task_metadata``,
``aces_bench/grading/external.py``) validate it here, so an older table is migrated and one from
a newer aces-bench is refused instead of read by guesswork.

Versions: 1 (first emitter) lacked the intervention, the case source, the decoy draw
and the environment; 2 added them. Version-1 tasks could only stage one skill, with
authored cases, in the generated default environment, and recorded no decoy draw, so
the migration fills exactly those values (a decoy size or seed of -1 means unknown, as
the writer records for an undrawn set).
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from aces_bench.core.conditions import Condition
from aces_bench.core.versioning import VersionedRecord

TASK_METADATA_KEY = "aces"
TASK_METADATA_VERSION = "2"
TASK_METADATA_REGENERATE = "re-emit the task (re-run the study)"


class StagedSkillMeta(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    role: str
    content_hash: str
    version: str = ""


class EnvironmentMeta(BaseModel):
    """Where the task's environment came from; custom environments add their hash."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    source: str = Field(description="default | evals/environment | evals/harbor/<task>")
    compose: bool = False
    mcp_servers: list[str] = Field(default_factory=list)
    content_hash: str | None = None
    custom_dockerfile: bool | None = None


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    skill = data.get("skill")
    return {
        **data,
        "schema_version": "2",
        "intervention": data.get("intervention", skill),
        "intervention_kind": data.get("intervention_kind", "skill"),
        "intervention_members": data.get("intervention_members", [skill] if skill else []),
        "case_source": data.get("case_source", "author"),
        "decoy_size": data.get("decoy_size", -1),
        "decoy_seed": data.get("decoy_seed", -1),
        "environment": data.get("environment", {"source": "default", "compose": False, "mcp_servers": []}),
    }


class PluginMeta(BaseModel):
    """A whole plugin staged in the task (``skill.intervention=plugin``), and what of it the harness reads."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    dir: str
    parts: list[str]
    read_by_harness: list[str]
    not_read_by_harness: list[str]


class TaskMetadata(VersionedRecord):
    """The ``[metadata.aces]`` table, version 2. Empty strings and -1 mean "not applicable"."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    SCHEMA_ARTIFACT: ClassVar[str] = "task metadata [metadata.aces]"
    SCHEMA_VERSION: ClassVar[str] = TASK_METADATA_VERSION
    SCHEMA_REGENERATE: ClassVar[str] = TASK_METADATA_REGENERATE
    SCHEMA_MIGRATIONS: ClassVar[dict] = {"1": _v1_to_v2}

    schema_version: Literal["2"] = TASK_METADATA_VERSION
    aces_bench_version: str
    grader_version: str
    skill: str
    skill_hash: str
    skill_version: str
    intervention: str
    intervention_kind: Literal["skill", "bundle", "plugin"]
    intervention_members: list[str]
    case_id: str
    case_kind: str
    case_hash: str
    case_source: str
    negative_control: bool
    expected_skill: str
    expected_script: str
    condition: Condition
    workspace_mode: Literal["isolation", "group"]
    decoy_set: str
    decoy_size: int
    decoy_seed: int
    n_visible_skills: int
    allowed_skills: list[str]
    staged_skills: list[StagedSkillMeta]
    environment: EnvironmentMeta
    workdir: str
    skills_dir: str
    answer_file: str
    plugin: PluginMeta | None = None

    def as_table(self) -> dict[str, Any]:
        """The table as the writer lays it out (keys of unset optional values left out)."""
        return self.model_dump(mode="json", exclude_none=True)
