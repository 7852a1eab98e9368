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
from pathlib import Path

import pytest
from harbor.models.trajectories import Trajectory
from support import agent_scripts
from support.model_server import ModelServer
from support.studies import needs_bwrap, read_table, retained_answer, study_overrides

from aces_bench.agents.clis import CLIS, MANIFEST, cli_dir
from aces_bench.config.compose import compose_spec
from aces_bench.graders.tool_calls import build_view
from aces_bench.study.entry import run_study

HARNESSES = {
    # harness: (script, model name, key variable, wire protocol)
    "claude-code": (agent_scripts.claude_code, "anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY", "anthropic"),
    "codex": (agent_scripts.codex, "openai/gpt-4o", "OPENAI_API_KEY", "responses"),
    "opencode": (agent_scripts.opencode, "anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY", "anthropic"),
}


PATHS = {"claude-code": "/v1/messages", "codex": "/v1/responses", "opencode": "/v1/messages"}
# How each CLI lists skills to its model (claude-code, codex, opencode): none of these in a baseline request.
LISTING_MARKERS = ("The following skills are available for use with the Skill tool", "### Available skills",
                   "<available_skills>")

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
        # model.base_url is a host with or without /v1: each harness gets the form it needs.
        url = server.base_url if harness == "claude-code" else server.url
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
                                                            .read_text()), "/workspace")
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

    # Each harness called its API's path on the one endpoint (no /v1/v1, no bare /messages).
    assert {r.path.split("?")[0] for r in server.requests} == {PATHS[harness]}
    # Bundled skills off: the model was shown the target in the with-skill arm and no skill
    # at all in the baseline; the table says so, read from each harness's own record.
    assert skill["visible_skills"] == "csv-column-sum" and bool(skill["target_listed"]) is True
    assert base["visible_skills"] == "" and bool(base["target_listed"]) is False
    assert (skill["n_visible_skills"], base["n_visible_skills"]) == (1, 0)
    listings = [r for r in server.requests if any(m in json.dumps(r.body) for m in LISTING_MARKERS)]
    assert listings and all("csv-column-sum" in json.dumps(r.body) for r in listings)
    # Every call the server answered is in the trials' tokens (opencode's title call too).
    served = sum(r.usage.get("prompt_tokens", 0) for r in server.requests)
    assert table["input_tokens"].sum() == served


@needs_bwrap
@pytest.mark.parametrize("harness", [pytest.param(h, marks=_needs_cli(h)) for h in HARNESSES])
def test_bundled_skills_kept_are_shown_in_both_arms_and_recorded(harness, tmp_path, monkeypatch):
    """harness.bundled_skills=keep: the CLI's own skills are listed in both arms, and the
    trials table names them (the baseline is then not skill-free, and says so)."""
    script, model, key, _ = HARNESSES[harness]
    monkeypatch.setenv(key, "sk-test-dummy")
    out = tmp_path / "out"
    with ModelServer(script(), max_requests=60) as server:
        run_study(compose_spec(
            [f"harness={harness}", "model=openai-compatible", f"model.name={model}", f"model.base_url={server.url}",
             f"model.api_key_env={key}", "harness.bundled_skills=keep", *study_overrides(root_parent=tmp_path)],
            output_dir=out))
    table = read_table(out).set_index("condition")
    bundled = set(table.loc["baseline", "visible_skills"].split(","))
    assert bundled >= KEPT[harness], bundled
    assert set(table.loc["with_skill", "visible_skills"].split(",")) == bundled | {"csv-column-sum"}
    assert table.loc["baseline", "n_visible_skills"] == len(bundled)


KEPT = {"claude-code": {"code-review", "security-review", "deep-research"},
        "codex": {"imagegen", "openai-docs", "skill-creator", "skill-installer"},
        "opencode": {"customize-opencode"}}
