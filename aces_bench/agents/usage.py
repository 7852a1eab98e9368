"""Turn a SKILL.md's documented usage into a runnable shell command.

A skill documents how to call it in the first fenced code block under a ``## Usage``
heading, e.g. ``python3 scripts/reconcile.py <input.csv> [--strict]``. The reference
agent runs the first command line of that block with:

- ``[...]`` optional parts dropped;
- ``scripts/...`` (and ``{baseDir}``, ``$SKILL_DIR``) resolved under the skill folder;
- ``<...>`` placeholders filled, in order, with the task's input files; a placeholder
  written with ``...`` (``<files...>``) takes all remaining files.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from pathlib import PurePosixPath

from markdown_it import MarkdownIt
from pydantic import BaseModel, ConfigDict

_USAGE_HEADING = re.compile(r"^usage\b", re.IGNORECASE)
_OPTIONAL = re.compile(r"\s*\[[^\[\]]*\]")
_PLACEHOLDER = re.compile(r"<[^<>\s][^<>]*>")
_SKILL_DIR_VARS = ("{baseDir}", "${SKILL_DIR}", "$SKILL_DIR", "${CLAUDE_SKILL_DIR}", "$CLAUDE_SKILL_DIR")
_SCRIPT_PREFIXES = ("./scripts/", "scripts/")
_SHELL_OPERATORS = frozenset({"|", "||", "&&", ";", ">", ">>", "<", "2>", "2>&1", "&>"})
_COMMAND_WORDS = frozenset({"python", "python3", "bash", "sh", "node", "ruby", "perl", "uv", "npx"})
_INTERPRETERS = {".py": "python3", ".sh": "bash", ".bash": "bash", ".js": "node", ".mjs": "node", ".rb": "ruby", ".pl": "perl"}


class UnusableUsage(ValueError):
    """The skill documents no command the agent can run for this task."""


class Invocation(BaseModel):
    """A documented command made concrete for one task."""

    model_config = ConfigDict(frozen=True)

    documented: str  # the usage line as written in SKILL.md
    argv: tuple[str, ...]
    script: str | None  # absolute path of the skill script it calls, if any
    direct: bool  # the script is executed itself rather than through an interpreter

    @property
    def command(self) -> str:
        """The shell command: every token quoted except shell operators."""
        return " ".join(tok if tok in _SHELL_OPERATORS else shlex.quote(tok) for tok in self.argv)


def usage_line(skill_md: str) -> str | None:
    """First command line of the first code block under a ``Usage`` heading.

    The section runs to the next heading of the same or a higher level. Blank lines
    and ``#`` comments are skipped, a leading ``$ `` prompt is removed and lines
    ending in a backslash are joined. A section without a fenced or indented block
    falls back to its first unfenced line (or inline code span) that reads as a
    command (``python3 scripts/x.py <file>``). None when there is no such line.
    """
    tokens = MarkdownIt("commonmark").parse(skill_md)
    section_level: int | None = None
    fallback: str | None = None
    for i, tok in enumerate(tokens):
        if tok.type == "heading_open":
            level = int(tok.tag[1:])
            if section_level is not None and level <= section_level:
                section_level = None
                if fallback is not None:
                    return fallback
            title = tokens[i + 1].content.strip() if i + 1 < len(tokens) else ""
            if section_level is None and level >= 2 and _USAGE_HEADING.match(title):
                section_level = level
        elif section_level is not None and tok.type in ("fence", "code_block"):
            return _first_command(tok.content)
        elif section_level is not None and fallback is None and tok.type == "inline":
            fallback = _unfenced_command(tok)
    return fallback


def _unfenced_command(inline) -> str | None:
    """A command written as a paragraph line or an inline code span, else None."""
    candidates = [c.content for c in inline.children or () if c.type == "code_inline"]
    candidates += inline.content.splitlines()
    for text in candidates:
        line = text.strip().strip("`").strip()
        if line.startswith("$ "):
            line = line[2:].strip()
        if _looks_like_command(line):
            return line
    return None


def _looks_like_command(line: str) -> bool:
    first = line.split(maxsplit=1)[0] if line.split() else ""
    if first.startswith(_SCRIPT_PREFIXES):
        return True
    if first in _COMMAND_WORDS and len(line.split()) > 1:
        second = line.split()[1]
        return second.startswith(("-", *_SCRIPT_PREFIXES, *_SKILL_DIR_VARS)) or "/" in second or "." in second
    return False


def _first_command(block: str) -> str | None:
    pending = ""
    for raw in block.splitlines():
        line = raw.strip()
        if not pending and (not line or line.startswith("#")):
            continue
        if not pending and line.startswith("$ "):
            line = line[2:].strip()
        if line.endswith("\\"):
            pending += line[:-1].strip() + " "
            continue
        return (pending + line).strip()
    return pending.strip() or None


def _fill(token: str, inputs: list[str], documented: str) -> list[str]:
    """Replace the token's placeholders, consuming ``inputs`` from the front."""
    if _PLACEHOLDER.fullmatch(token) and "..." in token:
        if not inputs:
            raise UnusableUsage(f"usage {documented!r} needs input files for {token} but the task lists none")
        taken = list(inputs)
        inputs.clear()
        return taken

    def take(match: re.Match[str]) -> str:
        if not inputs:
            raise UnusableUsage(f"usage {documented!r} has more placeholders than the task has input files ({match.group(0)} is unfilled)")
        return _fit(inputs.pop(0), token[:match.start()], token[match.end():])

    return [_PLACEHOLDER.sub(take, token)]


