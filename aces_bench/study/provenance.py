"""Fill in the provenance record (``aces_bench.records.provenance``) of a study run:
its spec, the installed package versions, the git checkout and the harness's CLI."""

from __future__ import annotations

import platform
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import aces_bench
from aces_bench.agents import clis
from aces_bench.config.spec import RunSpec
from aces_bench.emitters.plan import StudyPlan
from aces_bench.grading.labels import judge_label
from aces_bench.records.provenance import GitState, Provenance, SkillProvenance

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
        spec=spec.model_dump(mode="json"),
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
