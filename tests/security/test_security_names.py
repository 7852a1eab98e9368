"""Issue 35, item 3: every path a setting names stays inside its root.

A study name, an output-naming setting (harness, backend, arm and decoy-set names, which
name member folders and job dirs), a case id and a skill name that would leave the
outputs folder (``../../x``, ``..``, an absolute path, a separator) are refused before
anything is written, with one line naming the key and the fix.
"""

from __future__ import annotations

import json
import shutil
import subprocess

import pytest
from support.studies import FIXTURE_SKILL, cli_argv, cli_env

from aces_bench.config.compose import compose_spec
from aces_bench.core.errors import AcesError

ESCAPES = ["../../x", "..", "/tmp/x", "a/../../b", "a/b"]


def run_cli(*args: str, cwd, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run(cli_argv(*args), check=False, cwd=cwd, env=cli_env(), stdin=subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


@pytest.mark.parametrize("value", ESCAPES)
@pytest.mark.parametrize("key", ["study.name", "harness.name", "backend.name", "decoys.name"])
def test_a_name_that_would_leave_its_root_is_refused_at_the_config_boundary(tmp_path, key, value):
    with pytest.raises(AcesError) as err:
        compose_spec([f"{key}={value}"], output_dir=tmp_path / "out")
    assert key in str(err.value) and value in str(err.value)
    assert not (tmp_path / "out").exists()


def test_a_study_named_to_escape_is_one_line_and_writes_nothing(tmp_path):
    cwd = tmp_path / "a" / "b"
    cwd.mkdir(parents=True)
    proc = run_cli("study.name=../../x", cwd=cwd, timeout=120)
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert len(errors) == 1 and "study.name" in proc.stderr, proc.stderr
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["a", "b"]  # nothing outside, nothing inside


@pytest.mark.parametrize("case_id", ["../../x", "..", "a/b", "/etc/x"])
def test_a_case_id_that_would_leave_the_outputs_folder_is_one_line(tmp_path, case_id):
    skill = tmp_path / FIXTURE_SKILL.name
    shutil.copytree(FIXTURE_SKILL, skill)
    evals = skill / "evals" / "evals.json"
    data = json.loads(evals.read_text())
    data["evals"][0]["id"] = case_id
    evals.write_text(json.dumps(data))
    proc = run_cli("plan", "skill=custom", f"skill.paths=[{skill}]", "--sims", "20", cwd=tmp_path, timeout=120)
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert len(errors) == 1 and "evals.json" in errors[0] and f"(got {case_id!r})" in proc.stderr, proc.stderr


def test_a_skill_named_to_escape_is_one_line(tmp_path):
    skill = tmp_path / FIXTURE_SKILL.name
    shutil.copytree(FIXTURE_SKILL, skill)
    md = skill / "SKILL.md"
    text = md.read_text()
    md.write_text(text.replace(f"name: {FIXTURE_SKILL.name}", "name: ../../escaped", 1))
    assert "../../escaped" in md.read_text()
    proc = run_cli("plan", "skill=custom", f"skill.paths=[{skill}]", "--sims", "20", cwd=tmp_path, timeout=120)
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert len(errors) == 1 and "../../escaped" in errors[0], proc.stderr
    assert not (tmp_path.parent / "escaped").exists()
