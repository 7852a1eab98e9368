"""What makes a drafted case decidable without a judge: a fixture, a command and checks.

``plan_draft`` picks the script the skill's documents tell the agent to run
(``scriptref``), the documented line that does its work, completed from the parser
the script declares (``argshape``: required arguments, an output option pointed under
``out/``), the input type that script reads (from its documented command lines, its
parser, then its source), generates a fixture of that type with a known answer
(``fixtures``) and fills the command with it. The checks are properties any correct
answer has, never the skill's own output:

- the documented script ran and exited cleanly (a trajectory check the offline judge
  decides from the trace);
- the output file the command writes (or, where it writes into a folder, some file in
  that folder) exists as a regular file and is well formed for its type (a ``written``
  check: JSON parses, a CSV has rows under its header; ``check_answer.well_formed``);
- where the command writes no file, the answer is not blank (a lenient ``regex``: some character not white space):
  the user asked for something, and an empty answer gives nothing, whatever the input;
- when the script states a total or a row count (``total: {...}``, ``entries: {...}``),
  the answer states the fixture's (which this module wrote, so knows).

A skill with no script its documents name gets only what it has: its drafts say they
are judged only.
"""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from aces_bench.cases.model import Check
from aces_bench.datasets.argshape import (
    Arg,
    ArgShape,
    arg_shape,
    missing,
    optional_output,
    output_flags,
    positional_slots,
)
from aces_bench.datasets.docexample import example_fixture, read_shape
from aces_bench.datasets.fixtures import AMOUNT_COLUMN, GENERATED, GENERATED_SUFFIXES, Fixture, generate
from aces_bench.datasets.grounding import Grounding
from aces_bench.datasets.scriptref import ScriptRef, documented_script, documents, script_purpose
from aces_bench.inputs.skills import Skill
from aces_bench.inputs.skilltree import read_regular

FIXTURE_HOME = "evals/files"
OUTPUT_DIR = "out"
_FILE_ARG = re.compile(r"^<?[\w./-]*?\.([A-Za-z][A-Za-z0-9]{0,5})>?$")
_OUTPUT_WORD = re.compile(r"(out|result|report|summary|export|dest|target|save)", re.I)
_OUTPUT_FLAGS = frozenset({"-o", "--output", "--out", "--output-file", "--outfile", "--save", "--dest"})
_PLACEHOLDER = re.compile(r"^<[^<>]+>$|^\[[A-Z][A-Z0-9 _-]*\]$")  # ``<skill-name>``, ``[MARKET NAME]``
PLACEHOLDER_WORD = "example"
_NUMBER = re.compile(r"^-\d")
_COUNT_EXPR = (r"\{\s*(?:len\((?P<name>\w+)(?:\[\s*['\"](?P<key>[\w-]+)['\"]\s*\])?\)|(?P<shape>\w+)\.shape\[0\])\s*\}")
# ``Dataset: {len(data)} patients`` (a label, a colon) and ``Found {len(documents)} documents`` (a verb, a noun).
_PRINTED_COUNTS = (
    re.compile(r"(?<![\\\w])(?P<label>[A-Za-z][A-Za-z _-]{0,30}?)[*\s]*[:=]\s*" + _COUNT_EXPR
               + r"(?:[ \t]*(?P<what>[A-Za-z]+))?"),
    re.compile(r"(?<![\\\w])(?P<label>[A-Za-z]+)[ \t]+" + _COUNT_EXPR + r"[ \t]+(?P<what>[A-Za-z]+)"),
)
_FOLDER_UNITS = frozenset({"file", "files", "document", "documents", "docs"})
_DATA_NAMES = frozenset({"df", "data", "rows", "records", "entries", "items", "table", "dataset", "samples"})
_READS = re.compile(r"read|load|parse|reader|scan", re.I)
_RECORD_SUFFIXES = frozenset({".csv", ".tsv", ".json", ".jsonl", ".bib"})
_NO_WORK = re.compile(r"^--(list|help|version|interactive|check-setup|list-\w+)$")
_INPUT_HOLDER = re.compile(r"^<[^<>]*(file|path|input|data)[^<>]*>$", re.I)
_COLUMN_HOLDER = re.compile(r"^<(col|column|field|key|metric|value)s?(_?name)?>$", re.I)
# An optional part of a usage line, ``[--resources LIST]``; never inside quotes (``--topic "[MARKET NAME]"``).
_OPTIONAL = re.compile(r"""\s*\[[^\[\]]*\](?=(?:[^"']|"[^"]*"|'[^']*')*$)""")
_SOURCE_SUFFIX = re.compile(r"""['"(*]\.?(csv|tsv|jsonl|json|txt|md|bib)\b['")]|read_(csv|json)|json\.load|csv\.(reader|DictReader)""")
RUN_CHECK = "runs {script}"
SAYS_SOMETHING_CHECK = Check(kind="regex", value=r"\S", match="lenient")  # the answer is not blank