def _fit(path: str, before: str, after: str) -> str:
    """``path`` as it fits between the literal text around its placeholder.

    ``data/<file>`` filled with ``data/names.txt`` is ``data/names.txt``, not
    ``data/data/names.txt``; ``<name>.csv`` filled with ``sales.csv`` is ``sales.csv``.
    """
    if after and path.endswith(after):
        path = path[: -len(after)]
    parent = str(PurePosixPath(path).parent)
    if before.endswith("/") and parent != "." and (before == parent + "/" or before.endswith("/" + parent + "/")):
        path = PurePosixPath(path).name
    return path


def build_invocation(documented: str, skill_dir: str, input_files: Sequence[str]) -> Invocation:
    """Make ``documented`` runnable for one task; raises UnusableUsage when it cannot be.

    Extra input files beyond the placeholders are ignored: the usage line says what
    the script takes.
    """
    skill_root = PurePosixPath(skill_dir)
    line = documented
    while (stripped := _OPTIONAL.sub("", line)) != line:
        line = stripped
    for var in _SKILL_DIR_VARS:
        line = line.replace(var, str(skill_root))
    try:
        tokens = shlex.split(line)
    except ValueError as exc:
        raise UnusableUsage(f"usage {documented!r} is not a valid shell command ({exc})") from None
    if not tokens:
        raise UnusableUsage(f"usage {documented!r} is empty once optional parts are dropped")

    inputs = list(input_files)
    argv: list[str] = []
    script: str | None = None
    for tok in tokens:
        for filled in _fill(tok, inputs, documented):
            if filled.startswith(_SCRIPT_PREFIXES) and filled == tok:
                filled = str(skill_root / filled.removeprefix("./"))
                script = script or filled
            elif script is None and filled.startswith(str(skill_root) + "/"):
                script = filled
            argv.append(filled)
    return Invocation(documented=documented, argv=tuple(argv), script=script, direct=script is not None and argv[0] == script)


def interpreter_for(script: str) -> str:
    """The interpreter a script's extension implies (``sh`` when unknown)."""
    return _INTERPRETERS.get(PurePosixPath(script).suffix.lower(), "sh")


def recovery(invocation: Invocation, exit_code: int) -> Invocation | None:
    """One sensible retry for a failed invocation, or None when none applies.

    A directly executed script may lack its executable bit or shebang: run it through
    the interpreter its extension implies. ``python3`` missing (exit 127): try
    ``python``. Other failures are the script's own answer and are not retried.
    """
    if invocation.direct and invocation.script is not None:
        argv = (interpreter_for(invocation.script), *invocation.argv)
        return invocation.model_copy(update={"argv": argv, "direct": False})
    if exit_code == 127 and invocation.argv[0] == "python3":
        return invocation.model_copy(update={"argv": ("python", *invocation.argv[1:])})
    return None
