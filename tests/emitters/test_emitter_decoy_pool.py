"""The decoy pool: every skill loads, its documented Usage runs on its sample, and none
of it does a target's job. The committed folders are the pool's only source."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from aces_bench.agents.usage import build_invocation, usage_line
from aces_bench.inputs.skills import discover_skill_dirs, load_skill

EXAMPLES = Path(__file__).resolve().parents[2] / "aces_bench" / "examples"
POOL_DIR = EXAMPLES / "decoy-pool"
POOL = discover_skill_dirs(POOL_DIR)
# Each pool SKILL.md shows its Usage applied to its sample: the inputs the test runs.
SAMPLE_LINE = re.compile(r"Sample input is in `samples/`: `python3 scripts/(?P<script>\S+)(?P<args>[^`]*)`")


def _sample_run(root: Path) -> tuple[str, list[str]]:
    m = SAMPLE_LINE.search((root / "SKILL.md").read_text())
    assert m, f"{root.name}/SKILL.md names no sample run"
    return m["script"], [str(root / a) for a in m["args"].split() if a.startswith("samples/")]


def test_pool_with_the_paper_decoys_holds_fifty_distinct_skills():
    names = [load_skill(d).name for d in POOL + discover_skill_dirs(EXAMPLES / "decoys")]
    assert len(names) == len(set(names)) == 50
    targets = {load_skill(d).name for d in discover_skill_dirs(EXAMPLES / "skills")}
    assert targets.isdisjoint(names)


@pytest.mark.parametrize("root", POOL, ids=lambda p: p.name)
def test_pool_skill_loads_and_its_usage_runs_on_its_sample(root):
    skill = load_skill(root)
    assert skill.name == root.name
    documented = usage_line((root / "SKILL.md").read_text())
    assert documented is not None, "SKILL.md needs a command under '## Usage'"
    script, inputs = _sample_run(root)
    assert inputs and all(Path(i).exists() for i in inputs), inputs
    inv = build_invocation(documented, str(root), inputs)
    assert inv.script == str(root / "scripts" / script)
    argv = [sys.executable if a == "python3" else a for a in inv.argv]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=20, cwd=root, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip(), "the script printed nothing"
    assert "Traceback" not in proc.stderr


def test_pool_descriptions_stay_off_the_targets_tasks():
    # Decoys compete for routing; they must not be able to do a target's job.
    banned = ("invoice", "reconcil", "percentile", "latency", "semver", "semantic version", "licen")
    for root in POOL:
        skill = load_skill(root)
        when = skill.body.split("## When to use", 1)[-1].split("\n## ", 1)[0]
        text = f"{skill.description} {when} {' '.join(skill.frontmatter.get('tags') or [])}".lower()
        assert not any(b in text for b in banned), skill.name
