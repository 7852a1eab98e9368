"""Provenance written next to every result: what ran, on what, from which code.

The record only; ``aces_bench.study.provenance.build_provenance`` fills it in from the
run spec, the installed packages and the git checkout. The spec is stored as the JSON
its ``RunSpec`` dumps to (records sit below config); a reader that needs it typed
validates it as a ``RunSpec`` (the report does, ``aces_bench.reports.records``).
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from aces_bench.core.versioning import VersionedRecord

PROVENANCE_SCHEMA_VERSION = "1"


class GitState(BaseModel):
    commit: str | None = None
    dirty: bool | None = None


class SkillProvenance(BaseModel):
    name: str
    role: str
    content_hash: str
    version: str | None = None
    path: str


class Provenance(VersionedRecord):
    model_config = ConfigDict(extra="forbid")
    SCHEMA_ARTIFACT: ClassVar[str] = "provenance"
    SCHEMA_VERSION: ClassVar[str] = PROVENANCE_SCHEMA_VERSION
    SCHEMA_REGENERATE: ClassVar[str] = "re-run the study"

    created_at: str
    spec: dict[str, Any] = Field(description="the run spec as its RunSpec dumps to JSON (config/spec.py)")
    agent_label: str
    model_label: str
    backend_label: str
    judge_label: str
    versions: dict[str, str]
    python: str
    git: GitState
    skills: list[SkillProvenance] = Field(default_factory=list)
    job_dir: str | None = None
    agent_cli: dict[str, str] = Field(default_factory=dict)
    """The npm CLI the harness ran (package, pinned version, what --version printed)."""

