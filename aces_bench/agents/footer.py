"""Parse the fixed footer the emitter appends to every ``instruction.md``.

The contract (docs/architecture.md) is::

    ---
    Working directory: /workspace
    Input files:
    - data/march.csv
    Write your final answer to /workspace/answer.txt.

"Input files:" is absent when a case has no files. An instruction without a footer is
still answerable: the workdir defaults to ``/workspace`` and the answer file to
``<workdir>/answer.txt``.
"""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from pydantic import BaseModel, ConfigDict

DEFAULT_WORKDIR = "/workspace"
ANSWER_FILENAME = "answer.txt"

_SEPARATOR = re.compile(r"^\s*-{3,}\s*$")
_WORKDIR = re.compile(r"^\s*working directory\s*:\s*(?P<path>\S.*?)\s*$", re.IGNORECASE)
_INPUTS = re.compile(r"^\s*input files\s*:\s*$", re.IGNORECASE)
_ITEM = re.compile(r"^\s*[-*]\s+(?P<path>\S.*?)\s*$")
_ANSWER = re.compile(r"^\s*write (?:your|the) final answer to\s+(?P<path>\S+?)\.?\s*$", re.IGNORECASE)


class TaskFooter(BaseModel):
    """What the footer says, with paths normalised.

    ``prompt`` is the instruction without its footer (the text routing looks at);
    ``input_files`` are as written (normally relative to ``workdir``); ``answer_path``
    is always absolute. ``found`` says whether a footer was present at all.
    """

    model_config = ConfigDict(frozen=True)

    prompt: str
    workdir: str = DEFAULT_WORKDIR
    input_files: tuple[str, ...] = ()
    answer_path: str = f"{DEFAULT_WORKDIR}/{ANSWER_FILENAME}"
    found: bool = False


def _strip_quotes(text: str) -> str:
    text = text.strip()
    if len(text) >= 2 and text[0] == text[-1] and text[0] in "`'\"":
        return text[1:-1]
    return text


def _footer_start(lines: list[str]) -> int | None:
    """Index of the last ``---`` line followed (past blank lines) by a footer key line."""
    for i in range(len(lines) - 1, -1, -1):
        if not _SEPARATOR.match(lines[i]):
            continue
        rest = [line for line in lines[i + 1 :] if line.strip()]
        if rest and (_WORKDIR.match(rest[0]) or _INPUTS.match(rest[0]) or _ANSWER.match(rest[0])):
            return i
    return None


def parse_instruction(instruction: str) -> TaskFooter:
    """Split an instruction into its prompt and footer fields; never raises.

    Unknown lines inside the footer are ignored; a relative answer path is taken
    relative to the working directory.
    """
    lines = instruction.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    start = _footer_start(lines)
    if start is None:
        return TaskFooter(prompt=instruction.strip())

    workdir = DEFAULT_WORKDIR
    answer: str | None = None
    inputs: list[str] = []
    in_inputs = False
    for line in lines[start + 1 :]:
        if m := _WORKDIR.match(line):
            workdir, in_inputs = _strip_quotes(m["path"]), False
        elif _INPUTS.match(line):
            in_inputs = True
        elif m := _ANSWER.match(line):
            answer, in_inputs = _strip_quotes(m["path"]), False
        elif in_inputs and (m := _ITEM.match(line)):
            inputs.append(_strip_quotes(m["path"]))
        elif line.strip():
            in_inputs = False

    workdir = str(PurePosixPath(workdir)) if workdir else DEFAULT_WORKDIR
    if answer is None:
        answer = str(PurePosixPath(workdir) / ANSWER_FILENAME)
    elif not answer.startswith("/"):
        answer = str(PurePosixPath(workdir) / answer)
    return TaskFooter(
        prompt="\n".join(lines[:start]).strip(),
        workdir=workdir,
        input_files=tuple(inputs),
        answer_path=answer,
        found=True,
    )
