"""The decoy pool: every skill loads, its documented Usage runs on its sample, the
committed folder is the generator's output, and none of it does a target's job."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from aces_bench.agents.usage import build_invocation, usage_line
from aces_bench.examples._decoy_pool_gen import POOL_DIR, POOL_SKILLS, generate
from aces_bench.skills import discover_skill_dirs, load_skill

EXAMPLES = Path(__file__).resolve().parents[2] / "aces_bench" / "examples"


def _tree(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_pool_with_the_paper_decoys_holds_fifty_distinct_skills():
    names = [load_skill(d).name for d in discover_skill_dirs(POOL_DIR) + discover_skill_dirs(EXAMPLES / "decoys")]
    assert len(names) == len(set(names)) == 50
    targets = {load_skill(d).name for d in discover_skill_dirs(EXAMPLES / "skills")}
    assert targets.isdisjoint(names)


def test_committed_pool_is_the_generator_output(tmp_path):
    generate(tmp_path)
    assert _tree(tmp_path) == _tree(POOL_DIR), "re-run: python -m aces_bench.examples._decoy_pool_gen"


@pytest.mark.parametrize("spec", POOL_SKILLS, ids=lambda s: s.name)
def test_pool_skill_loads_and_its_usage_runs_on_its_sample(spec):
    root = POOL_DIR / spec.name
    skill = load_skill(root)
    assert skill.name == spec.name and skill.description == spec.description
    documented = usage_line((root / "SKILL.md").read_text())
    assert documented is not None, "SKILL.md needs a command under '## Usage'"
    inv = build_invocation(documented, str(root), [str(root / "samples" / i) for i in spec.sample_inputs])
    assert inv.script == str(root / "scripts" / spec.script)
    argv = [sys.executable if a == "python3" else a for a in inv.argv]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=20, cwd=root, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip(), "the script printed nothing"
    assert "Traceback" not in proc.stderr


def test_pool_descriptions_stay_off_the_targets_tasks():
    # Decoys compete for routing; they must not be able to do a target's job.
    banned = ("invoice", "reconcil", "percentile", "latency", "semver", "semantic version", "licen")
    for s in POOL_SKILLS:
        text = f"{s.description} {' '.join(s.when)} {' '.join(s.tags)}".lower()
        assert not any(b in text for b in banned), s.name
