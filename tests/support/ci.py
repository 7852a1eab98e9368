"""A skills repository for the ``aces-bench ci`` tests: two committed colsum skills, and
``aces-bench ci`` run on it in a subprocess."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
FIXTURE = ROOT / "tests" / "fixtures" / "skills" / "csv-column-sum"


def git(repo: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(repo), "-c", "user.name=ci", "-c", "user.email=ci@example.invalid", *args],
                   check=True, capture_output=True)


def ci_skill(dest: Path, name: str) -> None:
    shutil.copytree(FIXTURE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    md = dest / "SKILL.md"
    md.write_text(md.read_text().replace("name: csv-column-sum", f"name: {name}"))
    evals = json.loads((dest / "evals" / "evals.json").read_text())
    evals["skill_name"] = name
    explicit = next(e for e in evals["evals"] if e["id"] == "explicit-1")
    # Six cases the skill is for: the gate needs 5 won (docs/gate.md), on the first run too.
    evals["evals"] += [{**explicit, "id": f"explicit-{i}"} for i in (2, 3, 4, 5, 6)]
    (dest / "evals" / "evals.json").write_text(json.dumps(evals, indent=1))


def run_ci(repo: Path, out: Path, *args: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "aces_bench.cli", "ci", "--repo", str(repo), "--skills", "skills",
            "--policy", str(repo / "policy.yaml"), "--out", str(out), *args, "report=true",
            f"+backend.kwargs.root_parent={out.parent}"]
    env = {**os.environ, "HARBOR_TELEMETRY": "0", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    return subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, stdin=subprocess.DEVNULL)


def two_skill_repo(tmp_path: Path, policy: str) -> Path:
    """A git repository with two committed colsum skills under skills/ and ``policy`` as policy.yaml."""
    repo = tmp_path / "skills-repo"
    (repo / "skills").mkdir(parents=True)
    ci_skill(repo / "skills" / "colsum-a", "colsum-a")
    ci_skill(repo / "skills" / "colsum-b", "colsum-b")
    (repo / "policy.yaml").write_text(policy)
    git(repo, "init", "-q")
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", "two skills")
    return repo
