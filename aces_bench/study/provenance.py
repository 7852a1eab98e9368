"""Fill in the provenance record (``aces_bench.records.provenance``) of a study run:
its spec, the installed package versions, the git checkout and the harness's CLI; and
write it with the resolved spec as their parts of the study record (``record_run``).

Every other part of the record is recorded where its file is written, with
``records.study.record_part``."""

from __future__ import annotations

import platform
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

import aces_bench
from aces_bench.agents import clis
from aces_bench.config.spec import RunSpec
from aces_bench.core.io import write_json
from aces_bench.core.masking import credential_values
from aces_bench.emitters.plan import StudyPlan
from aces_bench.graders.redact import redact_known_value, redact_value
from aces_bench.grading.labels import judge_label
from aces_bench.records.provenance import GitState, Provenance, SkillProvenance
from aces_bench.records.study import KINDS, record_part, write_spec

_PACKAGES = ("aces-bench", "harbor", "hydra-core", "pydantic", "pandas", "scipy", "litellm", "matplotlib", "jinja2")


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


def _credential_names(value: Any) -> list[str]:
    """The environment variables the spec names as credentials (every ``*_env`` key)."""
    if isinstance(value, dict):
        named = [v for k, v in value.items() if k.endswith("_env") and isinstance(v, str) and v]
        return named + [n for v in value.values() for n in _credential_names(v)]
    if isinstance(value, list):
        return [n for v in value for n in _credential_names(v)]
    return []


def masked_spec(spec: RunSpec) -> dict[str, Any]:
    """The spec's JSON with secret-like strings masked (the graders' patterns, as grades are)
    and the value of every credential it names masked wherever it appears (``core.masking``):
    a key pasted into ``harness.env`` or a URL reaches neither ``spec.json`` nor
    ``provenance.json``."""
    dumped = redact_value(spec.model_dump(mode="json"))
    return redact_known_value(dumped, credential_values(sorted(set(_credential_names(dumped)))))


def planned_skills(plan: StudyPlan) -> list[SkillProvenance]:
    """Every skill the study stages, by role (target, support, decoy), with its hash and version."""
    return [
        SkillProvenance(name=s.name, role=plan.support_roles.get(s.name, role), content_hash=s.content_hash,
                        version=s.version, path=str(s.path))
        for role, group in (("target", plan.targets), ("support", plan.support), ("decoy", plan.decoys))
        for s in group
    ]


def build_provenance(spec: RunSpec, skills: list[SkillProvenance], job_dir: Path | None = None) -> Provenance:
    return Provenance(
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        spec=masked_spec(spec),
        agent_label=spec.harness.display,
        model_label=spec.model.display,
        backend_label=spec.backend.display,
        judge_label=judge_label(spec),
        versions=package_versions(),
        python=platform.python_version(),
        git=git_state(),
        skills=skills,
        job_dir=str(job_dir) if job_dir else None,
        agent_cli=clis.provenance(spec.harness.cli),
    )


def record_run(out: Path, spec: RunSpec, plan: StudyPlan, job_dir: Path | None) -> None:
    """Write and record what the study runs: ``spec.json`` (the composed spec, masked) and
    ``provenance.json`` (the same spec with the versions, checkout, CLI and the skills
    ``plan`` stages, and its Harbor job folder: None with ``emit_only``)."""
    skills = planned_skills(plan)
    provenance = build_provenance(spec, skills, job_dir)
    write_spec(out, provenance.spec)
    write_json(out / KINDS["provenance"].file, provenance)
    record_part(out, "provenance", Provenance, stage="study")
