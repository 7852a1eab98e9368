"""Instruction footer parsing and SKILL.md usage extraction."""

from __future__ import annotations

from pathlib import Path

import pytest

from aces_bench.agents.footer import TaskFooter, parse_instruction
from aces_bench.agents.usage import (
    Invocation,
    UnusableUsage,
    build_invocation,
    interpreter_for,
    recovery,
    usage_line,
)

CONTRACT = """Reconcile the March ledger against the bank statement.

---
Working directory: /workspace
Input files:
- data/march.csv
- data/bank.csv
Write your final answer to /workspace/answer.txt.
"""


def test_footer_contract():
    f = parse_instruction(CONTRACT)
    assert f == TaskFooter(
        prompt="Reconcile the March ledger against the bank statement.",
        workdir="/workspace",
        input_files=("data/march.csv", "data/bank.csv"),
        answer_path="/workspace/answer.txt",
        found=True,
    )


def test_footer_without_input_files_and_with_crlf():
    text = "Say hi.\r\n---\r\nWorking directory: /work/dir/\r\nWrite your final answer to /work/dir/out.txt.\r\n"
    f = parse_instruction(text)
    assert (f.prompt, f.workdir, f.input_files, f.answer_path) == ("Say hi.", "/work/dir", (), "/work/dir/out.txt")


def test_missing_footer_uses_defaults():
    f = parse_instruction("Just do it.\n\n---\n\nNot a footer line.\n")
    assert not f.found
    assert (f.workdir, f.answer_path, f.input_files) == ("/workspace", "/workspace/answer.txt", ())
    assert f.prompt == "Just do it.\n\n---\n\nNot a footer line."


def test_last_footer_wins_over_a_markdown_rule_in_the_prompt():
    text = "Intro\n---\nWorking directory: /decoy\nMore prompt text.\n\n" + CONTRACT
    f = parse_instruction(text)
    assert f.workdir == "/workspace" and f.input_files == ("data/march.csv", "data/bank.csv")
    assert f.prompt.startswith("Intro\n---\nWorking directory: /decoy")


def test_relative_answer_path_and_missing_answer_line():
    f = parse_instruction("x\n---\nWorking directory: /w\nWrite your final answer to out/answer.md.\n")
    assert f.answer_path == "/w/out/answer.md"
    g = parse_instruction("x\n---\nWorking directory: /w\nInput files:\n- a.txt\n")
    assert (g.answer_path, g.input_files) == ("/w/answer.txt", ("a.txt",))


SKILL_MD = """---
name: demo
description: Demo skill.
---
# Demo

```bash
python3 scripts/not-usage.py
```

## Usage

Run it like this:

```bash
# a comment first
$ python3 scripts/reconcile.py <ledger.csv> <bank.csv> [--strict] [--tolerance 0.01]
python3 scripts/other.py
```

## Limits
```
python3 scripts/limits.py
```
"""


def test_usage_line_is_first_command_of_first_block_under_usage():
    assert usage_line(SKILL_MD) == "python3 scripts/reconcile.py <ledger.csv> <bank.csv> [--strict] [--tolerance 0.01]"


def test_usage_line_handles_subheadings_continuations_and_absence():
    nested = "## Usage\nText.\n### Example\n~~~\nbash scripts/run.sh \\\n  <in.txt>\n~~~\n"
    assert usage_line(nested) == "bash scripts/run.sh <in.txt>"
    assert usage_line("# Title\n## Usage\nNo code here.\n## Next\n```\npython3 x.py\n```\n") is None
    assert usage_line("# Only a title\n```\npython3 x.py\n```\n") is None


def test_usage_line_of_every_example_skill():
    root = Path(__file__).resolve().parents[2] / "aces_bench" / "examples" / "skills"
    skills = sorted(p for p in root.glob("*/SKILL.md"))
    if not skills:
        pytest.skip(f"no example skills under {root} yet")
    for skill_md in skills:
        line = usage_line(skill_md.read_text())
        assert line is not None and "scripts/" in line, skill_md