@dataclass
class DraftPlan:
    """What the drafts of one skill are built on (everything optional: a skill may offer none)."""

    script: ScriptRef | None = None
    purpose: str | None = None
    fixture: Fixture | None = None
    fixture_dir: str | None = None  # the folder under data/ the fixture sits in, when the script reads a folder
    command: str | None = None  # the documented command, filled with the fixture and output path
    output: str | None = None  # workspace-relative file the command writes
    output_dir: str | None = None  # workspace-relative folder the command writes into (file names unknown)
    checks: list[Check] = field(default_factory=list)
    number_check: Check | None = None  # the fixture's known total or row count: used where the prompt asks it
    number_what: str | None = None  # what that count counts, in the script's words ("patients"), when not its label
    why_judged: str | None = None  # set when no decidable check could be drafted

    @property
    def fixture_src(self) -> str | None:
        return f"{FIXTURE_HOME}/draft-{self.fixture.name}" if self.fixture else None

    @property
    def fixture_dest(self) -> str | None:
        if self.fixture is None:
            return None
        return f"data/{self.fixture_dir}/{self.fixture.name}" if self.fixture_dir else f"data/{self.fixture.name}"

    @property
    def run_behavior(self) -> str | None:
        return RUN_CHECK.format(script=self.script.script) if self.script else None


def _documented_lines(ref: ScriptRef) -> list[list[str]]:
    """Each documented command that runs the script, split into words (the lines that parse)."""
    out = []
    for line in ref.commands:
        line = _OPTIONAL.sub("", line.rstrip("\\")).strip()
        try:
            words = shlex.split(line, comments=True)
        except ValueError:
            continue
        if words and words not in out:
            out.append(words)
    return out


def _documented_line(ref: ScriptRef, shape: ArgShape | None) -> list[str] | None:
    """The documented command a draft runs: one that does the script's work, with what it requires.

    Lines are ranked by what would make them fail or do nothing on a draft's fixture
    (a required argument left out, an input type no fixture can be generated for, a
    flag the script's parser does not declare, a ``--list``/``--help``/``--interactive``
    call that does no work), then by whether
    they write an output file a check can read, then by whether they hand the script an
    input file of a type a fixture can be generated for (``review.sh poster.pdf`` before a
    bare ``review.sh``, which a script needing its input refuses), then by their order in
    the documents.
    """
    lines = _documented_lines(ref)
    if not lines:
        return None

    def rank(item: tuple[int, list[str]]) -> tuple[int, int, int]:
        i, words = item
        at = _script_at(words, ref.script)
        outs = _OUTPUT_FLAGS | output_flags(words, shape)
        lacking = len(missing(words, at, shape)) if shape is not None and at is not None else 0
        idle = sum(1 for w in words if _NO_WORK.match(w))
        if shape is not None:  # a flag the parser does not declare: the documents are out of date, argparse exits 2
            known = {f for a in shape.for_words(words) for f in a.flags} | {"-h", "--help"}
            idle += sum(1 for w in words[(at or 0) + 1:] if w.startswith("-") and w != "--"
                        and w.split("=", 1)[0] not in known and not _NUMBER.match(w))
        foreign = sum(1 for j, w in enumerate(words[1:], 1) if j != at and _FILE_ARG.match(w) and not w.startswith("-")
                      and "." + _FILE_ARG.match(w).group(1).lower() not in GENERATED_SUFFIXES
                      and words[j - 1] not in outs and not _OUTPUT_WORD.search(PurePosixPath(w).stem))
        writes = _fill(words, ref.script, generate(".txt"), shape)[1] is not None
        fed = any(_FILE_ARG.match(w) and "." + _FILE_ARG.match(w).group(1).lower() in GENERATED_SUFFIXES
                  for j, w in enumerate(words[1:], 1) if j != at and words[j - 1] not in outs and not w.startswith("-"))
        return lacking + 2 * idle + foreign, -writes, -fed, i

    return min(enumerate(lines), key=rank)[1]


