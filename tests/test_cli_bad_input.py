"""Bad input stops before any trial runs, with the file, the key and the fix; no traceback."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

FRONTMATTER = "---\nname: {name}\ndescription: A test skill that exists to be broken in one way.\n---\n# body\n"


def _skill(root: Path, name: str, evals: str | None = None, skill_md: str | None = None) -> Path:
    d = root / name
    (d / "evals").mkdir(parents=True)
    (d / "SKILL.md").write_text(skill_md if skill_md is not None else FRONTMATTER.format(name=name))
    if evals is not None:
        (d / "evals" / "evals.json").write_text(evals)
    return d


def _run(tmp_path: Path, *overrides: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "aces_bench.cli", "emit_only=true", f"hydra.run.dir={tmp_path / 'out'}", *overrides],
        capture_output=True, text=True, timeout=120, cwd=tmp_path,
    )


def _assert_user_error(proc: subprocess.CompletedProcess, *needles: str) -> None:
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr
    for needle in needles:
        assert needle in proc.stderr, proc.stderr
    assert "fix:" in proc.stderr or "Available options" in proc.stderr


CASES = {
    "no_skill_md": (lambda r: (r / "empty").mkdir(parents=True) or r / "empty",
                    ["neither a skill folder (no SKILL.md)"]),
    "malformed_frontmatter": (lambda r: _skill(r, "badyaml", skill_md="---\nname: x\ndescription: a: b\n---\n"),
                              ["badyaml/SKILL.md", "frontmatter is not valid YAML at line 3"]),
    "no_frontmatter": (lambda r: _skill(r, "nofm", skill_md="# just a title\n"),
                       ["nofm/SKILL.md", "no YAML frontmatter"]),
    "invalid_evals_json": (lambda r: _skill(r, "badjson", evals='{"evals": [ {"id": "a",} ]}'),
                           ["badjson/evals/evals.json", "not valid JSON", "line 1"]),
    "duplicate_case_id": (lambda r: _skill(r, "dup", evals='{"evals": [{"id": "a", "prompt": "x"}, {"id": "a", "prompt": "y"}]}'),
                          ["dup/evals/evals.json", "evals[1].id: case id 'a' is used twice"]),
    "fixture_escapes_skill": (lambda r: _skill(r, "esc", evals='{"evals": [{"id": "a", "prompt": "x", "files": ["../../etc/passwd"]}]}'),
                              ["esc/evals/evals.json", "evals[0].files[0].src", "stay inside its folder"]),
    "unsafe_case_id": (lambda r: _skill(r, "unsafe", evals='{"evals": [{"id": "../a b", "prompt": "x"}]}'),
                       ["evals[0].id", "not a safe identifier"]),
    "missing_expected_script": (lambda r: _skill(r, "noscript", evals='{"evals": [{"id": "a", "prompt": "x", "expected_script": "scripts/nope.py"}]}'),
                                ["noscript/evals/evals.json", "evals[0].expected_script: case 'a' names 'scripts/nope.py'"]),
    "missing_fixture": (lambda r: _skill(r, "nofix", evals='{"evals": [{"id": "a", "prompt": "x", "files": ["evals/files/nope.csv"]}]}'),
                        ["nofix/evals/evals.json", "case 'a': fixture 'evals/files/nope.csv' does not exist"]),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_skill_input_is_a_clear_error(case, tmp_path):
    make, needles = CASES[case]
    path = make(tmp_path / "skills")
    proc = _run(tmp_path, "skill=custom", f"skill.paths=[{path}]")
    _assert_user_error(proc, *needles)
    assert not (tmp_path / "out" / "jobs").exists(), "no trial may run on bad input"


def test_unknown_harness_lists_options(tmp_path):
    proc = _run(tmp_path, "harness=gpt-agent")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert "harness/gpt-agent" in proc.stderr and "reference" in proc.stderr


def test_unknown_backend_lists_options(tmp_path):
    proc = _run(tmp_path, "backend=kubernetes")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr
    assert "backend/kubernetes" in proc.stderr and "local" in proc.stderr


def test_invalid_value_names_the_dotted_key(tmp_path):
    proc = _run(tmp_path, "workspace.mode=grup")
    _assert_user_error(proc, "workspace.mode", "'isolation' or 'group'")
