"""Drafts a skill author can decide (issue 36): the right script, known answers, no counter-examples, sharp checks."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest
from support.datasets import skill_copy

from aces_bench.datasets.decidable import plan_draft
from aces_bench.datasets.grounding import ground
from aces_bench.datasets.measure import measure_skill, passes, run_command
from aces_bench.datasets.mutants import broken_copies
from aces_bench.datasets.scriptref import documented_script, rank_scripts
from aces_bench.datasets.templates import template_cases
from aces_bench.inputs.skills import load_skill

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap (bwrap) is not installed")

SKILL_MD = """---
name: tally
description: Tally a CSV file's amount column.
---
# Tally

## Steps
- Run the tally script on the file the user gives.
- Don't edit the input file by hand.

Don't do this, it skips blank rows wrongly:
```bash
python scripts/old_tally.py data.csv
```

Do this:
```bash
python scripts/tally.py input.csv --output summary.json
```

## Common mistakes
- Summing the header row
"""


def _skill(tmp_path: Path, body: str = SKILL_MD) -> Path:
    d = tmp_path / "tally"
    (d / "scripts" / "pkg").mkdir(parents=True)
    (d / "SKILL.md").write_text(body)
    (d / "scripts" / "pkg" / "__init__.py").write_text("")
    (d / "scripts" / "check_env.py").write_text('"""Check the environment."""\n')
    (d / "scripts" / "old_tally.py").write_text('"""Old tally."""\n')
    (d / "scripts" / "tally.py").write_text('"""Sum the amount column of a CSV file and write a JSON summary."""\n'
                                            'print(f"total: {sum(amounts)}")\n')
    return d


def test_the_documented_script_is_chosen_never_a_package_init_or_a_counter_example(tmp_path):
    skill = load_skill(_skill(tmp_path))
    scripts = ["scripts/check_env.py", "scripts/old_tally.py", "scripts/pkg/__init__.py", "scripts/tally.py"]
    ranked = rank_scripts(skill, scripts)
    assert ranked[0].script == "scripts/tally.py"
    assert ranked[0].commands == ("python scripts/tally.py input.csv --output summary.json",)
    # The "don't do this" block gives its script no command credit; the package __init__ comes after named ones.
    assert next(r for r in ranked if r.script == "scripts/old_tally.py").commands == ()
    assert [r.script for r in ranked].index("scripts/pkg/__init__.py") > 0
    bare = load_skill(_skill(tmp_path / "bare", "---\nname: tally\ndescription: d.\n---\n# Tally\n"))
    assert documented_script(bare, scripts) is None  # no document names one: the drafts say judged only


def test_counter_examples_never_ground_a_draft(tmp_path):
    skill = load_skill(_skill(tmp_path))
    g = ground(skill, run=False)
    assert "Don't edit the input file by hand" not in " ".join(g.directives)
    assert "Summing the header row" not in " ".join(g.directives)
    assert not [e for e in g.examples if "old_tally" in e]
    for case in template_cases(skill, grounding=g):
        assert "old_tally" not in case.prompt and "header row" not in case.prompt, case.id
        assert case.expected_script in (None, "scripts/tally.py"), case.id


def test_a_plan_fills_the_documented_command_with_a_generated_fixture(tmp_path):
    skill = load_skill(_skill(tmp_path))
    plan = plan_draft(skill, ground(skill, run=False))
    assert plan.command == "python3 scripts/tally.py data/sales.csv --output out/summary.json"
    assert plan.fixture.rows == 8 and str(plan.fixture.total) == "169.80"
    assert [(c.kind, c.file, c.value) for c in plan.checks] == [("written", "out/summary.json", "summary.json")]
    assert plan.number_check.label == "total" and plan.number_check.value == 169.8
    explicit = template_cases(skill, ["explicit"], grounding=ground(skill, run=False), plan=plan)[0]
    assert "Save the result as out/summary.json" in explicit.prompt and "kind of work" not in explicit.prompt
    assert not explicit.judged_only and explicit.status == "draft"


def test_a_bibliography_script_gets_a_bibtex_fixture_whose_entry_count_is_known(tmp_path):
    """A script documented on a .bib file is run on a generated one; the draft asks for its entry count,
    which this draft wrote (8), so an entry count off by one fails the check."""
    import re

    from aces_bench.verifier.check_answer import evaluate_checks

    d = _skill(tmp_path, SKILL_MD.replace("tally.py input.csv --output summary.json", "tally.py references.bib"))
    (d / "scripts" / "tally.py").write_text('"""Validate the entries of a BibTeX file."""\n'
                                            'print(f"Total entries: {len(entries)}")\n')
    skill = load_skill(d)
    plan = plan_draft(skill, ground(skill, run=False))
    assert plan.command == "python3 scripts/tally.py data/references.bib"
    assert len(re.findall(r"^@article\{", plan.fixture.text, re.M)) == plan.fixture.rows == 8
    assert (plan.number_check.label, plan.number_check.value) == ("entries", 8)
    explicit = template_cases(skill, ["explicit"], grounding=ground(skill, run=False), plan=plan)[0]
    assert "how many entries the input has (write it as 'entries: N')" in explicit.prompt
    checks = [c.as_checker_dict() for c in explicit.checks]
    assert all(r["passed"] for r in evaluate_checks(checks, lambda f: "Total entries: 8\nValid entries: 8"))
    assert not all(r["passed"] for r in evaluate_checks(checks, lambda f: "Total entries: 9\nValid entries: 9"))


def test_a_number_is_asked_for_only_when_the_script_states_one(tmp_path):
    """A script that never prints a total is not asked for one: the draft would ask for work the skill does not do."""
    d = _skill(tmp_path)
    (d / "scripts" / "tally.py").write_text('"""Check a CSV file."""\nprint("total rows are fine")\n')
    skill = load_skill(d)
    plan = plan_draft(skill, ground(skill, run=False))
    assert plan.number_check is None
    explicit = template_cases(skill, ["explicit"], grounding=ground(skill, run=False), plan=plan)[0]
    assert "total" not in explicit.prompt.lower() and not explicit.judged_only  # the output file still decides it


def test_no_prompt_falls_back_to_the_kind_of_work_sentence(tmp_path):
    bare = load_skill(_skill(tmp_path, "---\nname: tally\ndescription: d.\n---\n# Tally\n\n## Totals by region\n"))
    for case in template_cases(bare, grounding=ground(bare, run=False)):
        assert "kind of work" not in case.prompt
        if case.kind in ("explicit", "implicit", "contextual"):
            assert case.judged_only  # nothing decides it: the field says so


def test_broken_copies_change_the_main_number_or_drop_the_last_step():
    source = "import sys\n\ndef main():\n    rows = [1, 2]\n    total = sum(rows)\n    print(f'total={total}')\n\nmain()\n"
    copies = broken_copies("scripts/x.py", source)
    assert len(copies["off by one"]) == 1 and "sum(rows) + 1" in copies["off by one"][0]  # one site: no others
    steps = copies["last step skipped"]  # the last step first, then each one before it
    assert len(steps) == 3 and "print" not in steps[0].split("def main")[1].split("main()")[0]
    assert "sum(rows)" not in steps[1] and "print" in steps[1]
    # A shell script's steps from the last back; a fixed message is no step (drafts6).
    assert broken_copies("scripts/x.sh", "#!/bin/sh\nwc -l data.csv\nwc -c data.csv\necho done\n") == {
        "last step skipped": ["#!/bin/sh\nwc -l data.csv\necho done\n", "#!/bin/sh\nwc -c data.csv\necho done\n"]}


@pytest.mark.sandbox
@needs_bwrap
def test_the_skills_script_satisfies_its_drafts_and_broken_copies_fail_them(tmp_path):
    skill = load_skill(skill_copy(tmp_path))  # csv-stats: prints total=<sum> for a column
    m = measure_skill(skill)
    assert (m.task_drafts, m.satisfied) == (3, 3), m
    assert m.mutants == 6 and m.caught == 6, m  # off by one and last step skipped each fail all three


@pytest.mark.sandbox
@needs_bwrap
def test_a_buggy_skill_is_never_certified_by_its_own_output(tmp_path):
    """A skill that prints a wrong total: the draft's expected value is the fixture's, so its draft fails."""
    d = skill_copy(tmp_path)
    script = d / "scripts" / "stats.py"
    script.write_text(script.read_text().replace('print(f"total={sum(values):.2f}")',
                                                 'print(f"total={sum(values) * 1.1:.2f}")'))
    skill = load_skill(d)
    g = ground(skill)
    plan = plan_draft(skill, g)
    explicit = template_cases(skill, ["explicit"], grounding=g, plan=plan)[0]
    assert explicit.checks[0].value == 169.8
    run = asyncio.run(run_command(skill, plan.command, {plan.fixture.name: plan.fixture.text.encode()}))
    assert run.exit_code == 0 and "total=186.78" in run.stdout
    assert not passes(explicit, run)


@pytest.mark.shared
def test_public_skill_drafts_name_documented_scripts(shared_dir):
    root = shared_dir / "data" / "public-skills"
    files = shared_dir / "data" / "public-skills-files"
    for name in ("K-Dense-AI__claude-scientific-skills/xlsx", "K-Dense-AI__claude-scientific-skills/docx",
                 "anthropics__skills/skill-creator", "openai__skills/gh-fix-ci"):
        d = Path(shutil.copytree(root / name, shared_dir_copy(name)))
        shutil.copytree(files / name, d, dirs_exist_ok=True)
        skill = load_skill(d)
        g = ground(skill, run=False)
        ref = documented_script(skill, g.scripts)
        assert ref is not None and not ref.script.endswith("__init__.py"), name
        assert ref.commands or ref.score > 0, name
        for case in template_cases(skill, grounding=g):
            assert "kind of work" not in case.prompt, (name, case.id)


def shared_dir_copy(name: str) -> Path:
    import tempfile

    return Path(tempfile.mkdtemp(prefix="drafts-")) / name


@pytest.mark.sandbox
@needs_bwrap
def test_a_verdict_resting_on_unreviewed_drafts_says_so(tmp_path):
    """Drafts run only with skill.accept_drafts=true; their trials and summary.json name them as unreviewed."""
    from support.studies import read_table, study_overrides

    from aces_bench.analysis.summary import unreviewed_drafts
    from aces_bench.config.compose import compose_spec
    from aces_bench.datasets.create import create_dataset
    from aces_bench.study.entry import run_study

    skill = skill_copy(tmp_path)
    create_dataset(skill)
    out = tmp_path / "out"
    spec = compose_spec(study_overrides(skill=skill, cases=("tpl-explicit",), root_parent=tmp_path,
                                        extra=("skill.accept_drafts=true",)), output_dir=out)
    run_study(spec)
    table = read_table(out)
    assert table["case_unreviewed"].all() and len(table) == 2
    assert unreviewed_drafts(table) == {"csv-stats": ["tpl-explicit"]}
    assert unreviewed_drafts(table.assign(case_unreviewed=False)) == {}
    assert unreviewed_drafts(table.drop(columns=["case_unreviewed"])) == {}  # a table from before the column
    # The verdict says so where it is read: the console's verdict table and the report's first screen.
    from aces_bench.analysis.report import build_report
    from aces_bench.study.console import verdict_table

    index = build_report(out)
    rows = verdict_table(out)
    assert "(unreviewed drafts)" in rows[1]
    assert rows[-1] == ("unreviewed drafts: csv-stats: the verdict rests on 1 unreviewed draft case(s) (tpl-explicit); "
                        "review them in the skill's evals file, or accept each with "
                        "`aces-bench dataset refine --confirm CASE_ID`")
    html = Path(index).read_text()
    first_screen = html[:html.index('id="headline-sentence"')]
    assert 'id="unreviewed-drafts"' in first_screen and "1 unreviewed draft case(s) (tpl-explicit)" in first_screen


@pytest.mark.parametrize(("doc", "purpose"), [
    ("ScholarEval Score Calculator\n\nCalculate aggregate scores from ratings.", "Calculate aggregate scores from ratings"),
    ("RNA Velocity Workflow using scVelo\n=====\nComplete pipeline from raw data. More text.",
     "Complete pipeline from raw data"),
    ("Sum (or average with --mean) a CSV column, skipping blank cells.",
     "Sum (or average with --mean) a CSV column, skipping blank cells"),
])
def test_a_scripts_purpose_is_its_docstring_sentence_not_its_title(tmp_path, doc, purpose):
    from aces_bench.datasets.scriptref import script_purpose

    path = tmp_path / "x.py"
    path.write_text(f'"""{doc}"""\n')
    assert script_purpose(path) == purpose


GAP_PY = '''"""Score the documents in a folder against a checklist."""
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--docs-dir", required=True, help="Directory containing documents to analyze")
parser.add_argument("--output", help="Output file path for the JSON report")
parser.add_argument("--list", action="store_true", help="List the checklist and exit")
parser.add_argument("name", help="Name of the audit")
args = parser.parse_args()
'''


def test_a_command_is_completed_from_the_scripts_argparse(tmp_path):
    """The line that does the work is chosen (not --list, not one with a flag the parser lacks); what the
    parser requires is added; a folder input gets the fixture inside it; the output goes under out/."""
    from aces_bench.datasets.argshape import arg_shape

    shape = arg_shape(GAP_PY)
    assert [(a.dest, a.role, a.required) for a in shape.args] == [
        ("docs_dir", "input_dir", True), ("output", "output", False), ("list", "word", False),
        ("name", "word", True)]
    body = SKILL_MD.replace("python scripts/tally.py input.csv --output summary.json",
                            "python scripts/gap.py --list\npython scripts/gap.py --docs-dir <docs> --verbose\n"
                            "python scripts/gap.py --docs-dir <docs>")
    d = _skill(tmp_path, body)
    (d / "scripts" / "gap.py").write_text(GAP_PY)
    skill = load_skill(d)
    plan = plan_draft(skill, ground(skill, run=False))
    assert plan.command == "python3 scripts/gap.py --docs-dir data/docs_dir example --output out/output.json"
    assert plan.fixture_dest == "data/docs_dir/notes.txt" and plan.output == "out/output.json"
    explicit = template_cases(skill, ["explicit"], grounding=ground(skill, run=False), plan=plan)[0]
    assert "My files are in the folder data/docs_dir/" in explicit.prompt
    assert [(c.kind, c.file) for c in plan.checks] == [("written", "out/output.json")]


RESULTS_PY = '''"""Summarise the result files of a folder."""
import argparse
import sys
from pathlib import Path
parser = argparse.ArgumentParser()
parser.add_argument("results_dir", help="Directory containing the results")
parser.add_argument("--top", type=int, default=3, help="How many to show")
args = parser.parse_args()
files = sorted(p for p in Path(args.results_dir).iterdir() if p.is_file())
if not files:
    sys.exit(f"no results in {args.results_dir}")
print(f"Found {len(files)} files")
'''


def _documented(tmp_path, command: str, name: str, script: str):
    """A skill whose SKILL.md documents ``command`` for its script ``scripts/<name>``, and its draft plan."""
    d = _skill(tmp_path, SKILL_MD.replace("python scripts/tally.py input.csv --output summary.json", command))
    (d / "scripts" / name).write_text(script)
    skill = load_skill(d)
    return skill, plan_draft(skill, ground(skill, run=False))


@pytest.mark.sandbox
@needs_bwrap
def test_a_documented_folder_in_an_input_folders_positional_slot_is_replaced_by_the_fixtures(tmp_path):
    """``analyze.py results/batch/ --top 5``: the fixture's folder takes the documented folder's slot; it is
    never added as a second positional beside it, which argparse refuses (exit 2)."""
    skill, plan = _documented(tmp_path, "python scripts/analyze.py results/batch/ --top 5", "analyze.py", RESULTS_PY)
    assert plan.command == "python3 scripts/analyze.py data/results_dir --top 5"
    assert plan.fixture_dest == "data/results_dir/notes.txt"
    run = asyncio.run(run_command(skill, plan.command, {"results_dir/notes.txt": plan.fixture.text.encode()}))
    assert (run.exit_code, run.stdout) == (0, "Found 1 files\n"), run.stderr


REVIEW_SH = """#!/bin/bash
if [ $# -eq 0 ]; then echo "Error: No file specified"; exit 1; fi
head -c 5 "$1" | grep -q '%PDF-' || { echo "not a PDF: $1"; exit 1; }
echo "pages: $(grep -c '/Type /Page\\b' "$1")"
"""


@pytest.mark.sandbox
@needs_bwrap
def test_a_script_documented_on_a_pdf_is_run_on_a_generated_one_not_bare(tmp_path):
    """``review.sh`` and ``review.sh poster.pdf`` are both documented: the line handing the script an input
    the draft can generate is run, on a one-page PDF the draft wrote, and the script reads it as a PDF."""
    import re

    skill, plan = _documented(tmp_path, "scripts/review.sh\n./scripts/review.sh poster.pdf", "review.sh", REVIEW_SH)
    assert plan.command == "bash scripts/review.sh data/document.pdf"
    assert (plan.fixture.rows, plan.fixture.unit) == (1, "pages")
    text = plan.fixture.text
    offsets = [int(o) for o in re.findall(r"^(\d{10}) 00000 n $", text, re.M)]
    assert [text[o:].split("\n", 1)[0] for o in offsets] == [f"{i} 0 obj" for i in range(1, 6)]
    assert text[int(re.search(r"startxref\n(\d+)", text).group(1)):].startswith("xref\n0 6\n")
    run = asyncio.run(run_command(skill, plan.command, {plan.fixture.name: text.encode()}))
    assert (run.exit_code, run.stdout) == (0, "pages: 1\n"), run.stdout


PLOT_PY = '''"""Draw the demo figure."""
import argparse
import sys
parser = argparse.ArgumentParser()
parser.add_argument("--output", default="plot.png", help="Where to save the figure")
args = parser.parse_args()
if not args.output.endswith((".png", ".pdf")):  # as matplotlib's savefig: the format comes from the suffix
    sys.exit(f"Format {args.output.rsplit('.', 1)[-1]!r} is not supported")
with open(args.output, "wb") as f:
    f.write(b"\\x89PNG\\r\\n\\x1a\\n" + bytes(16))
'''


@pytest.mark.sandbox
@needs_bwrap
def test_an_output_option_is_pointed_under_out_with_the_type_of_its_default_file(tmp_path):
    """``--output`` defaults to ``plot.png``: the draft asks for ``out/output.png``, never ``output.txt``, which
    a script choosing its format by the suffix refuses; the written PNG passes the drafts' checks."""
    body = SKILL_MD.replace("python scripts/tally.py input.csv --output summary.json", "python scripts/plot.py")
    d = _skill(tmp_path, body)
    (d / "scripts" / "plot.py").write_text(PLOT_PY)
    skill = load_skill(d)
    g = ground(skill, run=False)
    plan = plan_draft(skill, g)
    assert plan.command == "python3 scripts/plot.py --output out/output.png"
    run = asyncio.run(run_command(skill, plan.command, {}))
    assert run.exit_code == 0 and list(run.files) == ["out/output.png"], run.stderr
    tasks = [c for c in template_cases(skill, grounding=g, plan=plan) if c.kind in ("explicit", "implicit")]
    assert tasks and all(passes(c, run) for c in tasks)


def test_the_last_step_skipped_is_a_step_of_the_work_not_a_closing_message():
    """Dropping ``print("Done!")`` leaves a copy that behaves as the script does: no broken copy."""
    source = ("def main():\n    rows = [1, 2]\n    total = sum(rows)\n    print(f'total={total}')\n"
              "    print('Done!')\n    print('=' * 60)\n\nmain()\n")
    body = broken_copies("scripts/x.py", source)["last step skipped"][0].split("def main")[1]
    assert "total=" not in body and "Done!" in body and "'=' * 60" in body


def test_a_count_the_script_prints_in_its_own_words_is_checked_against_the_fixtures(tmp_path):
    """``Dataset: {len(df)} patients`` in main(): the draft asks for that count with the script's label; the
    value is the generated fixture's row count (8), so the off-by-one copy's 9 fails it."""
    from aces_bench.verifier.check_answer import evaluate_checks

    d = _skill(tmp_path)
    (d / "scripts" / "tally.py").write_text(
        '"""Classify the patients of a CSV file."""\nimport pandas as pd\n\ndef report(data):\n'
        '    print(f"Errors: {len(errors)}")\n\ndef main():\n    df = pd.read_csv("x.csv")\n'
        '    print(f"Dataset: {len(df)} patients")\n')
    skill = load_skill(d)
    plan = plan_draft(skill, ground(skill, run=False))
    assert (plan.number_check.label, plan.number_check.value, plan.number_what) == ("dataset", 8, "patients")
    explicit = template_cases(skill, ["explicit"], grounding=ground(skill, run=False), plan=plan)[0]
    assert "how many patients the input has (write it as 'dataset: N')" in explicit.prompt
    number = [c.as_checker_dict() for c in explicit.checks if c.kind == "number"]
    assert evaluate_checks(number, lambda f: "Dataset: 8 patients")[0]["passed"]
    assert not evaluate_checks(number, lambda f: "Dataset: 9 patients")[0]["passed"]


CHECK_FIELDS_PY = '''"""Check the bounding boxes of a form's fields."""
import json, sys
fields = json.load(open(sys.argv[1]))
print(f"Fields: {len(fields['form_fields'])}")
for f in fields["form_fields"]:
    print(f["box"])
'''


def test_a_json_input_the_script_reads_by_key_is_the_skills_documented_example(tmp_path):
    """A script reading fields['form_fields'] refuses the generic records: the skill's own documented JSON
    example that holds that key is staged instead, its item count computed by the draft (2), never the skill."""
    body = SKILL_MD.replace("python scripts/tally.py input.csv --output summary.json",
                            "python scripts/check_fields.py fields.json") + (
        '\n## Format\n```json\n{"other": 1}\n```\n'
        '```json\n{"pages": [1], "form_fields": [{"box": [1, 2, 3, 4]}, {"box": [5, 6, 7, 8]}]}\n```\n')
    d = _skill(tmp_path, body)
    (d / "scripts" / "check_fields.py").write_text(CHECK_FIELDS_PY)
    skill = load_skill(d)
    plan = plan_draft(skill, ground(skill, run=False))
    assert plan.command == "python3 scripts/check_fields.py data/fields.json"
    assert '"form_fields"' in plan.fixture.text and plan.fixture.rows == 2
    assert plan.fixture.origin == "the skill's documented example"
    explicit = template_cases(skill, ["explicit"], grounding=ground(skill, run=False), plan=plan)[0]
    assert "the skill's documented example (2 items)" in explicit.note
    # It prints the count of the list under the key the draft counted: that count is asked for, the value the draft's.
    assert (plan.number_check.label, plan.number_check.value) == ("fields", 2)


SCAN_PY = '''"""Analyse the documents of a folder for gaps."""
import argparse

def scan(folder):
    return []

def main():
    p = argparse.ArgumentParser()
    p.add_argument("--docs-dir", required=True, help="folder of documents to analyze")
    p.add_argument("--output-dir", help="folder for the report files")
    a = p.parse_args()
    documents = scan(a.docs_dir)
    print(f"Found {len(documents)} documents to analyze")
    VERB
'''


@pytest.mark.parametrize("ambiguous", [False, True])
def test_a_folder_the_script_reads_is_counted_in_files_and_its_output_folder_gets_a_written_check(tmp_path, ambiguous):
    """``Found {len(documents)} documents`` over a folder the draft staged one file in asks for 1 document (the
    verb is the label); a label the script also gives another number cannot name the count. A folder the
    script writes into gets a ``written`` check on it: some well formed file there, names the script's own."""
    body = SKILL_MD.replace("python scripts/tally.py input.csv --output summary.json",
                            "python scripts/gap.py --docs-dir docs/ --output-dir reports/")
    d = _skill(tmp_path, body)
    (d / "scripts" / "gap.py").write_text(SCAN_PY.replace("VERB", 'print(f"Procedures found: {len(documents)}")'
                                                           if ambiguous else "pass"))
    skill = load_skill(d)
    plan = plan_draft(skill, ground(skill, run=False))
    assert plan.command == "python3 scripts/gap.py --docs-dir data/docs_dir --output-dir out"
    assert [(c.kind, c.file, c.value) for c in plan.checks] == [("written", "out", "*")]
    if ambiguous:
        assert plan.number_check is None
        return
    assert (plan.number_check.label, plan.number_check.value, plan.number_what) == ("found", 1, "documents")
    explicit = template_cases(skill, ["explicit"], grounding=ground(skill, run=False), plan=plan)[0]
    assert "Put the files it makes in the folder out/." in explicit.prompt


def test_no_documented_example_fits_and_the_generic_fixture_stays(tmp_path):
    d = _skill(tmp_path, SKILL_MD.replace("python scripts/tally.py input.csv --output summary.json",
                                          "python scripts/check_fields.py fields.json"))
    (d / "scripts" / "check_fields.py").write_text(CHECK_FIELDS_PY)
    skill = load_skill(d)
    plan = plan_draft(skill, ground(skill, run=False))
    assert plan.fixture.name == "sales.json" and plan.fixture.origin == "generated by the draft"
