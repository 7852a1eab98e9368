"""README's "Run your first real study": every command composes, and runs up to the real key."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from aces_bench.agents.clis import CLIS, MANIFEST, cli_dir
from aces_bench.config.compose import compose_spec
from aces_bench.core.errors import ConfigError
from aces_bench.study.entry import run_study

ROOT = Path(__file__).resolve().parents[1]
SKILL = ROOT / "tests" / "fixtures" / "skills" / "csv-column-sum"


def _commands() -> list[list[str]]:
    text = (ROOT / "README.md").read_text()
    section = text.split("## Run your first real study", 1)[1].split("\n## ", 1)[0]
    out = []
    for block in re.findall(r"```bash\n(.*?)```", section, re.S):
        for line in block.splitlines():
            if line.startswith("aces-bench ") and "agents install" not in line:
                args = shlex.split(line.split("#", 1)[0])[1:]
                out.append([a.replace("path/to/my-skill", str(SKILL)) for a in args])
    return out


def test_the_section_has_the_four_studies():
    harnesses = [next(a for a in c if a.startswith("harness=")) for c in _commands()]
    backends = [next((a for a in c if a.startswith("backend=")), "backend=local") for c in _commands()]
    assert harnesses == ["harness=claude-code", "harness=codex", "harness=terminus-2", "harness=claude-code"]
    assert backends == ["backend=local", "backend=local", "backend=podman", "backend=modal"]


@pytest.mark.parametrize("args", _commands(), ids=lambda a: " ".join(a[:2]))
def test_every_command_composes(args, tmp_path):
    spec = compose_spec(args, output_dir=tmp_path)
    assert spec.model.api_key_env in ("ANTHROPIC_API_KEY", "OPENAI_API_KEY")


@pytest.mark.skipif(not (cli_dir(CLIS["claude-code"]) / MANIFEST).is_file(),
                    reason="the claude-code CLI is not in the agent cache: run `aces-bench agents install claude-code`")
def test_the_claude_code_study_runs_until_the_real_key_is_needed(tmp_path, monkeypatch):
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    spec = compose_spec([*_commands()[0], "report=false"], output_dir=tmp_path)
    with pytest.raises(ConfigError, match="model.api_key_env names ANTHROPIC_API_KEY, which is not set"):
        run_study(spec)
    # One preflight step (issue 26 point 6): the missing key refuses the study before
    # anything is emitted (it used to be found after emission, when the job started).
    assert not (tmp_path / "tasks").exists() and not (tmp_path / "jobs").exists()
