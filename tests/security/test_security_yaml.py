"""Finding 4: a YAML alias bomb in a skill's SKILL.md, evals YAML or eval.config.

The issue's check: the bomb ends with a one-line error naming the file within 60 s under
a 4 GB address-space limit (``RLIMIT_AS`` set in the child), on every path that reads a
skill (study, scan, dataset show/create/check, trigger). A file with ordinary anchors
(a shared defaults block) still loads, with the values yaml.safe_load gives.
"""

from __future__ import annotations

import resource
import shutil
import subprocess
import time
from pathlib import Path

import pytest
import yaml
from support.security import HOSTILE_SKILL
from support.studies import cli_argv, cli_env, study_overrides

from aces_bench.core.errors import SkillError
from aces_bench.core.io import MAX_YAML_NODES, load_yaml
from aces_bench.inputs.skills import load_skill

pytestmark = [pytest.mark.timeout(400)]

LIMIT_AS = 4 * 1024**3
# Nine levels of nine: 9**9 = 387 million values once expanded, 600 bytes written.
BOMB = "lol0: &a0 [lol, lol, lol, lol, lol, lol, lol, lol, lol]\n" + "".join(
    f"lol{i}: &a{i} [" + ", ".join([f"*a{i - 1}"] * 9) + "]\n" for i in range(1, 10))


def bomb_skill(root: Path, *, where: str = "SKILL.md") -> Path:
    skill = root / "hostile-colsum"
    shutil.copytree(HOSTILE_SKILL, skill)
    if where == "SKILL.md":
        text = (skill / "SKILL.md").read_text()
        (skill / "SKILL.md").write_text(text.replace("version: 1.0.0\n", "version: 1.0.0\n" + BOMB, 1))
    elif where == "evals.yaml":
        (skill / "evals" / "evals.json").unlink()
        (skill / "evals" / "evals.yaml").write_text(
            BOMB + "skill_name: hostile-colsum\nevals:\n  - id: explicit-1\n    prompt: Sum the amount column.\n"
            "    expected_output: total=141.75\n    bomb: *a9\n")
    elif where == "eval.config":
        (skill / "eval.config").write_text(BOMB + "evals:\n  - prompt: Sum the amount column.\n    expected: *a9\n")
    return skill


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (LIMIT_AS, LIMIT_AS))


def run_limited(*args: str, timeout: float = 120) -> tuple[subprocess.CompletedProcess, float]:
    """``aces-bench`` under a 4 GB address-space limit; the wall time it took."""
    start = time.monotonic()
    proc = subprocess.run(cli_argv(*args), env=cli_env(), cwd=Path(__file__).resolve().parents[2],
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=timeout,
                          preexec_fn=_limit, check=False)
    return proc, time.monotonic() - start


def assert_one_line_error(proc: subprocess.CompletedProcess, seconds: float, name: str) -> None:
    assert seconds < 60, f"took {seconds:.0f} s"
    assert proc.returncode == 2, proc.stdout[-2000:] + proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr, proc.stderr[-3000:]
    errors = [ln for ln in proc.stderr.splitlines() if ln.startswith("error:")]
    assert len(errors) == 1, proc.stderr
    assert name in errors[0] and "alias" in errors[0], errors[0]


def test_the_loader_refuses_a_bomb_before_constructing_it():
    start = time.monotonic()
    with pytest.raises(yaml.YAMLError, match=f"expand to more than {MAX_YAML_NODES:,} values"):
        load_yaml(BOMB)
    assert time.monotonic() - start < 1
    with pytest.raises(yaml.YAMLError, match="recursive alias"):
        load_yaml("a: &x [1, *x]\n")


def test_ordinary_anchors_still_load_as_safe_load_gives_them():
    text = "defaults: &d {timeout: 30, tolerance: 0.01}\ncases:\n  - {<<: *d, id: a}\n  - {<<: *d, id: b, timeout: 5}\nagain: *d\n"
    assert load_yaml(text) == yaml.safe_load(text)
    # Near the bound, not past it: about 99,000 values through aliases load.
    wide = "row: &r [" + ", ".join(["x"] * 999) + "]\nall: [" + ", ".join(["*r"] * 98) + "]\n"
    assert len(load_yaml(wide)["all"]) == 98


def test_load_skill_gives_one_line_naming_skill_md(tmp_path):
    skill = bomb_skill(tmp_path)
    with pytest.raises(SkillError) as err:
        load_skill(skill)
    assert str(err.value).startswith(f"{skill / 'SKILL.md'}: frontmatter is not valid YAML at line ")
    assert "an alias bomb" in str(err.value)


@pytest.mark.parametrize("where", ["SKILL.md", "evals.yaml", "eval.config"])
def test_a_study_ends_with_one_line_under_a_4_gb_limit(tmp_path, where):
    skill = bomb_skill(tmp_path, where=where)
    proc, seconds = run_limited(f"output_dir={tmp_path / 'out'}", *study_overrides(skill=skill, root_parent=tmp_path))
    assert_one_line_error(proc, seconds, where)
    assert not (tmp_path / "out" / "jobs").exists()


@pytest.mark.parametrize("command", [
    ("dataset", "show"), ("dataset", "check"), ("dataset", "create", "--dry-run"), ("trigger", "--router"),
])
def test_dataset_and_trigger_end_with_one_line_under_a_4_gb_limit(tmp_path, command):
    skill = bomb_skill(tmp_path)
    extra = ("--out", str(tmp_path / "trigger")) if command[0] == "trigger" else ()
    proc, seconds = run_limited(*command, str(skill), *extra)
    assert_one_line_error(proc, seconds, "SKILL.md")


def test_scan_reports_the_bomb_as_that_skill_s_error_under_a_4_gb_limit(tmp_path):
    skill = bomb_skill(tmp_path)
    out = tmp_path / "scan"
    proc, seconds = run_limited("scan", str(skill), "--out", str(out))
    assert seconds < 60 and "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode in (0, 1), proc.stderr
    assert "alias bomb" in (out / "corpus.json").read_text() + "".join(
        p.read_text() for p in (out / "skills").glob("*.json"))
