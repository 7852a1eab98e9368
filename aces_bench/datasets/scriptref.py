"""Which of a skill's scripts its documents point the agent at, and how they call it.

A skill folder often holds many scripts: the one SKILL.md tells the agent to run,
helpers it imports (a package ``__init__.py``), checkers for other steps, vendored
tools. A draft must name the documented one, so scripts are ranked by how the
skill's Markdown refers to them: a command line in a code block or inline code span
that runs it counts most, a mention in prose less, SKILL.md's own text more than a
linked reference file's. Package ``__init__.py`` files, tests and scripts no document
names come last, in that order. Nothing here runs anything.
"""

from __future__ import annotations

import ast
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from aces_bench.inputs.skills import Skill
from aces_bench.inputs.skilltree import read_regular, walk

MAX_DOC_CHARS = 400_000
_CODE_SPAN = re.compile(r"`([^`\n]+)`")
# A fence may be indented (a code block under a numbered step) and closes at the same marker.
_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n(.*?)^[ \t]*\1", re.M | re.S)
# A command line runs a script through an interpreter, ``./``, or by its path in the skill (``scripts/x.py``).
_RUNNER = re.compile(r"^(?:\$\s*)?(?:python3?|uv run|bash|sh|node|\./|scripts/)\S*\s")
_HELPER_NAME = re.compile(r"(^_|^test_|_test\.|^conftest|^setup\.py$|^utils?\b|^helpers?\b|^common\b)")
# Markers of a counter-example: a code block or bullet the document shows so it is NOT done.
COUNTER = re.compile(r"(\bdon'?t\b|\bdo not\b|\bnever\b|\bavoid\b|\bwrong\b|\bbad\b|\bincorrect\b|anti-?pattern|"
                     r"\bmistake|\bpitfall|❌|✗|\bnot this\b|\binstead of\b)", re.I)


_TITLE = re.compile(r"^(?:[=\-~#*]+|(?:[A-Z0-9][\w.+/&-]*\s*){1,6}|[\w .+/&-]{1,60}:)$")


@dataclass(frozen=True)
class ScriptRef:
    """A script with its rank score and the documented command lines that run it."""

    script: str
    score: int
    commands: tuple[str, ...]


def documents(skill: Skill) -> list[tuple[str, int]]:
    """(text, weight) of SKILL.md (weight 2) and the skill's other Markdown files (weight 1)."""
    docs = [(skill.body, 2)]
    for e in walk(skill.path):
        if e.is_file and not e.via_link and e.rel.endswith(".md") and e.rel != "SKILL.md" and e.size <= MAX_DOC_CHARS:
            try:
                docs.append((read_regular(skill.path / e.rel).decode("utf-8", "replace"), 1))
            except OSError:
                continue  # an unreadable reference file names no script
    return docs


def _code_lines(text: str) -> list[str]:
    """Command-like lines of fenced blocks and inline code spans, counter-examples left out."""
    out: list[str] = []
    for m in _FENCE.finditer(text):
        before = text[max(0, m.start() - 160):m.start()].strip().splitlines()[-1:] or [""]
        if COUNTER.search(before[0]):
            continue
        out += [ln for ln in _joined(m.group(2)) if not ln.startswith("#")]
    for line in _FENCE.sub("", text).splitlines():
        if COUNTER.search(line):
            continue
        out += [s.strip() for s in _CODE_SPAN.findall(line)]
    return [ln.removeprefix("$ ") for ln in out]


def _joined(block: str) -> list[str]:
    """A code block's lines, stripped, a line continued with a trailing backslash joined to the next."""
    out: list[str] = []
    carry = ""
    for raw in block.splitlines():
        line = raw.strip()
        if carry and line.startswith("#"):
            continue  # a comment between continued lines is no argument
        if line.endswith("\\"):
            carry += line[:-1].strip() + " "
            continue
        if carry + line:
            out.append(carry + line)
        carry = ""
    if carry.strip():
        out.append(carry.strip())
    return out


def _runs(line: str, script: str) -> bool:
    name = PurePosixPath(script).name
    stem = PurePosixPath(script).stem
    if not _RUNNER.match(line + " "):
        return False
    return bool(re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", line)
                or re.search(rf"scripts[/.]{re.escape(stem)}(?![\w.-])", line))


def rank_scripts(skill: Skill, scripts: list[str]) -> list[ScriptRef]:
    """The skill's scripts, the one its documents most tell the agent to run first."""
    docs = documents(skill)
    refs: list[ScriptRef] = []
    for script in scripts:
        name = PurePosixPath(script).name
        score, commands = 0, []
        for text, weight in docs:
            lines = _code_lines(text)
            ran = [ln for ln in lines if _runs(ln, script)]
            commands += [ln for ln in ran if ln not in commands]
            mentions = len(re.findall(rf"(?<![\w-]){re.escape(name)}(?![\w-])", text))
            score += weight * (5 * len(ran) + mentions)
        refs.append(ScriptRef(script, score, tuple(commands)))

    def order(r: ScriptRef) -> tuple:
        name = PurePosixPath(r.script).name
        helper = name == "__init__.py" or "/tests/" in f"/{r.script}" or bool(_HELPER_NAME.search(name))
        return (-(r.score > 0), helper, -r.score, r.script.count("/"), r.script)

    return sorted(refs, key=order)


def documented_script(skill: Skill, scripts: list[str]) -> ScriptRef | None:
    """The script the skill's documents tell the agent to run, or None when no document names one."""
    ranked = rank_scripts(skill, scripts)
    return ranked[0] if ranked and ranked[0].score > 0 else None


def script_purpose(path: Path) -> str | None:
    """The first sentence of a Python script's module docstring (what it says it does)."""
    if path.suffix != ".py":
        return None
    try:
        doc = ast.get_docstring(ast.parse(read_regular(path).decode("utf-8", "replace")))
    except (OSError, SyntaxError, ValueError):
        return None
    if not doc:
        return None
    # A title line ("ScholarEval Score Calculator", "====") is a name, not what the script does.
    lines = [ln.strip() for ln in doc.strip().splitlines()]
    underlined = {i for i in range(len(lines) - 1) if lines[i + 1] and set(lines[i + 1]) <= set("=-~")}
    text = [ln for i, ln in enumerate(lines) if ln and i not in underlined and not _TITLE.match(ln)]
    cut = next((i for i, ln in enumerate(text) if not ln), len(text))
    first = " ".join(" ".join(text[:cut]).split())
    first = re.split(r"(?<=[.!?])\s", first, maxsplit=1)[0].rstrip(".!?:")
    return first if 8 <= len(first) <= 200 and not first.lower().startswith(("usage", "python ", "copyright")) else None