def _script_at(words: list[str], script: str) -> int | None:
    name, module = PurePosixPath(script).name, "scripts." + PurePosixPath(script).stem
    return next((i for i, w in enumerate(words) if w.endswith(name) or w == module), None)


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
    """The documented words with the script named by its path in the skill, run by its interpreter."""
    at = _script_at(words, script)
    out = [script if i == at else w for i, w in enumerate(words)]
    if at is not None and at > 0 and out[at - 1] == "-m":
        del out[at - 1]  # ``python -m scripts.x``: the module is the script's file
    if out and out[0] == script:
        out.insert(0, _runner(script))  # run by its path: its interpreter named, never its executable bit
    return ["python3", *out[1:]] if out and out[0] == "python" else out


def _runner(script: str) -> str:
    return "python3" if script.endswith(".py") else "bash" if script.endswith(".sh") else "node"


def _is_input(word: str) -> bool:
    """A word of a documented command that names an input file (a path with a suffix, or ``<input file>``)."""
    return (bool(_FILE_ARG.match(word)) or bool(_INPUT_HOLDER.match(word))) and not word.startswith("-")


def _fill(words: list[str], script: str, fixture: Fixture | None, shape: ArgShape | None,
          plan: DraftPlan | None = None) -> tuple[list[str], str | None]:
    """The command with its input file replaced by the fixture and its outputs put under out/."""
    outs = _OUTPUT_FLAGS | output_flags(words, shape)
    args = shape.for_words(words) if shape else []
    dirs = frozenset(f for a in args if a.role == "output_dir" for f in a.flags)
    in_dirs = {f: a for a in args if a.role == "input_dir" for f in a.flags}
    in_files = frozenset(f for a in args if a.role == "input" and a.takes_value for f in a.flags)
    out: list[str] = []
    output = None
    used_input = False
    at = _script_at(words, script)
    # A documented folder in an input folder's positional slot (``results/batch/``) is the user's: the fixture's
    # folder takes its place, never a second positional beside it (argparse refuses the extra one).
    slots = positional_slots(words, at + 1, shape) if shape is not None and at is not None else {}
    for i, w in enumerate(words):
        prev = words[i - 1] if i else ""
        if _COLUMN_HOLDER.match(w) and fixture is not None and fixture.total is not None:
            out.append(AMOUNT_COLUMN)
            continue
        if prev in dirs and not w.startswith("-"):
            out.append(OUTPUT_DIR)  # a folder the script writes into: under out/, never the skill's or the user's
            if plan is not None:
                plan.output_dir = OUTPUT_DIR
            continue
        folder = in_dirs.get(prev) or (slots[i] if i in slots and slots[i].role == "input_dir" else None)
        if folder is not None and not w.startswith("-") and fixture is not None and plan is not None:
            if not used_input:
                plan.fixture_dir = folder.dest  # a folder the script reads: the fixture inside it
            out.append(f"data/{plan.fixture_dir}" if plan.fixture_dir else "data")
            used_input = True
            continue
        is_file = (_is_input(w) or (prev in in_files and not w.startswith("-"))) and i != at and i > 0
        if (is_file or (prev in outs and not w.startswith("-"))) and (
                prev in outs or (used_input and _OUTPUT_WORD.search(w))):
            name = PurePosixPath(w.strip("<>")).name
            output = f"{OUTPUT_DIR}/{name if '.' in name else 'result.txt'}"
            out.append(output)
        elif is_file and not used_input and fixture is not None:
            out.append(f"data/{fixture.name}")
            used_input = True
        elif _PLACEHOLDER.match(w) and i != at:
            out.append(PLACEHOLDER_WORD)  # ``<skill-name>``: a value the user would give, never the brackets
        else:
            out.append(w)
    out = _as_run(out, script)
    if fixture is not None and not used_input and shape is None:
        out.insert(out.index(script) + 1 if script in out else len(out), f"data/{fixture.name}")
    return out, output


