"""Broken copies of a skill's script (issue 36's "broken copy caught"): broken where a draft looks, never a log line,
and drafts whose expected values are the fixture's, so a wrong script fails them."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from aces_bench.datasets.decidable import SAYS_SOMETHING_CHECK, plan_draft
from aces_bench.datasets.grounding import ground
from aces_bench.datasets.measure import Run, differs, measure_skill, passes, run_command
from aces_bench.datasets.mutants import LAST_STEP, OFF_BY_ONE, broken_copies
from aces_bench.datasets.templates import template_cases
from aces_bench.inputs.skills import load_skill

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")

SKILL_MD = """---
name: tally
description: Count and sum the rows of a CSV file into a JSON summary.
---
# Tally

Run the tally script on the file the user gives:
```bash
python scripts/tally.py input.csv --output summary.json
```
"""

# Reads the CSV, states its row count, writes the summary file, then logs where it went.
TALLY = '''"""Count the rows of a CSV file and write a JSON summary."""
import argparse
import csv
import json


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("input")
    parser.add_argument("--output", required=True)
    args = parser.parse_args()
    with open(args.input) as f:
        rows = list(csv.DictReader(f))
    print(f"rows: {len(rows)}")
    with open(args.output, "w") as f:
        json.dump({"rows": len(rows)}, f)
    print(f"Summary saved to: {args.output}")


if __name__ == "__main__":
    main()
'''


def _skill(tmp_path: Path, script: str = TALLY) -> Path:
    d = tmp_path / "tally"
    (d / "scripts").mkdir(parents=True)
    (d / "SKILL.md").write_text(SKILL_MD)
    (d / "scripts" / "tally.py").write_text(script)
    return d


def test_a_run_that_differs_only_in_a_log_line_or_a_timestamp_is_no_broken_copy():
    real = Run(0, "rows: 8\nSummary saved to: out/summary.json\n", {"out/summary.json": '{"rows": 8}'})
    quiet = Run(0, "rows: 8\n", {"out/summary.json": '{"rows": 8}'})
    assert not differs(real, quiet)  # the dropped line only said where the file went
    stamped = Run(0, "rows: 8 at 2026-12-06 06:45:33\n", {})
    assert not differs(stamped, Run(0, "rows: 8 at 2026-12-06 06:45:34\n", {}))
    assert differs(real, Run(0, real.stdout, {"out/summary.json": '{"rows": 9}'}))  # the work itself changed
    assert differs(real, Run(0, "rows: 9\nSummary saved to: out/summary.json\n", real.files))
    assert differs(real, Run(0, "rows: 8\n", {}))  # the file never written
    assert differs(real, Run(1, real.stdout, real.files))


def test_each_count_alone_is_a_candidate_after_all_of_them_and_definitions_are_no_steps():
    copies = broken_copies("scripts/tally.py", TALLY)
    off = copies[OFF_BY_ONE]
    assert len(off) == 3 and off[0].count("len(rows) + 1") == 2  # both counts at once, then each alone
    assert [c.count("len(rows) + 1") for c in off[1:]] == [1, 1]
    first, second = copies[LAST_STEP][:2]
    assert "json.dump" in first and "saved to" not in first  # the log line first: run, it differs in nothing
    assert "json.dump" not in second and "saved to" in second
    library = '"""Helpers."""\nimport csv\n\n\ndef load(p):\n    return list(csv.reader(open(p)))\n\n\ndef n(p):\n' \
              '    return len(load(p))\n'
    assert LAST_STEP not in broken_copies("scripts/lib.py", library)  # a module of definitions has no step to skip


@pytest.mark.sandbox
@needs_bwrap
def test_the_broken_copy_skips_the_work_not_the_log_line_and_an_off_by_one_count_is_caught(tmp_path):
    skill = load_skill(_skill(tmp_path))
    g = ground(skill)
    plan = plan_draft(skill, g)
    data = {plan.fixture.name: plan.fixture.text.encode()}
    real = asyncio.run(run_command(skill, plan.command, data))
    log_dropped, work_dropped = broken_copies("scripts/tally.py", TALLY)[LAST_STEP][:2]
    quiet = asyncio.run(run_command(skill, plan.command, data, ("scripts/tally.py", log_dropped)))
    assert real.exit_code == 0 and quiet.exit_code == 0 and not differs(real, quiet)
    unwritten = asyncio.run(run_command(skill, plan.command, data, ("scripts/tally.py", work_dropped)))
    assert differs(real, unwritten)
    m = measure_skill(skill)
    assert (m.task_drafts, m.satisfied) == (3, 3), m
    assert (m.mutants, m.caught) == (6, 6), m  # the count off by one and the summary never written: both fail


@pytest.mark.sandbox
@needs_bwrap
def test_a_script_that_reports_a_wrong_count_fails_the_drafts_that_ask_for_it(tmp_path):
    """The expected count is the fixture's (8 rows), never the script's: a script stating 9 is not certified."""
    skill = load_skill(_skill(tmp_path, TALLY.replace('print(f"rows: {len(rows)}")', 'print(f"rows: {len(rows) + 1}")')))
    g = ground(skill)
    plan = plan_draft(skill, g)
    asking = [c for c in template_cases(skill, grounding=g, plan=plan) if any(k.kind == "number" for k in c.checks)]
    assert asking and all(next(k for k in c.checks if k.kind == "number").value == 8 for c in asking)
    run = asyncio.run(run_command(skill, plan.command, {plan.fixture.name: plan.fixture.text.encode()}))
    assert run.exit_code == 0 and "rows: 9" in run.stdout
    assert not any(passes(c, run) for c in asking)


def test_a_command_that_writes_no_file_asks_for_an_answer_that_is_not_blank(tmp_path):
    """No file asked for: the answer is what the user gets, so a run that prints nothing fails the draft
    (a library module run bare); a stated count replaces that check where the draft asks for one."""
    d = _skill(tmp_path, '"""Describe the columns of a CSV file."""\nimport csv\nimport sys\n\n'
                         'print(", ".join(next(csv.reader(open(sys.argv[1])))))\n')
    (d / "SKILL.md").write_text(SKILL_MD.replace(" --output summary.json", ""))
    skill = load_skill(d)
    g = ground(skill)
    plan = plan_draft(skill, g)
    assert plan.output is None and plan.checks == [SAYS_SOMETHING_CHECK]
    explicit = template_cases(skill, ["explicit"], grounding=g, plan=plan)[0]
    assert not passes(explicit, Run(0, "\n", {})) and passes(explicit, Run(0, "date, region, units, amount\n", {}))
    (d / "scripts" / "tally.py").write_text('"""Count the rows of a CSV file."""\nimport csv\nimport sys\n\n'
                                            'rows = list(csv.DictReader(open(sys.argv[1])))\nprint(f"rows: {len(rows)}")\n')
    skill = load_skill(d)
    g = ground(skill)
    explicit = template_cases(skill, ["explicit"], grounding=g, plan=plan_draft(skill, g))[0]
    assert [(c.kind, c.value) for c in explicit.checks] == [("number", 8)]


SHELL_REPORT = """#!/bin/bash
set -e
BLUE='\\033[0;34m'
NC='\\033[0m'
if [ -f "$1" ]; then
    PAGES=$(wc -l < "$1")
