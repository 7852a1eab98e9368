"""Render one TaskPlan as a Harbor task directory, content-addressed and deterministic.

Files are rendered in memory first; the task id is a hash of every rendered file, so
the same inputs give the same id and byte-identical files, and an unchanged task is
never rewritten. Directories are written under a temp name and renamed into place.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tempfile
from importlib import resources
from pathlib import Path

from harbor.models.task.config import (
    AgentConfig,
    EnvironmentConfig,
    PackageInfo,
    TaskConfig,
    VerifierConfig,
)

from aces_bench import __version__
from aces_bench.config.spec import RunSpec
from aces_bench.emitters.plan import TaskPlan
from aces_bench.graders.base import GRADER_VERSION
from aces_bench.skills import staged_files

TASK_METADATA_KEY = "aces"
TASK_METADATA_VERSION = "1"
_CHECKER = "check_answer.py"


def instruction_text(plan: TaskPlan, spec: RunSpec) -> str:
    """The case prompt and the fixed footer the agents and graders rely on."""
    ws = spec.workspace
    lines = [plan.case.prompt.strip(), "", "---", f"Working directory: {ws.workdir}"]
    if plan.case.files:
        lines.append("Input files:")
        lines += [f"- {f.dest}" for f in plan.case.files]
    lines.append(f"Write your final answer to {ws.workdir.rstrip('/')}/{ws.answer_file}.")
    return "\n".join(lines) + "\n"


def dockerfile_text(spec: RunSpec) -> str:
    ws = spec.workspace
    return (
        f"FROM {ws.base_image}\n"
        f"WORKDIR {ws.workdir}\n"
        f"COPY skills/ {ws.skills_dir.rstrip('/')}/\n"
        f"COPY workspace/ {ws.workdir.rstrip('/')}/\n"
    )


def test_sh_text(spec: RunSpec) -> str:
    ws = spec.workspace
    return f"""#!/bin/sh
# aces-bench verifier: deterministic answer checks, then retain the final workspace
# for the host-side graders. Needs only python3 and coreutils; no network.
set -u
mkdir -p /logs/verifier /logs/artifacts
python3 /tests/{_CHECKER} /tests/case.json {ws.workdir} /logs/verifier
status=$?
if [ -d {ws.workdir} ]; then
  mkdir -p /logs/artifacts/workspace
  cp -R {ws.workdir}/. /logs/artifacts/workspace/ 2>/dev/null || true
fi
exit $status
"""


def _metadata(plan: TaskPlan, spec: RunSpec) -> dict:
    case = plan.case
    return {
        "schema_version": TASK_METADATA_VERSION,
        "aces_bench_version": __version__,
        "grader_version": GRADER_VERSION,
        "skill": plan.target.name,
        # Only the with-skill task depends on the target's content: a baseline task
        # (and its finished trials) stays valid across revisions of the skill.
        "skill_hash": plan.target.content_hash if plan.condition == "with_skill" else "",
        "skill_version": (plan.target.version or "") if plan.condition == "with_skill" else "",
        "case_id": case.id,
        "case_kind": case.kind or "",
        "case_hash": case.content_hash(),
        "negative_control": case.is_negative_control,
        "expected_skill": case.expected_skill or "",
        "expected_script": case.expected_script or "",
        "condition": plan.condition,
        "workspace_mode": plan.workspace_mode,
        "decoy_set": plan.decoy_set,
        "n_visible_skills": len(plan.staged),
        "allowed_skills": list(plan.allowed_skills),
        "staged_skills": [
            {
                "name": s.skill.name,
                "role": s.role,
                "content_hash": s.skill.content_hash,
                "version": s.skill.version or "",
            }
            for s in plan.staged
        ],
        "workdir": spec.workspace.workdir,
        "skills_dir": spec.workspace.skills_dir,
        "answer_file": spec.workspace.answer_file,
    }


def task_config(plan: TaskPlan, spec: RunSpec, task_id: str) -> TaskConfig:
    ws = spec.workspace
    return TaskConfig(
        task=PackageInfo(
            name=f"aces/{task_id}",
            description=f"{plan.target.name} / {plan.case.id} / {plan.condition} / {plan.workspace_mode}",
        ),
        metadata={TASK_METADATA_KEY: _metadata(plan, spec)},
        verifier=VerifierConfig(timeout_sec=ws.verifier_timeout_sec),
        agent=AgentConfig(timeout_sec=ws.agent_timeout_sec),
        environment=EnvironmentConfig(
            cpus=ws.cpus,
            memory_mb=ws.memory_mb,
            skills_dir=ws.skills_dir,
            workdir=ws.workdir,
            network_mode=ws.network,
        ),
    )


def render_files(plan: TaskPlan, spec: RunSpec) -> dict[str, bytes]:
    """Every file of the task except task.toml, keyed by task-relative posix path."""
    files: dict[str, bytes] = {
        "instruction.md": instruction_text(plan, spec).encode(),
        "environment/Dockerfile": dockerfile_text(spec).encode(),
        "tests/test.sh": test_sh_text(spec).encode(),
        f"tests/{_CHECKER}": resources.files("aces_bench.emitters.verifier").joinpath(_CHECKER).read_bytes(),
    }
    case_json = {
        "id": plan.case.id,
        "answer_file": spec.workspace.answer_file,
        "checks": [c.model_dump(mode="json") for c in plan.case.checks],
    }
    files["tests/case.json"] = (json.dumps(case_json, indent=2, sort_keys=True) + "\n").encode()
    for staged in plan.staged:
        root = staged.skill.path
        for p in staged_files(root):
            files[f"environment/skills/{staged.skill.name}/{p.relative_to(root).as_posix()}"] = p.read_bytes()
    for f in plan.case.files:
        files[f"environment/workspace/{f.dest}"] = (plan.target.path / f.src).read_bytes()
    return files


def _digest(files: dict[str, bytes], metadata: dict) -> str:
    h = hashlib.sha256()
    for rel in sorted(files):
        h.update(rel.encode() + b"\0" + hashlib.sha256(files[rel]).digest())
    h.update(json.dumps(metadata, sort_keys=True).encode())
    return h.hexdigest()


def task_slug(plan: TaskPlan) -> str:
    cond = "skill" if plan.condition == "with_skill" else "base"
    return f"{plan.target.name}.{plan.case.id}.{plan.workspace_mode}.{cond}"


def emit_task(plan: TaskPlan, spec: RunSpec, tasks_root: Path) -> tuple[str, Path, bool]:
    """Write the task dir if absent. Returns (task_id, path, written)."""
    files = render_files(plan, spec)
    digest = _digest(files, _metadata(plan, spec))
    task_id = f"{task_slug(plan)}-{digest[:12]}"
    final = tasks_root / task_id
    if final.is_dir() and (final / "task.toml").is_file():
        return task_id, final, False
    files["task.toml"] = task_config(plan, spec, task_id).model_dump_toml().encode()
    tasks_root.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{task_id}.", dir=tasks_root))
    try:
        for rel in sorted(files):
            path = tmp / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(files[rel])
            os.chmod(path, 0o755 if rel.endswith(".sh") or "/scripts/" in rel else 0o644)
        (tmp / "environment" / "skills").mkdir(parents=True, exist_ok=True)
        (tmp / "environment" / "workspace").mkdir(parents=True, exist_ok=True)
        if final.exists():
            shutil.rmtree(final)  # a leftover without task.toml: never a finished task
        os.replace(tmp, final)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return task_id, final, True