def _value(arg: Arg, plan: DraftPlan, used: bool = False) -> str:
    """What a draft passes for an argument the documented line leaves out (see ``Arg.role``)."""
    role = arg.role
    if role == "choice":
        return arg.choices[0]
    if role == "number":
        return "1"
    if role == "output":
        return f"{OUTPUT_DIR}/{arg.dest}{arg.suffix or '.txt'}"
    if role == "output_dir":
        plan.output_dir = OUTPUT_DIR
        return OUTPUT_DIR
    if role == "input_dir" and plan.fixture is not None:
        if used:
            return f"data/{plan.fixture_dir}" if plan.fixture_dir else "data"  # the folder already holding it
        plan.fixture_dir = arg.dest
        return f"data/{arg.dest}"
    if role == "input" and plan.fixture is not None:
        return plan.fixture_dest
    return PLACEHOLDER_WORD


def _complete(words: list[str], plan: DraftPlan, shape: ArgShape) -> list[str]:
    """The filled line with what its parser requires added, and an output option pointed under out/."""
    script = plan.script.script
    at = _script_at(words, script)
    out = list(words)
    needed = missing(out, at, shape) if at is not None else []
    if plan.fixture is not None and not any(w.startswith("data/") for w in out) and not any(
            a.role in ("input", "input_dir") for a in needed):
        # The fixture must reach the script: through its first input argument, required or not.
        first = next((a for a in shape.for_words(out) if a.role in ("input", "input_dir") and a.takes_value), None)
        needed = [first, *needed] if first else needed
    for arg in needed:
        value = _value(arg, plan, any(w.startswith("data/") or w == "data" for w in out))
        out += [arg.flags[0], value] if arg.flags else [value]
    extra = optional_output(out, shape) if plan.output is None else None
    if extra is not None:
        value = _value(extra, plan)
        out += [extra.flags[0], value]
        if extra.role == "output":
            plan.output = value
    return out


def plan_draft(skill: Skill, g: Grounding) -> DraftPlan:
    """The script, fixture, command and checks the skill's drafts rest on (see the module docstring)."""
    plan = DraftPlan(script=documented_script(skill, g.scripts))
    if plan.script is None:
        plan.why_judged = ("the skill has no scripts" if not g.scripts
                           else "no document of the skill tells the agent to run one of its scripts")
        return plan
    ref = plan.script
    plan.purpose = script_purpose(skill.path / ref.script)
    try:
        source = read_regular(skill.path / ref.script).decode("utf-8", "replace")
    except OSError:
        source = ""
    shape = arg_shape(source) if ref.script.endswith(".py") else None
    words = _documented_line(ref, shape)
    suffix = _suffix_read(skill, ref, words)
    if suffix is None and shape is not None:
        # No documented input: the parser's required input argument says what the script reads.
        at = _script_at(words, ref.script) if words else None
        need = [a for a in (shape.for_words(words) if at is not None else shape.args)
                if a.required and a.role in ("input", "input_dir")]
        suffix = (need[0].suffix or ".txt") if need else None
    plan.fixture = generate(suffix) if suffix else None
    if suffix == ".json" and (read := read_shape(source)) and (read[0] or read[1]):
        # The script reads keys (or an object's items) the generic list of records lacks: stage the
        # input its skill documents instead, if one fits; else the generic one shows the mismatch.
        named = next((PurePosixPath(w).name for w in words or [] if w.endswith(".json")), "example.json")
        texts = [text for text, _ in documents(skill)] + [g.helps.get(ref.script, "")]
        plan.fixture = example_fixture(source, texts, named) or plan.fixture
    if words is None and plan.fixture is None and shape is None:
        return plan
    filled, plan.output = _fill(words or [_runner(ref.script), ref.script], ref.script, plan.fixture, shape, plan)
    if shape is not None:
        filled = _complete(filled, plan, shape)
    plan.command = " ".join(shlex.quote(w) for w in filled)
    if plan.output:
        # A shape check on the written file, not an answer: a regular file, not blank, well formed for its
        # type (JSON parses, a CSV has rows under its header: ``check_answer.well_formed``).
        plan.checks.append(Check(kind="written", value=_glob_literal(PurePosixPath(plan.output).name),
                                 file=plan.output))
    elif plan.output_dir:
        # A folder the script writes into, file names its own: some file there, not blank and well formed.
        plan.checks.append(Check(kind="written", value="*", file=plan.output_dir))
    else:
        # No file asked for: what the user gets is the answer, and a blank one answers nothing.
        plan.checks.append(SAYS_SOMETHING_CHECK)
    if plan.fixture is not None:
        plan.number_check = _number_check(plan, source)
    return plan