fi
echo "Pages: $PAGES"
echo -e "${BLUE}Check complete${NC}"
echo ""
exit 0
"""


def test_a_shell_copy_skips_a_line_that_does_work_never_an_exit_or_a_fixed_message():
    copies = broken_copies("scripts/report.sh", SHELL_REPORT)[LAST_STEP]
    dropped = [next(ln for ln in SHELL_REPORT.splitlines() if ln not in copy.splitlines()) for copy in copies]
    # The report of the value goes first; the exit, the fixed messages and the block keywords never go.
    assert dropped[0] == 'echo "Pages: $PAGES"'
    assert not {"exit 0", 'echo ""', 'echo -e "${BLUE}Check complete${NC}"', "fi"} & set(dropped)
    # The counting line is inside an ``if``: dropping it alone leaves a block with no command,
    # which bash refuses, so that copy is never offered (it breaks the syntax, it skips no step).
    assert "    PAGES=$(wc -l < \"$1\")" not in dropped


def test_a_script_whose_output_varies_run_to_run_is_compared_without_its_random_values():
    # A server script prints a fresh port and key each run: a copy that changes nothing else
    # is no broken copy; one that stops printing the address is.
    real = Run(0, '{"url": "http://localhost:51234", "key": "a9f3c2"}\n')
    again = Run(0, '{"url": "http://localhost:40711", "key": "77be01"}\n')
    same = Run(0, '{"url": "http://localhost:38822", "key": "0c4d9e"}\n')
    silent = Run(0, "")
    assert differs(real, same)  # without the second run, the random values look like a change
    assert not differs(real, same, again)
    assert differs(real, silent, again)
    # Output that varies beyond its numbers cannot be compared: no copy is shown to differ.
    assert not differs(Run(0, "alpha\n"), silent, Run(0, "beta\n"))
