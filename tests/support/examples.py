"""Helpers for the example-skill tests: locate the packaged skills, stage a case's
fixtures into a workspace, run the documented Usage command the way the reference
agent does, and reproduce the reference agent's no-skill fallback answer.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from importlib import resources
from pathlib import Path

from aces_bench.agents.routing import SkillCard
from aces_bench.agents.usage import build_invocation, usage_line
from aces_bench.cases import EvalCase, EvalSuite, load_suite
from aces_bench.inputs.skills import Skill, load_skill
from aces_bench.verifier.check_answer import evaluate_check

# Skill scripts run under the sandbox host's interpreter (3.11 here), not the venv's.
SANDBOX_PYTHON = "/usr/bin/python3"
PAPER_DECOYS = ("api-debugger", "config-validator", "log-triage", "release-planner")
SCRIPT_TIMEOUT_SEC = 30


def examples_root() -> Path:
    """The installed ``aces_bench/examples`` folder (package data)."""
    return Path(str(resources.files("aces_bench.examples")))


def skill_dirs(kind: str) -> list[Path]:
    """Skill folders under ``examples/<kind>`` (``skills`` or ``decoys``), sorted."""
    return sorted(p for p in (examples_root() / kind).iterdir() if p.is_dir() and not p.name.startswith(("_", ".")))


def target_suites() -> list[tuple[Skill, EvalSuite]]:
    out = []
    for d in skill_dirs("skills"):
        skill = load_skill(d)
        out.append((skill, load_suite(d, skill.name)))
    return out


def all_cards() -> list[SkillCard]:
    """Routing cards for every example skill, targets and decoys together (group mode)."""
    skills = [load_skill(d) for d in skill_dirs("skills") + skill_dirs("decoys")]
    return [SkillCard(key=s.path.name, name=s.name, description=s.description) for s in skills]


def card_for(skill: Skill) -> SkillCard:
    return SkillCard(key=skill.path.name, name=skill.name, description=skill.description)


def stage(skill: Skill, case: EvalCase, workspace: Path) -> list[str]:
    """Copy the case's fixtures to their workspace destinations; return the relative paths."""
    rels = []
    for f in case.files:
        dest = workspace / f.dest
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(skill.path / f.src, dest)
        rels.append(f.dest)
    return rels


def run_usage(skill: Skill, case: EvalCase, workspace: Path) -> subprocess.CompletedProcess[str]:
    """Stage the fixtures and run the skill's documented command on them, from ``workspace``."""
    inputs = stage(skill, case, workspace)
    documented = usage_line(skill.body)
    assert documented, f"{skill.name}: no command in the first block under '## Usage'"
    invocation = build_invocation(documented, str(skill.path), inputs)
    argv = list(invocation.argv)
    if argv[0] == "python3":
        argv[0] = SANDBOX_PYTHON
    return run_script(argv, cwd=workspace)


def run_script(argv: list[str], *, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": "1"}
    return subprocess.run(argv, cwd=cwd, env=env, capture_output=True, text=True, timeout=SCRIPT_TIMEOUT_SEC, check=False)


def fallback_answer(workspace: Path, inputs: list[str]) -> str:
    """The reference agent's no-skill answer: ``<file>: <grep -c ''> lines`` per input."""
    lines = []
    for rel in inputs:
        out = subprocess.run(["grep", "-c", "", "--", rel], cwd=workspace, capture_output=True, text=True, check=False)
        lines.append(f"{rel}: {out.stdout.strip()} lines")
    return "\n".join(lines)


def failed_checks(case: EvalCase, answer: str) -> list[str]:
    """Details of the case's deterministic checks that ``answer`` does not satisfy."""
    failed = []
    for check in case.checks:
        passed, detail = evaluate_check(check.as_checker_dict(), answer)
        if not passed:
            failed.append(f"{check.kind} {check.value!r}: {detail}")
    return failed
