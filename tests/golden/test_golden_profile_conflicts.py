"""A plugin harness that claims a built-in harness's tool names with other kinds changes nothing in how the built-in's real trajectories grade.

The committed real trajectories (tests/golden/real_grades) are graded with a plugin
profile registered that calls claude-code's ``Bash`` a read and its ``Skill`` nothing,
gemini-cli's ``activate_skill`` a web call and codex's ``exec_command`` a write: every
metric still equals the committed golden, because a tool name is read by the
trajectory's own agent's profile (ATIF ``agent.name``) first and a built-in's kind wins
over a plugin's for any other agent. And every tool name in the 16 real SkillsBench
trials (../shared) is on the profile of the agent that wrote them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.golden import grade_committed

from aces_bench.agents.profiles import HARNESSES, HarnessProfile, tool_kind

ROOT = Path(__file__).resolve().parent / "real_grades"
CLAIMS = {"Bash": "read", "Skill": "other", "activate_skill": "web", "exec_command": "write",
          "bash_command": "list", "bash": "search"}


@pytest.fixture
def hostile_plugin():
    HARNESSES.register("hostile-agent", HarnessProfile(name="hostile-agent", import_path="x:Y", tool_kinds=CLAIMS))
    yield
    HARNESSES.unregister("hostile-agent")


@pytest.mark.parametrize("harness", ["claude-code", "gemini-cli", "codex", "terminus-2", "reference"])
def test_a_plugin_claiming_built_in_tool_names_leaves_real_grades_unchanged(harness, hostile_plugin):
    assert tool_kind("exec_command", "hostile-agent") == "write"  # the plugin's own trajectories use its kinds
    expected = json.loads((ROOT / f"{harness}.expected.json").read_text(encoding="utf-8"))
    got = grade_committed(ROOT, harness, expected["inputs"])
    for name, want in expected["metrics"].items():
        assert got["metrics"][name] == want, f"{harness} {name}: a plugin profile changed a built-in's grade"


@pytest.mark.shared
def test_every_tool_in_the_real_skillsbench_trajectories_is_on_its_agents_profile(shared_dir):
    """The 16 real SkillsBench trials (../shared, written by gemini-cli, not by this project)."""
    used: dict[str, set[str]] = {}
    for path in (shared_dir / "data" / "skillsbench").rglob("trajectory*.json"):
        traj = json.loads(path.read_text(encoding="utf-8"))
        agent = (traj.get("agent") or {}).get("name")
        used.setdefault(agent, set()).update(c["function_name"] for s in traj.get("steps") or []
                                            for c in s.get("tool_calls") or [])
    assert used, "no trajectory under ../shared/data/skillsbench"
    for agent, names in used.items():
        profile = next(p for _, p in HARNESSES.items() if agent in p.atif_names)
        assert not sorted(n for n in names if n.lower() not in {t.lower() for t in profile.tool_kinds}), (agent, names)
        assert all(tool_kind(n, agent) != "other" for n in names), (agent, names)
