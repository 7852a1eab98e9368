"""A plugin is loaded whole by the real claude-code CLI (issue 27, point 5).

The plugin of tests/emitters/test_emitter_plugin.py (two skills, a command, an agent, a
hook, an MCP config) is the intervention; claude-code runs it against the scripted model
server in the bubblewrap sandbox. What the CLI shows the model in the with-skill arm
lists the plugin's command, agent and skills by their plugin names, each skill once; the
baseline shows none of it. The model activates the plugin skill by its namespaced name,
and the graders count that as the member's activation.
"""

from __future__ import annotations

import json

import pytest
from support.model_server import ModelServer, Replay, call
from support.plugins import make_plugin
from support.studies import needs_bwrap, read_table

from aces_bench.agents.clis import CLIS, MANIFEST, cli_dir
from aces_bench.config.compose import compose_spec
from aces_bench.study.entry import run_study


def _script() -> Replay:
    def choose(r):
        offered = "table-tools:row-count" in json.dumps(r.body)
        return [call("Skill", skill="table-tools:row-count")] if offered else []
    return Replay(choose, final="done")


@needs_bwrap
@pytest.mark.skipif(not (cli_dir(CLIS["claude-code"]) / MANIFEST).is_file(),
                    reason="claude-code is not in the agent cache: run `aces-bench agents install claude-code`")
def test_claude_code_loads_the_whole_staged_plugin(tmp_path, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-test-dummy")
    plugin = make_plugin(tmp_path)
    with ModelServer(_script(), max_requests=40) as server:
        spec = compose_spec(["harness=claude-code", "model=openai-compatible", "model.name=anthropic/claude-sonnet-4-5",
                             f"model.base_url={server.url}", "model.api_key_env=ANTHROPIC_API_KEY", "skill=custom",
                             f"skill.paths=[{plugin}]", "skill.intervention=plugin", "skill.cases=[rows-1]",
                             f"+backend.kwargs.root_parent={tmp_path}", "report=false"], output_dir=tmp_path / "out")
        run_study(spec)
    assert server.errors == []
    first = {("with_skill" if "table-tools" in json.dumps(r.body) else "baseline"): json.dumps(r.body)
             for r in reversed(server.requests)}
    shown = first["with_skill"]
    for name in ("table-tools:row-report", "table-tools:row-auditor", "table-tools:row-count", "table-tools:col-sum"):
        assert name in shown, name
    assert "- row-count:" not in shown  # the member is listed once, with its plugin
    assert "row-report" not in first["baseline"] and "row-auditor" not in first["baseline"]
    table = read_table(tmp_path / "out").set_index("condition")
    assert table.loc["with_skill", "status"] == "ok" and table.loc["with_skill", "activated"] == True  # noqa: E712
    assert table.loc["with_skill", "fired_skill"] == "row-count"