def test_build_invocation_fills_placeholders_and_drops_optional_parts():
    inv = build_invocation(usage_line(SKILL_MD), "/skills/demo", ["data/march.csv", "data/bank.csv", "data/extra.csv"])
    assert inv.argv == ("python3", "/skills/demo/scripts/reconcile.py", "data/march.csv", "data/bank.csv")
    assert inv.script == "/skills/demo/scripts/reconcile.py" and not inv.direct
    assert inv.command == "python3 /skills/demo/scripts/reconcile.py data/march.csv data/bank.csv"


def test_build_invocation_variants():
    direct = build_invocation("./scripts/tool.sh --in=<file> | sort", "/skills/t", ["my file.txt"])
    assert direct.argv == ("/skills/t/scripts/tool.sh", "--in=my file.txt", "|", "sort")
    assert direct.direct
    assert direct.command == "/skills/t/scripts/tool.sh '--in=my file.txt' | sort"

    variadic = build_invocation("python3 {baseDir}/scripts/cat.py <files...>", "/skills/c", ["a", "b"])
    assert variadic.argv == ("python3", "/skills/c/scripts/cat.py", "a", "b")
    assert variadic.script == "/skills/c/scripts/cat.py"


def test_build_invocation_refuses_what_it_cannot_run():
    with pytest.raises(UnusableUsage, match=r"more placeholders than the task has input files \(<bank.csv> is unfilled\)"):
        build_invocation("python3 scripts/r.py <ledger.csv> <bank.csv>", "/skills/r", ["only.csv"])
    with pytest.raises(UnusableUsage, match="not a valid shell command"):
        build_invocation("python3 'scripts/r.py", "/skills/r", [])
    with pytest.raises(UnusableUsage, match="empty once optional parts are dropped"):
        build_invocation("[--all]", "/skills/r", [])


def test_recovery_rules():
    direct = build_invocation("scripts/r.py <a>", "/skills/r", ["x"])
    retry = recovery(direct, 126)
    assert retry is not None and retry.argv == ("python3", "/skills/r/scripts/r.py", "x") and not retry.direct
    py = build_invocation("python3 scripts/r.py <a>", "/skills/r", ["x"])
    assert recovery(py, 127).argv[0] == "python"
    assert recovery(py, 2) is None
    assert interpreter_for("/a/b.SH") == "bash" and interpreter_for("/a/b") == "sh"
    assert isinstance(retry, Invocation)


def test_placeholder_inside_a_folder_is_not_doubled():
    """`data/<file>` filled with the footer's `data/names.txt` (it ran data/data/names.txt)."""
    inv = build_invocation("python scripts/count.py data/<file>", "/skills/n", ["data/names.txt"])
    assert inv.argv == ("python", "/skills/n/scripts/count.py", "data/names.txt")
    abs_dir = build_invocation("python3 scripts/c.py /workspace/data/<file>", "/skills/n", ["data/names.txt"])
    assert abs_dir.argv[-1] == "/workspace/data/names.txt"
    suffixed = build_invocation("python3 scripts/c.py --in=<name>.csv", "/skills/n", ["data/sales.csv"])
    assert suffixed.argv[-1] == "--in=data/sales.csv"
    other = build_invocation("python3 scripts/c.py out/<file>", "/skills/n", ["data/names.txt"])
    assert other.argv[-1] == "out/data/names.txt"  # a different folder is the author's intent


def test_usage_line_in_unfenced_and_indented_usage_sections():
    unfenced = "# T\n## Usage\nRun it on the list:\npython scripts/count.py data/<file>\n\n## Notes\nx\n"
    assert usage_line(unfenced) == "python scripts/count.py data/<file>"
    inline = "## Usage\n\nCall `python3 scripts/sum.py <file.csv> amount` on the file.\n"
    assert usage_line(inline) == "python3 scripts/sum.py <file.csv> amount"
    indented_in_list = "## Usage\n\n1. Run:\n\n       python3 scripts/x.py <in>\n"
    assert usage_line(indented_in_list) == "python3 scripts/x.py <in>"
    indented_after_text = "## Usage\nRun:\n    $ bash scripts/run.sh <in.txt>\n"
    assert usage_line(indented_after_text) == "bash scripts/run.sh <in.txt>"
    # Prose mentioning python is not a command; a later fenced block still wins.
    prose_then_fence = "## Usage\nUse python to do this.\n\n```\npython3 scripts/a.py <x>\n```\n"
    assert usage_line(prose_then_fence) == "python3 scripts/a.py <x>"
