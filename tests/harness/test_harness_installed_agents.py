"""The paper's installed harnesses (claude-code, codex, opencode) on backend=local.

Each runs its real npm CLI (provisioned by ``aces-bench agents install``, mounted
read-only) in the bubblewrap sandbox under the default ``no-network`` workspace, so
Harbor's allowlist lets the sandbox reach the scripted model server's port and
nothing else. One paired study per harness: the ATIF trajectory Harbor writes is
graded, and the with-skill arm is recognised as activating the skill through that
harness's own mechanism (claude-code's and opencode's skill tools, codex reading
SKILL.md from its skill folder).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from harbor.models.trajectories import Trajectory
from harness_support import needs_bwrap, read_table, retained_answer, study_overrides

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
import agent_scripts  # noqa: E402
from model_server import ModelServer  # noqa: E402

from aces_bench.agents.clis import CLIS, MANIFEST, cli_dir  # noqa: E402
from aces_bench.config.compose import compose_spec  # noqa: E402
from aces_bench.graders.tool_calls import build_view  # noqa: E402
from aces_bench.pipeline import run_study  # noqa: E402

HARNESSES = {
    # harness: (script, model name, key variable, wire protocol)
    "claude-code": (agent_scripts.claude_code, "anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY", "anthropic"),
    "codex": (agent_scripts.codex, "openai/gpt-4o", "OPENAI_API_KEY", "responses"),
    "opencode": (agent_scripts.opencode, "anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY", "anthropic"),
}


# How each harness activates a skill, as graders/tool_calls.py sees it in the ATIF trajectory.
ACTIVATION = {"claude-code": ("Skill", "activate"), "codex": ("exec_command", "read"), "opencode": ("skill", "activate")}


def _needs_cli(name: str):
    cli = CLIS[name]
    return pytest.mark.skipif(
        not (cli_dir(cli) / MANIFEST).is_file(),
        reason=f"{cli.package}@{cli.version} is not in the agent cache: run `aces-bench agents install {name}`",
    )


def _run(harness: str, tmp_path: Path, monkeypatch, leak_home: Path):
    script, model, key, protocol = HARNESSES[harness]
    monkeypatch.setenv(key, "sk-test-dummy")
    # A host agent home with a skill in it must never reach a sandbox (baseline stays clean).
    monkeypatch.setenv("HOME", str(leak_home))
    out = tmp_path / "out"
    with ModelServer(script(), max_requests=60) as server:
        url = server.url if protocol == "anthropic" else server.base_url
        spec = compose_spec(
            [f"harness={harness}", "model=openai-compatible", f"model.name={model}", f"model.base_url={url}",
             f"model.api_key_env={key}", *study_overrides(root_parent=tmp_path)],
            output_dir=out,
        )
        run_study(spec)
    return server, out


def _leaky_home(tmp_path: Path) -> Path:
    home = tmp_path / "host-home"
    for folder in (".claude/skills/leaked-skill", ".agents/skills/leaked-skill", ".config/opencode/skills/leaked-skill"):
        (home / folder).mkdir(parents=True)
        (home / folder / "SKILL.md").write_text("---\nname: leaked-skill\ndescription: from the host home\n---\n")
    return home


@needs_bwrap
@pytest.mark.parametrize("harness", [pytest.param(h, marks=_needs_cli(h)) for h in HARNESSES])
def test_paired_study_with_the_real_cli_on_the_local_backend(harness, tmp_path, monkeypatch):
    server, out = _run(harness, tmp_path, monkeypatch, _leaky_home(tmp_path))
    assert server.errors == []
    assert server.requests, "the agent never called the model"
    assert all("leaked-skill" not in json.dumps(r.body) for r in server.requests)

    table = read_table(out).set_index("condition")
    assert sorted(table.index) == ["baseline", "with_skill"]
    assert (table["status"] == "ok").all(), table[["status", "failure_cause"]].to_dict()
    skill, base = table.loc["with_skill"], table.loc["baseline"]
    assert retained_answer(skill["trial_dir"]) == "total=141.75"
    assert skill["reward"] == 1.0 and base["reward"] == 0.0
    assert skill["metric_skill_execution"] == 1.0 and base["metric_skill_execution"] == 0.0
    assert skill["input_tokens"] > 0 and base["input_tokens"] > 0

    # The graders' view of each ATIF trajectory: activation through the harness's own mechanism.
    views = {cond: build_view(Trajectory.model_validate_json(Path(row["trial_dir"], "agent", "trajectory.json")
                                                            .read_text()))
             for cond, row in (("with_skill", skill), ("baseline", base))}
    tool, how = ACTIVATION[harness]
    first = views["with_skill"].calls[0]
    assert first.tool == tool
    if how == "activate":
        assert first.kind == "activate" and first.activated == "csv-column-sum"
    else:
        assert first.reads == ("/root/.agents/skills/csv-column-sum/SKILL.md",)
    assert not any(c.kind == "activate" or any("SKILL.md" in r for r in c.reads) for c in views["baseline"].calls)
    provenance = json.loads((out / "provenance.json").read_text())
    assert provenance["agent_cli"]["version"] == CLIS[harness].version
