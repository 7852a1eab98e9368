"""skill.intervention=plugin stages the whole plugin (issue 27, point 5).

A plugin folder in Claude Code's layout (manifest, skills, commands, agents, hooks, MCP
config, a script its hook runs) is staged whole at /plugins/<name>/ in the with-skill and
forced arms (its members' skills in the skills dir too, for every harness), never its
evaluation assets; each task says which parts the configured harness reads, and a
harness that reads only skills gets a one-line note naming what it does not. Members'
case ids are accepted short when one member has them.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from support.plugins import make_plugin

from aces_bench.config.compose import compose_spec
from aces_bench.core.errors import SkillError
from aces_bench.emitters import emit_study
from aces_bench.emitters.emit import read_task_metadata
from aces_bench.emitters.plan import plan_study

SKILL = Path(__file__).resolve().parents[1] / "fixtures" / "skills" / "csv-column-sum"
CLAUDE = ["harness=claude-code", "model=openai-compatible", "model.name=anthropic/claude-sonnet-4-5",
          "model.base_url=http://127.0.0.1:9"]


def _tree(task) -> dict[str, bytes]:
    root = task.path / "environment"
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_the_whole_plugin_is_staged_where_claude_code_loads_it_and_no_answer_key(tmp_path):
    plugin = make_plugin(tmp_path)
    spec = compose_spec([*CLAUDE, "skill=custom", f"skill.paths=[{plugin}]", "skill.intervention=plugin",
                         "study.controls=[null,placebo,forced]"], output_dir=tmp_path / "o")
    result = emit_study(spec, tmp_path / "o" / "tasks")
    by = {(t.case_id, t.condition): t for t in result.tasks}
    with_skill = _tree(by[("row-count.rows-1", "with_skill")])
    base = "plugins/table-tools/"
    for rel in (".claude-plugin/plugin.json", "commands/row-report.md", "agents/row-auditor.md", "hooks/hooks.json",
                ".mcp.json", "scripts/log.sh", "skills/row-count/SKILL.md", "skills/col-sum/scripts/colsum.py"):
        assert base + rel in with_skill, rel
    assert "skills/row-count/SKILL.md" in with_skill  # the members as skills, for every harness
    assert "COPY plugins/ /plugins/" in with_skill["Dockerfile"].decode()
    meta = read_task_metadata(by[("row-count.rows-1", "with_skill")].path)["plugin"]
    assert meta == {"name": "table-tools", "dir": "/plugins/table-tools",
                    "parts": ["skills", "commands", "agents", "hooks", "mcp", "other"],
                    "read_by_harness": ["skills", "commands", "agents", "hooks", "mcp", "other"],
                    "not_read_by_harness": []}
    assert any(k.startswith(base) for k in _tree(by[("row-count.rows-1", "forced")]))
    for cond in ("baseline", "null", "placebo"):
        tree = _tree(by[("row-count.rows-1", cond)])
        assert not any(k.startswith("plugins/") for k in tree) and "COPY plugins" not in tree["Dockerfile"].decode()
        assert "plugin" not in read_task_metadata(by[("row-count.rows-1", cond)].path)
    # The one staging rule inside the plugin: no evals/, EVAL.md or answer key of a member or of the plugin.
    for t in result.tasks:
        for rel, data in _tree(t).items():
            assert "/evals/" not in rel and not rel.endswith("EVAL.md"), rel
            for key in (b"ANSWERKEY", b"EVALMD-", b"PLUGINEVAL"):
                assert key not in data, (t.condition, rel)


def test_a_harness_that_reads_only_skills_is_told_what_it_does_not_read(tmp_path):
    plugin = make_plugin(tmp_path)
    spec = compose_spec(["skill=custom", f"skill.paths=[{plugin}]", "skill.intervention=plugin"],
                        output_dir=tmp_path / "o")
    plan = plan_study(spec)
    assert plan.notes == ("plugin table-tools: harness reference reads only its skills; not staged for it: "
                          "commands, agents, hooks, mcp, other (harness=claude-code loads the whole plugin)",)
    result = emit_study(spec, tmp_path / "o" / "tasks", plan)
    meta = read_task_metadata(next(t for t in result.tasks if t.condition == "with_skill").path)["plugin"]
    assert meta["read_by_harness"] == ["skills"]
    assert meta["not_read_by_harness"] == ["commands", "agents", "hooks", "mcp", "other"]


def test_member_case_ids_in_the_short_form(tmp_path):
    plugin = make_plugin(tmp_path)
    base = ["skill=custom", f"skill.paths=[{plugin}]", "skill.intervention=plugin"]
    plan = plan_study(compose_spec([*base, "skill.cases=[rows-1]"], output_dir=tmp_path / "a"))
    assert {t.case.id for t in plan.tasks} == {"row-count.rows-1"}
    plan = plan_study(compose_spec([*base, "skill.cases=[rows-1,col-sum.sum-1]"], output_dir=tmp_path / "b"))
    assert {t.case.id for t in plan.tasks} == {"row-count.rows-1", "col-sum.sum-1"}
    with pytest.raises(SkillError) as err:
        plan_study(compose_spec([*base, "skill.cases=[shared-1]"], output_dir=tmp_path / "c"))
    assert "'shared-1' is a case of several members: col-sum.shared-1, row-count.shared-1" in str(err.value)
    with pytest.raises(SkillError) as err:
        plan_study(compose_spec([*base, "skill.cases=[rows-2]"], output_dir=tmp_path / "d"))
    message = str(err.value)
    assert "skill.cases names case ids no target skill has: rows-2" in message
    assert "row-count.rows-1" in message and "col-sum.intent-col-sum" in message  # the valid ids, listed
