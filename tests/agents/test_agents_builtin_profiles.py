"""The built-in harnesses are HarnessProfile registry entries, registered the way a plugin's are.

Each conf/harness/*.yaml a user reads has a profile that agrees with it on what runs
(``cli``, ``import_path``/``agent``); a grading-only profile (a harness whose trajectories
are graded but which this project does not run itself) is no ``harness=`` option; the
graders, ``aces-bench trigger`` and the paper page read harness facts from the profiles
only; a tool name is resolved by the trajectory's own agent first.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from harbor.models.trajectories import Agent, Step, ToolCall, Trajectory

from aces_bench.agents.profiles import (
    GENERIC_TOOL_KINDS,
    HARNESSES,
    TOOL_KINDS,
    HarnessProfile,
    is_builtin,
    paper_harness,
    profile_turn_limit,
    tool_kind,
)
from aces_bench.config.compose import compose_spec
from aces_bench.core.errors import ConfigError
from aces_bench.datasets.trigger_run import _turn_limit
from aces_bench.graders.self_correction import skill_changes
from aces_bench.graders.tool_calls import Call, build_view, skill_ref

CONF = Path(__file__).resolve().parents[2] / "conf" / "harness"
GENERIC_LAUNCHERS = {
    # harbor.yaml runs any agent Harbor ships, named on the command line (harness.agent=...):
    # it is a launcher, not one harness, so it has no profile; the agent it runs is graded
    # by that agent's profile when one exists (gemini-cli, deerflow, trae-agent, ...).
    "harbor",
}
BUILTINS = ("reference", "terminus-2", "claude-code", "codex", "opencode", "gemini-cli", "deerflow", "trae-agent",
            "mini-swe-agent")


@pytest.fixture
def plugin_profile():
    """A plugin harness registered for one test (and removed after it)."""
    added: list[str] = []

    def register(profile: HarnessProfile) -> HarnessProfile:
        HARNESSES.register(profile.name, profile)
        added.append(profile.name)
        return profile

    yield register
    for name in added:
        HARNESSES.unregister(name)


def _trajectory(agent: str, *calls: tuple[str, dict]) -> Trajectory:
    steps = [Step(step_id=1, source="user", message="do it")]
    steps += [Step(step_id=i + 2, source="agent", message="",
                   tool_calls=[ToolCall(tool_call_id=f"c{i}", function_name=name, arguments=args)])
              for i, (name, args) in enumerate(calls)]
    return Trajectory(session_id="s", agent=Agent(name=agent, version="1"), steps=steps)


def test_every_built_in_is_a_registered_profile():
    assert set(BUILTINS) <= set(HARNESSES.names())
    for name in BUILTINS:
        profile = HARNESSES.get(name)
        assert isinstance(profile, HarnessProfile) and is_builtin(name) and profile.name == name
        assert profile.tool_kinds, f"{name}: no tool names"
        assert set(profile.tool_kinds.values()) <= set(TOOL_KINDS)


@pytest.mark.parametrize("yaml_file", sorted(CONF.glob("*.yaml")), ids=lambda p: p.stem)
def test_each_harness_yaml_has_a_profile_that_agrees_with_it(yaml_file):
    """One source per fact: the YAML says how a study runs the harness, the profile what
    the graders know of it; the fields both hold are equal."""
    name = yaml_file.stem
    if name in GENERIC_LAUNCHERS:
        assert name not in HARNESSES
        return
    conf = yaml.safe_load(yaml_file.read_text(encoding="utf-8"))
    assert name in HARNESSES, f"conf/harness/{name}.yaml has no HarnessProfile (aces_bench/agents/builtins.py)"
    profile = HARNESSES.get(name)
    assert profile.runnable and is_builtin(name)
    for key in ("name", "cli", "import_path", "agent", "requires_model", "label"):
        assert conf.get(key, getattr(HarnessProfile, key, None)) == getattr(profile, key), f"{name}: {key} differs"


def test_each_runnable_built_in_has_its_yaml_and_grading_only_ones_are_no_option(tmp_path):
    shipped = {p.stem for p in CONF.glob("*.yaml")}
    for name in BUILTINS:
        profile = HARNESSES.get(name)
        assert (name in shipped) == profile.runnable, name
    for name in ("gemini-cli", "deerflow", "trae-agent", "mini-swe-agent"):
        with pytest.raises(Exception, match=name):  # Hydra: no such option in group harness
            compose_spec([f"harness={name}"], output_dir=tmp_path)
    # The built-in YAML options still compose (the built-in profiles are not stored over them).
    assert compose_spec(["harness=claude-code", "model=claude-sonnet"], output_dir=tmp_path).harness.cli == "claude-code"


def test_listing_the_harnesses_imports_no_profile_and_reading_them_no_harbor():
    code = ("import sys\n"
            "from aces_bench.agents.profiles import HARNESSES\n"
            "names = HARNESSES.names()\n"
            "print('builtins' if 'aces_bench.agents.builtins' in sys.modules else 'lazy', len(names))\n"
            "from aces_bench.agents.profiles import tool_kind\n"
            "print(tool_kind('Bash', 'claude-code'), 'harbor' in sys.modules)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    first, second = done.stdout.splitlines()
    assert first.split()[0] == "lazy" and int(first.split()[1]) >= len(BUILTINS)
    assert second == "shell False"


def test_a_tool_name_is_read_by_the_trajectorys_own_agent_first(plugin_profile):
    # A plugin harness calls its file viewer "Bash": in its own trajectories that is a read;
    # claude-code's Bash stays a shell call, and so does an unknown agent's (a built-in's
    # kind wins in the union).
    plugin_profile(HarnessProfile(name="viewer-agent", import_path="x:Y", tool_kinds={"Bash": "read"}))
    args = {"command": "cat /workspace/a.txt", "file_path": "/workspace/a.txt"}
    kinds = {agent: build_view(_trajectory(agent, ("Bash", args)), "/workspace").calls[0].kind
             for agent in ("claude-code", "viewer-agent", "someone-else")}
    assert kinds == {"claude-code": "shell", "viewer-agent": "read", "someone-else": "shell"}
    assert tool_kind("bash", "viewer-agent") == "read" and tool_kind("bash", None) == "shell"


def test_a_subagent_trajectory_is_read_by_its_own_agent(plugin_profile):
    plugin_profile(HarnessProfile(name="viewer-agent", import_path="x:Y", tool_kinds={"Bash": "read"}))
    parent = _trajectory("claude-code", ("Bash", {"command": "ls"}))
    sub = _trajectory("viewer-agent", ("Bash", {"file_path": "/workspace/a.txt"}))
    sub.trajectory_id = "sub-1"
    parent.subagent_trajectories = [sub]
    view = build_view(parent, "/workspace")
    assert [(c.subagent, c.kind) for c in view.calls] == [(None, "shell"), ("sub-1", "read")]


def test_an_unknown_tool_stays_other_for_every_agent():
    for agent in (*BUILTINS, "aces-reference", None, "unknown-agent"):
        assert tool_kind("frobnicate_widgets", agent) == "other"
    view = build_view(_trajectory("claude-code", ("frobnicate_widgets", {"path": "/workspace/x"})), "/workspace")
    assert view.calls[0].kind == "other" and view.calls[0].reads == ()


def test_the_generic_fallback_is_small_and_no_profile_claims_its_names():
    claimed = {t.lower() for n, p in HARNESSES.items() if is_builtin(n) for t in p.tool_kinds}
    assert not claimed & set(GENERIC_TOOL_KINDS)
    assert len(GENERIC_TOOL_KINDS) <= 40


def test_a_profile_with_an_unknown_tool_kind_is_refused():
    with pytest.raises(ValueError, match="unknown tool kind"):
        HarnessProfile(name="bad", tool_kinds={"run": "execute"})


def test_an_editor_tool_takes_its_kind_from_its_command():
    traj = _trajectory("trae-agent", ("str_replace_based_edit_tool", {"command": "view", "path": "/workspace/a"}),
                       ("str_replace_based_edit_tool", {"command": "create", "path": "/workspace/b", "file_text": "x"}),
                       ("str_replace_based_edit_tool", {"command": "str_replace", "path": "/workspace/b"}))
    assert [c.kind for c in build_view(traj, "/workspace").calls] == ["read", "write", "edit"]


@pytest.mark.parametrize("harness,folder", [
    ("claude-code", "/root/.claude/skills"), ("claude-code", "/logs/agent/sessions/skills"),
    ("codex", "/root/.agents/skills"), ("codex", "/root/.codex/skills"),
    ("opencode", "/root/.config/opencode/skills"), ("gemini-cli", "/home/u/.gemini/skills"),
])
def test_each_harness_skill_folder_is_on_its_profile_and_seen_by_the_graders(harness, folder):
    assert skill_ref(f"{folder}/csv-column-sum/SKILL.md", "/skills") == skill_ref("/skills/csv-column-sum/SKILL.md", "/skills")
    assert any(folder.endswith(root.removeprefix("**")) for root in HARNESSES.get(harness).skill_roots)


@pytest.mark.parametrize("harness", ["claude-code", "codex", "opencode", "gemini-cli"])
def test_a_write_to_a_harness_skill_config_is_a_skill_change(harness):
    for pattern in HARNESSES.get(harness).skill_configs:
        path = pattern.replace("**", "/root/project")
        call = Call(index=0, step_id=1, call_id="c0", tool="write_file", kind="write", text="", output="",
                    exit_code=0, failed=False, status_source="exit_code", writes=(path,))
        assert [ch["file"] for ch in skill_changes((call,), "/skills", {"csv-column-sum"})] == [path], path
    other = Call(index=0, step_id=1, call_id="c0", tool="write_file", kind="write", text="", output="",
                 exit_code=0, failed=False, status_source="exit_code", writes=("/root/project/settings.json",))
    assert skill_changes((other,), "/skills", {"csv-column-sum"}) == []


def test_the_turn_limit_comes_from_the_profile(tmp_path):
    def limit(*overrides):
        return _turn_limit(compose_spec(list(overrides), output_dir=tmp_path))

    assert limit("harness=claude-code", "model=claude-sonnet") == "max_turns"
    assert limit("harness=terminus-2", "model=gpt-4o") == "max_turns"
    assert limit("harness=harbor", "harness.agent=terminus-2", "model=gpt-4o") == "max_turns"
    assert limit("harness=codex", "model=gpt-4o") is None and limit("harness=reference") is None
    assert profile_turn_limit("no-such-harness", "claude-code") == "max_turns"


def test_the_paper_labels_name_the_profiles():
    assert {label: paper_harness(label) for label in ("Claude Code", "Codex", "OpenCode", "Terminus-2")} == {
        "Claude Code": "claude-code", "Codex": "codex", "OpenCode": "opencode", "Terminus-2": "terminus-2"}
    assert paper_harness("Gemini CLI") == "Gemini CLI"  # a label no profile claims stays as written


def test_a_plugin_may_not_take_a_built_in_name_silently():
    with pytest.raises(ValueError, match="registered already"):
        HARNESSES.register("claude-code", HarnessProfile(name="claude-code", tool_kinds={"Bash": "read"}))
    assert tool_kind("Bash", "claude-code") == "shell"


def test_a_plugin_taking_a_shipped_yaml_name_is_refused_by_the_config(plugin_profile, tmp_path):
    """replace=True is how a plugin says it overrides a built-in; as a non-built-in profile
    under a shipped YAML name it is still refused when the config is registered."""
    from aces_bench.config import store

    original = HARNESSES.get("codex")
    HARNESSES.register("codex", HarnessProfile(name="codex", import_path="x:Y"), replace=True)
    try:
        with pytest.raises(ConfigError, match="aces-bench ships already"):
            store._store_plugin_options(store.ConfigStore.instance())
    finally:
        HARNESSES.register("codex", original, replace=True)


def test_the_profile_tool_kinds_are_the_graders_call_kinds():
    from typing import get_args

    from aces_bench.graders.tool_calls import CallKind

    assert set(TOOL_KINDS) == set(get_args(CallKind)) | {"editor"}


def test_the_real_clis_newer_tools_have_their_kinds():
    """Names the pinned CLIs offer that the old table did not know (tests/agents/test_agents_profile_tools.py)."""
    traj = _trajectory("claude-code", ("TaskCreate", {"subject": "sum", "description": "sum the column"}),
                       ("Agent", {"prompt": "sum it", "subagent_type": "general-purpose"}),
                       ("Workflow", {"script": "rm -rf /workspace && python3 /skills/x/run.py"}),
                       ("TaskStop", {"task_id": "t1"}))
    calls = build_view(traj, "/workspace").calls
    assert [c.kind for c in calls] == ["control", "delegate", "delegate", "other"]
    assert calls[2].execs == () and calls[2].removes == ()  # a workflow script is not a shell command
    codex = build_view(_trajectory("codex", ("view_image", {"path": "/workspace/plot.png"})), "/workspace").calls[0]
    assert (codex.kind, codex.reads) == ("read", ("/workspace/plot.png",))
    assert tool_kind("grep_search", "gemini-cli") == "search" and tool_kind("invoke_agent", "gemini-cli") == "delegate"


def test_the_wire_apis_come_from_the_profiles():
    from aces_bench.agents.endpoints import API_NAMES, check_api, cli_apis

    assert cli_apis("claude-code") == ("anthropic",) and cli_apis("codex") == ("openai-responses",)
    assert cli_apis("opencode") == ("anthropic", "openai-responses", "openai-chat")
    assert cli_apis(None) == () and cli_apis("no-such-cli") == ()
    assert set(API_NAMES) == {a for _, p in HARNESSES.items() for a in (p.api, *p.other_apis) if a}
    assert "calls the Anthropic Messages API" in check_api("claude-code", "openai/gpt-4o", None)
    assert check_api("opencode", "openai/gpt-4o", None) is None
    with pytest.raises(ValueError, match="api/other_apis"):
        HarnessProfile(name="bad", api="gemini")
