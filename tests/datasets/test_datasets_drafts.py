"""Drafted cases are grounded in the skill: run in the sandbox on its fixtures, never the description pasted."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from aces_bench.datasets.grounding import ground, input_sets
from aces_bench.datasets.templates import BUCKETS, template_cases
from aces_bench.inputs.skills import load_skill

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = sorted(p for p in (ROOT / "aces_bench" / "examples" / "skills").iterdir() if (p / "SKILL.md").is_file())
SHARED = ROOT.parent / "shared" / "data" / "public-skills"
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")


def test_input_sets_fill_each_placeholder_from_one_family():
    fixtures = ["evals/files/april-bank.csv", "evals/files/april-ledger.csv", "evals/files/march-bank.csv",
                "evals/files/march-ledger.csv", "evals/files/notes.txt"]
    sets = input_sets("python3 scripts/reconcile.py <ledger.csv> <bank.csv> [--strict]", fixtures)
    assert sets[0] == ["evals/files/april-ledger.csv", "evals/files/april-bank.csv"]
    assert ["evals/files/march-ledger.csv", "evals/files/march-bank.csv"] in sets
    assert input_sets("python3 scripts/x.py", fixtures) == [[]]


@pytest.mark.sandbox
@needs_bwrap
@pytest.mark.parametrize("skill_dir", EXAMPLES, ids=lambda p: p.name)
def test_the_skill_runs_on_its_fixtures_but_its_output_is_never_expected(skill_dir, tmp_path):
    skill = load_skill(skill_dir)
    g = ground(skill)
    assert g.derived is not None, g.unrun
    # The same command run outside the sandbox, on the same fixtures, prints the same.
    data = tmp_path / "data"
    data.mkdir()
    for f in g.derived.fixtures:
        shutil.copyfile(skill_dir / f, data / Path(f).name)
    argv = g.derived.command.split()
    argv[0], argv[1] = sys.executable, str(skill_dir / argv[1])
    host = subprocess.run(argv, cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert host.stdout.strip() == g.derived.stdout
    explicit = template_cases(skill, ["explicit"], grounding=g)[0]
    # Issue 36: the skill's output would certify its own bugs as ground truth; the draft checks the run instead.
    assert explicit.expected_output is None and not explicit.checks
    assert f"runs {explicit.expected_script}" in explicit.expected_behavior and not explicit.judged_only
    assert "its output is not used" in explicit.note
    assert [f.src for f in explicit.files] == g.derived.fixtures
    assert g.failure is not None and g.failure.exit_code != 0  # the error-path case is grounded in the real error


def test_drafts_on_public_skills_are_specific_and_never_the_description():
    if not SHARED.is_dir():
        pytest.skip(f"../shared is absent ({SHARED}): this test needs the shared public skills")
    skills = [load_skill(p.parent) for p in sorted(SHARED.glob("*/*/SKILL.md"))]
    assert len(skills) > 100
    sample = skills[::4]  # a fixed quarter keeps the test to seconds
    for skill in sample:
        cases = template_cases(skill, others=skills, grounding=ground(skill, run=False))
        assert [c.kind for c in cases] == list(BUCKETS)
        description = " ".join(skill.description.split())
        for c in cases:
            assert description[:60] not in " ".join(c.prompt.split()), (skill.name, c.id)
            assert c.status == "draft"
            if c.expected_skill is None:
                assert "neighbouring" in c.note and c.prompt.lower() not in description.lower()
                continue
            specific = [b for b in c.expected_behavior
                        if "the skill's instruction" in b or b.startswith(("runs ", "covers '")) or "SKILL.md says" in b]
            assert c.files or c.expected_output or specific, (skill.name, c.id, c.expected_behavior)
