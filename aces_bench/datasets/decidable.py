"""What makes a drafted case decidable without a judge: a fixture, a command and checks.

``plan_draft`` picks the script the skill's documents tell the agent to run
(``scriptref``), the input type that script reads (from its documented command
lines, then its source), generates a fixture of that type with a known answer
(``fixtures``) and fills the documented command with it. The checks are properties
any correct answer has, never the skill's own output:

- the documented script ran and exited cleanly (a trajectory check the offline judge
  decides from the trace);
- the output file the command writes exists and is well formed for its type (starts
  like JSON, has a delimited header line);
- when the script reports on rows or records, the answer states the fixture's row
  count (which this module wrote, so knows).

A skill with no script its documents name, or whose script reads no type a fixture
can be generated for, gets only what it has: its drafts say they are judged only.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from aces_bench.cases.model import Check
from aces_bench.datasets.fixtures import AMOUNT_COLUMN, GENERATED_SUFFIXES, Fixture, generate
from aces_bench.datasets.grounding import Grounding
from aces_bench.datasets.scriptref import ScriptRef, documented_script, script_purpose
from aces_bench.inputs.skills import Skill
from aces_bench.inputs.skilltree import read_regular

FIXTURE_HOME = "evals/files"
OUTPUT_DIR = "out"
_FILE_ARG = re.compile(r"^<?[\w./-]*?\.([A-Za-z][A-Za-z0-9]{0,5})>?$")
_OUTPUT_WORD = re.compile(r"(out|result|report|summary|export|dest|target|save)", re.I)
_OUTPUT_FLAGS = frozenset({"-o", "--output", "--out", "--output-file", "--outfile", "--save", "--dest"})
_ROW_WORDS = re.compile(r"\b(rows?|records?|len\(df\)|shape\[0\]|n_rows|row_count|entries)\b")
_TOTAL_WORDS = re.compile(r"\b(total|sum)\b", re.I)
_INPUT_HOLDER = re.compile(r"^<[^<>]*(file|path|input|data)[^<>]*>$", re.I)
_COLUMN_HOLDER = re.compile(r"^<(col|column|field|key|metric|value)s?(_?name)?>$", re.I)
_OPTIONAL = re.compile(r"\s*\[[^\[\]]*\]")
_SOURCE_SUFFIX = re.compile(r"""['"(*]\.?(csv|tsv|jsonl|json|txt|md|bib)\b['")]|read_(csv|json)|json\.load|csv\.(reader|DictReader)""")
WELL_FORMED: dict[str, tuple[str, str]] = {
    ".json": (r"\A\s*[\[{]", "starts like JSON"),
    ".jsonl": (r"\A\s*\{", "starts like JSON lines"),
    ".csv": (r"\A[^\n,]+,[^\n]*\n", "has a comma-separated header line"),
    ".tsv": (r"\A[^\n\t]+\t[^\n]*\n", "has a tab-separated header line"),
}
RUN_CHECK = "runs {script}"


@dataclass
class DraftPlan:
    """What the drafts of one skill are built on (everything optional: a skill may offer none)."""

    script: ScriptRef | None = None
    purpose: str | None = None
    fixture: Fixture | None = None
    command: str | None = None  # the documented command, filled with the fixture and output path
    output: str | None = None  # workspace-relative file the command writes
    checks: list[Check] = field(default_factory=list)
    number_check: Check | None = None  # the fixture's known total or row count: used where the prompt asks it
    why_judged: str | None = None  # set when no decidable check could be drafted

    @property
    def fixture_src(self) -> str | None:
        return f"{FIXTURE_HOME}/draft-{self.fixture.name}" if self.fixture else None

    @property
    def fixture_dest(self) -> str | None:
        return f"data/{self.fixture.name}" if self.fixture else None

    @property
    def run_behavior(self) -> str | None:
        return RUN_CHECK.format(script=self.script.script) if self.script else None


def _documented_line(ref: ScriptRef) -> list[str] | None:
    """The first documented command that runs the script, split into words (None if none parses)."""
    for line in ref.commands:
        line = _OPTIONAL.sub("", line.rstrip("\\")).strip()
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        if words:
            return words
    return None


def _suffix_read(skill: Skill, ref: ScriptRef, words: list[str] | None) -> str | None:
    """The input file type the script reads: from its documented command's first file argument, else its source."""
    args = [w for w in (words or [])[1:] if not w.endswith(PurePosixPath(ref.script).name)]
    for w in args:
        m = _FILE_ARG.match(w)
        if m and "." + m.group(1).lower() in GENERATED_SUFFIXES and not _OUTPUT_WORD.search(PurePosixPath(w).stem):
            return "." + m.group(1).lower()
    if words and not any(_is_input(w) for w in args):
        return None  # the documented call takes no input file: a fixture would be an argument it refuses
    try:
        source = read_regular(skill.path / ref.script).decode("utf-8", "replace")
    except OSError:
        return None
    for m in _SOURCE_SUFFIX.finditer(source):
        found = next(g for g in m.groups() if g) if any(m.groups()) else None
        if found in ("csv", "tsv", "json", "jsonl", "txt", "md", "bib"):
            return "." + found
        if m.group(0).startswith("json.load"):
            return ".json"
        if m.group(0).startswith("csv."):
            return ".csv"
    return None


