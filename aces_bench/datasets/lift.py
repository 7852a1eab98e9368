"""Pure functions behind ``dataset refine``: tool-call sequences to behaviors, answers to ground truth.

A passing trial's tool calls are abstracted into harness-neutral steps ("reads
invoice-reconciler/SKILL.md", "runs invoice-reconciler/scripts/reconcile.py"); the
steps every passing trial shares, in order, become the proposed ``expected_behavior``.
A final answer is proposed as ``expected_output`` only when enough passing trials
gave the same answer.
"""

from __future__ import annotations

import posixpath
import shlex
from collections import Counter
from collections.abc import Sequence

from aces_bench.graders.tool_calls import Call, TraceView, skill_ref


def _skill_path(path: str, skills_dir: str) -> str | None:
    ref = skill_ref(path, skills_dir)
    if ref is None:
        return None
    return f"{ref.skill}/{ref.rel}" if ref.rel else ref.skill


def _workspace_path(path: str, workdir: str) -> str:
    norm = posixpath.normpath(path)
    root = posixpath.normpath(workdir)
    return posixpath.relpath(norm, root) if norm.startswith(root + "/") else norm


def call_steps(call: Call, skills_dir: str, workdir: str) -> list[str]:
    """The behaviors one tool call shows, in a harness-neutral wording."""
    if call.activated:
        return [f"activates the {call.activated} skill"]
    steps: list[str] = []
    for p in call.lists:
        sp = _skill_path(p, skills_dir)
        if posixpath.normpath(p) == posixpath.normpath(skills_dir):
            steps.append("lists the available skills")
        else:
            steps.append(f"lists {sp or _workspace_path(p, workdir)}")
    for p in call.reads:
        sp = _skill_path(p, skills_dir)
        steps.append(f"reads {sp}" if sp else f"reads {_workspace_path(p, workdir)}")
    for p in call.execs:
        sp = _skill_path(p, skills_dir)
        steps.append(f"runs {sp}" if sp else f"runs {posixpath.basename(p)}")
    for p in call.writes:
        steps.append(f"writes {_workspace_path(p, workdir)}")
    if not steps and call.kind == "shell" and call.text.strip():
        try:
            head = shlex.split(call.text)[0]
        except (ValueError, IndexError):
            head = call.text.split()[0]
        steps.append(f"runs `{posixpath.basename(head)}`")
    return steps


def trial_steps(view: TraceView, skills_dir: str, workdir: str) -> list[str]:
    """A trial's behaviors in order, consecutive repeats folded."""
    out: list[str] = []
    for call in view.calls:
        for step in call_steps(call, skills_dir, workdir):
            if not out or out[-1] != step:
                out.append(step)
    return out


def _lcs(a: Sequence[str], b: Sequence[str]) -> list[str]:
    table = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) - 1, -1, -1):
        for j in range(len(b) - 1, -1, -1):
            table[i][j] = table[i + 1][j + 1] + 1 if a[i] == b[j] else max(table[i + 1][j], table[i][j + 1])
    out, i, j = [], 0, 0
    while i < len(a) and j < len(b):
        if a[i] == b[j]:
            out.append(a[i])
            i, j = i + 1, j + 1
        elif table[i + 1][j] >= table[i][j + 1]:
            i += 1
        else:
            j += 1
    return out


def common_steps(sequences: Sequence[Sequence[str]]) -> list[str]:
    """Steps every sequence shows, in order (a common subsequence, folded left to right)."""
    if not sequences:
        return []
    out = list(sequences[0])
    for seq in sequences[1:]:
        out = _lcs(out, seq)
    return out


def normalise_answer(text: str) -> str:
    return "\n".join(" ".join(line.split()) for line in text.strip().splitlines() if line.strip()).casefold()


def aligned_answer(answers: Sequence[str], min_agree: int = 2) -> tuple[str | None, str]:
    """The answer most passing trials agree on, or None with the reason.

    Agreement needs at least ``min_agree`` identical answers (after folding case and
    whitespace) and a strict majority of the answers given.
    """
    given = [a for a in answers if a and a.strip()]
    if not given:
        return None, "no passing trial left a final answer"
    counts = Counter(normalise_answer(a) for a in given)
    top, n = counts.most_common(1)[0]
    if n < min_agree:
        return None, f"only {n} of {len(given)} passing trial(s) agree (need {min_agree})"
    if 2 * n <= len(given):
        return None, f"answers disagree ({len(counts)} distinct among {len(given)} passing trials)"
    first = next(a for a in given if normalise_answer(a) == top)
    return first.strip(), f"{n} of {len(given)} passing trials agree"