def _glob_literal(name: str) -> str:
    """A file name as a glob that matches only itself (``[`` ``*`` ``?`` bracketed)."""
    return re.sub(r"([\[\]*?])", r"[\1]", name)


def _states(source: str, word: str) -> str | None:
    """The word as the script prints it before a value it formats (``Total entries: {n}``, ``total={t}``), or None."""
    m = re.search(rf"\b({word})\b[*\s]*[:=]\s*(?:\{{|%|\"\s*\+|'\s*\+)", source, re.I)
    return m.group(1).lower() if m else None


def _loaded(source: str) -> set[str]:
    """Names the script binds to what it read (``df = pd.read_csv(...)``, ``data = load_data(path)``)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return set()
    out = set(_DATA_NAMES)
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and isinstance(node.value, ast.Call):
            func = node.value.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if _READS.search(name):
                out.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return out


@dataclass(frozen=True)
class _Printed:
    """A count the script prints: its label (the words before the number), what it counts (the word after,
    else the label), the name it takes ``len`` of and the key it subscripts that name with, if any."""

    label: str
    what: str
    name: str
    key: str | None
    in_main: bool


def _printed_counts(source: str) -> list[_Printed]:
    """Counts of what the script read that it prints (``Dataset: {len(data)} patients``, ``Read
    {len(fields['form_fields'])} fields``), the ones ``main()`` prints first: those run on every documented
    call, one in a helper may never be reached."""
    names = _loaded(source)
    main = _main_span(source)
    out = []
    for pattern in _PRINTED_COUNTS:
        for m in pattern.finditer(source):
            name = m.group("name") or m.group("shape")
            if name not in names:
                continue
            label = " ".join(m.group("label").split()).lower()
            if len(re.findall(rf"\b{re.escape(label)}\b[*\s:=]*\{{", source, re.I)) > 1:
                continue  # the script attaches that label to another number too: it cannot name this count
            out.append(_Printed(label, (m.group("what") or label).lower(), name, m.group("key"),
                                main[0] <= m.start() < main[1]))
    return sorted(out, key=lambda p: not p.in_main)


def _main_span(source: str) -> tuple[int, int]:
    """Character offsets of ``def main`` in the source, or an empty span."""
    try:
        node = next((n for n in ast.parse(source).body if isinstance(n, ast.FunctionDef) and n.name == "main"), None)
    except (SyntaxError, ValueError):
        node = None
    if node is None or node.end_lineno is None:
        return (0, 0)
    starts = [0]
    for line in source.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    return starts[node.lineno - 1], starts[min(node.end_lineno, len(starts) - 1)]


def _number_check(plan: DraftPlan, source: str) -> Check | None:
    """The fixture's known total when the script states a total, else its record count when it states one.

    Only a number the script itself reports is asked for: a draft asking a citation
    checker for the sum of a column asks for work the skill does not do. The label is
    the script's wording; the value is always the generated fixture's.
    """
    fixture = plan.fixture
    if fixture.total is not None and _states(source, "total"):
        return Check(kind="number", value=float(fixture.total), label="total")
    label = _states(source, rf"{re.escape(fixture.unit)}|rows|records|entries|lines")
    if label:
        return Check(kind="number", value=fixture.rows, label=label)
    # A count of records is only known for a file of records (a notes file's lines depend on how they are split);
    # a documented example's, of the list under the key it counts; a folder's, of its files (the draft stages one).
    suffix = PurePosixPath(fixture.name).suffix
    for printed in _printed_counts(source):
        if plan.fixture_dir and printed.key is None and printed.what in _FOLDER_UNITS:
            value = 1
        elif fixture.origin == GENERATED and suffix in _RECORD_SUFFIXES and printed.key is None:
            value = fixture.rows
        elif fixture.key is not None and printed.key == fixture.key:
            value = fixture.rows
        else:
            continue
        plan.number_what = printed.what
        return Check(kind="number", value=value, label=printed.label)
    return None


def is_decidable(behaviors: list[str], checks: list[Check], expected_script: str | None, *,
                 negative: bool = False) -> bool:
    """True when the case has a deterministic check, is a negative control (whether the skill was
    loaded is read from the trace by ``graders.skill_execution``), or has the run-the-script
    behaviour the offline judge decides from the trace (``judges.heuristic.behavior``)."""
    return bool(checks) or negative or bool(expected_script and RUN_CHECK.format(script=expected_script) in behaviors)
