"""Every tool each real agent CLI offers its model has a kind on that harness's profile.

Each pinned npm CLI (claude-code, codex, opencode; ``aces-bench agents install``) runs one
paired study in the bubblewrap sandbox against the scripted model server, which answers
every request with a final message. The ``tools`` array of each request is what the CLI
really offers a model; each name must be on the harness's ``HarnessProfile.tool_kinds``
(a kind, or ``other`` listed deliberately), so the graders never meet a tool of a built-in
harness they have not been told about. The ATIF trajectory Harbor writes names the agent
the profile is looked up by.

terminus-2 (Harbor's own agent) and the reference agent offer no tools array: their
evidence is the ATIF trajectory each writes in a real run (terminus-2 driven by the
scripted terminus policy), whose agent name and every tool name must be on the profile.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.model_server import ModelServer, Replay
from support.studies import needs_bwrap, read_table, study_overrides
from support.terminus_policy import terminus_policy

from aces_bench.agents.clis import CLIS, MANIFEST, cli_dir
from aces_bench.agents.profiles import HARNESSES
from aces_bench.config.compose import compose_spec
from aces_bench.study.entry import run_study

RUNS = {
    # harness: (model name, key variable)
    "claude-code": ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
    "codex": ("openai/gpt-4o", "OPENAI_API_KEY"),
    "opencode": ("anthropic/claude-sonnet-4-5", "ANTHROPIC_API_KEY"),
}
# Tools each CLI is known to offer (a floor: the capture must see at least these).
SEEN = {"claude-code": {"Bash", "Read", "Skill"}, "codex": {"exec_command"}, "opencode": {"bash", "read", "skill"}}


def _needs_cli(name: str):
    cli = CLIS[name]
    return pytest.mark.skipif(not (cli_dir(cli) / MANIFEST).is_file(),
                              reason=f"{cli.package}@{cli.version} is not in the agent cache: "
                                     f"run `aces-bench agents install {name}`")


def _offered(body: dict) -> set[str]:
    """Every tool name in a request's ``tools`` (a namespace's tools too: codex groups some)."""
    names: set[str] = set()
    for tool in body.get("tools") or []:
        if not isinstance(tool, dict):
            continue
        name = tool.get("name") or (tool.get("function") or {}).get("name")
        if tool.get("type") == "namespace":
            names |= _offered(tool)
        elif name:
            names.add(name)
    return names


@needs_bwrap
@pytest.mark.parametrize("harness", [pytest.param(h, marks=_needs_cli(h)) for h in RUNS])
def test_every_tool_the_real_cli_offers_has_a_kind_on_its_profile(harness, tmp_path, monkeypatch):
    model, key = RUNS[harness]
    monkeypatch.setenv(key, "sk-test-dummy")
    with ModelServer(Replay(lambda request: [], final="Done."), max_requests=40) as server:
        url = server.base_url if harness == "claude-code" else server.url
        run_study(compose_spec([f"harness={harness}", "model=openai-compatible", f"model.name={model}",
                                f"model.base_url={url}", f"model.api_key_env={key}",
                                *study_overrides(root_parent=tmp_path)], output_dir=tmp_path / "out"))
    assert server.errors == []
    offered = set().union(*(_offered(r.body) for r in server.requests))
    assert offered >= SEEN[harness], offered
    profile = HARNESSES.get(harness)
    known = {name.lower() for name in profile.tool_kinds}
    missing = sorted(name for name in offered if name.lower() not in known)
    assert not missing, (f"{harness} {CLIS[harness].version} offers tools its profile does not name: {missing} "
                         "(give each a kind, or 'other', in aces_bench/agents/builtins.py)")

    table = read_table(tmp_path / "out")
    for trial in table["trial_dir"]:
        trajectory = json.loads(Path(trial, "agent", "trajectory.json").read_text(encoding="utf-8"))
        assert trajectory["agent"]["name"] in profile.atif_names


@needs_bwrap
@pytest.mark.parametrize("harness", ["terminus-2", "reference"])
def test_every_tool_in_a_real_atif_trajectory_has_a_kind_on_its_profile(harness, tmp_path, monkeypatch):
    out = tmp_path / "out"
    if harness == "terminus-2":
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test-dummy")
        with ModelServer(terminus_policy, max_requests=16, idle_timeout=60) as server:
            run_study(compose_spec(["harness=terminus-2", "model=openai-compatible", "model.name=openai/test-model",
                                    f"model.base_url={server.base_url}", *study_overrides(root_parent=tmp_path)],
                                   output_dir=out))
        assert server.errors == []
    else:
        run_study(compose_spec(["harness=reference", *study_overrides(root_parent=tmp_path)], output_dir=out))
    profile = HARNESSES.get(harness)
    known = {name.lower() for name in profile.tool_kinds}
    used: set[str] = set()
    for trial in read_table(out)["trial_dir"]:
        trajectory = json.loads(Path(trial, "agent", "trajectory.json").read_text(encoding="utf-8"))
        assert trajectory["agent"]["name"] in profile.atif_names
        used |= {c["function_name"] for s in trajectory["steps"] for c in s.get("tool_calls") or []}
    assert used >= {"terminus-2": {"bash_command", "mark_task_complete"}, "reference": {"bash"}}[harness], used
    assert not sorted(n for n in used if n.lower() not in known), used
