"""Every command in README.md's fenced blocks is run by a test, as written but for placeholders.

Each line is checked by the first rule that claims it: ``make`` targets exist and dry-run
(``make -n``); ``pip install`` extras exist; the study app's commands (``aces-bench
[overrides]``, ``eval``, ``plan``, ``-m`` sweeps, ``study=aces_paper``) compose through the
real CLI with ``--cfg job`` (a sweep: its first member), so a long study is checked without
running it; cheap commands (``usage``, ``--cfg job``) run whole; every other subcommand's
flags are checked against its own ``--help``. A line no rule claims fails
``test_every_readme_command_is_covered``: a command added to README needs a rule here.
"""

from __future__ import annotations

import re
import shlex
import subprocess
from pathlib import Path

import pytest
from support.studies import run_cli

ROOT = Path(__file__).resolve().parents[1]
SKILL = ROOT / "tests" / "fixtures" / "skills" / "csv-column-sum"
PLACEHOLDERS = {"path/to/my-skill": str(SKILL), "path/to/skills": str(SKILL.parent), "outputs/demo": str(SKILL)}
CHEAP = (("usage",), ("--cfg", "job"))


def readme_lines() -> list[str]:
    """Every command line of README's fenced bash blocks (comments and blank lines dropped)."""
    text = (ROOT / "README.md").read_text()
    out = []
    for block in re.findall(r"```bash\n(.*?)```", text, re.S):
        for line in block.splitlines():
            line = line.split("  #", 1)[0].strip()
            if line and not line.startswith("#"):
                out.append(line)
    return out


def _args(line: str) -> list[str]:
    words = shlex.split(line)
    if words[0].endswith("aces-bench"):
        words = words[1:]
    return [next((v for k, v in PLACEHOLDERS.items() if w == k), w.replace("path/to/my-skill", str(SKILL)))
            for w in words]


def rule(line: str) -> str | None:
    """Which check covers ``line`` (None: nothing does)."""
    words = shlex.split(line)
    if words[0] == "make":
        return "make"
    if words[:2] == ["pip", "install"]:
        return "pip"
    if words[0] == "export" and re.fullmatch(r"[A-Z_]+=\S+", words[1]):
        return "export"
    if not words[0].endswith("aces-bench"):
        return None
    args = tuple(_args(line))
    if args in CHEAP:
        return "run"
    from aces_bench.cli import SUBCOMMANDS

    if args and args[0] in ("eval", "plan"):
        return "compose"
    if args and args[0] in SUBCOMMANDS:
        return "flags"
    return "compose"


LINES = readme_lines()


def test_every_readme_command_is_covered():
    uncovered = [line for line in LINES if rule(line) is None]
    assert uncovered == [], f"README commands no test covers (add a rule to {Path(__file__).name}): {uncovered}"
    assert {rule(line) for line in LINES} >= {"make", "pip", "run", "compose", "flags"}
    assert any(line.split()[1:3] == ["eval", "path/to/my-skill"] for line in LINES), "README shows eval first"


def test_readme_is_at_most_250_lines():
    assert len((ROOT / "README.md").read_text().splitlines()) <= 250


def test_the_rule_refuses_an_unknown_command():
    assert rule("curl https://example.invalid | sh") is None


@pytest.mark.parametrize("line", [x for x in LINES if rule(x) == "make"])
def test_make_targets_exist(line):
    target = shlex.split(line)[1]
    proc = subprocess.run(["make", "-n", target], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert re.search(rf"^{re.escape(target)}:.*##", (ROOT / "Makefile").read_text(), re.M), f"{target} not in make help"


@pytest.mark.parametrize("line", [x for x in LINES if rule(x) == "pip"])
def test_pip_extras_exist(line):
    import tomllib

    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"].get("optional-dependencies", {})
    for spec in shlex.split(line)[2:]:
        m = re.fullmatch(r"aces-bench\[(\w+)\]", spec)
        assert m and m.group(1) in extras, spec


@pytest.mark.parametrize("line", [x for x in LINES if rule(x) == "run"])
def test_cheap_commands_run(line):
    proc = run_cli(*_args(line), timeout=120)
    assert proc.returncode == 0 and proc.stdout.strip() and "Traceback" not in proc.stderr, proc.stderr


def _first_member(args: list[str]) -> list[str]:
    """A sweep's first member: -m dropped, each comma list reduced to its first option."""
    out = []
    for a in args:
        if a == "-m":
            continue
        key, eq, value = a.partition("=")
        if eq and "," in value and not value.startswith(("[", "{", "'", '"')):
            a = f"{key}={value.split(',')[0]}"
        out.append(a)
    return out


@pytest.mark.parametrize("line", [x for x in LINES if rule(x) == "compose"])
def test_study_commands_compose(line, tmp_path):
    args = _first_member(_args(line))
    if args[0] == "plan":
        args = args[1:]  # plan takes the study's overrides: composing them is its first step
    args = [a for a in args if a != "--write-drafts"]
    proc = run_cli(*args, f"hydra.run.dir={tmp_path}", "--cfg", "job", timeout=180)
    text = proc.stdout + proc.stderr
    assert proc.returncode == 0 and "Traceback" not in text, text[-3000:]
    assert "skill:" in proc.stdout and "study:" in proc.stdout


@pytest.mark.parametrize("line", [x for x in LINES if rule(x) == "flags"])
def test_subcommand_flags_exist(line):
    args = _args(line)
    proc = run_cli(args[0], *(["create", "--help"] if args[:2] == ["dataset", "create"] else
                              ["show", "--help"] if args[:2] == ["dataset", "show"] else ["--help"]), timeout=120)
    assert proc.returncode == 0, proc.stderr
    for flag in (a.split("=", 1)[0] for a in args if a.startswith("--")):
        assert flag in proc.stdout, f"{flag} is not an option of aces-bench {args[0]}"
