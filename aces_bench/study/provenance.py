"""Fill in the provenance record (``aces_bench.records.provenance``) of a study run:
its spec, the installed package versions, the git checkout and the harness's CLI."""

from __future__ import annotations

import platform
import subprocess
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

import aces_bench
from aces_bench.config.spec import RunSpec
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
