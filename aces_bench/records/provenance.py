"""Provenance written next to every result: what ran, on what, from which code."""

from __future__ import annotations

import platform
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, Field

import aces_bench
from aces_bench.config.spec import RunSpec
from aces_bench.core.versioning import VersionedRecord

PROVENANCE_SCHEMA_VERSION = "1"
_PACKAGES = ("aces-bench", "harbor", "hydra-core", "pydantic", "pandas", "scipy", "litellm", "matplotlib", "jinja2")


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
    spec: RunSpec
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


def package_versions() -> dict[str, str]:
    out = {}
    for name in _PACKAGES:
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    out.setdefault("aces-bench", aces_bench.__version__)
    return out


def git_state(path: Path | None = None) -> GitState:
    """Commit and dirty flag of the aces-bench checkout, when it is one."""
    root = path or Path(aces_bench.__file__).resolve().parents[1]
    try:
        commit = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True, text=True,
                                timeout=5, check=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"],
                                    capture_output=True, text=True, timeout=5, check=True).stdout.strip())
        return GitState(commit=commit, dirty=dirty)
    except (OSError, subprocess.SubprocessError):
        return GitState()


def judge_label(spec: RunSpec) -> str:
    j = spec.judge
    if j.models:
        names = ["heuristic" if m.model == "heuristic" else f"litellm:{m.model}" for m in j.models]
        return f"panel of {len(names)} ({j.aggregate}): {', '.join(names)}"
    return "heuristic (offline, deterministic)" if j.kind == "heuristic" else f"litellm:{j.model}"


def build_provenance(spec: RunSpec, skills: list[SkillProvenance], job_dir: Path | None = None) -> Provenance:
    return Provenance(
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        spec=spec,
        agent_label=spec.harness.display,
        model_label=spec.model.display,
        backend_label=spec.backend.display,
        judge_label=judge_label(spec),
        versions=package_versions(),
        python=platform.python_version(),
        git=git_state(),
        skills=skills,
        job_dir=str(job_dir) if job_dir else None,
        agent_cli=agent_cli_provenance(spec),
    )


def agent_cli_provenance(spec: RunSpec) -> dict[str, str]:
    """Package, version and ``--version`` output of the harness's provisioned CLI, if any."""
    if spec.harness.cli is None:
        return {}
    from aces_bench.agents.clis import installed
    from aces_bench.core.errors import AcesError

    try:
        folder, manifest = installed(spec.harness.cli)
    except AcesError:  # the runner refused a missing CLI already; provenance says so
        return {"name": spec.harness.cli, "state": "not installed"}
    return {"name": manifest.name, "package": manifest.package, "version": manifest.version,
            "version_output": manifest.version_output, "path": str(folder)}
