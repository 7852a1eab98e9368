"""Helpers for the dataset tests: a copy of the golden skill with one asset variant placed."""

from __future__ import annotations

import shutil
from pathlib import Path

from aces_bench.cases.evalmd import intent_cases
from aces_bench.cases.formats import load_suite
from aces_bench.core.errors import AcesError
from aces_bench.datasets.create import read_intent

GOLDEN = Path(__file__).resolve().parents[1] / "datasets" / "golden"
SKILL = GOLDEN / "skill"
SKILL_NAME = "csv-stats"
# Where a single-file variant goes, by its suffix.
PLACES = {".json": "evals/evals.json", ".jsonl": "evals/evals.jsonl", ".yaml": "evals/evals.yaml",
          ".config": "eval.config", ".md": "EVAL.md"}


def skill_copy(tmp: Path, name: str = "skill") -> Path:
    dest = tmp / name
    shutil.copytree(SKILL, dest)
    return dest


def place(variant: Path, skill_dir: Path) -> None:
    """Put a golden variant (a file, or a folder mirroring the skill layout) into a skill copy."""
    if variant.is_dir():
        shutil.copytree(variant, skill_dir, dirs_exist_ok=True)
        return
    dest = skill_dir / PLACES[variant.suffix]
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(variant, dest)


def load_error(skill_dir: Path) -> str:
    """The user-facing text of the error loading a skill's assets, with the folder as <skill>."""
    try:
        intent_cases(read_intent(skill_dir), SKILL_NAME, skill_dir / "EVAL.md")
        load_suite(skill_dir, SKILL_NAME)
    except AcesError as exc:
        return str(exc).replace(str(skill_dir), "<skill>")
    raise AssertionError(f"{skill_dir} loaded without error")