def _as_run(words: list[str], script: str) -> list[str]:
    """The documented words with the script named by its path in the skill, run by ``python3``."""
    out = [script if w.endswith(PurePosixPath(script).name) else w for w in words]
    return ["python3", *out[1:]] if out and out[0] == "python" else out


def _is_input(word: str) -> bool:
    """A word of a documented command that names an input file (a path with a suffix, or ``<input file>``)."""
    return (bool(_FILE_ARG.match(word)) or bool(_INPUT_HOLDER.match(word))) and not word.startswith("-")


def _fill(words: list[str], script: str, fixture: Fixture) -> tuple[list[str], str | None]:
    """The command with its input file replaced by the fixture and its output file put under out/."""
    out: list[str] = []
    output = None
    used_input = False
    for i, w in enumerate(words):
        prev = words[i - 1] if i else ""
        if _COLUMN_HOLDER.match(w) and fixture.total is not None:
            out.append(AMOUNT_COLUMN)
            continue
        is_file = _is_input(w) and not w.endswith(PurePosixPath(script).name) and i > 0
        if is_file and (prev in _OUTPUT_FLAGS or (used_input and _OUTPUT_WORD.search(w))):
            name = PurePosixPath(w.strip("<>")).name
            output = f"{OUTPUT_DIR}/{name if '.' in name else 'result.txt'}"
            out.append(output)
        elif is_file and not used_input:
            out.append(f"data/{fixture.name}")
            used_input = True
        else:
            out.append(w)
    out = _as_run(out, script)
    if not used_input:
        out.insert(out.index(script) + 1 if script in out else len(out), f"data/{fixture.name}")
    return out, output


def plan_draft(skill: Skill, g: Grounding) -> DraftPlan:
    """The script, fixture, command and checks the skill's drafts rest on (see the module docstring)."""
    plan = DraftPlan(script=documented_script(skill, g.scripts))
    if plan.script is None:
        plan.why_judged = ("the skill has no scripts" if not g.scripts
                           else "no document of the skill tells the agent to run one of its scripts")
        return plan
    ref = plan.script
    plan.purpose = script_purpose(skill.path / ref.script)
    words = _documented_line(ref)
    suffix = _suffix_read(skill, ref, words)
    plan.fixture = generate(suffix) if suffix else None
    if plan.fixture is None:
        plan.command = " ".join(shlex.quote(w) for w in _as_run(words, ref.script)) if words else None
        return plan
    runner = ["python3"] if ref.script.endswith(".py") else ["bash"] if ref.script.endswith(".sh") else ["node"]
    filled, plan.output = _fill(words or [*runner, ref.script], ref.script, plan.fixture)
    plan.command = " ".join(shlex.quote(w) for w in filled)
    if plan.output:
        plan.checks.append(Check(kind="regex", value=r"\S", file=plan.output))
        shape = WELL_FORMED.get(PurePosixPath(plan.output).suffix.lower())
        if shape:
            plan.checks.append(Check(kind="regex", value=shape[0], file=plan.output))
    try:
        source = read_regular(skill.path / ref.script).decode("utf-8", "replace")
    except OSError:
        source = ""
    plan.number_check = _number_check(plan.fixture, source, ref)
    return plan


def _number_check(fixture: Fixture, source: str, ref: ScriptRef) -> Check | None:
    """The fixture's known total when the script sums, else its row count when it counts rows."""
    said = source + "\n" + "\n".join(ref.commands)
    if fixture.total is not None and _TOTAL_WORDS.search(said):
        return Check(kind="number", value=float(fixture.total), label="total")
    if _ROW_WORDS.search(said):
        return Check(kind="number", value=fixture.rows, label=fixture.unit)
    return None


def is_decidable(behaviors: list[str], checks: list[Check], expected_script: str | None, *,
                 negative: bool = False) -> bool:
    """True when the case has a deterministic check, is a negative control (whether the skill was
    loaded is read from the trace by ``graders.skill_execution``), or has the run-the-script
    behaviour the offline judge decides from the trace (``judges.heuristic.behavior``)."""
    return bool(checks) or negative or bool(expected_script and RUN_CHECK.format(script=expected_script) in behaviors)
