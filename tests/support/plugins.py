"""A plugin folder in Claude Code's layout, built from the csv-column-sum fixture skill: the
emitter's staging tests and the real claude-code run stage the same plugin."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

SKILL = Path(__file__).resolve().parents[1] / "fixtures" / "skills" / "csv-column-sum"


def make_plugin(root: Path, name: str = "table-tools") -> Path:
    plugin = root / "table-tools-src"
    for member, case in (("row-count", "rows-1"), ("col-sum", "sum-1")):
        dest = plugin / "skills" / member
        shutil.copytree(SKILL, dest)
        md = (dest / "SKILL.md").read_text().replace("name: csv-column-sum", f"name: {member}")
        (dest / "SKILL.md").write_text(md)
        (dest / "evals" / "evals.json").write_text(json.dumps({"skill_name": member, "evals": [
            {"id": case, "prompt": f"Use the {member} skill on the CSV.", "files": ["evals/files/sales.csv"],
             "expected_output": f"ANSWERKEY-{member}", "assertions": [{"kind": "contains", "value": f"KEY-{member}"}]},
            {"id": "shared-1", "prompt": "Same id in both members.", "expected_output": "x"}]}))
        (dest / "EVAL.md").write_text(f"## Questions\n- What?\n  - id: intent-{member}\n  - expected: EVALMD-{member}\n")
    (plugin / ".claude-plugin").mkdir()
    (plugin / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": name, "version": "1.0.0"}))
    (plugin / "commands").mkdir()
    (plugin / "commands" / "row-report.md").write_text("---\ndescription: Report row counts\n---\nCount the rows.\n")
    (plugin / "agents").mkdir()
    (plugin / "agents" / "row-auditor.md").write_text("---\nname: row-auditor\ndescription: Audits rows\n---\nAudit.\n")
    (plugin / "hooks").mkdir()
    (plugin / "hooks" / "hooks.json").write_text(json.dumps({"hooks": {"PostToolUse": [{"hooks": [
        {"type": "command", "command": "${CLAUDE_PLUGIN_ROOT}/scripts/log.sh"}]}]}}))
    (plugin / "scripts").mkdir()
    (plugin / "scripts" / "log.sh").write_text("#!/bin/sh\necho ok\n")
    (plugin / ".mcp.json").write_text(json.dumps({"mcpServers": {"rows": {"command": "python3", "args": ["-V"]}}}))
    (plugin / "evals").mkdir()
    (plugin / "evals" / "notes.md").write_text("PLUGINEVAL-secret\n")
    return plugin
